"""The release as code, beside its JSON/CSV/HTML downloads (issue 67): a script and a notebook.

Used by the Release page and the public gallery.  Imports nothing that reads data (the gallery
refuses the dataset loaders): the files are pure functions of the recorded release
(:mod:`dpcore.release.as_code`).
"""
from __future__ import annotations

import streamlit as st

from dpcore.release.as_code import FORMATS, to_notebook, to_script


def code_downloads(release: dict, *, release_id: int | None, stem: str, data_path: str | None = None,
                   account: str | None = None, where=None) -> None:
    """Two download buttons: a script that draws the same settings again, a notebook that analyses this release.

    ``data_path``: the data the script reads (an upload's file name, a listed data set's name); default
    from the release's data set name.  ``account``: the data's running total, written into the notebook.
    """
    # One under the other, as the JSON/CSV/HTML buttons: side by side in the Release page's column, the
    # notebook's label was cut ("(.i…").
    where = where or st
    # Made when clicked (a callable, on Streamlit's download thread): a notebook of a large grid takes ~0.3 s,
    # which no rerun of the page should pay.
    buttons = (
        ("py", "Download a script to draw it again (.py)",
         lambda: to_script(release, release_id=release_id, data_path=data_path),
         "A short Python script with the data path and the bounds at the top: it draws the same settings again "
         "through the release store (fresh noise, recorded against the data's total, refused over it), as "
         "`python -m dpcore draw` does. For the monthly run."),
        ("ipynb", "Download a notebook to analyse it (.ipynb)",
         lambda: to_notebook(release, release_id=release_id, account=account),
         "A Jupyter notebook holding this release: the picture, the guarantee in words, the ledger and k-means at "
         "any k on its released points. It reads nothing else, so running it spends no ε and records nothing."))
    for fmt, label, make, why in buttons:
        where.download_button(label, make, file_name=f"{stem}{FORMATS[fmt][0]}", mime=FORMATS[fmt][1],
                              key=f"dl_{fmt}", help=why)
