"""What the store hands back and checks: :class:`StoredRelease`, :class:`VerifyReport` and the release checks.

``record`` validates a release against the ``dpcore-release/2`` schema and the 16 MiB row limit
before anything is written (:func:`_check_release`).
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field

from ..exceptions import ReleaseTooLargeError
from .tables import _canon

#: Largest release (UTF-8 JSON text) one row may hold: 16 MiB.
MAX_RELEASE_BYTES = 16 * 1024 * 1024


# Same float slack as the estimator ledger: 0.1 + 0.2 is not exactly 0.3.
_REL_TOL = 1e-9


def exceeds_cap(spent: float, extra: float, cap: float) -> bool:
    """True when ``spent + extra`` is over ``cap``, with the float slack the store allows (its own test on record).

    Interfaces ask it before offering a draw (``ui.models.shared.Totals.fits``), so that a button says
    before it is pressed what :meth:`~dpcore.store.ReleaseStore.record` would refuse.

    Returns
    -------
    bool
    """
    return spent + extra > cap * (1 + _REL_TOL) + 1e-15


_over = exceeds_cap


def _is_simulation(release: dict) -> bool:
    p = release.get("privacy", {})
    if p.get("simulation") or release.get("simulation"):
        return True
    if release.get("seed_policy", {}).get("random_state") is not None:
        return True
    g = str(p.get("guarantee", "")).lower()
    return "not private" in g or "simulation" in g


@dataclass(frozen=True)
class StoredRelease:
    """One release as recorded in the store.

    Attributes
    ----------
    id : int
        Its id in the store (what :meth:`ReleaseStore.record` returned).
    dataset : str
        The dataset's name in the store.
    created : datetime
        When it was recorded (UTC, timezone-aware).
    who : str
        Who published it (free text given to ``record``).
    epsilon, delta : float
        What it spent (the release ledger's total).
    algorithm : str
        Its ``dpcore.ALGORITHMS`` key.
    release : dict
        The release itself, as built by :func:`dpcore.release.build_release`.
    hash : str
        Its row hash (SHA-256 hex) in the releases chain.
    simulation : bool
        True for a seeded simulation on a dataset declared public.
    published_by, published_at : str or None, datetime or None
        Who published this draw and when (:meth:`ReleaseStore.publish`); None for a draw that was
        recorded (and charged) but not published.
    """

    id: int
    dataset: str
    created: _dt.datetime
    who: str
    epsilon: float
    delta: float
    algorithm: str
    release: dict
    hash: str
    simulation: bool = False
    published_by: str | None = None
    published_at: _dt.datetime | None = None

    @property
    def is_published(self) -> bool:
        """True once :meth:`ReleaseStore.publish` was called for this draw."""
        return self.published_at is not None


@dataclass
class VerifyReport:
    """What :meth:`ReleaseStore.verify` found.  True when every chain is intact.

    Attributes
    ----------
    ok : bool
    checked : int
        Rows checked, all tables together.
    first_broken : tuple (table, id, reason) or None
        The first row whose link is broken, in the order datasets, caps,
        releases, ledger_entries.
    heads : dict
        ``{table: keyed head}``: the HMAC, under the store's secret, of the ``row_hash`` of the
        table's last row (issue 55).  Write these down or publish them to detect a rewrite of a whole
        chain or a truncated tail later: a head changes whenever its chain does, and says nothing
        else about the rows (a plain head could be recomputed for two candidate data sets).
    """

    ok: bool
    checked: int
    first_broken: tuple | None = None
    heads: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.ok


# -- input checks ----------------------------------------------------------------------------
def _flat(v):
    try:
        return [x for x in v]
    except TypeError:
        return [v]


def _check_name(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a dataset needs a non-empty name, got {name!r}")
    if len(name) > 400:
        raise ValueError(f"a dataset name may have at most 400 characters, this one has {len(name)}")
    return name


def _check_schema(release: dict) -> None:
    """Validate a current-format release against the published JSON Schema (older formats are read as they are)."""
    from ..release import FORMAT, validate_release
    if release.get("format") != FORMAT:
        return
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema comes with dpcore[store]
        return
    try:
        validate_release(release)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise ValueError(f"this release does not follow the {FORMAT} schema at {where}: {exc.message}") from None


def _check_release(release, *, refusal: bool = False) -> tuple[float, float, str, list[dict]]:
    """(epsilon_spent, delta_spent, canonical JSON, ledger rows) of a build_release dict, or ValueError.

    ``refusal=True``: a :func:`dpcore.release.build_refusal` dict instead (what a refused fit spent).
    """
    from ..release import REFUSAL_FORMAT
    fmt = str(release.get("format", "")) if isinstance(release, dict) else ""
    if refusal and fmt != REFUSAL_FORMAT:
        raise ValueError("record_refusal() takes the dict built by dpcore.release.build_refusal(...)")
    if not refusal and not fmt.startswith("dpcore-release/"):
        raise ValueError("record() takes the dict built by dpcore.release.build_release(...); this is not one "
                         "(no 'format': 'dpcore-release/...'); a refusal is recorded with record_refusal()")
    try:
        p = release["privacy"]
        eps, dl = float(p["epsilon_spent"]), float(p["delta_spent"])
        release["algorithm"]["key"]
        ledger = list(release["ledger"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"this release lacks its privacy, algorithm or ledger fields ({exc!r}); build it with "
                         "dpcore.release.build_release") from exc
    _check_schema(release)
    if not (math.isfinite(eps) and eps > 0) or not (math.isfinite(dl) and 0 <= dl < 1):
        raise ValueError(f"a release must spend a positive finite ε and a δ in [0, 1), this one says "
                         f"ε = {eps}, δ = {dl}")
    try:
        body = _canon(release)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"this release cannot be written as JSON ({exc})") from exc
    size = len(body.encode("utf-8"))
    if size > MAX_RELEASE_BYTES:
        raise ReleaseTooLargeError(
            f"this release is {size / 2**20:.1f} MiB of JSON, more than the store's row limit of "
            f"{MAX_RELEASE_BYTES / 2**20:.0f} MiB; nothing was recorded. Use a coarser grid or a smaller coreset.")
    entries = []
    for e in ledger:
        s = e.get("sensitivity")
        entries.append({"name": str(e.get("name", "")), "mechanism": str(e.get("mechanism", "")),
                        "sensitivity": None if s is None or not math.isfinite(float(s)) else float(s),
                        "epsilon": float(e.get("epsilon", 0.0)), "delta": float(e.get("delta", 0.0))})
    return eps, dl, body, entries
