"""Ground-floor utilities: input validation, the public domain, nearest-centre kernels.

Imports nothing of dpcore but the exceptions (docs/ARCHITECTURE.md).
"""
