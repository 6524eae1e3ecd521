"""Points drawn from a released synopsis: the look-alike an accuracy preview simulates on (issue 56, point 3).

A released synopsis (a noisy grid, a sanitized point set or a coreset) is a noisy picture of the
data's shape; :func:`synopsis_points` turns it into points, dropping the cells whose noisy count is
within a few noise scales of zero (:func:`floor_scales`, :func:`cell_noise_scale`).  Small mass far
from the data decides the error of the algorithms that pass over it (zCDP-Lloyd, DPM): k-means on
the look-alike spends a centre on it, they do not, and a sanitized database's spurious PrivTree
leaves made their previews twice their real error on the taxi sample (``benchmarks/preview_coverage.py``).
Everything here is post-processing of released output.  Used by :mod:`dpcore.evaluation.preview`.
"""
from __future__ import annotations

import math

import numpy as np

#: Synopsis kinds a look-alike can be drawn from (they carry the data's shape as noisy mass).
SHAPED_KINDS = ("grid", "points", "coreset")

#: Grid cells whose noisy count is below this many noise scales are taken as empty (post-processing).
#: Three Laplace scales: an empty cell passes with probability e^-3 / 2 (2.5 %), a cell of ten scales
#: almost surely; lower floors left enough noise mass for k-means on the look-alike to chase it.
FLOOR = 3.0


def floor_scales(kind: str, n_cells: int) -> float:
    """How many noise scales a cell's noisy count must exceed to be drawn from (see :data:`FLOOR`).

    Parameters
    ----------
    kind : str
        The synopsis' kind: ``"grid"`` (EUGkM, Hybrid) or ``"points"`` (a sanitized database).
    n_cells : int >= 0
        How many cells (grid cells or leaves) the synopsis releases.

    Returns
    -------
    float
        :data:`FLOOR` for a grid; max(:data:`FLOOR`, ln m) for a sanitized database of m cells.

    Notes
    -----
    With a floor of t = ln m scales, the expected number of empty cells that pass (Laplace noise
    above t scales has probability e^(-t) / 2) is m e^(-t) / 2 = 1/2: at most about one spurious
    cell in the whole synopsis, a Bonferroni-style floor.  A sanitized database needs it: its
    PrivTree leaves are few and, where the data are sparse, large, so one spurious leaf puts a
    block of mass kilometres from the data; k-means on the look-alike then spends a centre on it
    that zCDP-Lloyd or DPM (which pass over small remote mass) do not, and with three scales the
    preview was about twice their real error on the taxi sample (issue 56;
    ``benchmarks/results/preview_coverage.txt``).  A grid keeps three scales: its previews were
    checked at that floor.

    **Privacy.** A function of public values (the kind and the number of released cells).
    """
    if kind == "points":
        return max(FLOOR, math.log(max(int(n_cells), 1)))
    return FLOOR


#: Most points a look-alike holds: above it the simulated releases run on a uniform share of the
#: released size and the noise is scaled to match (see :func:`synopsis_points`).
MAX_LOOKALIKE_ROWS = 50_000

def synopsis_points(synopsis, bounds, *, size: int | None = None, noise_scale: float | None = None,
                    random_state=None) -> tuple[np.ndarray, int]:
    """Points drawn from a released synopsis: a look-alike that carries the data's shape.

    Parameters
    ----------
    synopsis : GridSynopsis, PointSynopsis or CoresetSynopsis
        A released synopsis (``fit.synopsis_``).
    bounds : (lower (d,), upper (d,)), the public bounds, data units
    size : int or None
        How many points; default the released noisy size (the sum of the signed noisy counts, or of
        the weights), at least 1.
    noise_scale : float or None
        The Laplace scale of the cell counts (:func:`cell_noise_scale` of the release's ledger);
        given, cells whose count is below :func:`floor_scales` of it are taken as empty.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray (min(size, MAX_LOOKALIKE_ROWS), d), inside the bounds
        Cells (or coreset points) chosen with probability proportional to their positive noisy mass,
        each point uniform in its cell (a coreset point is taken as is).
    size : int, the released noisy size (before any cap)

    Raises
    ------
    ValueError
        A synopsis of another kind (WaveCluster's labels carry no mass), or one with no positive mass.

    Notes
    -----
    **Privacy.** A function of released output and public bounds only: post-processing of the
    release (Dwork & Roth 2014, Prop. 2.1), no further cost.  Negative noisy counts are dropped
    (they cancel noise in expectation but cannot be drawn); the size keeps them, so it is unbiased.
    """
    rng = np.random.default_rng(random_state)
    lo, hi = (np.asarray(b, dtype=float).ravel() for b in bounds)
    kind = getattr(synopsis, "kind", None)
    if kind == "grid":
        counts = np.asarray(synopsis.counts, dtype=float).ravel()
        edges = [np.asarray(e, dtype=float) for e in synopsis.edges]
        cell_lo = _grid_corners([e[:-1] for e in edges])
        cell_hi = _grid_corners([e[1:] for e in edges])
    elif kind == "points":
        counts = np.asarray(synopsis.weights, dtype=float).ravel()
        cell_lo, cell_hi = np.asarray(synopsis.lower, dtype=float), np.asarray(synopsis.upper, dtype=float)
    elif kind == "coreset":
        counts = np.asarray(synopsis.weights, dtype=float).ravel()
        cell_lo = cell_hi = np.asarray(synopsis.points, dtype=float)
    else:
        raise ValueError(f"a look-alike is drawn from a grid, point or coreset synopsis, not {kind!r}")
    mass = np.clip(counts, 0.0, None)
    if noise_scale is not None and kind in ("grid", "points"):
        mass = np.where(counts > floor_scales(kind, counts.size) * float(noise_scale), mass, 0.0)
        if mass.sum() <= 0:
            mass = np.clip(counts, 0.0, None)
    if not np.isfinite(mass).all() or mass.sum() <= 0:
        raise ValueError("the synopsis holds no positive mass to draw points from")
    released = max(int(round(float(counts.sum()))), 1)
    n = max(int(size), 1) if size is not None else released
    n = min(n, MAX_LOOKALIKE_ROWS)
    which = rng.choice(mass.size, size=n, p=mass / mass.sum())
    X = cell_lo[which] + rng.uniform(size=(n, lo.size)) * (cell_hi[which] - cell_lo[which])
    return np.clip(X, lo, hi), released


#: Ledger entries of a synopsis' cell counts: a grid's (EUGkM, Hybrid, a uniform sanitized database) and
#: PrivTree's leaves (a sanitized database's default decomposition).
CELL_COUNT_ENTRIES = ("grid cell counts", "leaf counts")


def cell_noise_scale(ledger) -> float | None:
    """The Laplace scale (sensitivity / ε, in points) of a release's cell counts, from its ledger; None if none.

    The cells are a grid's or PrivTree's leaves (:data:`CELL_COUNT_ENTRIES`).  Public: the ledger is
    part of the release.
    """
    for e in ledger:
        if any(name in e.name for name in CELL_COUNT_ENTRIES) and e.epsilon > 0:
            return float(e.sensitivity or 1.0) / float(e.epsilon)
    return None


def _grid_corners(axes: list) -> np.ndarray:
    from ..synopsis import grid_points
    return grid_points(axes)
