"""The registry: every algorithm the package offers, by its stable key (CONTRACT.md), from plain imports.

Each estimator class declares everything the app, the tests and the docs need to know about it (its
``key``, ``family``, ``accepts_source`` tag, ``regime`` rule, display name, colour, page controls and
audit case: :mod:`~dpcore.algorithms.traits`); this module only gathers them, so adding an algorithm
is its module, one import and one :func:`register` line here (docs/ARCHITECTURE.md, "Where to add an
algorithm").
"""
from __future__ import annotations

from ..advisor.plan import ESTIMATORS
from ..advisor.verdict import with_advice
from .auto_kmeans import AutoKMeans
from .base import DPClusterer
from .centroid.convergent import KMeansGuarantee, SubClustering
from .centroid.dplloyd import DPLloyd
from .centroid.eugkm import EUGkM
from .centroid.gupt import GkM, GkM3K
from .centroid.hybrid import Hybrid
from .centroid.privgene import PGkM
from .coreset.private_kmeans import PrivateKMeans
from .highdim.balcan import BalcanKMeans
from .highdim.dpm import DPM
from .highdim.zcdp_lloyd import ZCDPLloyd
from .nonprivate import KMeans
from .regime import Regime, public_inputs
from .wavecluster.private import PrivBasic, PrivQT, PrivTHR, PrivTHREM
from .wavecluster.wavecluster import WaveCluster

#: dict[str, type]: every algorithm the package offers, keyed by a stable id (CONTRACT.md).
ALGORITHMS: dict[str, type[DPClusterer]] = {}


def register(cls: type[DPClusterer]) -> type[DPClusterer]:
    """Offer an estimator class under its ``key``: the pickers, the advisor and every test suite that
    covers "each estimator" find it from here.

    Parameters
    ----------
    cls : type
        A :class:`~dpcore.algorithms.base.DPClusterer` subclass with a ``key`` of its own.

    Returns
    -------
    type
        ``cls`` (so ``register`` can also decorate a class).

    Raises
    ------
    TypeError
        ``cls`` is not a DPClusterer subclass.
    ValueError
        It has no key, or its key is another class's.
    """
    if not (isinstance(cls, type) and issubclass(cls, DPClusterer)):
        raise TypeError(f"register takes a DPClusterer subclass, got {cls!r}")
    key = cls.__dict__.get("key")
    if not key:
        raise ValueError(f"{cls.__name__} declares no key of its own (a subclass must not reuse its parent's)")
    if ALGORITHMS.get(key, cls) is not cls:
        raise ValueError(f"key {key!r} is already {ALGORITHMS[key].__name__}'s")
    ALGORITHMS[key] = ESTIMATORS[key] = cls
    return cls


register(KMeans)
register(DPLloyd)
register(EUGkM)
register(Hybrid)
register(GkM)
register(GkM3K)
register(PGkM)
register(KMeansGuarantee)
register(SubClustering)
register(PrivateKMeans)
register(BalcanKMeans)
register(DPM)
register(ZCDPLloyd)
register(AutoKMeans)
register(WaveCluster)
register(PrivBasic)
register(PrivQT)
register(PrivTHR)
register(PrivTHREM)

#: Registry keys of the estimators whose ``fit`` accepts any :class:`~dpcore.sources.DataSource`
#: (derived from the ``accepts_source`` tag of each class registered above; code that must also see
#: classes registered later reads the tag itself).
SCALABLE: tuple[str, ...] = tuple(key for key, cls in ALGORITHMS.items() if cls.accepts_source)


def releasable(key: str) -> type[DPClusterer]:
    """The estimator class a recorded release of ``key`` was drawn with: a registry key or ``"sanitize"``.

    The sanitized point synopsis (:class:`~dpcore.algorithms.sanitize.Sanitizer`, issue 57) is drawn,
    recorded and published like any release, but it is not a clustering algorithm the pages offer, so
    it stays out of :data:`ALGORITHMS` (whose keys the pickers and the advisor walk).

    Parameters
    ----------
    key : str
        The ``algorithm.key`` of a release: a registry key, or ``"sanitize"``.

    Returns
    -------
    type
        The estimator class (its ``display_name``, ``private`` flag and constructor).

    Raises
    ------
    KeyError
        ``key`` names no estimator.
    """
    if key == "sanitize":
        from .sanitize import Sanitizer  # imported here: sanitize imports nothing of the registry
        return Sanitizer
    return ALGORITHMS[key]


def assess(algorithm: str, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0,
           **params) -> Regime:
    """Whether the algorithm's paper regime holds for these public inputs, with the advisor's advice.

    The class's own rule, checked against the calibrated measurements and naming the advisor's first
    pick where it warns or refuses (:func:`dpcore.advisor.verdict.with_advice`); an estimator's fit
    asks the rule only (:func:`~dpcore.algorithms.regime.check_fit`).

    Parameters
    ----------
    algorithm : str
        Registry key.
    n : float
        Dataset size: a public ``n_samples`` or an already-released noisy count
        (never the true private size).
    d, k : int
    epsilon : float
        The budget left for the algorithm (after any noisy-size release).
    delta : float
    **params
        The estimator's own parameters that enter its rule (``theta``,
        ``max_cells``, ``n_candidates``, ``budget``, ...).

    Returns
    -------
    Regime
        Status ``"ok"`` for algorithms without a regime rule (and keys not in the registry).

    Notes
    -----
    **Privacy.** A function of public or released values only: post-processing, no cost.

    Examples
    --------
    The coreset of Feldman et al. needs far more than 1,000 points (the verdict names the advisor's
    first pick instead: here SubClustering); DPLloyd runs:

    >>> from dpcore.algorithms.registry import assess
    >>> r = assess("coreset", n=1000, d=2, k=3, epsilon=1.0, delta=1e-8)
    >>> r.status, r.better
    ('refuse', 'subcluster')
    >>> assess("dplloyd", n=1000, d=2, k=3, epsilon=1.0).status
    'ok'
    """
    n, d, k, epsilon = public_inputs(n, d, k, epsilon)
    cls = ALGORITHMS.get(algorithm)
    if cls is None:
        return Regime(algorithm, "ok", "no regime rule for this algorithm.")
    return with_advice(cls.regime(n=n, d=d, k=k, epsilon=epsilon, delta=float(delta), **params),
                       n=n, d=d, k=k, epsilon=epsilon, delta=float(delta))
