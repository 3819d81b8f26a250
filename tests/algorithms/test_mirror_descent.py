"""Noisy regularized mirror descent (Su–Zhao–Wang Alg. 3): convergence with the noise off against a
SciPy solve, p ranges, the composed generalized-Gaussian event, and the printed noise formula."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

import dpcore
from algorithms.losses import get_loss
from algorithms.noisy_mirror_descent import noisy_mirror_descent, paper_sigma, tuned_steps
from algorithms.synthetic import make_classification
from mechanisms import GeneralizedGaussian
from mechanisms.base import convert_sensitivity

X, Y, _ = make_classification(200, 5, seed=7)
LOSS = get_loss("logistic")


def l1_reference(R):
    """min over ‖w‖₁ ≤ R of the mean logistic loss (SciPy SLSQP on the split w = a − b)."""
    d = X.shape[1]
    res = minimize(lambda z: LOSS.value(z[:d] - z[d:], X, Y), np.full(2 * d, 0.01), method="SLSQP",
                   bounds=[(0, None)] * (2 * d), constraints=[{"type": "ineq", "fun": lambda z: R - z.sum()}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    return res.fun


def unconstrained_reference():
    res = minimize(lambda w: LOSS.value(w, X, Y), np.zeros(X.shape[1]), jac=lambda w: LOSS.gradient(w, X, Y),
                   method="BFGS", options={"gtol": 1e-10})
    return res.fun


@pytest.mark.parametrize("p", [1.1, 1.5])
def test_noise_off_converges_to_the_l1_constrained_optimum(p):
    """phi_weight = 0, 2000 steps: the averaged iterate is within 1e-4 of the SciPy optimum (the gap
    at w = 0 is 0.04; the constraint is active there)."""
    res = noisy_mirror_descent(X, Y, p=p, epsilon=math.inf, data_norm_bound=1.0, constraint="l1", radius=0.5,
                               steps=2000, phi_weight=0.0)
    assert np.abs(res.weights).sum() <= 0.5 * (1 + 1e-12)
    assert LOSS.value(res.weights, X, Y) - l1_reference(0.5) < 1e-4
    assert res.privacy.epsilon == math.inf


def test_noise_off_unconstrained_as_in_the_paper():
    res = noisy_mirror_descent(X, Y, p=1.5, epsilon=math.inf, data_norm_bound=1.0, steps=3000, phi_weight=0.0)
    assert LOSS.value(res.weights, X, Y) - unconstrained_reference() < 1e-3


def test_regulariser_weight_shrinks_towards_zero():
    """The paper's αΦ term: with a large α the solution is pulled to 0 (Φ's minimiser)."""
    plain = noisy_mirror_descent(X, Y, p=1.5, epsilon=math.inf, data_norm_bound=1.0, steps=500, phi_weight=0.0)
    reg = noisy_mirror_descent(X, Y, p=1.5, epsilon=math.inf, data_norm_bound=1.0, steps=500, phi_weight=1.0)
    assert np.abs(reg.weights).sum() < 0.5 * np.abs(plain.weights).sum()


@pytest.mark.parametrize("p", [2.0, 3.0, math.inf, 1.0])
def test_p_outside_the_theorem_is_refused(p):
    with pytest.raises(ValueError, match=r"p must be in \(1, 2\)"):
        noisy_mirror_descent(X, Y, p=p, epsilon=1.0, data_norm_bound=1.0)


def test_add_remove_is_refused():
    with pytest.raises(ValueError, match="replace_one"):
        noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, relation="add_remove")


@pytest.mark.parametrize("p", [1.1, 1.5])
def test_reported_privacy_is_the_optimal_composition_of_the_releases_run(p, independent):
    """T Lemma 3 releases of (ε₀, δ/(2T)) composed optimally: the reported ε is the KOV15 value computed
    independently (tests/algorithms/conftest.py), and each release is Lemma 3's for the σ that ran."""
    res = noisy_mirror_descent(X, Y, p=p, epsilon=0.8, delta=1e-5, data_norm_bound=1.0, rng=0,
                               noise="generalized_gaussian", schedule="theorem")
    T = res.details["steps"]
    assert res.event.count == T == res.details["releases"]
    step = res.event.event
    exact = independent.kov_epsilon(step.epsilon, step.delta, T, 1e-5)
    assert step.delta == res.details["delta_step"] == 1e-5 / (2 * T)
    assert exact <= res.privacy.epsilon <= exact * (1 + 1e-9)
    assert 0.7 < res.privacy.epsilon <= 0.8
    # the per-step release is Lemma 3's certificate for the generalized Gaussian actually used
    q, r, d = res.details["q"], res.details["noise_norm"], X.shape[1]
    sens_r = convert_sensitivity(2.0 * res.details["clip_norm"] / X.shape[0], q, r, d)
    mech = GeneralizedGaussian(r, res.sigma, d, sens_r)
    assert mech.lemma3_epsilon(res.details["delta_step"]) == res.event.event.epsilon


