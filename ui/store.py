"""The release store the app spends from: one object per URL for the whole server."""
from __future__ import annotations

import os

import streamlit as st


@st.cache_resource(show_spinner=False)
def _open_store(url: str | None):
    from dpcore.store import ReleaseStore
    return ReleaseStore(url)


def release_store():
    """The persistent release store (``dpcore.store.ReleaseStore``) at ``$DPCORE_STORE`` or its default file.

    One store object per URL for the whole server: every tab, session and
    rerun spends from the same account, and a restart reopens the same file.
    Stops the page with a sentence if the store cannot be opened.
    """
    try:
        return _open_store(os.environ.get("DPCORE_STORE") or None)
    except Exception as exc:  # corrupt, locked, newer schema, unreachable server: the store says which
        st.error(f"The release store could not be opened, so nothing private can be shown or published: {exc}")
        st.stop()


