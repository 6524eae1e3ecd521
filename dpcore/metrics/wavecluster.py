"""Utility measures for (private) WaveCluster results (Chen, Yu & Chirkova 2015, §6.1).

* :func:`ud` -- dissimilarity of the significant cells and clusters of two
  results, with the Hungarian matching of clusters;
* :func:`dcom` and :func:`dc2e` -- "clustering first, then classification":
  a decision tree is trained on the labelled cells of each result and both
  trees classify the same held-out points; DCOM is the share of points on
  which the two disagree after the best one-to-one matching of classes,
  DC2E the share of pairs of points that one classifier puts together and
  the other apart;
* :func:`f_measure` -- the usual external F-measure, with the non-private
  result as the ground truth (§6.3, "comparison to F-measure").

All of them compare two released results (or one private result with the
data owner's non-private one); they spend no privacy budget themselves, but
anything computed with the non-private result is for the data owner's eyes.

References
----------
Chen, Yu, Chirkova (2015). WaveCluster with differential privacy. CIKM, §6.1 (UD, DCOM, DC2E), §6.3.
Kuhn (1955). The Hungarian method for the assignment problem.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.tree import DecisionTreeClassifier


def _contingency(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contingency table of two integer labelings (any values, -1 included): (table, classes_a, classes_b)."""
    ca, ia = np.unique(a, return_inverse=True)
    cb, ib = np.unique(b, return_inverse=True)
    table = np.bincount(ia * cb.size + ib, minlength=ca.size * cb.size).reshape(ca.size, cb.size)
    return table, ca, cb


def ud(true_labels: np.ndarray, private_labels: np.ndarray) -> float:
    """UD: dissimilarity of significant cells and clusters (Chen et al. §6.1.1).

    The distance of a true cluster ``C_i`` and a private cluster ``C'_j`` (sets
    of significant cells) is ``|C_i - C'_j| + |C'_j - C_i|``.  A matching pairs
    clusters one to one; its cost is the sum of the distances of the pairs
    plus the number of significant cells of every cluster left unmatched (on
    either side).  The Hungarian method finds the cheapest matching, and
    ``UD = cost / |G|`` with ``G`` the true significant cells.

    Parameters
    ----------
    true_labels, private_labels : ndarray of int, same grid shape
        Cluster id per cell, ``-1`` for a non-significant cell (``synopsis_.labels``).

    Returns
    -------
    float >= 0; 0 when the two results are identical.  ``inf`` when the true
    result has no significant cell but the private one has.

    Raises
    ------
    ValueError
        If the grids differ in shape (use the same ``num_grid``).
    """
    A = np.asarray(true_labels).ravel()
    B = np.asarray(private_labels).ravel()
    if np.shape(true_labels) != np.shape(private_labels):
        raise ValueError(f"UD compares grids of the same shape, got {np.shape(true_labels)} and "
                         f"{np.shape(private_labels)}: run both with the same num_grid")
    nA, nB = int(A.max(initial=-1)) + 1, int(B.max(initial=-1)) + 1
    g = int((A >= 0).sum())
    if g == 0:
        return 0.0 if (B >= 0).sum() == 0 else float("inf")
    sa = np.bincount(A[A >= 0], minlength=nA).astype(float)
    sb = np.bincount(B[B >= 0], minlength=nB).astype(float)
    both = (A >= 0) & (B >= 0)
    inter = np.bincount(A[both] * max(nB, 1) + B[both], minlength=nA * nB).reshape(nA, nB).astype(float)
    cost = np.zeros((nA + nB, nB + nA))
    cost[:nA, :nB] = sa[:, None] + sb[None, :] - 2 * inter
    cost[:nA, nB:] = sa[:, None]          # true cluster left unmatched
    cost[nA:, :nB] = sb[None, :]          # private cluster left unmatched
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum() / g)


def grid_classifier(synopsis, *, include_noise: bool = True, random_state=0) -> DecisionTreeClassifier:
    """Decision tree trained on the labelled cells of a WaveCluster result (Chen et al. §6.1.2).

    Parameters
    ----------
    synopsis : WaveletGridSynopsis
        ``edges`` (data units) and ``labels`` per cell.
    include_noise : bool, default True
        Also train on the non-significant cells as class ``-1`` ("C0" in the
        authors' code), so a point in empty space is not forced into a cluster.
    random_state : int, default 0
        For the tree's tie-breaking (not private randomness).

    Returns
    -------
    sklearn.tree.DecisionTreeClassifier, fitted on cell centres (data units).
    """
    mids = [(e[:-1] + e[1:]) / 2 for e in synopsis.edges]
    mesh = np.meshgrid(*mids, indexing="ij")
    centres = np.stack([m.ravel() for m in mesh], axis=1)
    y = np.asarray(synopsis.labels).ravel()
    keep = np.ones(y.size, bool) if include_noise else y >= 0
    if not keep.any():
        centres, y, keep = centres[:1], np.array([-1]), np.array([True])
    return DecisionTreeClassifier(random_state=random_state).fit(centres[keep], y[keep])


