"""Centroid-based private k-means of Su et al. (2016) and its successors, for low-dimensional data.

``dplloyd`` (DPLloyd: noisy Lloyd iterations), ``eugkm`` (EUGkM: k-means on a noisy uniform grid),
``hybrid`` (EUGkM centres refined by one DPLloyd step), ``gupt`` (GkM, GkM-3K: sample and aggregate),
``privgene`` (PGkM: PrivGene's genetic search) and ``convergent`` (KMeans-Guarantee, Lu & Shen 2020;
SubClustering, Joshi & Thakkar 2022).
"""
