"""Who may do what in a release store (issue 24): owner, analyst and viewer, enforced by the store.

A store handle acts for nobody in particular (``ReleaseStore(url)``: the library, a script, the
server operator, the app in local mode) or for one identity (``store.acting_as("ana@example.org")``:
a signed-in person's session).  A handle acting for someone checks that person's role inside the
same write transaction as the write itself, so a page that hides a button is not the only guard:
a forged widget call reaches the store and is refused there.

Roles (the anchors: DP Creator's depositor and analyst; Tumult's session that only its owner opens):

========  ===========================================================================================
owner     registers datasets, sets and raises caps, grants roles, draws, publishes
analyst   draws within what is left under the cap; publishes only if the owner allowed it
viewer    nothing that writes: the gallery only
========  ===========================================================================================

An identity with no grant is a viewer.  Grants are rows of the hash-chained ``grants`` table: the
latest row for an identity is in force, and the chain is the history (who granted what, when).
A handle acting for nobody may grant (the operator, e.g. the app syncing ``[dpcore.roles]`` from
its secrets file); a handle acting for someone may grant only if that someone is an owner.
"""
from __future__ import annotations

import copy
import getpass
import socket

import sqlalchemy as sa

from ..exceptions import AccessDeniedError
from .connection import StoreConnection
from .tables import _now, grants

#: The roles, from most to least allowed.
ROLES = ("owner", "analyst", "viewer")

#: What each action needs; "publish" is also allowed to an analyst whose grant says ``may_publish``.
_NEEDS = {"register": ("owner",), "cap": ("owner",), "grant": ("owner",), "draw": ("owner", "analyst"),
          "publish": ("owner",)}

_WHAT = {"register": "register a new dataset", "cap": "set or change a dataset's total budget",
         "grant": "grant roles", "draw": "draw a private result (it spends the data's budget)",
         "publish": "publish a draw"}


def local_identity(how: str) -> str:
    """Who acts on this machine without sign-in: ``"user@host (how)"``, at most 120 characters.

    The app's local mode records ``user@host (local mode)``, the command line ``user@host (command line)``:
    the same person at the same machine, through two ways in.

    Parameters
    ----------
    how : str
        The way in, e.g. ``"local mode"`` or ``"command line"``.

    Returns
    -------
    str
    """
    try:
        name = getpass.getuser()
    except Exception:   # no login name (some containers)
        name = "local user"
    return f"{name}@{socket.gethostname()} ({how})"[:120]


def same_person(who: str, identity: str) -> bool:
    """True when a recorded ``who`` names ``identity``'s person (its ``user@host``, or the identity itself).

    A draw recorded as ``"ana@vm (local mode) · Explorer"`` is the own draw of ``"ana@vm (command line)"``:
    the same login on the same machine.  A signed-in e-mail address is compared whole.

    Parameters
    ----------
    who : str
        What the store recorded as who acted.
    identity : str
        Who asks.

    Returns
    -------
    bool
    """
    who, identity = str(who), str(identity)
    if who == identity or who.startswith(identity + " · "):
        return True
    person = identity.split(" (", 1)[0]
    return identity.endswith(")") and " (" in identity and who.startswith(person + " (")


def draw_refusal(store, dataset: str, *, register_hint: str = "") -> str | None:
    """Why the handle's identity may not draw from ``dataset`` now (its role, or data no owner registered).

    Asked before any fit, so that a refused draw never touches the data; the store checks again when
    it records.  A handle acting for nobody (no roles: the library, the operator, local mode) may draw.

    Parameters
    ----------
    store : ReleaseStore
        A handle, possibly from :meth:`Roles.acting_as`.
    dataset : str
        The account to draw on.
    register_hint : str
        Said after "only its owner can register data" (where the owner does it in this interface).

    Returns
    -------
    str or None
        The refusal as a sentence, or None when the draw may go ahead.
    """
    actor = getattr(store, "actor", None)
    if actor is None:
        return None
    role, _ = store.role(actor)
    if role == "viewer":
        return f"{actor} is a viewer here: drawing from the data needs the analyst or owner role."
    if role == "analyst" and store.dataset_info(dataset) is None:
        return (f"this data is not registered in the release store yet, and only its owner can register data"
                f"{register_hint}. Ask the data owner.")
    return None


def _check_identity(identity) -> str:
    if not isinstance(identity, str) or not identity.strip():
        raise ValueError("an identity is a non-empty string (the signed-in e-mail address or subject)")
    identity = identity.strip()
    if len(identity) > 120:
        raise ValueError(f"an identity may have at most 120 characters, this one has {len(identity)}")
    return identity


