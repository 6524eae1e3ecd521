"""WaveCluster and differentially private WaveCluster (Chen, Yu & Chirkova).

WaveCluster (Sheikholeslami et al. 1998) finds clusters of arbitrary shape on
a grid in four steps (Chen et al., §3.2):

1. *quantisation*: cut the public box into ``num_grid`` cells per dimension
   and count the points of each cell (the count matrix ``M``);
2. *wavelet transform*: one level of a discrete wavelet transform of ``M``
   (PyWavelets, ``mode="periodization"``); the approximation sub-band ``W``
   (one value per block of 2^d cells) is kept;
3. *significant-grid identification*: ``S`` = the positive values of ``W``
   in ascending order, ``k = ceil((1 - p) |S|)`` with ``p`` the density
   threshold; the top ``k`` values are significant;
4. *cluster identification*: clusters are the connected components of the
   significant cells (:func:`scipy.ndimage.label`); a point takes the label of
   its cell, ``-1`` (noise) in a non-significant cell.

The private variants (Chen et al., §4) are, in the order of the paper:

* :class:`PrivBasic` -- WaveCluster on synthetic data drawn from an
  epsilon-DP grid synopsis (Alg. 1);
* :class:`PrivQT` -- Laplace noise on the count matrix (Alg. 2);
* :class:`PrivTHR` -- as PrivQT, then a noisy count ``|Z'|`` of the
  non-positive true transformed values removes the ``|Z'|/2`` smallest noisy
  positive values before the threshold (Alg. 3, 90 % / 10 % split);
* :class:`PrivTHREM` -- as PrivQT, with the threshold drawn by the exponential
  mechanism over the true transformed values with the rank quality function
  (Alg. 4, 70 % / 30 % split).

Sensitivities
-------------
Neighbouring data sets differ by adding or removing one record.  The count
matrix then changes in one cell by 1 (L1 sensitivity 1; the cells are
disjoint, parallel composition).  For the two threshold steps what matters is
how many transformed values one cell can move: with the 1-D approximation
matrix ``T`` of the wavelet (``T[i, u]`` = weight of cell ``i`` in value
``u``, computed by PyWavelets from ``Wavelet(name).dec_lo`` with periodic
extension), the separable d-D transform gives cell ``(i_1..i_d)`` weight
``prod_j T[i_j, u_j]`` in value ``u``, so one cell moves at most
``s = (max_i #{u : T[i, u] != 0})^d`` values (:func:`approximation_influence`).
For Haar, ``dec_lo = (1/sqrt 2, 1/sqrt 2)`` and the blocks do not overlap, so
``s = 1``: the paper's value (§4.3, §4.4).

References
----------
Chen, Yu, Chirkova (2015). "WaveCluster with differential privacy". CIKM 2015
(arXiv:1508.00192), §3-§6.
Sheikholeslami, Chatterjee, Zhang (1998). "WaveCluster: a multi-resolution
clustering approach for very large spatial databases". VLDB.
Qardaji, Yang, Li (2013). "Differentially private grids for geospatial data". ICDE
(the uniform-grid size rule used by :class:`PrivBasic`).
Smith (2011). "Privacy-preserving statistical estimation with optimal convergence
rates". STOC (exponential mechanism over the intervals between sorted values).
"""
from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
import pywt
from scipy import ndimage

from .base import DPClusterer
from .dplloyd import public_or_noisy_size
from .grid import eug_cells_per_dim, noisy_grid
from .privacy.accountant import split_budget
from .synopsis import WaveletGridSynopsis

#: Cap on the number of quantisation cells (8 bytes each), as in :mod:`dpcore.grid`.
MAX_CELLS = 1 << 22
#: PyWavelets extension mode: keeps one transformed value per block of 2^d cells.
MODE = "periodization"


# ---------------------------------------------------------------------------
# parameter checks
# ---------------------------------------------------------------------------
def check_wavelet(wavelet) -> pywt.Wavelet:
    """Return the PyWavelets discrete wavelet named ``wavelet``.

    Raises
    ------
    ValueError
        If the name is not a discrete wavelet of PyWavelets (``pywt.wavelist(kind="discrete")``).
    """
    if isinstance(wavelet, pywt.Wavelet):
        return wavelet
    names = pywt.wavelist(kind="discrete")
    if not isinstance(wavelet, str) or wavelet not in names:
        raise ValueError(f"wavelet must be a discrete wavelet name such as 'haar', 'bior2.2', 'db2' or 'sym4' "
                         f"(see pywt.wavelist(kind='discrete')), got {wavelet!r}")
    return pywt.Wavelet(wavelet)


