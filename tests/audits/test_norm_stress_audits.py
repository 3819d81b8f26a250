"""Audits that would have caught issue 21's leak: norm-stress canaries and the planted norm bugs.

The ``*_dense`` targets are the issue's one-record attack (n = d = 20, logistic, p = 1.001, D all-zero rows, D′ one
row 0.4·𝟏, clip / truncation 1e-3, one step, ε = 1 — 0.99 for the shuffled variant, δ = 1e-5, 300 trials per
side); ``dp_gd_tiny`` is its ℓ2 twin (rows of 1e-170's, clip 1e-200). Clopper–Pearson at 95 % with fixed seeds:
a correct implementation is flagged with probability ≤ 5 % (deterministic here).

Before the fix (ℓq norms from the sensitivity room) the correct-solver audits of the dense targets were violated
(measured ε_lb 1.21 / 1.51 / 1.12 > claims 1 / 1 / 0.99; with a threshold fixed on separate runs 4.38 / 4.39 /
0.83, ``benchmarks/bench_lp_leak.py``); they pass now.
"""

import pytest

from audits import run_audit
from audits.planted_bugs import CATALOGUE
from audits.solver_targets import SOLVER_NAMES, dense_canary_datasets, solver_target, tiny_canary_datasets

DENSE = ("noisy_mirror_descent_dense", "batched_truncated_mirror_descent_dense", "shuffled_truncated_mirror_descent_dense")


def test_canaries_stress_the_norm_computation():
    (X, _), (X1, _) = dense_canary_datasets()
    assert not X.any() and (X1[0] == 0.4).all() and not X1[1:].any()
    assert (0.4**1001 == 0.0) and (X1[0] ** 2).sum() ** 0.5 <= 2.0  # underflows at q = 1001, within the bound
    (T, y), (T1, y1) = tiny_canary_datasets()
    assert (T == 1e-170).all() and float((T[0] * T[0]).sum()) == 0.0 and (y[0], y1[0]) == (-1.0, 1.0)
    assert set(DENSE + ("dp_gd_tiny",)) <= set(SOLVER_NAMES)


@pytest.mark.parametrize("name", DENSE)
def test_dense_canary_audit_passes_at_the_claim(name):
    target = solver_target(name, 1.0, 1e-5)
    result = run_audit(target, 300, estimator="clopper-pearson", seed=0, targeted=True)
    assert result.verdict == "pass", result


def test_tiny_canary_audit_passes_at_the_claim():
    result = run_audit(solver_target("dp_gd_tiny", 1.0, 1e-5), 300, estimator="clopper-pearson", seed=0,
                       targeted=True)
    assert result.verdict == "pass", result


@pytest.mark.parametrize("bug", ("norm-underflow", "clip-skipped-at-zero-norm"))
def test_planted_norm_bugs_are_caught_within_their_budget(bug):
    """Every target of the catalogue entry is flagged at its stated budget (what ``dpcore audit solver NAME
    --planted BUG`` runs); measured ε_lb 1.21 / 1.51 (300 trials) / 1.53 (shuffled, 600 trials), 5.06 (tiny);
    seeds 0–4 of the shuffled row at 600 trials: 1.49–1.65 > its claim 0.99."""
    entry = CATALOGUE[bug]
    for name, trials in [(entry.base, entry.trials)] + [(s, entry.solver_trials) for s in entry.solvers]:
        result = run_audit(solver_target(name, 1.0, 1e-5, planted=bug), trials, estimator=entry.estimator, seed=0)
        assert result.verdict == "violated", result


def test_planted_norm_bugs_need_their_targets():
    with pytest.raises(ValueError, match="planted"):
        solver_target("dp_gd", 1.0, 1e-5, planted="norm-underflow")
    with pytest.raises(ValueError, match="planted"):
        solver_target("noisy_mirror_descent_dense", 1.0, 1e-5, planted="clip-skipped-at-zero-norm")
