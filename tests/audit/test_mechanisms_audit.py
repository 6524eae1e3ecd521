"""Audit every mechanism of the noise module on adversarial neighbouring inputs.

Each case (``dp_audit.mechanism_cases``) feeds two query answers that differ by exactly
the declared sensitivity; the audit must find no event whose probability ratio breaks
``e^epsilon`` (plus delta) at confidence 1 - 1e-3.  The cases are also *sharp*: the
event found certifies a large part of epsilon, so a mechanism that wasted budget (noise
too large) would show here too.
"""
from __future__ import annotations

import pytest

from dpcore.privacy.mechanisms import NoiseSource

from .dp_audit import mechanism_cases, run_mechanism_case

#: CI sizes (runs per side); the benchmark uses the cases' own, larger sizes.
CI_RUNS = {"exponential": 20_000, "permute-and-flip": 12_000, "quantile": 10_000, "privtree": 10_000}
CASES = mechanism_cases(NoiseSource, epsilon=1.0)


def _ci_runs(case):
    for prefix, n in CI_RUNS.items():
        if case.name.startswith(prefix):
            return n
    return case.n_runs


def test_every_mechanism_has_a_case():
    """A new NoiseSource mechanism must come with an audit case."""
    public = {m for m in dir(NoiseSource) if not m.startswith("_") and callable(getattr(NoiseSource, m))}
    covered = {"laplace", "laplace_above", "gaussian", "gaussian_zcdp", "exponential", "permute_and_flip", "sub",
               "parallel", "quantile", "with_ledger", "privtree"}
    missing = public - covered
    assert not missing, f"no audit case for NoiseSource.{sorted(missing)}: add one to dp_audit.mechanism_cases"
    names = " ".join(c.name for c in CASES)
    for mech in ("laplace", "laplace_above", "gaussian", "gaussian_zcdp", "exponential", "permute-and-flip", "sub",
                 "parallel", "quantile", "with_ledger", "privtree"):
        assert mech in names


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_mechanism_passes_audit(case):
    report = run_mechanism_case(case, n_runs=_ci_runs(case))
    print(report)
    assert report.passed, f"privacy violation found:\n{report}"
    # Sharpness: the adversarial neighbours make the best event certify much of epsilon.
    assert report.epsilon_lb >= case.sharp * case.epsilon, f"the audit found no sharp event:\n{report}"
