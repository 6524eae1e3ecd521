"""Clustering quality measures: NICV (Su et al. 2016, Eq. 1), relative error, CostGap.

Computed on the caller's data: on the raw private data they are for the data owner only (not
private); on public or held-out data they are free post-processing of a release.
"""
from __future__ import annotations

import numpy as np

from ..utils.nearest import inertia


def nicv(X, centers, bounds=None, sample_weight=None) -> float:
    """Normalised intra-cluster variance (Su et al. 2016, Eq. 1): inertia / N.

    Parameters
    ----------
    X : ndarray (n, d)
    centers : ndarray (k, d)
    bounds : (lower, upper), optional
        Public bounds; when given, both X and centers are first mapped to
        ``[-1, 1]^d`` as in Su et al. §5.1, so figures are comparable with the
        paper and across datasets.
    sample_weight : ndarray (n,), optional
        Weights (then N is their sum).

    Returns
    -------
    float

    Notes
    -----
    ``X`` may be a :class:`~dpcore.sources.DataSource` (``bounds`` required, no
    weights): the sum of squared distances is then one aggregate where the data
    live, over the rows clipped onto the bounds.  Not private (data owner only).

    Examples
    --------
    Two clusters of two points, each point at distance 1 from its centre:

    >>> import numpy as np
    >>> from dpcore.metrics import nicv
    >>> X = np.array([[0.0, 0.0], [0.0, 2.0], [4.0, 0.0], [4.0, 2.0]])
    >>> centers = np.array([[0.0, 1.0], [4.0, 1.0]])
    >>> nicv(X, centers)
    1.0
    """
    from ..sources import DataSource
    if isinstance(X, DataSource):
        if bounds is None or sample_weight is not None:
            raise ValueError("nicv on a DataSource needs public bounds and no sample_weight")
        from ..utils.domain import check_bounds
        dom = check_bounds(bounds, d=X.n_features)
        return X.inertia(dom.normalize(np.asarray(centers, dtype=float)), dom) / X.count()
    X = np.asarray(X, dtype=float)
    centers = np.asarray(centers, dtype=float)
    if bounds is not None:
        from ..utils.domain import check_bounds
        dom = check_bounds(bounds, d=X.shape[1])
        X, centers = dom.normalize(X), dom.normalize(centers)
    total = inertia(X, centers, sample_weight)
    n = X.shape[0] if sample_weight is None else float(np.sum(sample_weight))
    return total / n


def relative_error(value: float, baseline: float) -> float:
    """``value / baseline - 1``: e.g. 0.05 means 5 % worse than the baseline.

    Used for NICV against non-private k-means and for the relative k-means
    cost error of Feldman et al. (2017, §5.4).
    """
    if baseline <= 0:
        raise ValueError("the baseline must be positive")
    return float(value) / float(baseline) - 1.0


def cost_gap(X, centers, baseline_centers, bounds=None) -> float:
    """CostGap (Joshi & Thakkar 2022, Eq. 1): ``|Cost_DP - Cost_Lloyd| / Cost_Lloyd``.

    ``Cost`` is the k-means cost (inertia, sum of squared distances to the
    nearest centre); smaller is better, 0 means as good as the baseline.

    Parameters
    ----------
    X : ndarray (n, d)
    centers : ndarray (k, d), the private centres
    baseline_centers : ndarray (k', d), the non-private (Lloyd) centres
    bounds : (lower, upper), optional
        When given, costs are measured in the ``[-1, 1]^d`` normalisation of
        the public bounds (as :func:`nicv`), so every attribute weighs the same.

    Returns
    -------
    float >= 0

    Raises
    ------
    ValueError
        If the baseline cost is 0.
    """
    X = np.asarray(X, dtype=float)
    centers = np.asarray(centers, dtype=float)
    baseline_centers = np.asarray(baseline_centers, dtype=float)
    if bounds is not None:
        from ..utils.domain import check_bounds
        dom = check_bounds(bounds, d=X.shape[1])
        X, centers, baseline_centers = dom.normalize(X), dom.normalize(centers), dom.normalize(baseline_centers)
    base = inertia(X, baseline_centers)
    if base <= 0:
        raise ValueError("the baseline cost is 0: CostGap is undefined")
    return abs(inertia(X, centers) - base) / base


def matched_center_distance(centers, reference_centers) -> float:
    """Mean distance of each centre from its partner among ``reference_centers``, matched one to one.

    The matching minimises the total distance (Hungarian method,
    :func:`scipy.optimize.linear_sum_assignment`), so no two centres share a partner: a release
    that puts two centres on one true cluster and none on another is charged for the missing one.

    Parameters
    ----------
    centers : ndarray (k, d)
    reference_centers : ndarray (k', d), same units (usually the non-private centres)

    Returns
    -------
    float, in the units of the inputs; over min(k, k') pairs.

    Raises
    ------
    ValueError
        If the widths differ or either set is empty.

    Notes
    -----
    Not private when the reference is computed on the raw data (the app shows it to the data owner,
    or on public data).
    """
    from scipy.optimize import linear_sum_assignment
    P = np.atleast_2d(np.asarray(centers, dtype=float))
    R = np.atleast_2d(np.asarray(reference_centers, dtype=float))
    if P.shape[1] != R.shape[1] or P.shape[0] == 0 or R.shape[0] == 0:
        raise ValueError(f"need two non-empty sets of centres of one width, got {P.shape} and {R.shape}")
    cost = np.linalg.norm(P[:, None, :] - R[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())

