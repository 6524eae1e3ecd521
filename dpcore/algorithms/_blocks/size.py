"""Shared block: the dataset size N for parameter rules, public or bought with a share of epsilon.

Under add/remove-one neighbours N itself is private (Su et al. 2016 use it in Eq. 4 and the
iteration rule; Feldman et al. in t_min).  Every algorithm that needs N calls
:func:`public_or_noisy_size`; the noisy count is a ledger entry ("dataset size").
"""
from __future__ import annotations

import math

from ...privacy.mechanisms import NoiseSource
from ...utils.fixedpoint import FixedPoint


def public_or_noisy_size(n_true: int, n_samples, share: float, epsilon: float, noise: NoiseSource, *,
                         name: str = "dataset size"):
    """Dataset size for parameter rules, without a hidden privacy cost.

    Under add/remove-one neighbours the size N is itself private.  A public
    ``n_samples`` (the estimators' parameter of that name: e.g. a published total) costs nothing; otherwise ``share``
    of epsilon buys ``N + Lap(1/(share * epsilon))`` (ledger entry
    "dataset size").  Estimators call it through
    :meth:`~dpcore.algorithms.parameters.DeclaredParameters._public_or_noisy_size`, which keeps the
    size as the fitted attribute ``n_samples_estimate_``.

    Parameters
    ----------
    n_true : int or FixedPoint
        The exact size (private; a weighted source's exact weight sum).  Read only through the noise.
    n_samples : float or None
        The public size, or None to buy a noisy one.
    share : float in (0, 1)
        The fraction of ``epsilon`` the noisy size spends (unused with a public ``n_samples``).
    epsilon : float
        The budget the share is taken from.
    noise : NoiseSource
    name : str, default "dataset size"
        The ledger entry's name.

    Returns
    -------
    (n_estimate, epsilon_left) : float, float
        ``n_estimate`` is at least 1: the public ``n_samples`` or the noisy size, never the true one.

    Raises
    ------
    ValueError
        A public ``n_samples`` that is not a finite count >= 1, or a share outside (0, 1).
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
    n_noisy = float(noise.laplace(query, sensitivity=1.0, epsilon=e, name=name))
    return max(n_noisy, 1.0), epsilon - e
