"""Shared building blocks: pieces several estimators use, importing no estimator.

``size`` (the dataset size for parameter rules, public or bought with a share of ε),
``sphere_packing`` (data-independent initial centres, Su et al. 2016 §4.1.1), ``lloyd`` (DPLloyd's noisy
Lloyd iterations, the journal version's iteration rule and its regime, and ``NoisyLloyd``, the frame a
DPLloyd variant subclasses to declare only its start), ``grid`` (EUGkM's noisy uniform grid and its
regime rule, Su et al. 2016 §4.2, Eq. 4) and ``grid_kmeans`` (k-means on a released grid synopsis,
coarse to fine).  A new estimator builds from these instead of borrowing another estimator's helpers.
"""
