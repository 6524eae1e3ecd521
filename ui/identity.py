"""Who is spending: the signed-in person (OIDC through ``st.login``) or, in local mode, this machine's user.

Local mode (no ``[auth]`` section in ``.streamlit/secrets.toml``): the project's
``.streamlit/config.toml`` binds the server to ``localhost``, so only people who can log in to this
machine reach the app, and each of them is the data owner.  Serving any other address without
sign-in is refused on every page with a sentence that says what to configure (issue 24).

With ``[auth]`` configured, a page shows Streamlit's sign-in button until the person has signed in,
and every draw, publication and cap change is recorded under their e-mail address (or subject).
"""
from __future__ import annotations

import getpass
import socket

import streamlit as st

#: Addresses that serve this machine only.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def auth_configured() -> bool:
    """True when ``.streamlit/secrets.toml`` has an ``[auth]`` section (Streamlit's native OIDC sign-in)."""
    try:
        return "auth" in st.secrets
    except Exception:   # no secrets file at all: local mode
        return False


def address_refusal() -> str | None:
    """The sentence refusing to serve a non-loopback address without sign-in, or None when all is well."""
    if auth_configured():
        return None
    address = st.get_option("server.address")
    if address in LOOPBACK:
        return None
    where = "every network interface" if not address else f"address {address!r}"
    return (f"This app is serving {where} without sign-in, so anyone who can reach it could spend this data's "
            "privacy budget. Start it from the project folder (its .streamlit/config.toml binds it to localhost), "
            "or pass --server.address localhost; to serve other people, configure sign-in: an [auth] section "
            "in .streamlit/secrets.toml (README, 'Sign-in').")


def identity() -> str:
    """Who is acting: the signed-in person's e-mail (or subject), or ``user@host (local mode)``."""
    if auth_configured():
        user = st.user
        if getattr(user, "is_logged_in", False):
            return str(user.get("email") or user.get("sub") or user.get("name") or "signed-in user")[:120]
        return "not signed in"
    try:
        name = getpass.getuser()
    except Exception:   # no login name (some containers)
        name = "local user"
    return f"{name}@{socket.gethostname()} (local mode)"[:120]


def who(page: str) -> str:
    """What the store records as ``who`` for an action on ``page``: the identity and the page."""
    return f"{identity()} · {page}"[:200]


def gate() -> None:
    """Stop the page unless it may be served: a refused address, or sign-in still to do.

    Shows the local-mode note in the sidebar (anyone with access to this machine is the owner).
    """
    why = address_refusal()
    if why is not None:
        st.error(why)
        st.stop()
    if auth_configured():
        if not getattr(st.user, "is_logged_in", False):
            st.info("Sign in to use this app: what you draw and publish is recorded under your name.")
            st.button("Sign in", on_click=st.login, type="primary")
            st.stop()
        st.sidebar.caption(f"Signed in as {identity()}.")
        st.sidebar.button("Sign out", on_click=st.logout)
    else:
        st.sidebar.caption("Local mode: served on this machine only, without sign-in. Anyone with access to this "
                           "machine is the data owner and may spend the budget.")
