"""One way to write the figures a person reads: ε, δ, odds, distances, shares and counts (issue 65).

Every page of the app, the public gallery, the plain-word sentences of :mod:`dpcore.explain` and the
release report write their numbers through these functions, so one quantity reads the same wherever it
appears (the data's remaining ε was "1.039" in one place and "1.04 left" in another).  The rules:

* ε and every total or remainder of ε: three significant digits, never scientific notation
  (``0.9608`` -> ``"0.961"``, ``2.961`` -> ``"2.96"``, ``1000`` -> ``"1,000"``); a value within
  :data:`ZERO` of 0 is ``"0"``.
* δ: two significant digits, scientific below 0.001 without a padded exponent (``1e-08`` -> ``"1e-8"``).
* odds bound e^ε: ``"2.72×"``, ``"22,026×"``, ``"e^900×"`` beyond a trillion.
* a distance always with its unit: ``"303 m"``, ``"1,780 m"``, ``"0.0123 data units"``.
* a share as a percentage to one decimal, a whole one without it: ``"1.7 %"``, ``"52.5 %"``, ``"80 %"``; a
  bound below 1 never reads ``"100 %"`` (``"99.99 %"``).

This module imports nothing, so that the ground floor (:mod:`dpcore.explain`, :mod:`dpcore.glossary`) and
every layer above may use it.
"""
from __future__ import annotations

import math

#: Below this (relative to 1), an ε or δ remainder is written as 0: float sums leave ~1e-16 behind.
ZERO = 1e-12


def _significant(v: float, digits: int) -> str:
    """``v`` to ``digits`` significant digits in positional notation, thousands separated."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    exponent = math.floor(math.log10(abs(v)))
    decimals = digits - 1 - exponent
    rounded = round(v, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:   # 9.996 -> 10.0: one digit fewer
        decimals -= 1
        rounded = round(v, decimals)
    if decimals <= 0:
        return f"{rounded:,.0f}"
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_epsilon(epsilon: float | None, *, none: str = "none") -> str:
    """An ε (a draw's, a total, what is left of a cap) to three significant digits: ``"0.961"``, ``"2.96"``.

    Parameters
    ----------
    epsilon : float or None
    none : str, default "none"
        What None reads as (no cap set, say); never Python's ``None``.

    Returns
    -------
    str
    """
    if epsilon is None:
        return none
    v = float(epsilon)
    if abs(v) <= ZERO:
        return "0"
    return _significant(v, 3)


def fmt_delta(delta: float | None, *, none: str = "none") -> str:
    """A δ to two significant digits: ``"1e-8"``, ``"1.5e-6"``, ``"0.01"``, ``"0"``.

    Returns
    -------
    str
    """
    if delta is None:
        return none
    v = float(delta)
    if v == 0 or abs(v) <= 1e-300:
        return "0"
    if abs(v) >= 1e-3:
        return _significant(v, 2)
    mantissa, exponent = f"{v:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def fmt_odds(epsilon: float) -> str:
    """The odds bound e^ε as people read it: ``"2.72×"``, ``"22,026×"``, ``"e^900×"``.

    Returns
    -------
    str
    """
    e = float(epsilon)
    odds = math.exp(e) if e < 709 else math.inf
    if not math.isfinite(odds) or odds >= 1e12:
        return f"e^{_significant(e, 3)}×"
    return f"{odds:.3g}×" if odds < 100 else f"{odds:,.0f}×"


def fmt_number(value: float) -> str:
    """A measured figure (an error, a distance): ``"1,780"``, ``"373"``, ``"0.0123"``; never scientific.

    Returns
    -------
    str
    """
    v = float(value)
    if not math.isfinite(v):
        return "—"
    return f"{v:,.0f}" if abs(v) >= 100 else _significant(v, 3)


def fmt_distance(value: float, unit: str) -> str:
    """A distance with its unit: ``fmt_distance(303.2, "m") == "303 m"``.

    Parameters
    ----------
    value : float
    unit : str
        ``"m"`` on a map, else ``"data units"`` (or the data's own unit name).

    Returns
    -------
    str
    """
    return f"{fmt_number(value)} {unit}"


def fmt_range(lo: float, hi: float, unit: str) -> str:
    """A range with its unit once: ``"23.9–108 m"``.

    Returns
    -------
    str
    """
    return f"{fmt_number(lo)}–{fmt_number(hi)} {unit}"


def fmt_share(share: float) -> str:
    """A share as a percentage to one decimal: ``"1.7 %"``, ``"52.5 %"``, ``"80 %"``; ``"100 %"`` only when it is 1.

    Returns
    -------
    str
    """
    pct = 100.0 * float(share)
    if pct >= 99.95 and share < 1:       # never round a bound below 1 up to "100 %" (issue 65: "100.0%" at ε = 10)
        return f"{pct:.2f} %" if pct < 99.995 else "over 99.99 %"     # not "> …": Markdown reads a quote
    text = f"{pct:.1f}".removesuffix(".0")
    return f"{text} %"


def fmt_count(n: int | float) -> str:
    """A whole count with thousands separated: ``"17,689"``.

    Returns
    -------
    str
    """
    return f"{float(n):,.0f}"


def fmt_budget(epsilon: float, delta: float = 0.0) -> str:
    """A privacy cost as a phrase: ``"ε = 1"`` or ``"ε = 1, δ = 1e-8"``.

    Returns
    -------
    str
    """
    return f"ε = {fmt_epsilon(epsilon)}" + (f", δ = {fmt_delta(delta)}" if delta else "")


__all__ = ["ZERO", "fmt_budget", "fmt_count", "fmt_delta", "fmt_distance", "fmt_epsilon", "fmt_number", "fmt_odds",
           "fmt_range", "fmt_share"]
