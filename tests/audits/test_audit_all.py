"""The one-command audits: every library mechanism and solver passes, every planted bug is caught."""

import io

import pytest

from audits.library_audit import audit_all, planted_bug_suite
from audits.planted_bugs import CATALOGUE
from audits.robustness_checks import ROBUSTNESS_NAMES
from audits.targets import MECHANISM_NAMES, SOLVER_NAMES

#: The norm-stress rows: issue 21's dense-row attack on the l_p solvers (violated while their dual norms
#: underflowed at p = 1.001; they pass with the sensitivity room's scaled norms).
NORM_STRESS = ("noisy_mirror_descent_dense", "batched_truncated_mirror_descent_dense",
              "shuffled_truncated_mirror_descent_dense")


@pytest.fixture(scope="module")
def quick_audit():
    out = io.StringIO()
    return audit_all(quick=True, seed=0, out=out), out.getvalue()


def test_audit_all_quick_passes_and_prints_a_table(quick_audit):
    """Family-wise false-alarm rate ≤ 5% (Bonferroni over the rows); fixed seed."""
    results, table = quick_audit
    names = list(MECHANISM_NAMES) + ["laplace[float-support-test]"] + list(SOLVER_NAMES) + list(ROBUSTNESS_NAMES)
    assert [r.target for r in results] == names
    assert all(r.verdict == "pass" for r in results ), table
    assert all(r.confidence > 0.99 for r in results)  # 1 − 0.05/22 per row
    for name in names:
        assert name in table
    assert "claimed eps" in table and "eps_lb" in table


def test_audit_all_norm_stress_rows_pass(quick_audit):
    results, table = quick_audit
    assert all(r.verdict == "pass" for r in results if r.target in NORM_STRESS), table


def test_planted_bug_suite_catches_every_bug():
    out = io.StringIO()
    results = planted_bug_suite(seed=0, out=out)
    variants = len(CATALOGUE) + sum(len(bug.solvers) for bug in CATALOGUE.values())
    assert len(results) == variants
    assert all(r.verdict == "violated" for r in results), out.getvalue()
    rows = [line for line in out.getvalue().splitlines() if line.rstrip().endswith("VIOLATED")]
    assert len(rows) == variants
