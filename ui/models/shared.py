"""The quantities every page shows, each computed by one function (issue 65).

* :func:`draw_cost`: the ε and δ a draw records, from the estimator's declared budget plan
  (:meth:`dpcore.algorithms.base.DPClusterer.budget_plan`), not the ε asked for.
* :func:`totals`: a data set's account (spent, the total set, what is left) from the release store, and
  whether a cost fits under it (:meth:`Totals.fits`, :meth:`Totals.why_not`) with the store's own test.
* :func:`draw_button`: a button that draws, with the exact cost in its label and, when it cannot fit
  under the total or the role forbids it, the sentence saying so before it is pressed.
* :func:`expected_error` / :func:`accuracy_answer`: the expected-error band of releases at an ε, one
  cached simulation of :data:`EXPECTED_ERROR_RELEASES` releases (fresh noise each) per setting and ε,
  shared by the Explorer and Compare (in :mod:`ui.models.expected_error`, re-exported here).
* :func:`dataset_title`, :func:`person_words`: a data set and a person as people read them (never
  ``nyc_taxi_sample`` or ``root@vm (local mode) · publish``).
* The formatters of :mod:`dpcore.formatting` (re-exported): one rounding, a unit on every figure.

No Streamlit here: pages render what these return; ``tests/test_models_shared.py`` tests them directly.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

from dpcore.formatting import (
    fmt_budget,
    fmt_count,
    fmt_delta,
    fmt_distance,
    fmt_epsilon,
    fmt_number,
    fmt_odds,
    fmt_range,
    fmt_share,
)

from .expected_error import (
    EXPECTED_ERROR_RELEASES,
    PREVIEW_CHECKS,
    Band,
    ErrorSetting,
    accuracy_answer,
    expected_error,
    preview_answer,
    preview_band,
    preview_key,
    simulated_errors,
)

__all__ = ["Band", "Cost", "DrawButton", "ErrorSetting", "EXPECTED_ERROR_RELEASES", "NO_BOUNDS", "Totals",
           "WorkingSet", "accuracy_answer", "columns_words",
           "dataset_title", "draw_button", "draw_cost", "expected_error", "fmt_budget", "fmt_count", "fmt_delta",
           "fmt_distance", "fmt_epsilon", "fmt_number", "fmt_odds", "fmt_range", "fmt_share", "offer_words",
           "page_words", "person_words", "preview_answer", "publish_question", "preview_band", "simulated_errors",
           "totals", "PREVIEW_CHECKS", "preview_key"]


# -- the working set ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkingSet:
    """What every page computes from: the data (as public facts about it), the algorithm, k, ε, δ, the unit, the role.

    Built by :func:`ui.controls.working_set` from the page's widgets; a model never reads a widget.

    Attributes
    ----------
    dataset : str
        The store's name of the data set.
    title : str
        The data set as people read it.
    columns : tuple of str
    geo : bool
        Longitude/latitude in two columns: a map, distances in metres.
    public : bool
        Data that is already public (previews, teaching, raw figures for anyone).
    bounded : bool
        Public bounds given (draws are private and recorded); False: nothing is private or recorded.
    large : bool
        Rows where they lie (DuckDB, Spark, a database): never drawn on screen.
    algorithm : str or None
    k : int or None
    epsilon, delta : float or None
    unit : str
        What one ε protects, in one word ("trip", "check-in", "user", ...).
    max_contributions : int or None
        L, at person level; None at row level.
    sees_raw : bool
        Figures computed on the raw data may be shown (the data owner, or public data).
    """

    dataset: str
    title: str
    columns: tuple = ()
    geo: bool = False
    public: bool = False
    bounded: bool = True
    large: bool = False
    algorithm: str | None = None
    k: int | None = None
    epsilon: float | None = None
    delta: float | None = None
    unit: str = "record"
    max_contributions: int | None = None
    sees_raw: bool = False

    @property
    def d(self) -> int:
        """The number of columns."""
        return len(self.columns)

    def columns_words(self, most: int = 8) -> str:
        """The data's columns in words (:func:`columns_words`)."""
        return columns_words(self.columns, most)

    def headline(self) -> str:
        """The line over a page's result: the data set's title and its columns (Markdown)."""
        return f"**{self.title}** · {self.columns_words()}"


