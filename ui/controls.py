"""The shared sidebar controls: dataset, algorithm, k and the privacy level epsilon."""
from __future__ import annotations

import inspect
import math

import streamlit as st

import dpcore
from dpcore.explain import (
    PRIVACY_LEVELS,
    guidance_sentence,
    large_epsilon_warning,
    level_for,
    unit_words,
)
from dpcore.glossary import help_for

from .advice import advisor_panel
from .data_picker import bounding_note, dataset_picker, is_large, unit_params
from .models.shared import WorkingSet, dataset_title, fmt_epsilon, fmt_odds, totals
from .page import kept_widget, set_url, url_default
from .store import release_store

EPSILON_VALUES = [lv.epsilon for lv in PRIVACY_LEVELS]
#: The δ an (ε, δ) algorithm may take here: far below 1/n for every data set in the app.
DELTA_VALUES = [1e-10, 1e-8, 1e-6, 1e-5]


#: The algorithm a page opens with (the Explorer, Compare and the centroid pages): EUGkM, Su et al.'s pick for
#: the two-column data the app opens on.  ``ui.serve.warm_first_screen`` prepares the Explorer's first screen for it.
DEFAULT_ALGORITHM = "eugkm"
#: The privacy level the ε slider opens with (a page may open on another, e.g. the coreset page's 2).
DEFAULT_EPSILON = 1.0

# -- inputs -------------------------------------------------------------------
def epsilon_label(eps: float) -> str:
    return f"ε = {fmt_epsilon(eps)} · {level_for(eps).name}"


def _slider_value(eps: float) -> str:
    # Short: the slider prints its two end values under the track, where "ε = 10 · odds ≤ 22,026×" ran over
    # the caption (issue 56); the odds are the caption's first words.
    return f"ε = {fmt_epsilon(eps)}"


def unit_word(ds) -> str:
    """The one word for what an ε on ``ds`` protects with the current settings: "trip", "check-in", "image",
    "record", or the person ("user") when the release is person level.

    The same word the page's own sentences use (``account_caption``), so the sidebar's caption and
    large-ε warning name one unit per data set on every page (issue 56), not "one unit" or "one record".
    """
    kind = getattr(ds, "kind", "points")
    L = unit_params(ds).get("max_contributions")
    person = {"unit": getattr(ds, "unit_column", None), "max_contributions": L} if L is not None else None
    return unit_words(person, kind).one


def working_set(ds, *, algorithm: str | None = None, k: int | None = None, epsilon: float | None = None,
                delta: float | None = None) -> WorkingSet:
    """The page's working set for its model (:class:`ui.models.shared.WorkingSet`): public facts about ``ds``, the
    choices made in the sidebar, the privacy unit and whether raw figures may be shown."""
    from .identity import sees_raw
    cols = tuple(str(c) for c in ds.columns)
    return WorkingSet(ds.name, getattr(ds, "title", None) or dataset_title(ds.name), cols,
                      geo=bool(getattr(ds, "geo", False)) and len(cols) == 2, public=bool(getattr(ds, "public", False)),
                      bounded=ds.bounds is not None, large=is_large(ds), algorithm=algorithm, k=k, epsilon=epsilon,
                      delta=delta, unit=unit_word(ds), max_contributions=unit_params(ds).get("max_contributions"),
                      sees_raw=sees_raw(ds))


def epsilon_slider(label: str = "Privacy level (ε)", *, key: str = "epsilon", default: float = DEFAULT_EPSILON,
                   sidebar: bool = True, ds=None) -> float:
    """Log-scale ε slider that shows named privacy levels; syncs with ``?epsilon=``.

    ``ds``: the data set chosen; its unit (:func:`unit_word`) is named in the caption and the large-ε
    warning.  Without it (the Explain page, about no data set) they speak of "one unit".
    """
    start = url_default("epsilon", default, float)
    start = min(EPSILON_VALUES, key=lambda v: abs(math.log(v) - math.log(start if start > 0 else default)))
    where = st.sidebar if sidebar else st
    eps = where.select_slider(label, options=EPSILON_VALUES, value=start, format_func=_slider_value, key=key,
                              help=help_for("ε", "privacy unit", "sequential composition"))
    unit = None if ds is None else unit_word(ds)     # None: the Explain page, about no data set
    where.caption(guidance_sentence(eps, unit or "unit"))
    warning = large_epsilon_warning(float(eps), unit) if unit else large_epsilon_warning(float(eps))
    if warning:
        where.warning(warning)
    return float(eps)


