"""App-side helpers: Streamlit widgets (``widgets``) and figure builders (``figures``, no Streamlit)."""