def columns_words(columns, most: int = 8) -> str:
    """``"2 columns: longitude, latitude"``; past ``most`` columns the count and the first few only.

    Returns
    -------
    str
    """
    cols = [str(c) for c in columns]
    if len(cols) <= most:
        return f"{len(cols)} column{'s' if len(cols) != 1 else ''}: {', '.join(cols)}"
    return f"{len(cols)} columns ({', '.join(cols[:3])}, …, {cols[-1]})"


#: The one warning for data without public bounds, on every page that draws (issue 65: two near-identical
#: warnings stood one above the other on the Explorer).
NO_BOUNDS = ("No public bounds: the domain is read from the data, so what is drawn from it is NOT private for the "
             "extreme records (anyone who sees a result can learn the data's range), and nothing is recorded or "
             "published. Enter bounds known in advance in the sidebar to fix that.")


# -- what a draw costs ------------------------------------------------------------------------------------------
#: The size a budget plan that depends on the data's size is asked at, to learn whether it spends all of its grant
#: (the plan's own figure at the draw's noisy size is unknown before the draw).
NOMINAL_SIZE = 10_000
#: Further sizes a size-dependent plan is asked at: the same spend at all of them is taken as the spend at any.
PLAN_SIZES = (1_000, 1_000_000)


@dataclass(frozen=True)
class Cost:
    """What one draw records in the data's account.

    Attributes
    ----------
    epsilon, delta : float
        What the draw spends: the sum of its budget plan's steps, without the steps a fit leaves unused
        by design (the coreset's worst-case provisioning, ``"unspent ..."``).  When ``exact`` is False,
        the most it spends (the ε and δ granted).
    granted_epsilon, granted_delta : float
        The ε and δ asked for.
    exact : bool
        True when ``epsilon``/``delta`` is what the store will record; False when the split depends on the
        noisy size released during the draw, so only an upper bound is known before it.
    estimate : float or None
        With ``exact`` False: the plan's ε at the size the page knows (public data) or a nominal one.
    """

    epsilon: float
    delta: float
    granted_epsilon: float
    granted_delta: float
    exact: bool = True
    estimate: float | None = None

    def words(self) -> str:
        """``"ε = 1, δ = 1e-8"``; ``"at most ε = 2, δ = 1e-8"`` when only a bound is known."""
        text = fmt_budget(self.epsilon, self.delta)
        return text if self.exact else "at most " + text

    def note(self) -> str:
        """Why only a bound is known, in a sentence ("" when the cost is exact)."""
        if self.exact:
            return ""
        about = (f" (about ε = {fmt_epsilon(self.estimate)} at this data's size)" if self.estimate is not None
                 else "")
        return ("What it records depends on the noisy size drawn with it" + about + "; the store records what it "
                "spends, and the total is checked with the whole grant.")


