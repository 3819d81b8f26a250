"""The one-command audits: every library mechanism and solver passes, every planted bug is caught."""

import io

from audits.library_audit import audit_all, planted_bug_suite
from audits.planted_bugs import CATALOGUE
from audits.robustness_checks import ROBUSTNESS_NAMES
from audits.targets import MECHANISM_NAMES, SOLVER_NAMES


def test_audit_all_quick_passes_and_prints_a_table():
    """Family-wise false-alarm rate ≤ 5% (Bonferroni over the rows); fixed seed."""
    out = io.StringIO()
    results = audit_all(quick=True, seed=0, out=out)
    names = list(MECHANISM_NAMES) + ["laplace[float-support-test]"] + list(SOLVER_NAMES) + list(ROBUSTNESS_NAMES)
    assert [r.target for r in results] == names
    assert all(r.verdict == "pass" for r in results), out.getvalue()
    assert all(r.confidence > 0.99 for r in results)  # 1 − 0.05/18 per row
    table = out.getvalue()
    for name in names:
        assert name in table
    assert "claimed eps" in table and "eps_lb" in table


def test_planted_bug_suite_catches_every_bug():
    out = io.StringIO()
    results = planted_bug_suite(seed=0, out=out)
    variants = len(CATALOGUE) + sum(len(bug.solvers) for bug in CATALOGUE.values())
    assert len(results) == variants
    assert all(r.verdict == "violated" for r in results), out.getvalue()
    rows = [line for line in out.getvalue().splitlines() if line.rstrip().endswith("VIOLATED")]
    assert len(rows) == variants
