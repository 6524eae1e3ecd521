"""The registry: every algorithm the package offers, by its stable key (CONTRACT.md), one line each.

Each estimator class declares everything the app, the tests and the docs need to know about it (its
``key``, ``family``, tags such as ``accepts_source`` and ``high_dimensional``, ``regime`` rule, display
name, colour, page controls, audit case, Su et al.'s MSE formula: :mod:`~dpcore.algorithms.traits`);
this module only gathers them, so adding an algorithm is its module and one line of :data:`REGISTERED`
(docs/ARCHITECTURE.md, "Where to add an algorithm").
"""
from __future__ import annotations

import importlib

from ..advisor.plan import ALGORITHMS
from ..advisor.verdict import with_advice
from .base import DPClusterer
from .regime import Regime, public_inputs

#: Every estimator class, one line each, as ``".module:Class"`` (a module under :mod:`dpcore.algorithms`,
#: in importlib's relative form), in the order the pickers offer them.  A class declaring ``offered =
#: False`` is a release kind the pages draw and record but do not offer as a clustering algorithm (the
#: sanitized point synopsis, issue 57).
REGISTERED: tuple[str, ...] = (
    ".nonprivate:KMeans",
    ".centroid.dplloyd:DPLloyd",
    ".centroid.eugkm:EUGkM",
    ".centroid.hybrid:Hybrid",
    ".centroid.gupt:GkM",
    ".centroid.gupt:GkM3K",
    ".centroid.privgene:PGkM",
    ".centroid.convergent:KMeansGuarantee",
    ".centroid.convergent:SubClustering",
    ".coreset.private_kmeans:PrivateKMeans",
    ".highdim.balcan:BalcanKMeans",
    ".highdim.dpm:DPM",
    ".highdim.zcdp_lloyd:ZCDPLloyd",
    ".auto_kmeans:AutoKMeans",
    ".wavecluster.wavecluster:WaveCluster",
    ".wavecluster.private:PrivBasic",
    ".wavecluster.private:PrivQT",
    ".wavecluster.private:PrivTHR",
    ".wavecluster.private:PrivTHREM",
    ".sanitize:Sanitizer",
)

#: dict[str, type]: every kind of release the store may hold, by key: the algorithms of
#: :data:`ALGORITHMS` and the classes that declare ``offered = False`` (:func:`releasable` reads it).
RELEASE_KINDS: dict[str, type[DPClusterer]] = {}


def register(cls: type[DPClusterer] | str) -> type[DPClusterer]:
    """Offer an estimator class under its ``key``: the pickers, the advisor and every test suite that
    covers "each estimator" find it from here.

    Parameters
    ----------
    cls : type or str
        A :class:`~dpcore.algorithms.base.DPClusterer` subclass with a ``key`` of its own, or its
        path ``"module:Class"``: ``".centroid.dplloyd:DPLloyd"`` as :data:`REGISTERED` lists it
        (relative to :mod:`dpcore.algorithms`), or an absolute module path (a plugin's).

    Returns
    -------
    type
        The class (so ``register`` can also decorate a class).

    Raises
    ------
    TypeError
        ``cls`` is not a DPClusterer subclass.
    ValueError
        It has no key, or its key is another class's.
    """
    if isinstance(cls, str):
        module, _, name = cls.partition(":")
        found = importlib.import_module(module, __package__)   # ".centroid.dplloyd": under dpcore.algorithms
        cls = getattr(found, name)
    if not (isinstance(cls, type) and issubclass(cls, DPClusterer)):
        raise TypeError(f"register takes a DPClusterer subclass, got {cls!r}")
    key = cls.__dict__.get("key")
    if not key:
        raise ValueError(f"{cls.__name__} declares no key of its own (a subclass must not reuse its parent's)")
    if RELEASE_KINDS.get(key, cls) is not cls:
        raise ValueError(f"key {key!r} is already {RELEASE_KINDS[key].__name__}'s")
    RELEASE_KINDS[key] = cls
    if cls.offered:
        ALGORITHMS[key] = cls
    return cls


for _path in REGISTERED:
    register(_path)

#: Registry keys of the estimators whose ``fit`` accepts any :class:`~dpcore.sources.DataSource`
#: (derived from the ``accepts_source`` tag of each class registered above; code that must also see
#: classes registered later reads the tag itself).
SCALABLE: tuple[str, ...] = tuple(key for key, cls in ALGORITHMS.items() if cls.accepts_source)


def releasable(key: str) -> type[DPClusterer]:
    """The estimator class a recorded release of ``key`` was drawn with.

    Every registered class, offered (:data:`ALGORITHMS`) or not (``offered = False``: the sanitized
    point synopsis, :class:`~dpcore.algorithms.sanitize.Sanitizer`, is drawn, recorded and published
    like any release, but the pickers and the advisor do not offer it as a clustering algorithm).

    Parameters
    ----------
    key : str
        The ``algorithm.key`` of a release.

    Returns
    -------
    type
        The estimator class (its ``display_name``, ``private`` flag and constructor).

    Raises
    ------
    KeyError
        ``key`` names no registered class.
    """
    return RELEASE_KINDS[key]


#: The person-level bounding of the estimators that can weight rows, and of the app (issue 68: on Gowalla
#: weighting gave the sanitized synopsis a smaller cost error than sampling at the same L and ε, and
#: centres as good; ``benchmarks/results/privacy_unit_gowalla.txt``).
DEFAULT_BOUNDING = "weight"


def bounding_for(algorithm, requested: str | None = None) -> str:
    """The contribution bounding an estimator runs for a requested one: weighting only where it can.

    Parameters
    ----------
    algorithm : str or type
        A release kind's key (:func:`releasable`) or an estimator class.
    requested : {"weight", "sample"} or None
        The bounding asked for (a page's choice); None: :data:`DEFAULT_BOUNDING`.

    Returns
    -------
    str
        ``requested`` where the class declares ``supports_weighting`` (or sampling was asked for), else
        ``"sample"``: the estimators whose mechanisms are not sums over rows bound by sampling
        (``weighting_refusal`` says why).

    Raises
    ------
    KeyError
        An unknown key.
    ValueError
        ``requested`` is neither "weight" nor "sample".
    """
    cls = releasable(algorithm) if isinstance(algorithm, str) else algorithm
    how = DEFAULT_BOUNDING if requested is None else str(requested)
    if how not in ("weight", "sample"):
        raise ValueError(f"contribution_bounding must be 'weight' or 'sample', got {requested!r}")
    return how if how == "sample" or getattr(cls, "supports_weighting", False) else "sample"


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
