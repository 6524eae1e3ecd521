"""dpcore explorer: entry point. It only routes; every page is a thin script in pages/."""
from pathlib import Path

import streamlit as st

st.set_page_config(page_title="dpcore · private clustering", page_icon="🔒", layout="wide")

PAGES_DIR = Path(__file__).parent / "pages"


def _title(path: Path) -> str:
    # "1_Explorer.py" -> "Explorer"; "3_Private_coresets.py" -> "Private coresets"
    stem = path.stem.split("_", 1)[-1] if path.stem[0].isdigit() else path.stem
    return stem.replace("_", " ")


pages = [st.Page(str(p), title=_title(p), default=(i == 0)) for i, p in enumerate(sorted(PAGES_DIR.glob("*.py")))]
st.navigation(pages).run()
