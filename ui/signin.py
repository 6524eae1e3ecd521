"""Who is signed in, and the roles the secrets file names (the lowest UI module: no other ui import).

:mod:`ui.store` hands each page a store handle acting for :func:`identity` and writes the roles of
``[dpcore]`` to the store (:func:`sync_roles`); :mod:`ui.identity` builds the page gate on top.
"""
from __future__ import annotations

import streamlit as st

from dpcore.store.roles import local_identity


def auth_configured() -> bool:
    """True when ``.streamlit/secrets.toml`` has an ``[auth]`` section (Streamlit's native OIDC sign-in)."""
    try:
        return "auth" in st.secrets
    except Exception:   # no secrets file at all: local mode
        return False


def _roles_config() -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """``(owners, analysts, analysts_may_publish)`` from the ``[dpcore]`` section of the secrets file."""
    try:
        conf = st.secrets.get("dpcore", {})
    except Exception:   # no secrets file
        conf = {}
    clean = lambda v: tuple(sorted({str(x).strip() for x in (v or ()) if str(x).strip()}))  # noqa: E731
    return clean(conf.get("owners")), clean(conf.get("analysts")), bool(conf.get("analysts_may_publish", False))


def sync_roles(store) -> None:
    """Make the store's grants say what the secrets file says (operator's handle; idempotent, chained).

    Listed owners become owners, listed analysts analysts (publishing if the owner allows), and anyone
    the store knows who is no longer listed becomes a viewer.  Only changes write a row.
    """
    owners, analysts, may_publish = _roles_config()
    wanted = {a: ("analyst", may_publish) for a in analysts}
    wanted.update({o: ("owner", True) for o in owners})
    for ident in store.roles():
        wanted.setdefault(ident, ("viewer", False))
    for ident, (role, pub) in wanted.items():
        store.grant(ident, role, may_publish=pub, who="secrets.toml [dpcore]")


def identity() -> str:
    """Who is acting: the signed-in person's e-mail (or subject), or ``user@host (local mode)``."""
    if auth_configured():
        user = st.user
        if getattr(user, "is_logged_in", False):
            return str(user.get("email") or user.get("sub") or user.get("name") or "signed-in user")[:120]
        return "not signed in"
    return local_identity("local mode")