def test_paper_sigma_reproduces_the_printed_formula(independent):
    """p = 1.5, d = 5: κ = min(2, 2 ln 5) = 2; L = 1, T = 10, n = 200, ε = 0.5, δ = 1e-5:
    σ² = 64·1·2·10·ln(1e5)/(200²·0.25) = 1.47365, σ = 1.21394 (by hand)."""
    hand = math.sqrt(64 * 2 * 10 * math.log(1e5) / (200**2 * 0.25))
    assert hand == pytest.approx(1.21394, rel=1e-5)
    with pytest.warns(UserWarning, match="calibration='accountant'"):
        res = noisy_mirror_descent(X, Y, p=1.5, epsilon=0.5, delta=1e-5, data_norm_bound=1.0, steps=10,
                                   calibration="paper", noise="generalized_gaussian", rng=0)
    assert res.details["kappa"] == 2.0 and res.details["clip_norm"] == 1.0
    assert res.sigma == hand == paper_sigma(1.0, 2.0, 10, 200, 0.5, 1e-5)
    # the printed constant loses a log factor against Lemma 1 + Lemma 3: more than 0.5 is reported (KOV15 exact)
    step = res.event.event
    exact = independent.kov_epsilon(step.epsilon, step.delta, 10, 1e-5)
    assert exact <= res.privacy.epsilon <= exact * (1 + 1e-9) and exact > 0.5


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_gaussian_noise_is_the_exact_gaussian_composition(eps, independent):
    """Default noise: T Gaussian releases of the mean gradient clipped in ℓ2, ε from dpcore (exact
    analytic Gaussian of the composition: one Gaussian of multiplier z/√T), calibrated to the target."""
    res = noisy_mirror_descent(X, Y, p=1.5, epsilon=eps, delta=1e-5, data_norm_bound=1.0, rng=0)
    T, n = res.details["steps"], X.shape[0]
    assert T == 1000 == res.event.count == res.details["releases"]  # tuned_steps(200, 5): the cap
    assert res.details["noise"] == "gaussian" and res.details["accountant"] == "auto"
    assert res.sigma == pytest.approx(res.noise_multiplier * 2.0 * res.details["clip_norm"] / n, rel=1e-12)
    exact = independent.gaussian_epsilon(math.sqrt(T) / res.noise_multiplier, 1e-5)  # Balle–Wang, mpmath
    assert exact <= res.privacy.epsilon <= exact * (1 + 1e-9)
    one = dpcore.get_epsilon(dpcore.events.GaussianEvent(res.noise_multiplier / math.sqrt(T)), 1e-5,
                             accountant="pld").epsilon  # independent route: PLD of the equivalent Gaussian
    assert res.privacy.epsilon == pytest.approx(one, rel=1e-3)
    assert 0.999 * eps < res.privacy.epsilon <= eps


