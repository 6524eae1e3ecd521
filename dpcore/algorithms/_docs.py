"""The numpydoc ``fit`` docstring every estimator shares, written once (issue 27).

:func:`fit_doc` marks a ``fit``; :func:`document` fills the template in when the class is made
(``DPClusterer.__init_subclass__``), from the class's tags: whether it accepts a
:class:`~dpcore.sources.DataSource`, whether it takes a privacy unit, whether it weights rows; and
the class docstring's shared entries (the privacy-unit parameters, ``n_samples_estimate_``).
"""
from __future__ import annotations

import functools
import inspect
import textwrap

_FIT_DOC = """{summary}

Parameters
----------
X : array-like of shape (n, n_features){source_type}
    Data in data units; n, its number of rows, is private (unlike a declared public
    ``n_samples``). Values outside the public ``bounds`` are clipped to them and
    counted in ``n_clipped_``.{source_note}
y : None
    Ignored; present for scikit-learn API consistency.
privacy_id : array-like of shape (n,), str or None, default None{unit_note}

Returns
-------
self : {name}
    The fitted estimator.

Raises
------
ValueError, TypeError
    Bad data or parameters, with a sentence saying what to fix
    (see :mod:`dpcore.utils.validation`){memory_note}.

Examples
--------
>>> import numpy as np
>>> from dpcore.algorithms import {name}
>>> X = np.random.default_rng(0).uniform(0, 1, size={size})
>>> est = {name}({example})
>>> est.fit(X) is est
True
"""


_UNIT_DOC = """max_contributions : int or None, default None
    The privacy unit's bound L (issue 23): with ``fit(X, privacy_id=ids)`` neighbouring datasets differ
    by all the rows of one unit (a user), each unit counts as at most L rows (``contribution_bounding``),
    and every sensitivity is multiplied by L.  Public: choose it without looking at the data, or with
    :func:`dpcore.privacy.units.choose_max_contributions` (which spends a stated share of epsilon).
    None: a row-level release (each row is its own unit).
contribution_bounding : {{"weight", "sample"}}, default "{default}"
    ``"weight"``: keep every row, weighted ``min(1, L / m)`` for a unit with m rows, rounded down to a
    multiple of ``2^-12`` so that a unit's weights sum to at most L exactly; every count and sum over
    rows is then an exact fixed-point sum of weights (or weights times quantised coordinates), which
    one unit moves by at most L times one row's bound (triangle inequality): the sensitivity of L
    sampled rows, with every row's information kept (Amin, Dick, Kulesza, Munoz Medina & Vassilvitskii
    2019, "Bounding user contributions: a bias-variance trade-off in differential privacy", ICML, §3).
    A weight depends on its own unit's row count only.  ``"sample"``: keep at most L rows per unit,
    chosen by a secret keyed hash{weight_note}."""


#: The size a fit planned with: one attribute, one sentence, for every estimator that takes ``n_samples``.
_SIZE_DOC = """n_samples_estimate_ : float or None
    The dataset size the fit planned with (its parameter rules; ``budget_plan(d, n)``'s ``n``): the
    public ``n_samples``, or the noisy size it released (its ``"dataset size"`` ledger entry), at
    least 1.  Never the true size: a public input or a released value.  None when the fit planned
    with no size (e.g. a fixed number of iterations or rounds)."""


def _with_unit_parameters(doc: str, cls) -> str:
    """``doc`` with the privacy-unit parameters added at the end of its Parameters section."""
    note = "" if cls.supports_weighting else f".  This estimator samples only: {cls.weighting_refusal}"
    default = "weight" if cls.supports_weighting else "sample"
    return _at_section_end(doc, "Parameters", _UNIT_DOC.format(weight_note=note, default=default))


def _at_section_end(doc: str, section: str, text: str) -> str:
    """``doc`` with ``text`` (numpydoc entries, unindented) at the end of its ``section``; unchanged without one."""
    block = textwrap.indent(text, "    ")
    lines = doc.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == section)
    except StopIteration:
        return doc
    end = next((i for i in range(start + 2, len(lines)) if lines[i].strip() and
                set(lines[i + 1].strip() if i + 1 < len(lines) else "") == {"-"}), len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[:end] + block.split("\n") + lines[end:])


def fit_doc(summary: str, *, example: str = "n_clusters=3, epsilon=1.0, bounds=(0, 1)", size=(1000, 2)):
    """Mark an estimator's ``fit`` for the shared numpydoc docstring (filled in when its class is made).

    One template for the Parameters, Returns, Raises and Examples sections every ``fit`` shares, so
    they are written once; the class's ``accepts_source`` tag decides what it says about a
    :class:`~dpcore.sources.DataSource`.

    Parameters
    ----------
    summary : str
        The first line: what ``fit`` releases.
    example : str
        The constructor's arguments in the Examples section.
    size : tuple
        The shape of the example's uniform data.

    Returns
    -------
    callable, the decorator.
    """
    def mark(fit):
        fit._fit_doc = (summary, example, size)
        return fit
    return mark


def _own_fit(cls):
    """A ``fit`` of the class's own that runs the one it inherits: only so that its docstring names the class
    (a DPLloyd variant inherits the :class:`~dpcore.algorithms._blocks.lloyd.NoisyLloyd` frame's fit)."""
    inherited = cls.fit

    @functools.wraps(inherited)
    def fit(self, *args, **kwargs):
        return inherited(self, *args, **kwargs)
    fit.__qualname__ = f"{cls.__qualname__}.fit"
    return fit


def document(cls) -> None:
    """Fill in ``cls.fit``'s marked docstring; add the privacy-unit parameters and ``n_samples_estimate_``
    (an estimator that takes ``n_samples``) to the class docstring."""
    params = inspect.signature(cls.__init__).parameters
    if "max_contributions" in params and cls.__dict__.get("__doc__") and "max_contributions :" not in cls.__doc__:
        cls.__doc__ = _with_unit_parameters(cls.__doc__, cls)
    if "n_samples" in params and cls.__dict__.get("__doc__") and "n_samples_estimate_ :" not in cls.__doc__:
        cls.__doc__ = _at_section_end(cls.__doc__, "Attributes", _SIZE_DOC)
    fit = cls.__dict__.get("fit")
    if fit is None and cls.__dict__.get("key") and getattr(getattr(cls, "fit", None), "_fit_doc", None):
        fit = cls.fit = _own_fit(cls)
    spec = getattr(fit, "_fit_doc", None)
    if spec is not None:
        summary, example, size = spec
        src = cls.accepts_source
        fit.__doc__ = _FIT_DOC.format(
            summary=summary, name=cls.__name__, example=example, size=tuple(size),
            source_type=" or :class:`~dpcore.sources.DataSource`" if src else "",
            source_note=("\n    A source (file, DuckDB, Spark, PostgreSQL) is not loaded: each aggregate runs "
                         "where the data live." if src else ""),
            memory_note="" if src else ("; a :class:`~dpcore.sources.DataSource` is a TypeError (this algorithm "
                                        "needs the rows in memory)"),
            unit_note=("\n    The privacy unit (e.g. the user) of every row, or, on a data source, the name of its "
                       "unit column: the release then protects each unit's rows together (at most "
                       "``max_contributions`` of them).  None: each row is its own unit."
                       if "max_contributions" in inspect.signature(cls.__init__).parameters else
                       "\n    Ignored by this non-private estimator."))