class Roles(StoreConnection):
    """A base of :class:`~dpcore.store.ReleaseStore`: roles, and the handle that acts for one identity."""

    #: The identity this handle acts for; None: nobody in particular (the operator, the library).
    actor: str | None = None

    def acting_as(self, identity: str):
        """A handle on the same store that acts for ``identity``: every write checks their role first.

        Parameters
        ----------
        identity : str
            The signed-in person (e-mail address or OIDC subject), at most 120 characters.

        Returns
        -------
        ReleaseStore
            Shares this store's connections; its writes record ``identity`` as who acted, and are
            refused with :class:`~dpcore.exceptions.AccessDeniedError` when the role does not allow them.

        Raises
        ------
        ValueError
            An empty or over-long identity.
        """
        handle = copy.copy(self)
        handle.actor = _check_identity(identity)
        return handle

    # -- reading roles ---------------------------------------------------------------------
    def _grant_row(self, conn, identity: str):
        return conn.execute(sa.select(grants).where(grants.c.identity == identity)
                            .order_by(grants.c.id.desc()).limit(1)).first()

    def role(self, identity: str) -> tuple[str, bool]:
        """``(role, may_publish)`` in force for ``identity``; ``("viewer", False)`` when never granted."""
        with self._read() as conn:
            r = self._grant_row(conn, _check_identity(identity))
        return ("viewer", False) if r is None else (r.role, bool(r.may_publish))

    def roles(self) -> dict[str, tuple[str, bool]]:
        """Every identity ever granted, with the ``(role, may_publish)`` now in force."""
        with self._read() as conn:
            rows = conn.execute(sa.select(grants.c.identity, grants.c.role, grants.c.may_publish)
                                .order_by(grants.c.id)).all()
        return {r.identity: (r.role, bool(r.may_publish)) for r in rows}

    def role_history(self) -> list[dict]:
        """Every grant, oldest first: ``identity``, ``role``, ``may_publish``, ``who`` (granted by), ``time``."""
        with self._read() as conn:
            rows = conn.execute(sa.select(grants).order_by(grants.c.id)).all()
        return [{"identity": r.identity, "role": r.role, "may_publish": bool(r.may_publish), "who": r.who,
                 "time": r.created} for r in rows]

    # -- granting ----------------------------------------------------------------------------
    def grant(self, identity: str, role: str, *, may_publish: bool = False, who: str = "") -> bool:
        """Give ``identity`` a role (a new row in the grants chain; the latest one is in force).

        Parameters
        ----------
        identity : str
        role : {"owner", "analyst", "viewer"}
            "viewer" also takes a role away.
        may_publish : bool, default False
            For an analyst: the owner allows them to publish their draws.  Owners always may.
        who : str
            Who grants it (recorded; a handle acting for someone records that identity).

        Returns
        -------
        bool: True if a row was written, False when the identity already had exactly this role.

        Raises
        ------
        ValueError
            An unknown role or a bad identity.
        AccessDeniedError
            This handle acts for someone who is not an owner.
        """
        identity = _check_identity(identity)
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        may_publish = bool(may_publish) or role == "owner"
        with self._write() as conn:
            self._permit(conn, "grant")
            now = self._grant_row(conn, identity)
            if now is not None and (now.role, bool(now.may_publish)) == (role, may_publish):
                return False
            if now is None and role == "viewer" and not may_publish:
                return False      # never granted is already a viewer
            self._append(conn, grants, {"identity": identity, "role": role, "may_publish": may_publish,
                                        "who": self._who(who), "created": _now()})
            return True

    # -- the check every write makes -----------------------------------------------------------
    def _permit(self, conn, action: str) -> None:
        """Refuse ``action`` unless this handle's identity may do it (inside the caller's transaction)."""
        if self.actor is None:
            return
        r = self._grant_row(conn, self.actor)
        role, may_publish = ("viewer", False) if r is None else (r.role, bool(r.may_publish))
        if role in _NEEDS[action] or (action == "publish" and role == "analyst" and may_publish):
            return
        if action == "publish" and role == "analyst":
            need = "the owner's permission for analysts to publish"
        else:
            need = " or ".join(_NEEDS[action]) + " role"
        raise AccessDeniedError(f"{self.actor} is {'an' if role[0] in 'aeiou' else 'a'} {role} here and may not "
                                f"{_WHAT[action]}: that needs the {need}. Nothing was written; ask the data owner.")

    def _who(self, who: str) -> str:
        """What a write records as who acted: a handle acting for someone always names them first."""
        who = str(who)
        if self.actor is not None and not (who == self.actor or who.startswith(self.actor + " · ")):
            who = f"{self.actor} · {who}" if who else self.actor
        return who[:200]
