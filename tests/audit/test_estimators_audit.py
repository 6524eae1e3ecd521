"""Audit every private estimator of ``dpcore.ALGORITHMS`` on tiny neighbouring datasets.

The parameter list is built from the registry at collection time, so a family that
lands is picked up automatically: it is audited if ``dp_audit.ESTIMATOR_CASES`` has cases
for its key, and otherwise shows up as an explicit skip that says so.  Non-private
baselines are excluded by name (``dp_audit.NON_PRIVATE``).
"""
from __future__ import annotations

import pytest

import dpcore

from .dp_audit import ESTIMATOR_CASES, NON_PRIVATE, coverage, estimator_cases, run_estimator_case


def _params():
    out = []
    for key in sorted(dpcore.ALGORITHMS):
        if key in NON_PRIVATE:
            out.append(pytest.param(key, None, id=f"{key}-excluded",
                                    marks=pytest.mark.skip(reason=f"excluded: {NON_PRIVATE[key]}")))
        elif isinstance(ESTIMATOR_CASES.get(key), str):
            out.append(pytest.param(key, None, id=f"{key}-not-audited",
                                    marks=pytest.mark.skip(reason=f"not audited: {ESTIMATOR_CASES[key]}")))
        elif key not in ESTIMATOR_CASES:
            out.append(pytest.param(key, None, id=f"{key}-no-audit-case", marks=pytest.mark.skip(
                reason=f"no audit event defined yet for '{key}': add cases to ESTIMATOR_CASES in "
                       "tests/audit/dp_audit.py")))
        else:
            for i, case in enumerate(estimator_cases(key)):
                marks = () if case.ci_runs else pytest.mark.skip(
                    reason=f"'{case.name}' is too slow for CI: audited by benchmarks/privacy_audit.py")
                if case.ci_runs and case.known_issue:
                    marks = pytest.mark.xfail(strict=True, reason=f"known privacy issue: {case.known_issue}")
                out.append(pytest.param(key, i, id=f"{key}-{i}", marks=marks))
    return out


@pytest.mark.parametrize("key, index", _params())
def test_estimator_passes_audit(key, index):
    case = estimator_cases(key)[index]
    report = run_estimator_case(case, n_runs=case.ci_runs)
    print(report)
    assert report.passed, f"privacy violation found for {key}:\n{report}"


def test_exclusions_are_really_non_private():
    """Only baselines that declare themselves non-private may be excluded from the audit."""
    for key in NON_PRIVATE:
        if key in dpcore.ALGORITHMS:
            assert dpcore.ALGORITHMS[key].private is False, f"{key} is private but excluded from the audit"


def test_cases_name_registry_keys():
    """An audit case keyed by a typo would silently audit nothing."""
    assert set(ESTIMATOR_CASES) <= set(dpcore.ALGORITHMS), set(ESTIMATOR_CASES) - set(dpcore.ALGORITHMS)


def test_coverage_is_listed():
    cov = coverage()
    print("\n".join(f"{k:18s} {v}" for k, v in cov.items()))
    assert set(cov) == set(dpcore.ALGORITHMS)
    for key, status in cov.items():
        assert status in ("audited", "benchmark only (slow)") or status.startswith(("excluded", "skipped")), \
            (key, status)