def draw_cost(algorithm: str, params: dict, n_features: int, *, size: float | None = None) -> Cost:
    """The (ε, δ) a draw of ``algorithm`` with ``params`` records, from its declared budget plan.

    Parameters
    ----------
    algorithm : str
        A releasable key (:func:`dpcore.algorithms.registry.releasable`: a registry key or ``"sanitize"``).
    params : dict
        The draw's parameters (``epsilon``, ``n_clusters``, ``delta``, the algorithm's own, the unit's).
    n_features : int
        d.
    size : float or None
        The data's public size (public data), for a plan that depends on the size: the noisy size the fit
        plans with is within a few 1/ε of it.  None (private data): the plan is asked at
        :data:`NOMINAL_SIZE` and :data:`PLAN_SIZES`.

    Returns
    -------
    Cost

    Notes
    -----
    A plan that depends on the size is asked at ``size``, or without one at :data:`NOMINAL_SIZE` and
    :data:`PLAN_SIZES`: when it spends the same there, with no ``"unspent"`` step, that is the cost (every
    registered split that depends on the size moves budget between steps, not out of the plan).  Otherwise
    (PRIVATE-K-MEAN with the paper's rule, Auto where a candidate's δ depends on the size) the spend is
    known only after the noisy size is drawn, so the cost is its grant, "at most".  Public inputs only.
    """
    from dpcore.algorithms.parameters import UNSPENT
    from dpcore.algorithms.registry import releasable

    cls = releasable(algorithm)
    if not cls.private:
        return Cost(0.0, 0.0, 0.0, 0.0)
    accepted = set(inspect.signature(cls).parameters)
    est = cls(**{k: v for k, v in params.items() if k in accepted and k not in ("bounds", "random_state")})
    eps = float(est.epsilon)
    delta = float(getattr(est, "delta", 0.0) or 0.0) if "delta" in accepted else 0.0

    def spent(plan) -> tuple[float, float, bool]:
        used = [v for k, v in plan.items() if not k.startswith(UNSPENT)]
        return (math.fsum(float(v[0]) for v in used), math.fsum(float(v[1]) for v in used),
                len(used) < len(plan))

    try:
        e, d, unspent = spent(est.budget_plan(int(n_features)))
        if not unspent:
            return Cost(e, d, eps, delta)
        return Cost(eps, delta, eps, delta, exact=False, estimate=e)
    except ValueError:       # the split depends on the size: ask the plan at a few sizes
        try:
            got = [spent(est.budget_plan(int(n_features), float(n)))
                   for n in ((size,) if size else (NOMINAL_SIZE, *PLAN_SIZES))]
        except Exception:    # noqa: BLE001  (a plan that cannot be made here: the grant bounds the spend)
            return Cost(eps, delta, eps, delta, exact=False)
        e, d, _ = got[0]
        same = all(abs(g[0] - e) <= 1e-9 * max(eps, 1e-12) and abs(g[1] - d) <= 1e-9 * max(delta, 1e-300)
                   and not g[2] for g in got)
        if same:
            return Cost(e, d, eps, delta)
        return Cost(eps, delta, eps, delta, exact=False, estimate=e)


# -- the account -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Totals:
    """A data set's account in the release store: what every draw spent and the total set for it.

    Attributes
    ----------
    dataset : str
        The store's name of the data set (never shown: see ``title``).
    title : str
        The data set as people read it (:func:`dataset_title`).
    spent_epsilon, spent_delta : float
        Summed over every draw recorded on it, published or not.
    cap_epsilon, cap_delta : float or None
        The total set for it; None when none is set.
    recorded : bool
        False for data whose draws are not recorded (no public bounds: not private).
    """

    dataset: str
    title: str
    spent_epsilon: float = 0.0
    spent_delta: float = 0.0
    cap_epsilon: float | None = None
    cap_delta: float | None = None
    recorded: bool = True

    @property
    def left_epsilon(self) -> float | None:
        """What is left of the total ε (never below 0); None without a total."""
        return None if self.cap_epsilon is None else max(self.cap_epsilon - self.spent_epsilon, 0.0)

    @property
    def left_delta(self) -> float | None:
        """What is left of the total δ (never below 0); None without a total."""
        return None if self.cap_delta is None else max(self.cap_delta - self.spent_delta, 0.0)

    def fits(self, cost: Cost) -> bool:
        """True when a draw of ``cost`` (its ε and δ; the grant when only a bound is known) fits under the total.

        The store's own test (:func:`dpcore.store.records.exceeds_cap`), so a button agrees with the refusal
        :meth:`~dpcore.store.ReleaseStore.record` would give.
        """
        from dpcore.store.records import exceeds_cap
        if not self.recorded or self.cap_epsilon is None:
            return True
        e = cost.epsilon if cost.exact else cost.granted_epsilon
        d = cost.delta if cost.exact else cost.granted_delta
        return not (exceeds_cap(self.spent_epsilon, e, self.cap_epsilon)
                    or exceeds_cap(self.spent_delta, d, self.cap_delta or 0.0))

    def why_not(self, cost: Cost, *, what: str = "This draw") -> str | None:
        """The sentence saying why a draw of ``cost`` cannot be recorded now, or None when it fits."""
        if self.fits(cost):
            return None
        e = cost.epsilon if cost.exact else cost.granted_epsilon
        if self.cap_epsilon is not None and e > (self.left_epsilon or 0.0):
            return (f"{what} would spend ε = {fmt_epsilon(e)}, but only ε = {fmt_epsilon(self.left_epsilon)} of the "
                    f"total ε = {fmt_epsilon(self.cap_epsilon)} set for *{self.title}* is left (every draw counts, "
                    "published or not). Choose a smaller ε, or raise the total on the Release page (the data "
                    "owner).")
        return (f"{what} would spend δ = {fmt_delta(cost.delta if cost.exact else cost.granted_delta)}, but only "
                f"δ = {fmt_delta(self.left_delta)} of the total δ set for *{self.title}* is left. Choose an "
                "algorithm with δ = 0, or raise the total δ on the Release page.")

    def cap_words(self) -> str:
        """``"total 3, 1.04 left"``, ``"total 3, nothing left"`` or ``"no total set"``.

        :func:`dpcore.explain.cap_words`: the same words in the release report and the gallery.
        """
        from dpcore.explain import cap_words
        return cap_words(self.spent_epsilon, self.cap_epsilon)

    def words(self) -> str:
        """The account in one line: ``"ε spent so far: 2.96 (total 4, 1.04 left)"``."""
        return f"ε spent so far: {fmt_epsilon(self.spent_epsilon)} ({self.cap_words()})"