def delta_input(default: float = 1e-8, *, label: str = "δ (for (ε, δ) algorithms)", key: str = "delta",
                sidebar: bool = True, allow_zero: bool = False) -> float:
    """δ, the chance the ε bound may fail, for (ε, δ) algorithms; one value across pages, synced with ``?delta=``.

    Part of the working set (issue 56): δ chosen on one page is the δ of every page that draws with one (a
    page's own ``default`` applies only until someone chooses).  ``allow_zero`` adds 0 (pure ε-DP), for
    the Explain page's statements; a page that draws then falls back to its ``default``.

    Returns
    -------
    float, one of :data:`DELTA_VALUES` (or 0.0 when ``allow_zero``).
    """
    options = ([0.0] if allow_zero else []) + DELTA_VALUES
    start = url_default("delta", default, float, valid=lambda v: v in options)
    where = st.sidebar if sidebar else st
    return float(where.select_slider(label, options=options, value=start, key=key,
                                     format_func=lambda v: "0 (pure ε-DP)" if v == 0 else f"{v:g}",
                                     help=help_for("δ")))


def teach_toggle(ds) -> bool:
    """"Explain as I go" (issue 31, on every page that draws since issue 56): teaching on public data only.

    On data that is already public a page may compare its release with the data itself: the true
    points beneath, and a sentence on what the noise did.  The choice follows the person across pages.
    """
    if not getattr(ds, "public", False):
        return False
    return bool(kept_widget(st.sidebar.toggle, "Explain as I go", key="teach",
                            help="For teaching on public data: the page compares the release with the data itself "
                                 "and says in a sentence what the noise did."))


def algorithm_picker(*, family: str = "centroids", key: str = "algorithm", default: str = DEFAULT_ALGORITHM,
                     sidebar: bool = True, scalable_only: bool = False, ds=None) -> str:
    """Choose a private algorithm of one family; shows its one-line summary and paper.

    ``scalable_only`` offers only the algorithms that run on a DataSource
    (:data:`dpcore.SCALABLE`), for large sources.  With the data set ``ds``, says when the algorithm
    samples each person's rows although weighting was chosen (:func:`ui.data_picker.bounding_note`).
    """
    where = st.sidebar if sidebar else st
    keys = [k for k, cls in dpcore.ALGORITHMS.items() if cls.family == family and cls.private
            and (not scalable_only or cls.accepts_source)]
    start = url_default("algorithm", default, str, valid=lambda a: a in keys)
    algorithm = where.selectbox("Algorithm", keys, index=keys.index(start) if start in keys else 0, key=key,
                           format_func=lambda k: dpcore.ALGORITHMS[k].display_name or k)
    cls = dpcore.ALGORITHMS[algorithm]
    where.caption(f"{cls.summary} *Source: {cls.reference}.*")
    note = bounding_note(ds, algorithm) if ds is not None else None
    if note:
        where.caption(note)
    if scalable_only:
        where.caption("On a large source only the algorithms that run where the data lie are offered; the "
                      "others need the rows in memory (fit them on a sample: see the README).")
    return algorithm


def algorithm_settings(algorithm: str) -> dict:
    """The controls of the algorithm's own parameters that its class declares (``controls``).

    A control without a ``default`` starts at the constructor's own default, so the paper's value is
    stated once, in the class.

    Returns
    -------
    dict
        Parameter name -> the value chosen (a select box's option, or a float), to pass to the estimator.
    """
    out: dict = {}
    cls = dpcore.ALGORITHMS[algorithm]
    for c in cls.controls:
        help_text = help_for(c.glossary) if c.glossary else (c.help or None)
        if c.options:
            out[c.param] = st.selectbox(c.label, list(c.options), key=c.param, help=help_text)
            continue
        lo, hi = c.bounds or (0.0, 1.0)
        start = float(c.default if c.default is not None else inspect.signature(cls).parameters[c.param].default)
        if c.percent:
            out[c.param] = st.slider(c.label, int(round(lo * 100)), int(round(hi * 100)), int(round(start * 100)),
                                     key=c.param, help=help_text) / 100
        else:
            out[c.param] = float(st.number_input(c.label, float(lo), float(hi), start, key=c.param, help=help_text))
    return out


