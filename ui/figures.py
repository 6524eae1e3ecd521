"""Figure builders (no Streamlit import): :mod:`ui.maps` (pydeck) and :mod:`ui.charts` (plotly), re-exported.

Colour conventions, the same on every page:
* private centres: orange-red filled discs, black outline;
* non-private centres: hollow dark-blue rings ("not private: for the data owner's eyes only");
* noisy counts: diverging blue (negative) - white (0) - red (positive), so negative cells stay visible;
* raw points: grey, only in a layer labelled as non-private.
"""
from .charts import *  # noqa: F403
from .charts import __all__ as _charts
from .maps import *  # noqa: F403
from .maps import __all__ as _maps

__all__ = [*_maps, *_charts]
