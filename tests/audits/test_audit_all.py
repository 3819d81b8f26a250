"""The one-command audits: every library mechanism and solver passes, every planted bug is caught."""

import io

import pytest

from audits.library_audit import NO_POWER, audit_all, planted_bug_suite
from audits.power import POWER_THRESHOLD
from audits.planted_bugs import CATALOGUE
from audits.robustness_checks import ROBUSTNESS_NAMES
from audits.solver_targets import NORM_STRESS_NAMES
from audits.targets import MECHANISM_NAMES, SOLVER_NAMES


@pytest.fixture(scope="module")
def quick_audit():
    out = io.StringIO()
    return audit_all(quick=True, seed=0, out=out), out.getvalue()


def test_audit_all_quick_passes_labels_powerless_rows_and_prints_a_table(quick_audit):
    """Family-wise false-alarm rate ≤ 5% (Bonferroni over the rows); fixed seed."""
    results, table = quick_audit
    names = list(MECHANISM_NAMES) + ["laplace[float-support-test]"] + list(SOLVER_NAMES) + list(ROBUSTNESS_NAMES)
    assert [r.target for r in results] == names
    assert all(r.verdict in ("pass", NO_POWER) for r in results), table
    assert all(r.confidence > 0.99 for r in results)  # 1 − 0.05/30 per row
    # a pass carries evidence: the attack separated D and D′, and (with an event) has power against half the noise
    for r in results:
        if r.target in ROBUSTNESS_NAMES or r.target in NORM_STRESS_NAMES:  # targeted: a correct release shows nothing
            assert r.verdict == "pass" and r.details["power"] is None
        elif r.verdict == "pass":
            assert r.eps_lower > 0 and (r.details["power"] is None or r.details["power"] >= POWER_THRESHOLD)
        else:
            assert r.eps_lower == 0 or r.details["power"] < POWER_THRESHOLD
    weak = [r.target for r in results if r.verdict == NO_POWER]
    assert "dp_svrg" in weak and "noisy_mirror_descent" in weak and "gaussian" not in weak
    for name in names:
        assert name in table
    assert "claimed eps" in table and "eps_lb" in table and NO_POWER in table
    # the curve estimator where the claim has an event and is not an unsampled Gaussian
    by_name = {r.target: r for r in results}
    assert by_name["subsampled-gaussian"].estimator == "curve" and by_name["dp_sgd"].estimator == "curve"
    assert by_name["dp_gd"].estimator == "gdp" and by_name["objective_perturbation"].estimator == "clopper-pearson"


def test_audit_all_norm_stress_rows_pass(quick_audit):
    """Issue 21's dense-row attack on the l_p solvers (violated while their dual norms underflowed at p = 1.001)
    and its l2 twin pass with the sensitivity room's scaled norms."""
    results, table = quick_audit
    assert all(r.verdict == "pass" for r in results if r.target in NORM_STRESS_NAMES), table


def test_planted_bug_suite_catches_every_bug():
    out = io.StringIO()
    results = planted_bug_suite(seed=0, out=out)
    variants = len(CATALOGUE) + sum(len(bug.solvers) for bug in CATALOGUE.values())
    assert len(results) == variants
    assert all(r.verdict == "violated" for r in results), out.getvalue()
    rows = [line for line in out.getvalue().splitlines() if line.rstrip().endswith("VIOLATED")]
    assert len(rows) == variants
