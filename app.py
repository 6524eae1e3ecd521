"""dpcore explorer: entry point. It only routes; every page is a thin script in pages/."""
from pathlib import Path

import streamlit as st

st.set_page_config(page_title="dpcore · private clustering", page_icon="🔒", layout="wide")

PAGES_DIR = Path(__file__).parent / "pages"


def _title(path: Path) -> str:
    # "1_Explorer.py" -> "Explorer"; "3_Private_coresets.py" -> "Private coresets"
    stem = path.stem.split("_", 1)[-1] if path.stem[0].isdigit() else path.stem
    return stem.replace("_", " ")


files = sorted(PAGES_DIR.glob("*.py"))
pages = {p.resolve(): st.Page(str(p), title=_title(p), default=(i == 0)) for i, p in enumerate(files)}
st.session_state["_dp_routed"] = True
current = st.navigation(list(pages.values()))
# A shared link opened on a freshly started server runs its page in Streamlit's legacy pages/ mode;
# ui.widgets.page_setup sends it here, and the router reopens the same page with the same URL state.
redirect = st.session_state.pop("_dp_redirect", None)
if redirect is not None and Path(redirect[0]).resolve() in pages:
    st.switch_page(pages[Path(redirect[0]).resolve()], query_params=redirect[1])
current.run()