def test_schedules_and_their_overrides():
    """tuned: T = tuned_steps(n, d) (1000 here), α = 0, c = κ; theorem: Theorem 7's T and α with c = 1 (by hand for n = 200, d = 5,
    p = 1.5 (κ = 2), ε = 1, δ = 1e-5: T = ⌈(400/√(5 ln 1e5))^{0.4}⌉ = ⌈4.884⌉ = 5, α = (4β/5)·log₂(40))."""
    tuned = noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, rng=0)
    assert (tuned.details["steps"], tuned.details["phi_weight"], tuned.details["step_scale"]) == (1000, 0.0, 2.0)
    th = noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, rng=0, schedule="theorem")
    assert (400 / math.sqrt(5 * math.log(1e5))) ** 0.4 == pytest.approx(4.884, abs=1e-3)
    beta = th.details["smoothness"]
    assert th.details["steps"] == 5 and th.details["step_scale"] == 1.0
    assert th.details["phi_weight"] == pytest.approx(4 * beta / 5 * math.log2(40), rel=1e-12)
    own = noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, rng=0, steps=7, step_scale=3.0,
                               phi_weight=0.1, schedule="theorem")
    assert (own.details["steps"], own.details["phi_weight"], own.details["step_scale"]) == (7, 0.1, 3.0)


def test_tuned_schedule_keeps_100_steps_for_the_generalized_gaussian():
    """The step-count rule is for Gaussian noise only (its T is privacy-neutral); generalized-Gaussian
    releases compose as approximate-DP steps, so the tuned schedule keeps T = 100 for them."""
    gg = noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, rng=0, noise="generalized_gaussian")
    assert gg.details["steps"] == 100 == gg.event.count == gg.details["releases"]
    assert noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, rng=0).details["steps"] == 1000


@pytest.mark.parametrize("n,d,T", [(200, 5, 1000), (50_000, 100, 1000), (50_000, 1000, 300), (32_561, 124, 1000),
                                   (50_000, 3000, 100), (20_000, 10_000, 100), (15_000, 1000, 1000),
                                   (16_000, 1000, 938)])
def test_tuned_steps_rule(n, d, T):
    """T = min(1000, max(100, ⌈1.5e10/(n·d)⌉)) by hand (e.g. 1.5e10/(16 000·1000) = 937.5 → 938)."""
    assert tuned_steps(n, d) == T


@pytest.mark.parametrize("kw,match", [({"noise": "laplace"}, "noise must be one of"),
                                      ({"schedule": "fast"}, "schedule must be one of"),
                                      ({"step_scale": 0.0}, "step_scale"),
                                      ({"calibration": "paper"}, "noise='generalized_gaussian'")])
def test_bad_options_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        noisy_mirror_descent(X, Y, p=1.5, epsilon=1.0, data_norm_bound=1.0, **kw)


def test_same_seed_same_model():
    a = noisy_mirror_descent(X, Y, p=1.3, epsilon=1.0, data_norm_bound=1.0, constraint="l1", radius=1.0, rng=5)
    b = noisy_mirror_descent(X, Y, p=1.3, epsilon=1.0, data_norm_bound=1.0, constraint="l1", radius=1.0, rng=5)
    np.testing.assert_array_equal(a.weights, b.weights)


@pytest.mark.parametrize("solver,p,eps", [("noisy_mirror_descent", 1.5, 0.8), ("phased_dp_sgd", 3.0, 0.8),
                                          ("batched_truncated_mirror_descent", 1.2, 0.8),
                                          ("shuffled_truncated_mirror_descent", 1.5, 0.01)])
def test_estimator_accepts_every_lp_solver(solver, p, eps):
    from algorithms import DPLogisticRegression

    Xe, Ye, _ = make_classification(2000, 6, seed=1)
    m = DPLogisticRegression(solver=solver, epsilon=eps, random_state=None, solver_params={"p": p}).fit(Xe, Ye)
    assert 0.9 * eps < m.privacy_.epsilon <= eps and m.privacy_.relation == "replace_one"
    assert m.coef_.shape == (6,) and np.all(np.isfinite(m.coef_))
