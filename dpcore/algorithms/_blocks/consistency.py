"""Shared block: consistency post-processing of noisy counts (non-negative, hierarchically consistent).

Both steps read released noisy counts and public variances only, so they are post-processing and
cost no budget.
"""
from __future__ import annotations

import numpy as np


def norm_sub(values: np.ndarray, total: float | None = None) -> np.ndarray:
    """Euclidean projection of ``values`` onto ``{w >= 0, sum w = total}`` ("Norm-Sub").

    ``w_i = max(v_i - tau, 0)`` with the one ``tau`` that makes the sum ``total`` (default:
    ``max(sum v, 0)``, so the noisy total is kept).  Unlike clipping negatives to 0, which adds
    the noise of every empty cell to the mass, it subtracts the same amount from every
    positive cell: the least-squares non-negative estimate with the released total (Wang et al.
    2020, "Locally differentially private frequency estimation with consistency", NDSS, §4
    "Norm-Sub"; the projection of Duchi et al. 2008, Fig. 1).

    Parameters
    ----------
    values : ndarray (m,), noisy counts
    total : float or None

    Returns
    -------
    ndarray (m,) float, non-negative, summing to ``total`` (0 when ``total <= 0``).
    """
    v = np.asarray(values, dtype=float).ravel()
    s = float(v.sum()) if total is None else float(total)
    if s <= 0 or v.size == 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - s
    idx = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / idx > 0)[0][-1]
    tau = css[rho] / (rho + 1)
    return np.maximum(v - tau, 0.0)


def two_level_consistency(parent: np.ndarray, var_parent: float, children: list[np.ndarray],
                          var_child: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """Constrained inference between a noisy count and the noisy counts of its sub-cells.

    The parent's two estimates, its own count ``v`` and the sum ``S`` of its ``M`` children,
    are averaged with inverse-variance weights; the difference is then spread equally over the
    children, so that they sum to the parent (Hay et al. 2010, "Boosting the accuracy of
    differentially private histograms through consistency", §3; the two-level form of Qardaji,
    Yang & Li 2013, §IV-C).

    Parameters
    ----------
    parent : ndarray (p,), noisy parent counts
    var_parent : float, their noise variance
    children : list of p ndarrays, each parent's children's noisy counts
    var_child : float, their noise variance (each)

    Returns
    -------
    (parent', children'), each child array summing to its parent.
    """
    new_parent = np.empty(len(children))
    new_children = []
    for j, c in enumerate(children):
        c = np.asarray(c, dtype=float)
        m = c.size
        s = float(c.sum())
        w_p, w_s = 1.0 / var_parent, 1.0 / (m * var_child)
        v = (w_p * float(parent[j]) + w_s * s) / (w_p + w_s)
        new_parent[j] = v
        new_children.append(c + (v - s) / m)
    return new_parent, new_children


def _rows_norm_sub(E: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`norm_sub` of every row of ``E`` (g, b) onto its own total (g,), vectorised."""
    out = np.zeros_like(E, dtype=float)
    ok = totals > 0
    if not ok.any():
        return out
    V, T = E[ok].astype(float), totals[ok].astype(float)
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - T[:, None]
    idx = np.arange(1, V.shape[1] + 1)[None, :]
    cond = U - css / idx > 0
    rho = V.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)          # last index where cond holds
    tau = css[np.arange(V.shape[0]), rho] / (rho + 1)
    out[ok] = np.maximum(V - tau[:, None], 0.0)
    return out


def tree_norm_sub(level: np.ndarray, index: np.ndarray, noisy: np.ndarray, total: float | None = None) -> np.ndarray:
    """Non-negative leaf weights consistent with a full ``2^d``-ary tree of dyadic cells, top down.

    Every node's estimate is the sum of its leaves' noisy counts (its least-squares estimate when
    only the leaves were measured).  From the root (total ``max(sum, 0)``) down, the ``2^d``
    children's estimates of each node are projected by :func:`norm_sub` onto the node's
    non-negative total.  An empty region then gets the mass of its whole subtree's noise sum,
    close to 0, instead of the positive part of every leaf's noise: mass stays where the
    aggregated counts put it, and the weights add up to every node's total (hierarchical
    consistency; the top-down form of Hay et al. 2010's inference with the non-negativity of
    Wang et al. 2020's Norm-Sub at each node).

    Parameters
    ----------
    level : ndarray (m,) of int, each leaf's depth
    index : ndarray (m, d) of int, its multi-index on the ``2^level`` grid
    noisy : ndarray (m,), its noisy count
    total : float or None
        The root's total when it is known better than the leaves' sum (a consistent parent
        count); default ``max(sum noisy, 0)``.

    Returns
    -------
    ndarray (m,) float, non-negative, summing to the root's total.
    """
    level = np.asarray(level, dtype=np.int64)
    index = np.asarray(index, dtype=np.int64)
    noisy = np.asarray(noisy, dtype=float)
    m, d = index.shape
    beta = 2 ** d
    out = np.zeros(m)
    root = max(float(noisy.sum()) if total is None else float(total), 0.0)
    if m == 0:
        return out
    if level.max() == 0:
        out[:] = root
        return out
    # Totals of the internal nodes of the current level, by flat key.
    keys, totals = np.zeros(1, dtype=np.int64), np.array([root])
    for lv in range(int(level.max())):
        below = level > lv
        if not below.any():
            break
        shift = (level[below] - lv - 1)[:, None]
        child = index[below] >> shift                                    # multi-index at lv + 1
        side = 2 ** (lv + 1)
        ckey = np.ravel_multi_index(tuple(child.T), (side,) * d)
        ukeys, inv = np.unique(ckey, return_inverse=True)
        est = np.bincount(inv, weights=noisy[below], minlength=ukeys.size)
        cidx = np.stack(np.unravel_index(ukeys, (side,) * d), axis=1)
        pkey = np.ravel_multi_index(tuple((cidx >> 1).T), (side // 2,) * d)
        offset = np.ravel_multi_index(tuple((cidx & 1).T), (2,) * d)
        order = np.lexsort((offset, pkey))                                # every parent has all beta children
        E = est[order].reshape(-1, beta)
        parents = pkey[order][::beta]
        T = totals[np.searchsorted(keys, parents)]
        W = _rows_norm_sub(E, T).reshape(-1)
        child_keys, child_w = ukeys[order], W
        # Leaves at lv + 1 take their weight; the others carry it down as their node's total.
        at = level == lv + 1
        if at.any():
            lkey = np.ravel_multi_index(tuple(index[at].T), (side,) * d)
            srt = np.argsort(child_keys)
            out[at] = child_w[srt][np.searchsorted(child_keys[srt], lkey)]
        srt = np.argsort(child_keys)
        keys, totals = child_keys[srt], child_w[srt]
    return out
