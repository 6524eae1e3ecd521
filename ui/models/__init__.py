"""Page models (issue 65): what each page shows, computed by plain functions without Streamlit.

A page reads its widgets, calls its model (``explorer.explorer_model(...)``, ...) and draws what the
model says: numbers with their units, sentences, each button with the exact ε it charges, the data of
each figure.  A quantity shown on two pages comes from one function of :mod:`ui.models.shared` and is
written by one formatter (:mod:`dpcore.formatting`).  Nothing here imports Streamlit
(``tests/test_layering.py`` enforces it), so every model is tested directly (``tests/test_models_*.py``).
"""