def totals(store, dataset: str, *, title: str | None = None, recorded: bool = True) -> Totals:
    """The account of ``dataset`` read from ``store`` (a :class:`dpcore.store.ReleaseStore`), or an empty one.

    ``recorded=False`` (data without public bounds, whose draws are never recorded) reads nothing.

    Returns
    -------
    Totals
    """
    name = title or dataset_title(dataset)
    if not recorded or store is None:
        return Totals(dataset, name, recorded=False)
    e, d = store.spent(dataset)
    cap = store.cap(dataset)
    return Totals(dataset, name, float(e), float(d), None if cap is None else float(cap[0]),
                  None if cap is None else float(cap[1]))


# -- buttons that draw -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DrawButton:
    """A button that spends: its label with the exact cost, and whether it can be pressed.

    Attributes
    ----------
    label : str
        What the button says (the cost included: ``"Draw: spends ε = 1"``).
    cost : Cost
    enabled : bool
        False when the draw cannot fit under the data's total or the person's role forbids it; the page
        shows the button disabled, with ``why_not`` beside it, before anyone presses it.
    why_not : str or None
    help : str
    """

    label: str
    cost: Cost
    enabled: bool
    why_not: str | None = None
    help: str = ""


def draw_button(cost: Cost, account: Totals, *, new: bool = False, what: str = "Draw", refusal: str | None = None,
                help: str = "") -> DrawButton:
    """The "Draw" (or "New draw") button for a draw of ``cost`` on data whose account is ``account``.

    Parameters
    ----------
    cost : Cost
    account : Totals
    new : bool
        A new draw of settings already drawn: "New draw (fresh noise: spends ε = 1 again)".
    what : str
        The button's first word(s) ("Draw", "Draw 4 panels", ...).
    refusal : str or None
        Why the acting person may not draw at all (their role), from :func:`ui.identity.draw_refusal`.
    help : str

    Returns
    -------
    DrawButton
    """
    if new:
        label = f"New draw (fresh noise: spends {cost.words()} again)"
    else:
        label = f"{what}: spends {cost.words()}"
    why = refusal or account.why_not(cost, what="This draw" if not new else "A new draw")
    return DrawButton(label, cost, why is None, why, help)