def default_n_clusters(ds, max_value: int = 100) -> int:
    """The k a data set opens with: its literature k (``ds.n_clusters_hint``: S1 15, the taxi sample 5), else 5."""
    return min(ds.n_clusters_hint or 5, max_value)


def n_clusters_input(ds, *, key: str = "k", max_value: int = 100) -> int:
    """Number of clusters k (sidebar), defaulting to the dataset's literature k; syncs with ``?k=``.

    Choosing another dataset in the session sets k to that dataset's literature k (S1: 15, the
    taxi sample: 5), so a data set opens on the settings its papers use (issue 31); a link's ``?k=``
    is kept when a page opens.
    """
    hint = default_n_clusters(ds, max_value)
    last = st.session_state.get("_dp_k_dataset")
    st.session_state["_dp_k_dataset"] = ds.name
    if last is not None and last != ds.name:
        st.session_state[key] = hint      # set before the widget exists, which then takes it ("min": no clash)
        st.sidebar.caption(f"k set to {hint}, the usual number of clusters for this data set." if ds.n_clusters_hint
                           else f"k set to {hint}: a guess, since nothing is known about this data's clusters. "
                                "Change it to the number you expect.")
        return int(st.sidebar.number_input("Number of clusters k", min_value=1, max_value=max_value, key=key))
    start = url_default("k", hint, int, valid=lambda v: 1 <= v <= max_value)
    k = int(st.sidebar.number_input("Number of clusters k", min_value=1, max_value=max_value,
                                    value=min(start, max_value), key=key))
    if not ds.n_clusters_hint and k == hint:
        st.sidebar.caption(f"k = {hint} is a guess: nothing is known about this data's clusters. Change it to the "
                           "number you expect.")
    return k


# -- "Analyse a publication" vs "draw from the data" (issue 57) ------------------------------------------------
#: The two inputs a centre-releasing page offers when the store holds a published sanitized database of its data.
INPUTS = {"draw": "Draw from the data (spends ε)", "publication": "Analyse a publication (no spend)"}


def published_synopses(name: str) -> list:
    """The publications of data set ``name`` that are sanitized databases (synopsis kind ``"points"``), oldest first.

    Read from the release store: every one was drawn, charged and published by its author, so
    anything computed from it alone is post-processing (Dwork & Roth 2014, Prop. 2.1).

    Returns
    -------
    list of :class:`dpcore.store.records.StoredRelease`
    """
    return [s for s in release_store().published(name) if (s.release.get("synopsis") or {}).get("kind") == "points"]


def input_choice(ds, *, key: str = "input"):
    """The sidebar's choice of input: draw from the data, or analyse a published sanitized database of it.

    Offered only when the data have public bounds and the store holds at least one published point
    synopsis of this data set (:func:`published_synopses`); otherwise nothing is shown and the page
    draws from the data as before.

    Returns
    -------
    StoredRelease or None: the publication chosen, or None to draw from the data.
    """
    if ds.bounds is None:        # no public bounds: nothing of it is recorded, so nothing of it is published
        return None
    pubs = published_synopses(ds.name)
    if not pubs:
        return None
    choice = st.sidebar.radio("Input", list(INPUTS), format_func=INPUTS.get, key=key,
                              help="A published sanitized database of this data can be analysed at no cost: "
                                   "k-means for any k on its points and weights reads nothing else, so no ε is "
                                   "spent and nothing is recorded.")
    if choice != "publication":
        return None
    labels = {s.id: f"#{s.id} · ε = {fmt_epsilon(s.epsilon)} · {len(s.release['synopsis']['weights'])} points · "
                    f"published {s.published_at:%Y-%m-%d}" for s in pubs}
    rid = st.sidebar.selectbox("Publication", list(reversed(list(labels))), format_func=labels.get,
                               key=f"{key}_release", help="The published sanitized databases of this data, newest "
                                                          "first (the public gallery lists the same).")
    return next(s for s in pubs if s.id == rid)




