"""Audits of the Su–Zhao–Wang ℓp solvers: each library target passes at its claim (and the attack
separates D from D′ when the noise is off), and a planted bug — the truncation of Algorithm 7
removed while the claim is kept — is flagged.

False alarms: Clopper–Pearson at 95% per test (the "pass" checks fail with probability ≤ 5% each
if the implementation is correct; the seeds are fixed, so the outcome is deterministic)."""

import math
from functools import partial

import numpy as np
import pytest

from algorithms._mirror_common import mirror_setup
from algorithms.truncated_mirror_descent import batched_truncated_mirror_descent, truncated_mirror_descent_kernel
from audits import run_audit
from audits.solver_targets import canary_datasets, solver_target
from audits.target import FunctionTarget

LP_SOLVERS = ("noisy_mirror_descent", "phased_dp_sgd", "batched_truncated_mirror_descent",
              "shuffled_truncated_mirror_descent")


@pytest.mark.parametrize("name", LP_SOLVERS)
def test_library_target_passes_at_its_claim(name):
    target = solver_target(name, 1.0, 1e-5)
    assert target.relation == "replace_one" and target.claimed_epsilon <= 1.0
    result = run_audit(target, 150, estimator="clopper-pearson", seed=0)
    assert not result.violated


@pytest.mark.parametrize("name", ["noisy_mirror_descent", "batched_truncated_mirror_descent"])
def test_attack_separates_without_noise(name):
    result = run_audit(solver_target(name, math.inf, 1e-5), 500, estimator="clopper-pearson", seed=0)
    assert result.eps_lower > 3.0  # measured 5.57 (the 500-trial ceiling)


# --- planted bug: truncation removed (Algorithm 7 line 5 skipped), claim of the truncated run kept
SETTINGS = dict(p=1.5, loss="huber", delta=1e-5, constraint="l1", radius=5.0, data_norm_bound=1.0, steps=5,
                truncation=0.05)


def _runs(datasets, truncation, which, n, rng):
    """Scores w·e_d of n runs of Algorithm 7 on D / D′ at the noise the *truncated* run is calibrated
    for, with the kernel's truncation level set to ``truncation`` (inf = the bug)."""
    X, y = datasets[which]
    honest = batched_truncated_mirror_descent(X, y, epsilon=1.0, rng=0, **SETTINGS)
    m = mirror_setup(X, y, p=1.5, loss="huber", alpha=0.0, constraint="l1", radius=5.0, clip_norm=None,
                     data_norm_bound=1.0, epsilon=1.0, delta=1e-5, relation="replace_one", smoothness=None,
                     loss_params=None, where="planted bug")
    s, g = m.base, m.geo
    T = SETTINGS["steps"]
    out = np.empty(n)
    for k in range(n):
        perm = rng.permutation(s.data.n)
        w = truncated_mirror_descent_kernel(s.loss.kind, s.loss.param, s.data.X, s.data.y, m.dual_norms, perm, T,
                                            s.data.n // T, truncation, 0.0, m.constraint.kind, m.constraint.radius,
                                            g.r, g.s, g.kappa, m.w0, math.sqrt(T), honest.sigma, False, T, rng)[0]
        out[k] = w[-1]
    return out


def _target(truncation):
    datasets = canary_datasets(100, 3, "replace_one")
    claim = batched_truncated_mirror_descent(*datasets[1], epsilon=1.0, rng=0, **SETTINGS).privacy.epsilon
    return FunctionTarget(f"batched_truncated_mirror_descent[truncation={truncation}]", claim, 1e-5,
                          partial(_runs, datasets, truncation), "replace_one", "other", "w·e_d")


def test_planted_bug_truncation_removed_is_flagged():
    """The canary's gradient (dual norm 1) is zeroed by τ = 0.05; without truncation it moves the model
    by 20× the sensitivity the noise is calibrated for (measured ε_lb = 1.70 > 1 at 3000 trials per side)."""
    result = run_audit(_target(math.inf), 3000, estimator="clopper-pearson", seed=1)
    assert result.verdict == "violated"


def test_same_construction_with_truncation_passes():
    result = run_audit(_target(SETTINGS["truncation"]), 3000, estimator="clopper-pearson", seed=1)
    assert not result.violated
