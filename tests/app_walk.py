"""Helpers for AppTest tests that look at every element a page rendered (text, tables, figures, widgets)."""
from __future__ import annotations

import re

from streamlit.testing.v1.element_tree import Block, Dataframe, Expander

from ui.widgets import RAW_FACTS


def _element_text(node) -> str:
    """Everything an element shows or sends to the browser, as text."""
    parts = [str(node.proto)]                     # labels, bodies, options, figure / deck JSON, help texts
    if isinstance(node, Dataframe):               # tables travel as Arrow bytes: read their cells too
        df = node.value
        parts.append(df.to_csv(index=False))
    return "\n".join(parts)


def rendered_texts(at):
    """(inside the raw-facts panel?, text) for every element of the page, main area and sidebar."""
    out = []

    def walk(node, inside):
        if isinstance(node, Block):
            label = node.label if isinstance(node, Expander) else None
            inside = inside or label == RAW_FACTS
            if label is not None:
                out.append((inside, str(label)))
            for child in node.children.values():
                walk(child, inside)
        else:
            out.append((inside, _element_text(node)))

    walk(at._tree, False)
    return out


def number_pattern(n: int) -> re.Pattern:
    """``n`` written as a whole number, plain or with thousands separators (not as part of another number)."""
    forms = {str(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " "), f"{n:,}".replace(",", "\u202f")}
    return re.compile(r"(?<![\d.,_])(?:" + "|".join(re.escape(f) for f in forms) + r")(?![\d_]|[.,]\d)")


def upload_in_apptest(at, data: bytes, name: str, *, columns: list, bounds: str):
    """Choose "Upload a file…" on an AppTest page, hand it ``data`` as the file ``name``, choose ``columns``
    and enter their public ``bounds`` (one "lower, upper" line per column); returns ``at``.

    AppTest cannot drive the file uploader itself: this sets what the uploader hands over (the kept
    upload, as ``ui.data_picker`` keeps it across pages)."""
    import hashlib
    at.selectbox(key="dataset").set_value("Upload a file…").run()
    at.session_state["_dp_upload"] = (name, hashlib.sha256(data).hexdigest())
    at.session_state["_dp_upload_bytes"] = data
    at.run()
    at.multiselect(key="dataset_cols").set_value(columns).run()
    at.text_area(key="dataset_bounds").input(bounds).run()
    return at
