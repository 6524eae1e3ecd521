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

import streamlit as st

from dpcore.store import roles

from .signin import auth_configured, identity
from .store import release_store

#: Addresses that serve this machine only.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


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


def role() -> str:
    """The acting person's role: ``"owner"`` in local mode, else the store's grant (``"viewer"`` if none)."""
    if not auth_configured():
        return "owner"
    return release_store().role(identity())[0]


def may(action: str) -> bool:
    """True when the acting person's role allows ``action``: "cap", "draw", "publish", "register", or
    "raw" (see figures computed on the raw data without noise: the data owner only)."""
    if not auth_configured():
        return True
    r, pub = release_store().role(identity())
    return r == "owner" or (r == "analyst" and (action == "draw" or (action == "publish" and pub)))


def sees_raw(ds) -> bool:
    """True when figures computed on the raw data may be shown: the data is already public, or the
    acting person is its owner.

    The app labels them "not private: for the data owner's eyes only"; an analyst's view of private
    data must hold only what the noise protects (her draws, and simulations on a recorded release's
    synopsis: post-processing), or the label would be false.
    """
    return bool(getattr(ds, "public", False)) or may("raw")


#: Said where a figure computed on the raw data is left out for a role that may not see it.
OWNER_ONLY = ("Comparisons with the non-private result are computed on the raw data without noise, so they are "
              "shown to the data owner only. What you see here is what the noise protects.")


def draw_refusal(store, dataset: str) -> str | None:
    """Why the acting person may not draw from ``dataset`` now (role, or data no owner registered), else None.

    Asked before any fit, so that a refused draw never touches the data; the store checks again when
    it records (:meth:`dpcore.store.ReleaseStore.acting_as`).  The rules are the library's
    (:func:`dpcore.store.roles.draw_refusal`), plus the app's own: an analyst's upload is never drawn on.
    """
    actor = getattr(store, "actor", None)
    if actor is not None and dataset.startswith("upload by ") and store.role(actor)[0] == "analyst":
        return ("an analyst's upload is never matched with the data sets in the release store (whether a file is "
                "known there would tell which data the store holds), so it cannot be drawn on. Ask the data owner "
                "to register the file (by opening it once), then choose it in the list.")
    return roles.draw_refusal(store, dataset, register_hint=" (by opening it once, or setting its total on the "
                                                             "Release page)")


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
