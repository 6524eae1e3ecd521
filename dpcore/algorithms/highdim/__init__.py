"""Private k-means for high-dimensional data, where a grid over the space is out of reach.

``balcan`` (Balcan et al. 2017 with Edler's 2023 corrections), ``dpm`` (DPM: clustering through
separation, Liebenow et al., CCS 2024) and ``zcdp_lloyd`` (Lloyd iterations with discrete Gaussian
noise composed in zCDP).
"""
