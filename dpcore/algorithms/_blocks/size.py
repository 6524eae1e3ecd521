"""Shared block: the dataset size N for parameter rules, public or bought with a share of epsilon.

Under add/remove-one neighbours N itself is private (Su et al. 2016 use it in Eq. 4 and the
iteration rule; Feldman et al. in t_min).  Every algorithm that needs N calls
:func:`public_or_noisy_size`; the noisy count is a ledger entry ("dataset size").
"""
from __future__ import annotations

import math

from ...privacy.mechanisms import NoiseSource
from ...utils.fixedpoint import FixedPoint


def public_or_noisy_size(n_true: int, n_samples, share: float, epsilon: float, noise: NoiseSource):
    """Dataset size for parameter rules, without a hidden privacy cost.

    Under add/remove-one neighbours the size N is itself private.  A public
    ``n_samples`` (the estimators' parameter of that name: e.g. a published total) costs nothing; otherwise ``share``
    of epsilon buys ``N + Lap(1/(share * epsilon))`` (ledger entry
    "dataset size").

    Returns
    -------
    (n_estimate, epsilon_left) : float, float
        ``n_estimate`` is at least 1.
    """
    if n_samples is not None:
        n_pub = float(n_samples)
        if not (math.isfinite(n_pub) and n_pub >= 1):
            raise ValueError(f"n_samples must be a public count >= 1, got {n_samples}")
        return n_pub, epsilon
    share = float(share)
    if not 0 < share < 1:
        raise ValueError(f"n_share must be in (0, 1), got {share}")
    e = epsilon * share
    # A weighted source (contribution bounding by weighting) counts its weights: an exact FixedPoint.
    query = n_true if isinstance(n_true, FixedPoint) else int(n_true)
    n_noisy = float(noise.laplace(query, sensitivity=1.0, epsilon=e, name="dataset size"))
    return max(n_noisy, 1.0), epsilon - e