def _check_params(num_grid, density_threshold, connectivity, d):
    if isinstance(num_grid, bool) or not isinstance(num_grid, numbers.Integral) or num_grid < 2:
        raise ValueError(f"num_grid must be a whole number of cells per dimension, at least 2, got {num_grid!r}")
    if d * math.log(int(num_grid)) > math.log(MAX_CELLS):
        raise ValueError(f"num_grid={num_grid} in {d} dimensions makes {int(num_grid)}^{d} cells, more than "
                         f"{MAX_CELLS}: choose a smaller num_grid")
    if isinstance(density_threshold, bool) or not isinstance(density_threshold, numbers.Real) \
            or not (0 <= float(density_threshold) < 1):
        raise ValueError("density_threshold is the fraction of positive transformed values that are NOT "
                         f"significant, in [0, 1) (e.g. 0.1 for 10 %), got {density_threshold!r}")
    if connectivity not in ("full", "face"):
        raise ValueError(f"connectivity must be 'full' (cells touching by a corner are adjacent) or 'face', "
                         f"got {connectivity!r}")


def _check_share(share, name):
    if isinstance(share, bool) or not isinstance(share, numbers.Real) or not (0 < float(share) < 1):
        raise ValueError(f"{name} is the fraction of epsilon spent on the count matrix, strictly between 0 "
                         f"and 1, got {share!r}")
    return float(share)


# ---------------------------------------------------------------------------
# the WaveCluster steps
# ---------------------------------------------------------------------------
def quantize(U: np.ndarray, num_grid: int) -> np.ndarray:
    """Count matrix of points in ``[0, 1]^d`` on a ``num_grid^d`` grid (step 1).

    Parameters
    ----------
    U : ndarray (n, d), unit coordinates (data mapped affinely from the public box)
    num_grid : int

    Returns
    -------
    ndarray float, shape ``(num_grid,) * d``: the (true) count of each cell.
    """
    n, d = U.shape
    idx = cell_index(U, num_grid)
    flat = np.ravel_multi_index(tuple(idx.T), (num_grid,) * d) if d > 1 else idx[:, 0]
    return np.bincount(flat, minlength=num_grid ** d).astype(float).reshape((num_grid,) * d)


def cell_index(U: np.ndarray, num_grid: int) -> np.ndarray:
    """Integer cell index (n, d) of each row of unit coordinates ``U`` (the upper edge goes in the last cell)."""
    idx = np.floor(U * num_grid).astype(np.intp)
    np.clip(idx, 0, num_grid - 1, out=idx)
    return idx


@lru_cache(maxsize=64)
def _approx_matrix(wavelet_name: str, num_grid: int) -> np.ndarray:
    """1-D approximation matrix ``T`` (num_grid, m_out): row i = transform of the unit impulse at i."""
    T = pywt.dwt(np.eye(num_grid), wavelet_name, mode=MODE, axis=1)[0]
    T[np.abs(T) < 1e-12] = 0.0
    return T


