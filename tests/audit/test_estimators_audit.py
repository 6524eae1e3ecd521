"""Audit every private estimator of ``dpcore.ALGORITHMS`` on tiny neighbouring datasets.

The parameter list is built from the registry at collection time, and each estimator's cases
from its class's declaration (``audit = AuditCase(privacy=(PrivacyCase(...), ...))``,
:mod:`dpcore.algorithms.traits`), so an algorithm that is registered is picked up without any
other edit (``tests/test_toy_algorithm.py``): it is audited if it declares cases, and otherwise
shows up as an explicit skip that says why.  Non-private baselines (``private = False``) are excluded.
"""
from __future__ import annotations

import pytest

import dpcore

from .dp_audit import coverage, estimator_cases, not_audited, run_estimator_case


def _params():
    out = []
    for key in sorted(dpcore.ALGORITHMS):
        reason = not_audited(key)
        if reason is not None:
            out.append(pytest.param(key, None, id=f"{key}-not-audited", marks=pytest.mark.skip(reason=reason)))
            continue
        for i, case in enumerate(estimator_cases(key)):
            marks = () if case.ci_runs else pytest.mark.skip(
                reason=f"'{case.name}' is too slow for CI: audited by benchmarks/privacy_audit.py")
            if case.ci_runs and case.known_issue:
                marks = pytest.mark.xfail(strict=True, reason=f"known privacy issue: {case.known_issue}")
            out.append(pytest.param(key, i, id=f"{key}-{i}", marks=marks))
    return out


@pytest.mark.heavy
@pytest.mark.parametrize("key, index", _params())
def test_estimator_passes_audit(key, index):
    case = estimator_cases(key)[index]
    report = run_estimator_case(case, n_runs=case.ci_runs)
    print(report)
    assert report.passed, f"privacy violation found for {key}:\n{report}"


def test_only_declared_baselines_are_excluded():
    """Only baselines that declare themselves non-private are excluded; a private estimator is audited
    or says why not."""
    for key, cls in dpcore.ALGORITHMS.items():
        reason = not_audited(key)
        assert (reason or "").startswith("excluded") == (not cls.private), (key, reason)


def test_coverage_is_listed():
    cov = coverage()
    print("\n".join(f"{k:18s} {v}" for k, v in cov.items()))
    assert set(cov) == set(dpcore.ALGORITHMS)
    for key, status in cov.items():
        assert status in ("audited", "benchmark only (slow)") or status.startswith(("excluded", "skipped")), \
            (key, status)
