"""Empirical privacy audit of dpcore (Ding et al. 2018): see ``dp_audit.py``."""