@lru_cache(maxsize=64)
def _alignment_shift(wavelet_name: str, num_grid: int) -> int:
    """Offset between transformed index ``u`` and the cell block ``(2u, 2u + 1)`` it is centred on."""
    T = _approx_matrix(wavelet_name, num_grid)
    m_out = T.shape[1]
    i = 2 * (m_out // 2) if 2 * (m_out // 2) < num_grid else 0
    u = int(np.argmax(np.abs(T[i])))
    return (u - i // 2) % m_out


def approximation_influence(wavelet, num_grid: int, d: int) -> tuple[int, bool]:
    """How many level-1 approximation values one grid cell can move, and in which direction.

    Parameters
    ----------
    wavelet : str or pywt.Wavelet
    num_grid : int
        Cells per dimension.
    d : int
        Dimension.

    Returns
    -------
    s : int
        ``(max_i nnz(T[i, :]))^d`` where ``T`` is the 1-D approximation matrix
        (periodic extension): the largest number of transformed values that
        change when one cell count changes.
    nonnegative : bool
        True when every weight in ``T`` is >= 0 (Haar; not the biorthogonal
        or Daubechies filters, whose ``dec_lo`` has negative taps): adding a
        point then never decreases a transformed value.

    Notes
    -----
    The d-D transform is separable, so the weight of cell ``(i_1..i_d)`` in
    value ``(u_1..u_d)`` is ``prod_j T[i_j, u_j]``; it is non-zero exactly when
    every factor is.  For Haar, ``T[i, u] = 1/sqrt(2)`` iff ``u = floor(i/2)``,
    hence ``s = 1`` (Chen et al. §4.3).
    """
    w = check_wavelet(wavelet)
    T = _approx_matrix(w.name, int(num_grid))
    per_dim = int((T != 0).sum(axis=1).max())
    return per_dim ** int(d), bool((T >= 0).all())


def wavelet_approximation(counts: np.ndarray, wavelet) -> np.ndarray:
    """Level-1 approximation sub-band of the (noisy) count matrix (step 2).

    Parameters
    ----------
    counts : ndarray, shape ``(m,) * d``
    wavelet : str or pywt.Wavelet

    Returns
    -------
    ndarray, shape ``(ceil(m / 2),) * d``; value ``u`` is centred on cells
    ``2u, 2u + 1`` of each axis (the periodic transform is rolled so).
    For Haar it is the block sum divided by ``2^(d/2)`` (a 2x2 block sum / 2 in 2-D).
    """
    w = check_wavelet(wavelet)
    d = counts.ndim
    W = pywt.dwtn(counts, w, mode=MODE)["a" * d]
    shift = _alignment_shift(w.name, counts.shape[0])
    if shift:
        W = np.roll(W, -shift, axis=tuple(range(d)))
    return W


def threshold_rank(n_positive: float, density_threshold: float) -> int:
    """``k = ceil((1 - p) |S|)``: how many of the largest positive values are significant.

    With ``p = 0.1`` and ``|S| = 159`` (the spiral set, num_grid 40) this is the
    paper's ``k = 144`` (Chen et al. §6.2).
    """
    n_positive = max(float(n_positive), 0.0)
    return int(min(math.ceil((1.0 - float(density_threshold)) * n_positive - 1e-9), n_positive))


def top_k_threshold(sorted_positive: np.ndarray, k: int) -> float:
    """The ``k``-th largest of an ascending array (``inf`` when ``k <= 0``: nothing significant)."""
    if k <= 0 or sorted_positive.size == 0:
        return math.inf
    return float(sorted_positive[-min(k, sorted_positive.size)])


def label_significant(significant: np.ndarray, connectivity: str = "full") -> tuple[np.ndarray, int]:
    """Connected components of significant cells (step 4).

    Parameters
    ----------
    significant : ndarray of bool, the transformed grid's shape
    connectivity : {"full", "face"}
        ``"full"``: cells that touch by a face, edge or corner are adjacent (8
        neighbours in 2-D; MATLAB's ``bwlabel`` default, which gives the
        paper's 3 spirals); ``"face"``: only cells sharing a face (4 in 2-D).

    Returns
    -------
    labels : ndarray of int, same shape, cluster id per cell, ``-1`` if not significant
    n_clusters : int
    """
    d = significant.ndim
    structure = ndimage.generate_binary_structure(d, d if connectivity == "full" else 1)
    lab, n = ndimage.label(significant, structure=structure)
    return lab.astype(np.intp) - 1, int(n)


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------
class WaveCluster(DPClusterer):
    """WaveCluster, non-private (Sheikholeslami et al. 1998, as run by Chen et al. §3.2).

    Parameters
    ----------
    epsilon : None
        Accepted (and ignored) for a uniform interface; the baseline is not private.
    bounds : (lower, upper), data units, optional
        The box that is quantised.  ``None`` uses the data's own range (no
        warning: the baseline is for the data owner's eyes only).
    num_grid : int, default 40
        Cells per dimension of the count matrix (the paper's spiral setting).
    density_threshold : float in [0, 1), default 0.1
        Fraction ``p`` of the positive transformed values that are not
        significant: the top ``ceil((1 - p) |S|)`` values are significant.
    wavelet : str, default "haar"
        Any discrete PyWavelets wavelet ("bior2.2", "db2", "sym4", ...).
    connectivity : {"full", "face"}, default "full"
        Adjacency used for connected components (see :func:`label_significant`).
    random_state : ignored (kept for a uniform interface)

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (number of clusters found, d), data units
        Per cluster, the mean of its cells' centres weighted by their transformed values.
    labels_ : ndarray (n,) int
        Cluster of each training point, ``-1`` for noise.  Baseline only: the
        private variants do not store training labels (their length is the
        private n); call ``predict(X)`` or ``fit_predict(X)``.
    n_clusters_ : int
    significant_cells_ : ndarray of bool, transformed-grid shape
    n_significant_ : int
        Number of significant transformed values (the paper's ``k``).
    threshold_ : float
        The density threshold value: cells with transformed value >= it (and > 0) are significant.
    threshold_rank_ : int
        The rank ``k`` (or private ``k'``) the threshold was taken at: the paper's "k"
        (§6.2).  ``n_significant_`` can exceed it when values tie at the threshold.
        Always computed from released (noisy) values in the private variants.
    synopsis_ : WaveletGridSynopsis
        Transformed-grid edges (data units), cluster id per cell, transformed values.
    budget_ : BudgetLedger (empty)

    Raises
    ------
    ValueError
        Bad ``num_grid``, ``density_threshold``, ``wavelet`` or ``connectivity``, or bad data.

    References
    ----------
    Chen, Yu, Chirkova (2015), §3.2; Sheikholeslami et al. (1998).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.wavecluster import WaveCluster
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = WaveCluster(bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()
    (0.0, 0.0)
    """

    display_name = "WaveCluster (not private)"
    reference = "Sheikholeslami et al. 1998; as in Chen, Yu & Chirkova 2015, §3.2"
    summary = ("Grid clustering: counts per cell, a wavelet transform, dense cells above a percentile, "
               "clusters = connected dense cells. The reference the private versions are measured against.")
    private = False
    family = "grid clusters"

    def __init__(self, *, epsilon=None, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.num_grid = num_grid
        self.density_threshold = density_threshold
        self.wavelet = wavelet
        self.connectivity = connectivity
        self.random_state = random_state

    # -- fit scaffolding shared by every variant ----------------------------
    def _prepare(self, X):
        """Validate; return (source, noise, n): X may be an array or any DataSource."""
        src, noise, n = self._begin_source_fit(X)
        _check_params(self.num_grid, self.density_threshold, self.connectivity, src.n_features)
        self._wavelet_ = check_wavelet(self.wavelet)
        return src, noise, n

    def _counts(self, src) -> np.ndarray:
        """The exact count matrix of step 1 (``quantize``), computed where the data live."""
        m = int(self.num_grid)
        return src.grid_counts(self.bounds_, (m,) * src.n_features).astype(float)

    def fit(self, X, y=None):
        """Cluster X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : WaveCluster
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.wavecluster import WaveCluster
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = WaveCluster(bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, _, _ = self._prepare(X)
        counts = self._counts(X)
        W = wavelet_approximation(counts, self._wavelet_)
        S = np.sort(W[W > 0])
        k = threshold_rank(S.size, self.density_threshold)
        self._finish(X, W, top_k_threshold(S, k), k)
        return self

    def _finish(self, X, W, threshold, k):
        """Steps 3-4 from the (noisy) transformed values and the threshold; set fitted attributes."""
        significant = (W >= threshold) & (W > 0)
        labels, n_clusters = label_significant(significant, self.connectivity)
        m = int(self.num_grid)
        dom = self.bounds_
        edges = []
        for j in range(dom.d):
            e = np.linspace(dom.lower[j], dom.upper[j], m + 1)
            edges.append(np.append(e[:-1][::2], e[-1]))
        self.significant_cells_ = significant
        self.n_significant_ = int(significant.sum())
        self.threshold_ = float(threshold)
        self.threshold_rank_ = int(k)
        self.n_clusters_ = n_clusters
        self.cells_per_dim_ = m
        self.synopsis_ = WaveletGridSynopsis(edges=edges, labels=labels, values=W)
        self.cluster_centers_ = _weighted_cluster_centres(edges, labels, W, n_clusters)
        if not self.private and hasattr(X, "X"):
            # Only the baseline keeps training labels: a private estimator's labels_ would have the
            # private length n and hold a function of every row (issue #19); fit_predict and
            # predict(X) label the caller's own rows from the released grid instead.  A file or
            # engine source is never pulled into memory, so it gets no labels_ either.
            self.labels_ = self._label_points(X.X)

    def _label_points(self, X: np.ndarray) -> np.ndarray:
        dom = self.bounds_
        U = (X - dom.lower) / dom.width
        idx = cell_index(U, int(self.num_grid)) // 2
        synopsis = self.synopsis_
        assert synopsis is not None, "fit sets the released grid first"
        labels = synopsis.labels[tuple(idx.T)]
        return np.where(dom.contains(X), labels, -1)

    def _expected_failed_checks(self) -> dict[str, str]:
        grid = ("the wavelet grid has num_grid^d cells; scikit-learn's check uses 5 to 10 columns with the "
                f"default num_grid, beyond the {MAX_CELLS:,}-cell cap, and the estimator refuses it up front "
                "with a message naming a smaller num_grid")
        return {**super()._expected_failed_checks(), "check_estimators_dtypes": grid,
                "check_dtype_object": grid, "check_fit2d_1sample": grid}

    def predict(self, X) -> np.ndarray:
        """Label points by the cluster of the transformed cell they fall in.

        Parameters
        ----------
        X : array-like (n, d), data units, or a :class:`~dpcore.sources.DataSource`

        Returns
        -------
        ndarray (n,) int: cluster id, ``-1`` for noise (a non-significant cell) or
        a point outside the public bounds.

        Notes
        -----
        Uses only the released grid of labels, so it costs no privacy.
        """
        X = self._check_predict_X(X)
        return self._label_points(X)


def _weighted_cluster_centres(edges, labels, W, n_clusters) -> np.ndarray:
    d = labels.ndim
    if n_clusters == 0:
        return np.empty((0, d))
    mids = [(e[:-1] + e[1:]) / 2 for e in edges]
    mesh = np.meshgrid(*mids, indexing="ij")
    lab = labels.ravel()
    keep = lab >= 0
    w = np.clip(W.ravel()[keep], 1e-12, None)
    mass = np.bincount(lab[keep], weights=w, minlength=n_clusters)
    return np.stack([np.bincount(lab[keep], weights=w * g.ravel()[keep], minlength=n_clusters) / mass
                     for g in mesh], axis=1)


class PrivQT(WaveCluster):
    """PrivQT: WaveCluster on a Laplace-noised count matrix (Chen et al. 2015, §4.2, Alg. 2).

    Parameters
    ----------
    epsilon : float, default 1.0
        Total budget (epsilon-DP), all spent on the count matrix.
    bounds : (lower, upper), data units
        Public box; ``None`` reads it from the data and warns
        (:class:`~dpcore.PrivacyLeakWarning`).
    num_grid, density_threshold, wavelet, connectivity
        As :class:`WaveCluster`; the paper reuses the non-private values.
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    As :class:`WaveCluster`; ``synopsis_.values`` holds the noisy transformed values (publishable).

    Raises
    ------
    ValueError
        Bad parameters or data.

    Notes
    -----
    **Privacy.** epsilon-DP.  Adding or removing one record changes one cell of the count
    matrix by 1, so ``M + Lap(1/epsilon)`` per cell is epsilon-DP (Laplace
    mechanism, parallel composition over disjoint cells; Chen et al. Thm. 1);
    everything after is post-processing.  This holds for every wavelet.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.2 (Alg. 2), §5.1.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.wavecluster import PrivQT
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivQT(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "PrivQT"
    reference = "Chen, Yu & Chirkova 2015, §4.2 (Alg. 2)"
    summary = "Laplace noise on the grid counts, then WaveCluster: noise turns about half the empty cells positive."
    private = True

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", random_state=None):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)

    def _noisy_transform(self, counts, noise, epsilon):
        # Lattice noise (integer=False), not integer noise: PrivTHR drops |Z'|/2 of the positive
        # noisy values because symmetric noise lifts half of the empty cells above 0; integer
        # noise at large epsilon leaves almost all of them at exactly 0 and nothing survives.
        # The fine lattice (<= 2^-10 of the noise scale) keeps that 1/2 and is still float-safe.
        noisy = noise.laplace(counts, sensitivity=1.0, epsilon=epsilon, integer=False,
                              name="grid cell counts (quantisation)")
        return wavelet_approximation(noisy, self._wavelet_)

    def fit(self, X, y=None):
        """Release the private clusters of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : PrivQT
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.wavecluster import PrivQT
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = PrivQT(epsilon=1.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise, _ = self._prepare(X)
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, float(self.epsilon))
        S_noisy = np.sort(W_noisy[W_noisy > 0])
        k = threshold_rank(S_noisy.size, self.density_threshold)
        self._finish(X, W_noisy, top_k_threshold(S_noisy, k), k)
        return self


class PrivTHR(PrivQT):
    """PrivTHR: PrivQT plus a noisy count of non-positive values that prunes the noisy list (§4.3, Alg. 3).

    After the noisy count matrix (share ``quantization_share`` of epsilon),
    the count ``|Z|`` of non-positive values of the *true* transform gets
    Laplace noise (the rest of epsilon); about ``|Z|/2`` of them turn positive
    under symmetric noise, so the ``|Z'|/2`` smallest noisy positive values
    are removed before ``k' = ceil((1 - p) |S''|)`` and the threshold are computed.

    Parameters
    ----------
    epsilon : float, default 1.0
    quantization_share : float in (0, 1), default 0.9
        Fraction of epsilon for the count matrix; the paper's best split is
        90 % / 10 % (§6.4).
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus
    noisy_nonpositive_ : float
        The released ``|Z'|``.
    sensitivity_ : int
        Sensitivity used for ``|Z|`` (1 for Haar).

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition (Chen et al. Thm. 2): the count
    matrix is ``epsilon_1``-DP as in :class:`PrivQT`; ``|Z| = #values - |S|``
    changes by at most the number ``s`` of transformed values one cell moves
    (:func:`approximation_influence`: ``s = 1`` for Haar, the paper's value;
    ``(max_i nnz T[i, :])^d`` in general, from the filter ``dec_lo``), so
    ``|Z| + Lap(s / epsilon_2)`` is ``epsilon_2``-DP.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.3 (Alg. 3), §5.1 Thm. 2, §5.2.2, §6.4.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.wavecluster import PrivTHR
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivTHR(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "PrivTHR"
    reference = "Chen, Yu & Chirkova 2015, §4.3 (Alg. 3)"
    summary = ("PrivQT plus a noisy count of empty transformed cells, used to discard the noise-made "
               "positive values before the density threshold (90 % / 10 % budget).")

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", quantization_share=0.9, random_state=None):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.quantization_share = quantization_share

    def fit(self, X, y=None):
        """Release the private clusters of X (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : PrivTHR
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.wavecluster import PrivTHR
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = PrivTHR(epsilon=1.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise, _ = self._prepare(X)
        share = _check_share(self.quantization_share, "quantization_share")
        eps_q, _ = split_budget(float(self.epsilon), [share, 1.0 - share])
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, eps_q)
        # Lines 11-17: the noisy count of non-positive true transformed values.
        W_true = wavelet_approximation(counts, self._wavelet_)
        s, _ = approximation_influence(self._wavelet_, int(self.num_grid), X.n_features)
        z_noisy = float(noise.laplace(int((W_true <= 0).sum()), sensitivity=float(s),
                                      epsilon=noise.ledger.remaining()[0],
                                      name="count of non-positive transformed values"))
        # Lines 4-8: drop the |Z'|/2 smallest noisy positive values, then the threshold.
        S_noisy = np.sort(W_noisy[W_noisy > 0])
        n_drop = int(np.clip(round(z_noisy / 2.0), 0, S_noisy.size))
        S_kept = S_noisy[n_drop:]
        k = threshold_rank(S_kept.size, self.density_threshold)
        self.noisy_nonpositive_ = z_noisy
        self.sensitivity_ = s
        self._finish(X, W_noisy, top_k_threshold(S_kept, k), k)
        return self


class PrivTHREM(PrivQT):
    """PrivTHR_EM: the density threshold drawn by the exponential mechanism (§4.4, Alg. 4).

    After the noisy count matrix (share ``quantization_share`` of epsilon),
    the threshold value is chosen on the *true* transformed values: the sorted
    positive values ``x_1 <= ... <= x_m`` (clipped to ``value_cap``) cut
    ``(0, cap]`` into intervals; every ``x`` in an interval has the same rank
    ``rank(x) = #{i : x_i >= x}``, and the exponential mechanism with quality
    ``-|rank(x) - k|`` (``k = ceil((1 - p) m)``) picks an interval with
    probability proportional to its length times ``exp(eps_2 q / (2 Delta))``;
    the threshold is uniform inside it (Smith 2011).  Noisy values above the
    threshold are significant.

    Parameters
    ----------
    epsilon : float, default 1.0
    quantization_share : float in (0, 1), default 0.7
        Fraction of epsilon for the count matrix (the paper's 70 % / 30 %).
    value_cap : float or None, default None
        Public upper end of the threshold's range.  ``None`` uses the largest
        *noisy* transformed value, which is already released (post-processing).
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus ``sensitivity_`` (of the rank quality).

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition (Chen et al. Thm. 3).  Sensitivity
    ``Delta`` of ``q = -|rank(x) - k|``: one record moves at most ``s``
    transformed values (:func:`approximation_influence`).  When the filter
    weights are all non-negative (Haar) they all move the same way, so
    ``rank(x)`` and ``k`` change in the same direction, each by at most
    ``s`` (``k`` by ``ceil((1 - p) a) <= a`` when ``a`` values cross 0), and
    ``Delta = s`` (= 1 for Haar, the paper's value).  With signed filters
    (biorthogonal, Daubechies, ...) the two can move apart: ``Delta = 2 s``.
    Clipping to a public cap is order-preserving and keeps these bounds.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.4 (Alg. 4), §5.1 Thm. 3, §5.2.3; Smith (2011).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.wavecluster import PrivTHREM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivTHREM(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "PrivTHR_EM"
    reference = "Chen, Yu & Chirkova 2015, §4.4 (Alg. 4)"
    summary = ("Laplace noise on the grid counts; the density threshold itself chosen privately by the "
               "exponential mechanism on the rank of the true values (70 % / 30 % budget).")

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", quantization_share=0.7, value_cap=None, random_state=None):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.quantization_share = quantization_share
        self.value_cap = value_cap

    def fit(self, X, y=None):
        """Release the private clusters of X (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : PrivTHREM
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.wavecluster import PrivTHREM
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = PrivTHREM(epsilon=1.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise, _ = self._prepare(X)
        share = _check_share(self.quantization_share, "quantization_share")
        if self.value_cap is not None and not (isinstance(self.value_cap, numbers.Real)
                                               and math.isfinite(self.value_cap) and self.value_cap > 0):
            raise ValueError(f"value_cap must be a positive public number or None, got {self.value_cap!r}")
        eps_q, _ = split_budget(float(self.epsilon), [share, 1.0 - share])
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, eps_q)
        cap = float(self.value_cap) if self.value_cap is not None else float(W_noisy.max())
        s, nonneg = approximation_influence(self._wavelet_, int(self.num_grid), X.n_features)
        delta_q = s if nonneg else 2 * s
        self.sensitivity_ = delta_q
        if cap <= 0:
            # No positive released value: nothing can be significant whatever the threshold.
            self._finish(X, W_noisy, math.inf, 0)
            return self
        W_true = wavelet_approximation(counts, self._wavelet_)
        x = W_true[W_true > 0]
        m = x.size
        k = threshold_rank(m, self.density_threshold)
        # The continuous exponential mechanism over the intervals between the sorted true values
        # in [0, cap], score -|rank - k| (rank = values >= the threshold), base measure the
        # interval length: the exponential-mechanism quantile at q = (m - k) / m.
        threshold = noise.quantile(x, (m - k) / m if m else 0.0, lower=0.0, upper=cap,
                                   sensitivity=float(delta_q), epsilon=noise.ledger.remaining()[0],
                                   name="density threshold (exponential mechanism)")
        threshold = np.nextafter(threshold, math.inf)
        # The rank is counted among the *released* values: counting the true values above
        # the threshold and would leak them (the privacy audit measured eps >= 2.5 at eps = 1).
        self._finish(X, W_noisy, threshold, int(((W_noisy >= threshold) & (W_noisy > 0)).sum()))
        return self


class PrivBasic(WaveCluster):
    """PrivBasic: WaveCluster on synthetic data from an epsilon-DP grid synopsis (§4.1, Alg. 1).

    The public box is cut into the uniform grid of Qardaji et al. (2013)
    (``m = (N eps / theta)^(2 / (2 + d))`` cells per dimension, theta = 10,
    i.e. ``sqrt(N eps / 10)`` in 2-D), each count gets ``Lap(1/eps)``;
    negative counts become 0, the rest are rounded, and that many points are
    drawn uniformly in each cell.  WaveCluster with the given parameters then
    runs on the synthetic points.  (The paper used Qardaji's *adaptive* grid;
    this implementation uses their uniform grid, the synopsis of EUGkM.)

    Parameters
    ----------
    epsilon : float, default 1.0
    theta : float, default 10
        The constant of the uniform-grid size rule.
    n_samples : float or None
        Public dataset size for the size rule; ``None`` spends ``n_share`` of
        epsilon on ``N + Lap(.)`` (ledger entry "dataset size").
    n_share : float, default 0.02
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus ``synthetic_size_`` and ``synopsis_cells_per_dim_``.

    Notes
    -----
    **Privacy.** epsilon-DP: the synopsis counts have sensitivity 1 (each record is in one
    cell); the optional noisy size is a second Laplace release; the rounding,
    sampling (data-independent randomness) and clustering are post-processing.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.1 (Alg. 1); Qardaji, Yang, Li (2013), §IV (uniform grid).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.wavecluster import PrivBasic
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivBasic(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "PrivBasic"
    reference = "Chen, Yu & Chirkova 2015, §4.1 (Alg. 1); synopsis: Qardaji et al. 2013 uniform grid"
    summary = ("Publishes a noisy grid synopsis, draws synthetic points from it (negative counts become 0), "
               "then runs WaveCluster on them.")
    private = True

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", theta=10.0, n_samples=None, n_share=0.02, random_state=None):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.theta = theta
        self.n_samples = n_samples
        self.n_share = n_share

    def fit(self, X, y=None):
        """Release the private clusters of X (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : PrivBasic
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.wavecluster import PrivBasic
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = PrivBasic(epsilon=1.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise, n = self._prepare(X)
        if not (isinstance(self.theta, numbers.Real) and math.isfinite(self.theta) and self.theta > 0):
            raise ValueError(f"theta must be a positive number (Qardaji et al. use 10), got {self.theta!r}")
        d = X.n_features
        n_est, eps_left = public_or_noisy_size(n, self.n_samples, self.n_share, float(self.epsilon), noise)
        m_syn = eug_cells_per_dim(n_est, eps_left, d, theta=float(self.theta), max_cells=MAX_CELLS)
        counts, _ = noisy_grid(X, m_syn, noise, noise.ledger.remaining()[0],
                               name="synopsis grid cell counts", domain=self.bounds_)
        # Synthetic data (post-processing): non-negative rounded counts, uniform inside each cell.
        reps = np.rint(np.clip(counts.ravel(), 0, None)).astype(np.intp)
        cells = np.repeat(np.arange(reps.size), reps)
        idx = np.stack(np.unravel_index(cells, counts.shape), axis=1) if d > 1 else cells[:, None]
        U_syn = (idx + noise.rng.random(idx.shape)) / m_syn
        self.synthetic_size_ = int(cells.size)
        self.synopsis_cells_per_dim_ = int(m_syn)
        W = wavelet_approximation(quantize(U_syn, int(self.num_grid)), self._wavelet_)
        S = np.sort(W[W > 0])
        k = threshold_rank(S.size, self.density_threshold)
        self._finish(X, W, top_k_threshold(S, k), k)
        return self


__all__ = ["WaveCluster", "PrivBasic", "PrivQT", "PrivTHR", "PrivTHREM", "approximation_influence",
           "wavelet_approximation", "quantize", "threshold_rank", "label_significant", "check_wavelet"]