def dcom(true_pred: np.ndarray, private_pred: np.ndarray) -> float:
    """DCOM: classifier dissimilarity after the optimal class matching (Chen et al. §6.1.2).

    ``1 - (test points in matched class pairs) / (test points)``, the class
    matching (one to one) maximising the common points by the Hungarian method.

    Parameters
    ----------
    true_pred, private_pred : ndarray (n_test,) int
        Classes the true and the private classifier give the same test points.

    Returns
    -------
    float in [0, 1].
    """
    table, _, _ = _contingency(np.asarray(true_pred), np.asarray(private_pred))
    rows, cols = linear_sum_assignment(table, maximize=True)
    n = table.sum()
    return float(1.0 - table[rows, cols].sum() / n) if n else 0.0


def dc2e(true_pred: np.ndarray, private_pred: np.ndarray) -> float:
    """DC2E: share of test-point pairs classified inconsistently (Chen et al. §6.1.2).

    A pair is consistent when both classifiers put its two points in the same
    class, or both put them in different classes.  Computed from the
    contingency table in O(classes^2), not over the pairs.

    Returns
    -------
    float in [0, 1].
    """
    table, _, _ = _contingency(np.asarray(true_pred), np.asarray(private_pred))
    n = int(table.sum())
    if n < 2:
        return 0.0

    def pairs(c):
        c = np.asarray(c, dtype=float)
        return float((c * (c - 1) / 2).sum())

    same_a, same_b, same_both = pairs(table.sum(1)), pairs(table.sum(0)), pairs(table)
    return (same_a + same_b - 2 * same_both) / (n * (n - 1) / 2)


def f_measure(true_labels: np.ndarray, private_labels: np.ndarray) -> float:
    """F-measure of a private labelling against the non-private one as ground truth (Chen et al. §6.3).

    ``F = sum_i (n_i / n) max_j 2 P_ij R_ij / (P_ij + R_ij)`` with
    ``P_ij = n_ij / n_j`` and ``R_ij = n_ij / n_i``; noise (``-1``) is a class
    of its own on both sides.

    Parameters
    ----------
    true_labels, private_labels : ndarray (n,) int, labels of the same points

    Returns
    -------
    float in [0, 1]; 1 for identical partitions.
    """
    table, _, _ = _contingency(np.asarray(true_labels), np.asarray(private_labels))
    table = table.astype(float)
    n_i = table.sum(1, keepdims=True)
    n_j = table.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(table > 0, 2 * table / (n_i + n_j), 0.0)
    total = table.sum()
    return float((n_i.ravel() / total * f.max(1)).sum()) if total else 1.0


def classification_measures(X_test, true_est, private_est, *, include_noise: bool = True) -> dict:
    """DCOM and DC2E of two fitted WaveCluster-family estimators on held-out points.

    Parameters
    ----------
    X_test : array-like (n_test, d), data units
        Points not used to fit either estimator (the paper holds out 10 %).
    true_est, private_est : fitted estimators with ``synopsis_`` (WaveletGridSynopsis)
    include_noise : bool, default True
        See :func:`grid_classifier`.

    Returns
    -------
    dict with keys ``"DCOM"`` and ``"DC2E"``.
    """
    X_test = np.asarray(X_test, dtype=float)
    a = grid_classifier(true_est.synopsis_, include_noise=include_noise).predict(X_test)
    b = grid_classifier(private_est.synopsis_, include_noise=include_noise).predict(X_test)
    return {"DCOM": dcom(a, b), "DC2E": dc2e(a, b)}


def train_test_indices(n: int, rng: np.random.Generator, test_size: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Random 90/10 (by default) split of ``range(n)``: (train indices, test indices)."""
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    perm = rng.permutation(n)
    n_test = max(1, int(round(n * test_size)))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


__all__ = ["ud", "dcom", "dc2e", "f_measure", "grid_classifier", "classification_measures", "train_test_indices"]
