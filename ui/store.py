"""The release store the app spends from: one object per URL for the whole server."""
from __future__ import annotations

import os

import streamlit as st

from .signin import _roles_config, auth_configured, identity, sync_roles


@st.cache_resource(show_spinner=False)
def _open_store(url: str | None):
    from dpcore.store import ReleaseStore
    return ReleaseStore(url)


@st.cache_resource(show_spinner=False)
def _synced(_store, url: str | None, config: tuple) -> bool:
    """Roles from the secrets file written to the store once per server and configuration."""
    sync_roles(_store)
    return True


def release_store():
    """The persistent release store (``dpcore.store.ReleaseStore``) at ``$DPCORE_STORE`` or its default file.

    One store object per URL for the whole server: every tab, session and
    rerun spends from the same account, and a restart reopens the same file.
    With sign-in configured, the page gets a handle acting for the signed-in person
    (:meth:`~dpcore.store.ReleaseStore.acting_as`): the store checks their role on every write
    (issue 24).  Stops the page with a sentence if the store cannot be opened.
    """
    url = os.environ.get("DPCORE_STORE") or None
    try:
        store = _open_store(url)
        if not auth_configured():
            return store          # local mode: whoever reaches this machine is the owner
        _synced(store, url, _roles_config())
    except Exception as exc:  # corrupt, locked, newer schema, unreachable server: the store says which
        st.error(f"The release store could not be opened, so nothing private can be shown or published: {exc}")
        st.stop()
    return store.acting_as(identity())


