"""Private coresets for k-means: PRIVATE-K-MEAN of Feldman, Xiang, Zhu and Rus (IPSN 2017).

``private_kmeans`` (the estimator), ``plan`` (grid size, t_min, rounds and weights from public inputs
only) and ``small_ball`` (GOOD-RADIUS then GOOD-CENTER, Nissim, Stemmer & Vadhan 2016).
"""
