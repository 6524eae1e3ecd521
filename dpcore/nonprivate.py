"""The non-private baseline: scikit-learn's k-means (k-means++ seeding, Lloyd iterations)."""
from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans as _SKKMeans

from .base import DPClusterer
from .validation import check_random_state


class KMeans(DPClusterer):
    """Non-private k-means baseline (scikit-learn), on the same normalised domain as the private ones.

    Not private: for the data owner's eyes only.  It clusters in the
    ``[-1, 1]^d`` normalisation of ``bounds`` (or of the data's own range when
    ``bounds`` is None, silently: nothing private is released), so its
    centres are comparable with the private estimators'.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : None
        Accepted for protocol compatibility; must be None.
    bounds : (lower, upper) or None
    n_init : int, default 10
        k-means++ restarts; the lowest inertia is kept.
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    labels_ : ndarray (n,)
    inertia_ : float, in squared data units
    n_iter_ : int
    budget_ : BudgetLedger (always empty)
    """

    display_name = "k-means (not private)"
    reference = "Lloyd 1982; Arthur & Vassilvitskii 2007 (scikit-learn)"
    summary = "Ordinary k-means on the raw data: the reference the private results are measured against."
    private = False

    def __init__(self, n_clusters=8, *, epsilon=None, bounds=None, n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit scikit-learn k-means. Returns self."""
        if self.epsilon is not None:
            raise ValueError("the non-private k-means takes epsilon=None; choose a private algorithm to use a budget")
        X, noise = self._begin_fit(X)
        dom = self.bounds_
        seed = int(check_random_state(self.random_state).integers(2 ** 31 - 1))
        km = _SKKMeans(n_clusters=int(self.n_clusters), n_init=int(self.n_init), random_state=seed)
        km.fit(dom.normalize(X))
        self.cluster_centers_ = dom.denormalize(km.cluster_centers_)
        self.labels_ = km.labels_
        diff = X - self.cluster_centers_[self.labels_]
        self.inertia_ = float(np.einsum("ij,ij->", diff, diff))
        self.n_iter_ = int(km.n_iter_)
        return self
