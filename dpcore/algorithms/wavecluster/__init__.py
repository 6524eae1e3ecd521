"""WaveCluster and its differentially private variants (Chen, Yu & Chirkova): density clusters on a grid.

``transform`` (quantisation, the wavelet approximation, thresholds, connected cells), ``wavecluster``
(the non-private WaveCluster) and ``private`` (PrivBasic, PrivQT, PrivTHR, PrivTHR_EM).
"""
