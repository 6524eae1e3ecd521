"""Who is spending: the signed-in person (OIDC through ``st.login``) or, in local mode, this machine's user.

Local mode (no ``[auth]`` section in ``.streamlit/secrets.toml``): the project's
``.streamlit/config.toml`` binds the server to ``localhost``, so only people who can log in to this
machine reach the app, and each of them is the data owner.  Serving any other address without
sign-in is refused on every page with a sentence that says what to configure (issue 24).

With ``[auth]`` configured, a page shows Streamlit's sign-in button until the person has signed in,
and every draw, publication and cap change is recorded under their e-mail address (or subject).
Roles come from the ``[dpcore]`` section of the same secrets file and are kept in the release
store (:mod:`dpcore.store.roles`), which enforces them on every write::

    [dpcore]
    owners = ["owner@example.org"]      # register data, set totals, draw, publish
    analysts = ["ana@example.org"]      # draw within what is left
    analysts_may_publish = false        # the owner's choice
    # anyone else who signs in is a viewer: the gallery only
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


def role() -> str:
    """The acting person's role: ``"owner"`` in local mode, else the store's grant (``"viewer"`` if none)."""
    if not auth_configured():
        return "owner"
    from .store import release_store
    return release_store().role(identity())[0]


def may(action: str) -> bool:
    """True when the acting person's role allows ``action`` ("cap", "draw", "publish", "register")."""
    if not auth_configured():
        return True
    from .store import release_store
    r, pub = release_store().role(identity())
    return r == "owner" or (r == "analyst" and (action == "draw" or (action == "publish" and pub)))


def draw_refusal(store, dataset: str) -> str | None:
    """Why the acting person may not draw from ``dataset`` now (role, or data no owner registered), else None.

    Asked before any fit, so that a refused draw never touches the data; the store checks again when
    it records (:meth:`dpcore.store.ReleaseStore.acting_as`).
    """
    if getattr(store, "actor", None) is None:
        return None
    r, _ = store.role(store.actor)
    if r == "viewer":
        return f"{store.actor} is a viewer here: drawing from the data needs the analyst or owner role."
    if r == "analyst" and store.dataset_info(dataset) is None:
        return ("this data is not registered in the release store yet, and only its owner can register data "
                "(by opening it once, or setting its total on the Release page). Ask the data owner.")
    return None


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


_ROLE_WORDS = {"owner": "owner: may set totals, draw and publish", "analyst": "analyst: may draw within what is left",
               "viewer": "viewer: the gallery only"}


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
        r = role()
        st.sidebar.caption(f"Signed in as {identity()} ({_ROLE_WORDS[r]}).")
        st.sidebar.button("Sign out", on_click=st.logout)
        if r == "viewer":
            st.info(f"You are signed in as {identity()}, a viewer: you may read what has been published, in the "
                    "gallery, but not open the data. To draw from it, ask the data owner to list you as an analyst "
                    "([dpcore] analysts in the app's secrets file).")
            st.stop()
    else:
        st.sidebar.caption("Local mode: served on this machine only, without sign-in. Anyone with access to this "
                           "machine is the data owner and may spend the budget.")
