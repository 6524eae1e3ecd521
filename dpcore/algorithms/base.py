"""The estimator protocol shared by every algorithm in :data:`dpcore.ALGORITHMS`.

Follows scikit-learn: ``__init__`` only stores its arguments; every class declares
``_parameter_constraints`` with scikit-learn's :mod:`sklearn.utils._param_validation`, and ``fit``
starts with :meth:`DPClusterer._begin_fit`, which validates them once (as scikit-learn's
``_fit_context`` does), creates the budget ledger and the noise source and checks the data against
the public bounds.  Fitted attributes end in ``_``.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import euclidean_distances

from ..advisor.plan import ALGORITHMS
from ..preprocessing import warn_if_after_fitted_transformer
from ..privacy.accountant import BudgetLedger
from ..privacy.mechanisms import NoiseSource
from ..privacy.rng import check_random_state, is_seeded, warn_seeded
from ..utils.domain import Domain, _check_span, check_bounds
from ..utils.nearest import assign
from ..utils.validation import check_array, check_delta, check_epsilon, check_n_clusters
from ._docs import document
from ._docs import fit_doc as fit_doc  # re-exported: estimators mark their fit with it
from ._units import PrivacyUnitMixin
from .parameters import COMMON_CONSTRAINTS, DeclaredParameters
from .regime import Regime
from .traits import AuditCase, Control


class DPClusterer(DeclaredParameters, PrivacyUnitMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin,
                  BaseEstimator):
    """Base of all dpcore clusterers (private and non-private baselines).

    Class attributes (registry metadata, shown in the app)
    ------------------------------------------------------
    display_name : str
        A short name, at most 30 characters: the app's one-line select box shows that much
        (issue 56); what it does goes in ``summary``, the paper in ``reference``.
    reference : str
        Paper, section or algorithm.
    summary : str
        One line: what it does.
    private : bool
        False only for baselines (they accept ``epsilon=None``).
    needs_delta : bool
        True for (epsilon, delta)-DP algorithms.
    family : str
        ``"centroids"`` or ``"grid clusters"``.
    accepts_source : bool
        ``fit`` accepts any :class:`~dpcore.sources.DataSource` as well as an array.
    high_dimensional : bool
        Built for many columns (hundreds, such as images): the High-dimensional page offers it.
    colour : str
        The estimator's colour in the app's charts (a hex string).
    audit : AuditCase
        How the test suites exercise it (:class:`~dpcore.algorithms.traits.AuditCase`).
    controls : tuple of Control
        Page controls of its own parameters (:class:`~dpcore.algorithms.traits.Control`).
    calibrated : bool
        The advisor's calibration table measures this key (opt-in, :mod:`dpcore.advisor.model`).
    mse_formula : str
        The label of its closed-form MSE prediction (``"Eq. 7"``), "" when it declares none
        (:meth:`su_mse`, :meth:`formula_mse`: the advisor's formulas walk the registry for them).
    offered : bool
        The pickers and the advisor offer it as a clustering algorithm (:data:`dpcore.ALGORITHMS`);
        False for a release kind that is drawn and recorded but not offered (the sanitized synopsis).

    Fitted attributes (set by ``fit``)
    ----------------------------------
    cluster_centers_ : ndarray (k, d), data units
    budget_ : BudgetLedger
    synopsis_ : GridSynopsis, CoresetSynopsis, WaveletGridSynopsis or None
    bounds_ : Domain
        The public box used (``from_data`` is True when it was read from the data).
    n_clipped_ : int
        Rows moved onto the box boundary because they lay outside it.
    n_features_in_ : int
    simulation_ : bool
        True when ``random_state`` was given (an int, SeedSequence or
        Generator): the noise is reproducible from it, so the result is a
        simulation, not a private release (a private estimator then warns
        with :class:`~dpcore.exceptions.SeededNoiseWarning`).  False for the
        default ``random_state=None``: unpredictable noise, nothing about the
        generator is kept.
    feature_names_in_ : ndarray (n_features_in_,) of str
        Only when ``fit`` got a pandas DataFrame whose column names are all strings.
    """

    #: The stable registry key (``dpcore.ALGORITHMS[key] is cls``; CONTRACT.md).
    key: ClassVar[str] = ""
    display_name: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    private: ClassVar[bool] = True
    needs_delta: ClassVar[bool] = False
    family: ClassVar[str] = "centroids"
    #: Tag: ``fit`` accepts any :class:`~dpcore.sources.DataSource` (exact aggregates where the data
    #: live) as well as an array.  :data:`dpcore.algorithms.registry.SCALABLE` is derived from it.
    accepts_source: ClassVar[bool] = False
    #: Tag: built for many columns (the High-dimensional page offers the classes that declare it).
    high_dimensional: ClassVar[bool] = False
    colour: ClassVar[str] = "#444444"
    #: How the privacy, structural and exact-sums audits and the sources test exercise it
    #: (a subclass inherits its parent's; an estimator without cases shows as an explicit skip).
    audit: ClassVar[AuditCase] = AuditCase()
    controls: ClassVar[tuple[Control, ...]] = ()
    #: Opt-in: the advisor's calibration table measures this key (``python -m
    #: benchmarks.advisor_calibration --add KEY``), so the advisor ranks it and checks its verdicts
    #: against the measurements; False is valid (the advice says "not calibrated").  Declared on the
    #: class itself: a subclass under a new key is not calibrated until measured, so read it with
    #: ``vars(cls).get("calibrated", False)``.
    calibrated: ClassVar[bool] = False
    #: Its accuracy previews are checked against real draws (``tests/test_preview.py``: the 80 % band covers
    #: >= 70 % of them on taxi, Gowalla at person level and an upload).  Declared on the class itself, like
    #: ``calibrated``: a subclass under a new key is not checked until the test covers it.
    preview_checked: ClassVar[bool] = False
    #: The label of the closed-form MSE prediction it declares (:meth:`su_mse` or :meth:`formula_mse`).
    mse_formula: ClassVar[str] = ""
    #: False: registered as a release kind (``registry.releasable``) but not in ``dpcore.ALGORITHMS``.
    offered: ClassVar[bool] = True
    #: scikit-learn's parameter constraints (:mod:`sklearn.utils._param_validation`): one list per
    #: constructor parameter, checked once at the start of every ``fit`` (:meth:`_validate_params`).
    _parameter_constraints: ClassVar[dict] = COMMON_CONSTRAINTS

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        document(cls)

    # -- the estimator's own regime rule -------------------------------------
    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0, **params) -> Regime:
        """Whether the paper's regime holds for these public inputs (``"ok"`` unless a subclass says otherwise).

        Parameters
        ----------
        n : float
            A public ``n_samples`` or an already-released noisy count (never the true n), at least 1.
        d, k : int
        epsilon : float
            The budget left for the algorithm (after any noisy-size release).
        delta : float
        **params
            The estimator's own parameters that enter its rule (``theta``, ``max_cells``, ...).

        Returns
        -------
        Regime

        Notes
        -----
        **Privacy.** A rule may read public or released values only: it is post-processing, so
        the warning or refusal it leads to costs nothing and shows nothing of the rows.
        """
        return Regime(cls.key, "ok", "no regime rule for this algorithm.")

    # -- closed-form error predictions (Su et al. 2016, §6), read by dpcore.evaluation.advise --------------
    @classmethod
    def su_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, r: float, rho: float,
               theta: float) -> float | None:
        """Su et al. (2016, §6)'s predicted MSE of one centre, for their decision rule; None: no formula.

        Parameters
        ----------
        n : float
            A public or already-released noisy size (never the true n).
        d, k : int
        epsilon : float
        t : int
            DPLloyd's iterations in Eq. 7.
        r, rho, theta : float
            Half-width of the normalised domain, Eq. 6's normalised centroid coordinate, Eq. 4's
            grid constant.

        Returns
        -------
        float or None
            Normalised units (data in ``[-r, r]^d``); None when the class declares no formula, or has
            no prediction of its own at these inputs (the Hybrid below Inequality 15 runs as EUGkM).

        Notes
        -----
        **Privacy.** Public inputs only: post-processing, no cost.
        """
        return None

    @classmethod
    def su_bias2_bound(cls, n: float, d: int, epsilon: float, *, r: float = 1.0, theta: float = 10.0) -> float | None:
        """Upper bound on the squared bias :meth:`su_mse` leaves out (it is then a lower bound); None: none.

        Returns
        -------
        float or None
        """
        return None

    @classmethod
    def formula_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, delta: float, r: float, rho: float,
                    theta: float) -> float | None:
        """The closed-form MSE of one centre the advisor's formula pick compares (``Advice.formula_best``).

        :meth:`su_mse` unless a class says otherwise (zCDP-Lloyd's last step; None where a class's
        formula does not apply, such as a grid too coarse to resolve anything).

        Returns
        -------
        float or None
        """
        return cls.su_mse(n, d, k, epsilon, t=t, r=r, rho=rho, theta=theta)

    # -- shared fit scaffolding --------------------------------------------
    def _begin_fit(self, X, *, min_samples: int = 1, privacy_id=None, assignment: str | None = None,
                   histogram=None):
        """Validate the parameters and the data, set the common fitted attributes, return (data, noise, n).

        One entry for arrays and :class:`~dpcore.sources.DataSource` s; the class's
        ``accepts_source`` tag decides which the fit works on:

        * ``accepts_source`` False: ``X`` must be array-like; the rows are clipped onto ``bounds_``
          and returned as an ndarray (a DataSource is refused with a TypeError saying how to sample).
        * ``accepts_source`` True: ``X`` is a DataSource or an array (wrapped in an
          :class:`~dpcore.sources.ArraySource`), returned as a source; rows are not clipped here,
          every aggregate of the source clips them onto ``bounds_``.  Also sets ``n_dropped_``
          (rows a file or engine source skipped for a missing/NaN coordinate; exact, not private).
          ``assignment`` (``"auto"``, ``"cells"``, ``"rows"``; None = rows): with cells
          (:func:`dpcore.sources.cells.use_cells`, public inputs only) the returned source is a
          :class:`~dpcore.sources.cells.CellSource`: one pass over the (bounded) rows gives the row
          count, the rows outside the box and the fine-cell statistics every Lloyd step then reads.
          ``histogram`` (a function of d giving a grid shape from public inputs, or None): otherwise,
          on a source whose passes read the data (:class:`~dpcore.sources.ibis_source.IbisSource`),
          the pass that counts the rows also counts them into that grid
          (:class:`~dpcore.sources.cells.GridSource`), so a fit that reads that histogram (or one
          whose sides divide it by powers of two) reads the data once.

        Parameters
        ----------
        X : array-like (n, d) or DataSource
        min_samples : int, default 1
            Fewest rows a *non-private* baseline needs.  Private estimators
            ignore it: they accept any n >= 0, because an exception that
            depends on n would publish n (see "Structure" in
            docs/ARCHITECTURE.md).
        privacy_id : array-like (n,), str or None
            The privacy unit of every row (a column name on a source): contribution bounding.
        assignment : str or None
            Sources only (above).
        histogram : callable(int) -> tuple or None, or None
            Sources only (above).

        Returns
        -------
        (data, noise, n) : ndarray (n, d) or DataSource, NoiseSource, int
            ``n`` is the exact row count after contribution bounding: private, use it only through
            a noisy or public size.

        Raises
        ------
        ValueError, TypeError
            The parameters against ``_parameter_constraints`` first (:meth:`_validate_params`),
            then :mod:`dpcore.utils.validation`, with a sentence saying what to fix.
            For a private estimator every one of them depends on public inputs
            only (the parameters, the bounds, the number of columns, the
            dtype), never on the number or the values of the rows, except
            NaN/infinite values, which are the caller's to remove before
            anything is computed.
        TypeError
            A DataSource given to an estimator without the ``accepts_source`` tag.

        Warns
        -----
        SeededNoiseWarning
            A private estimator with a ``random_state``: a simulation.
        """
        from ..sources import ArraySource, DataSource
        from ..sources.cells import CellSource, one_pass_histogram, use_cells
        self._validate_params()
        is_source = isinstance(X, DataSource)
        if is_source and not self.accepts_source:
            raise unsupported_error(self.display_name or type(self).__name__)
        feature_names = None if is_source else _feature_names(X)
        if self.private:
            warn_if_after_fitted_transformer(self)
        # The release's structure must not depend on n (issue #19): a private fit accepts n = 0
        # (its release is then pure noise) and k > n (clusters without points get centres from
        # their noisy sums, as a cluster emptied during the iterations does).
        rows_needed = 0 if self.private else min_samples
        epsilon = check_epsilon(getattr(self, "epsilon", None), allow_none=not self.private)
        delta = check_delta(getattr(self, "delta", 0.0), required=self.needs_delta and self.private)
        if self.accepts_source:
            src = X if is_source else ArraySource(X, min_samples=rows_needed)
            d = src.n_features
            if self.bounds is not None:
                domain = check_bounds(self.bounds, d=d)
            elif self.private:
                domain = check_bounds(None, np.vstack(src.column_range()))
            else:
                domain = _silent_data_domain(np.vstack(src.column_range()))
        else:
            Xa = check_array(X, min_samples=rows_needed)
            d = Xa.shape[1]
            domain = check_bounds(self.bounds, Xa) if (self.private or self.bounds is not None) \
                else _silent_data_domain(Xa)
        if hasattr(self, "n_clusters"):
            check_n_clusters(self.n_clusters, None)
        ledger = BudgetLedger(epsilon if self.private else None, delta if self.private else 0.0)
        random_state = getattr(self, "random_state", None)
        noise = NoiseSource(check_random_state(random_state), ledger)
        self.simulation_ = is_seeded(random_state)
        if self.simulation_ and self.private:
            warn_seeded(random_state, stacklevel=3)
        self.bounds_ = domain
        self.n_features_in_ = d
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.budget_ = ledger
        self.synopsis_ = None
        if self.private:   # a refit that plans with no size must not keep the last fit's (_public_or_noisy_size)
            self.n_samples_estimate_ = None
        if not self.accepts_source:
            Xc, self.n_clipped_ = domain.clip(Xa)
            Xc, weights = self._bound_units(Xc, privacy_id, noise, domain)
            if weights is not None:
                # Weighted rows (contribution_bounding="weight", only for classes that declare
                # supports_weighting): the estimator takes them once with _pop_row_weights().
                self._row_weights = weights
            if not self.private and hasattr(self, "n_clusters"):
                check_n_clusters(self.n_clusters, Xc.shape[0])
            return Xc, noise, Xc.shape[0]
        config = self._unit_config(privacy_id, src.count() if privacy_id is not None and not is_source else None)
        cells = assignment is not None and use_cells(assignment, d, src)
        shape = histogram(d) if histogram is not None and config is None else None
        if cells and config is None:
            src = CellSource(src, domain)   # the one pass; the row count and the rows outside come with it
        elif shape is not None:
            src = one_pass_histogram(src, domain, shape)   # the histogram, the row count and the rows outside
        self.n_clipped_ = src.n_outside(domain)  # one pass with the row count on engines (cached)
        n = src.count()
        if not self.private:
            if n < min_samples:
                raise ValueError(f"the data have {n} row(s) with finite coordinates; at least {min_samples} needed")
            if hasattr(self, "n_clusters"):
                check_n_clusters(self.n_clusters, n)
        self.n_dropped_ = src.n_dropped()
        if config is not None:
            src, n = self._bound_source(src, X, privacy_id, config, noise, domain)
            if cells and assignment is not None and use_cells(assignment, src.n_features, src):
                src = CellSource(src, domain)
        return src, noise, n

    def _check_fitted(self):
        if not hasattr(self, "budget_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                                 "appropriate arguments before using this estimator.")

    def _check_predict_X(self, X) -> np.ndarray:
        self._check_fitted()
        names = _feature_names(X)
        fitted_names = getattr(self, "feature_names_in_", None)
        if fitted_names is not None and names is not None and not np.array_equal(names, fitted_names):
            raise ValueError("The feature names should match those that were passed during fit: "
                             f"got {names.tolist()}, fitted on {fitted_names.tolist()}")
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input: pass the columns it was fitted on")
        return X

    def transform(self, X) -> np.ndarray:
        """Distances from each row of ``X`` to every released centre.

        Parameters
        ----------
        X : array-like (n, d), data units

        Returns
        -------
        ndarray (n, k) float, Euclidean distances in data units.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            ``X`` has another number of columns than the fitted data.

        Notes
        -----
        Post-processing of the released centres: costs no privacy budget.  The
        distances are a function of ``X`` and as private as ``X`` itself.
        """
        X = self._check_predict_X(X)
        C = np.asarray(self.cluster_centers_, dtype=float)
        if C.shape[0] == 0:  # a grid-cluster release may find no cluster at all
            return np.empty((X.shape[0], 0))
        return euclidean_distances(X, C)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Opposite of the k-means objective (inertia) of ``X`` under the released centres.

        Parameters
        ----------
        X : array-like (n, d), data units
        y : ignored
        sample_weight : array-like (n,), optional

        Returns
        -------
        float, ``-sum_i w_i * min_j ||x_i - c_j||^2`` (higher is better), as scikit-learn's
        ``KMeans.score``.

        Raises
        ------
        sklearn.exceptions.NotFittedError, ValueError
            As :meth:`transform`.

        Notes
        -----
        Computed on the caller's ``X``: when that is the raw private data the
        score is **not private** (it is for the data owner's eyes only); on
        public or held-out data it is free post-processing of the release.
        """
        D = self.transform(X)
        if D.shape[1] == 0:
            return -np.inf
        sq = np.min(D, axis=1) ** 2
        if sample_weight is not None:
            sq = sq * np.asarray(sample_weight, dtype=float)
        return -float(np.sum(sq))

    @property
    def _n_features_out(self) -> int:
        return int(np.shape(self.cluster_centers_)[0])

    def predict(self, X) -> np.ndarray:
        """Label each row with its nearest released centre.

        Parameters
        ----------
        X : array-like (n, d), data units

        Returns
        -------
        ndarray (n,) int in ``[0, k)``.

        Notes
        -----
        Uses only released output, so labelling costs no extra privacy; but
        the labels are a function of X and are as private as X itself.
        """
        X = self._check_predict_X(X)
        return assign(X, self.cluster_centers_)

    def fit_predict(self, X, y=None):
        return self.fit(X).predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        return tags

    def _expected_failed_checks(self) -> dict[str, str]:
        """scikit-learn estimator checks this estimator fails on purpose, with the reason in words.

        Passed to :func:`sklearn.utils.estimator_checks.parametrize_with_checks`
        (``expected_failed_checks``) by the test suite; subclasses add their own.
        """
        if not self.private:
            return {}
        return {"check_clustering": (
            "a private estimator keeps no labels_ of its training rows (that would publish one exact label per "
            "private record), and at the check's sizes (n = 150, epsilon = 1) the noise is meant to dominate, "
            "so the check's adjusted-Rand threshold is not a property of a private release"),
            "check_estimators_empty_data_messages": (
            "a private fit accepts n = 0 (its release is then pure noise): an exception that depends on the "
            "number of rows would publish it, so empty data is not an error (docs/ARCHITECTURE.md, Structure)")}


SAMPLING_NOTE = (
    "To use it on large data, fit it on a sample that fits in memory, e.g. "
    "source.sample(...) in the engine or `SELECT ... USING SAMPLE 1%` / df.sample(fraction=0.01), then "
    "fit on the array. Sampling is not free: the release is differentially private for the sample only. "
    "If the sample is drawn uniformly at random and kept secret (who is in it is never published), privacy "
    "amplification by subsampling makes the guarantee for the whole table stronger (about "
    "log(1 + q (e^eps - 1)) for a Poisson sample of rate q); if the sample is not random or may become "
    "known, the guarantee is the same eps for the records in the sample and the release simply "
    "ignores the others (it says nothing about them, but the sample's selection may itself reveal them).")


def display_name(key: str) -> str:
    """The display name of the estimator registered under ``key``, for a sentence that names it.

    Read from the registry's dict (:data:`dpcore.advisor.plan.ALGORITHMS`, which lies beneath the
    algorithms), so a rule can name another algorithm without importing it.

    Returns
    -------
    str, ``key`` itself when no class declares it.
    """
    cls = ALGORITHMS.get(key)
    return (cls.display_name or key) if cls is not None else key


def unsupported_error(name: str) -> TypeError:
    """The error of an estimator that needs the rows in memory and was given a DataSource.

    Returns
    -------
    TypeError, naming the estimators tagged ``accepts_source`` and how to sample.
    """
    scalable = ", ".join(f"{c.display_name} ({c.key})" for c in ALGORITHMS.values() if c.accepts_source)
    return TypeError(
        f"{name} needs the data in memory and cannot run on a DataSource. The algorithms that run on any "
        f"source (numpy, DuckDB, Spark, PostgreSQL) are: {scalable}. " + SAMPLING_NOTE)


def _feature_names(X) -> np.ndarray | None:
    """Column names of a DataFrame when all are strings (scikit-learn's rule), else None."""
    cols = getattr(X, "columns", None)
    if cols is None or not hasattr(X, "dtypes"):
        return None
    names = np.asarray(list(cols), dtype=object)
    return names if len(names) and all(isinstance(c, str) for c in names) else None


def _silent_data_domain(X: np.ndarray) -> Domain:
    """Data box for non-private baselines, where reading the range leaks nothing new."""
    lower, upper = X.min(axis=0), X.max(axis=0)
    with np.errstate(over="ignore"):
        _check_span(upper - lower, "the data's range")
    pad = np.where(upper > lower, 0.0, 1e-6 * np.maximum(np.abs(upper), 1.0))
    return Domain(lower - pad, upper + pad, from_data=True)
