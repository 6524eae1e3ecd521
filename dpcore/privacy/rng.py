"""The generator of every private release, and the seeded-simulation rule.

``random_state=None`` is the only private setting: :func:`check_random_state` then returns
:func:`secure_generator` (AES-128-CTR or ChaCha20 keyed from OS entropy, alive for one fit).  Any
seed makes a reproducible *simulation* (:func:`is_seeded`, :func:`warn_seeded`).
"""
from __future__ import annotations

import functools
import numbers
import secrets
import warnings

import numpy as np

from ..exceptions import SeededNoiseWarning


def secure_generator() -> np.random.Generator:
    """A Generator whose stream no one can reproduce: the generator of every private release.

    AES-128 in counter mode (``randomgen.AESCounter``, hardware AES-NI) when
    the CPU has AES instructions, else ChaCha20 (``randomgen.ChaCha``,
    20 rounds); both are cryptographically secure stream ciphers used as
    BitGenerators, so past and future outputs cannot be predicted from
    observed ones (unlike PCG64, whose state can be recovered from its
    outputs: Bouillaguet, Martinez & Sauvage 2020).  The key is 128 (AES) or
    256 (ChaCha) bits from the operating system's CSPRNG (``secrets``) and is
    never stored, logged or returned: the Generator lives only for one fit.
    Measured (one core, ``python -m benchmarks.noise_speed``): AES-NI about
    2 x 10^8 64-bit words/s, ChaCha20 about 6 x 10^7, OS random bytes
    (``os.urandom``) about 2 x 10^7.

    Returns
    -------
    numpy.random.Generator
    """
    from randomgen import AESCounter, ChaCha  # compiled BitGenerators for numpy

    if _has_aesni():
        return np.random.Generator(AESCounter(key=secrets.randbits(128), counter=0))
    return np.random.Generator(ChaCha(key=secrets.randbits(256), counter=0, rounds=20))


@functools.cache
def _has_aesni() -> bool:
    from randomgen import AESCounter
    return bool(AESCounter(key=0).use_aesni)


def is_seeded(random_state) -> bool:
    """True when ``random_state`` makes the noise reproducible (anything but None)."""
    return random_state is not None


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``random_state`` into the Generator that draws a fit's noise.

    * ``None`` (the default, the only private setting): :func:`secure_generator`,
      a cryptographically secure stream keyed from OS entropy that no one, the
      caller included, can reproduce.
    * an int >= 0 or a SeedSequence: ``numpy.random.default_rng(random_state)``
      (PCG64), reproducible: a *simulation* (tests, papers' figures, teaching
      on public data); estimators warn with
      :class:`~dpcore.exceptions.SeededNoiseWarning`.
    * a Generator: used as is (also a simulation: whoever holds its state
      reproduces the noise).

    Raises
    ------
    TypeError
        For anything else (notably the legacy ``numpy.random.RandomState``,
        which has no ``permuted``/``gumbel`` parity guarantees we rely on).
    ValueError
        For a negative integer.
    """
    if random_state is None:
        return secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(random_state, bool):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(random_state if isinstance(random_state, np.random.SeedSequence)
                                     else int(random_state))
    raise TypeError(f"random_state must be None, an int or a numpy.random.Generator, got {type(random_state).__name__}")


def warn_seeded(random_state, *, stacklevel: int = 3) -> None:
    """Issue the :class:`~dpcore.exceptions.SeededNoiseWarning` for a seeded private fit."""
    what = (f"random_state={random_state!r}" if isinstance(random_state, numbers.Integral)
            else f"a caller-supplied {type(random_state).__name__} as random_state")
    warnings.warn(
        f"{what} seeds the privacy noise: the seed reproduces the noise, so anyone who knows it can subtract "
        "the noise and read the exact answers. This result is a simulation, not a private release. "
        "Leave random_state=None (the default) to publish.",
        SeededNoiseWarning, stacklevel=stacklevel + 1)