def analysis_controls(*, default_algorithm: str = DEFAULT_ALGORITHM, allow_large: bool = False):
    """The sidebar of a page that may also analyse a publication (the Explorer, Compare): the data set, the input,
    then what that input reads.

    The input comes before the algorithm and ε (issue 65, point 2): analysing a published sanitized database
    spends nothing and depends only on k, so in that mode the algorithm and ε are not shown (they did
    nothing), and k goes into the URL as every other setting does.

    Returns
    -------
    (Dataset, fingerprint, algorithm key or None, k, publication or None)
        The algorithm is None when a publication is analysed.
    """
    ds, fp = dataset_picker(allow_large=allow_large)
    if ds is None:
        st.stop()
    publication = input_choice(ds)
    if publication is not None:
        k = n_clusters_input(ds)
        set_url(dataset=ds.name, k=k)
        return ds, fp, None, k, publication
    algorithm = algorithm_picker(default=default_algorithm, scalable_only=is_large(ds))
    return ds, fp, algorithm, n_clusters_input(ds), None


def release_controls(*, epsilon_label: str = "Privacy level (ε)", default_algorithm: str = DEFAULT_ALGORITHM,
                     allow_large: bool = False, epsilon: bool = True):
    """The sidebar every centroid page shares: dataset, algorithm, k, ε (all in the URL).

    Stops the page with a sentence when no data is chosen yet.  There is no
    seed: private releases draw unpredictable noise once and are kept (see
    :func:`private_release`).  k larger than the number of rows is not an
    error here: the number of rows is private, and the algorithms give an
    empty cluster a centre from its noisy sums.

    ``allow_large`` offers the configured large sources too (see :func:`dataset_picker`).
    ``epsilon=False`` leaves out ε and what follows it (the page calls :func:`epsilon_controls` itself, e.g.
    inside an ``st.fragment`` so that an ε move reruns only what depends on ε; epsilon is then None).

    Returns
    -------
    (Dataset, fingerprint, algorithm key, k, epsilon)
    """
    ds, fp = dataset_picker(allow_large=allow_large)
    if ds is None:
        st.stop()
    algorithm = algorithm_picker(default=default_algorithm, scalable_only=is_large(ds), ds=ds)
    k = n_clusters_input(ds)
    eps = epsilon_controls(ds, algorithm, k, label=epsilon_label) if epsilon else None
    return ds, fp, algorithm, k, eps


def epsilon_controls(ds, algorithm: str, k: int, *, label: str = "Privacy level (ε)") -> float:
    """The sidebar's ε and what depends on it there: the slider, the advisor at this ε, the running total.

    The second half of :func:`release_controls`.  Safe inside an ``st.fragment`` (issue 56): everything it
    draws goes to the sidebar from the same run, so a fragment rerun redraws it in place.

    Returns
    -------
    float, the ε chosen (one of :data:`EPSILON_VALUES`).
    """
    eps = epsilon_slider(label, ds=ds)
    advisor_panel(ds, algorithm, k, eps)
    sidebar_total(ds)
    return eps


def sidebar_total(ds) -> None:
    """Risk as a running total in the sidebar (issue 31): this data's total so far and what is left, as odds.

    The sidebar is drawn before the page draws; a draw recorded later in the same run refreshes it
    (:func:`refresh_sidebar_total`), so the sidebar never shows a total older than the page's.
    """
    if ds.bounds is None:     # no public bounds: nothing is recorded (not private), the page says so
        return
    slot = st.sidebar.empty()
    st.session_state["_dp_total_slot"] = (slot, ds.name)
    _show_total(slot, ds.name)


def refresh_sidebar_total() -> None:
    """Redraw the sidebar's running total after a draw was recorded in this run."""
    held = st.session_state.get("_dp_total_slot")
    if held is not None:
        _show_total(*held)


def _show_total(slot, name: str) -> None:
    acc = totals(release_store(), name)
    slot.markdown(f"**{acc.words()}**, every draw on this data, published or not (odds ≤ "
                  f"{fmt_odds(acc.spent_epsilon)}).")