def offer_words(title: str, button: DrawButton, account: Totals, *, preview: bool) -> str:
    """The sentence above a "Draw" button for settings not drawn yet (Markdown).

    Parameters
    ----------
    title : str
        The data set as people read it.
    button : DrawButton
    account : Totals
    preview : bool
        The page shows a preview meanwhile (public data: fresh noise, recorded nowhere).

    Returns
    -------
    str
    """
    cost = button.cost.words()
    left = (f" of the ε = {fmt_epsilon(account.left_epsilon)} left" if account.left_epsilon is not None else "")
    if preview:
        text = (f"**Preview, not in the account.** *{title}* is public, so this page shows a preview at once: a fit "
                "with fresh noise, kept for this session only, not recorded, not counted in this data's ε and never "
                f"published. “Draw” records a draw of these settings (fresh noise), which spends {cost}{left} and can "
                "then be published.")
    elif account.recorded:
        text = (f"Nothing has been drawn from *{title}* with these settings yet. A draw spends {cost} of this data's "
                "privacy budget" + (f" (ε = {fmt_epsilon(account.left_epsilon)} of its total is left)"
                                    if account.left_epsilon is not None else "")
                + " and is recorded in its account before it is shown.")
    else:
        text = (f"Nothing has been drawn from *{title}* with these settings yet. Without public bounds a draw is not "
                "private: it is kept for this session only, never recorded or published.")
    note = button.cost.note()
    return text + (f" {note}" if note else "")


#: What a publication makes public besides its ε, ledger, data set name and account, by the kind of its synopsis.
PUBLISHED = {
    None: "its private centres",
    "grid": "its private centres and its noisy grid synopsis (noisy counts per cell)",
    "coreset": "its private centres and its private coreset (weighted points)",
    "wavelet_grid": "its private clusters of grid cells (one label per cell)",
    "points": ("its sanitized database: the published points and their weights (centres for any k are computed "
               "from them by anyone, at no cost)"),
}


def publish_question(release_id: int, release: dict, publisher: str, account: Totals) -> str:
    """The confirmation before a recorded draw is published (Markdown): what becomes public, by whom, and the total.

    Parameters
    ----------
    release_id : int
    release : dict
        The recorded release (``dpcore-release/2``).
    publisher : str
        Who publishes, as people read it (:func:`person_words`).
    account : Totals

    Returns
    -------
    str
    """
    kind = (release.get("synopsis") or {}).get("kind")
    eps = float(release["privacy"].get("epsilon_spent", release["privacy"]["epsilon"]))
    return (f"**Publish release #{release_id}?** Anyone who can open the public gallery will see "
            f"{PUBLISHED.get(kind, PUBLISHED[None])}, its ε = {fmt_epsilon(eps)} and budget ledger, the name of "
            f"*{account.title}* and its account, published under the name “{publisher}”. It cannot be unpublished. "
            f"{account.words()} on this data (every draw, published or not).")


# -- names people read -------------------------------------------------------------------------------------------
def dataset_title(name: str, description: str | None = None) -> str:
    """A data set as people read it: its title (the store's description), never an internal key.

    ``"upload:checkins_private.csv"`` reads ``"checkins_private.csv (uploaded)"``; ``"upload by ana:x.csv"``
    reads ``"x.csv (uploaded by ana)"``; another key without a title reads with spaces for underscores.

    Returns
    -------
    str
    """
    if description:
        return description.split("\n", 1)[0].strip()
    if name.startswith("upload by ") and ":" in name:
        who, _, file = name.removeprefix("upload by ").partition(":")
        return f"{file} (uploaded by {who})"
    if name.startswith("upload:"):
        return f"{name.removeprefix('upload:')} (uploaded)"
    return name.replace("_", " ")


def person_words(who: str | None) -> str:
    """Who drew or published, as people read it: ``"root on vm (local mode)"``, ``"ana@example.org"``.

    The store records ``"<identity> · <page>"`` (:func:`ui.identity.who`); the page is left out here
    (:func:`page_words` gives it), and a local-mode identity ``user@host (local mode)`` names the machine.

    Returns
    -------
    str
    """
    if not who:
        return "unknown"
    person = who.split(" · ", 1)[0].strip()
    local = person.endswith("(local mode)")
    base = person.removesuffix("(local mode)").strip()
    if local and "@" in base:
        user, host = base.split("@", 1)
        return f"{user} on {host} (local mode)"
    return person


def page_words(who: str | None) -> str:
    """The page a draw was made on (the part of ``who`` after " · "), or "" when none is recorded.

    Returns
    -------
    str
    """
    if not who or " · " not in who:
        return ""
    return who.split(" · ", 1)[1].strip()
