"""Phased DP-SGD (Su–Zhao–Wang Alg. 6 = Feldman–Koren–Talwar): phases, Lemma 14's step and its
η ≤ 1/β check, noise-off convergence against SciPy, the single Gaussian event, the printed σ_i."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

import dpcore
from algorithms.losses import get_loss
from algorithms.phased_dp_sgd import lemma14_step, phase_sizes, phased_dp_sgd
from algorithms.synthetic import make_classification
from dpcore.events import GaussianEvent

X, Y, _ = make_classification(200, 5, seed=7)
LOSS = get_loss("logistic")
XB, YB = np.tile(X, (100, 1)), np.tile(Y, 100)


def test_phase_sizes_halve():
    assert phase_sizes(20000).tolist() == [10000, 5000, 2500, 1250, 625, 312, 156, 78, 39, 19, 9, 4, 2, 1, 0]
    assert phase_sizes(2).tolist() == [1]


def test_lemma14_step_by_hand():
    """L = 1, n = 20000, d = 5, ε = 1, δ = 1e-5: min{4/√20000, 1/(2√(5·ln 1e5))} = min{0.028284, 0.065901}."""
    assert lemma14_step(1.0, 20000, 5, 1.0, 1e-5) == pytest.approx(0.0282843, rel=1e-5)
    assert lemma14_step(1.0, 20000, 5, 0.1, 1e-5) == pytest.approx(0.0065901, rel=1e-4)


@pytest.mark.parametrize("p", [1.1, 1.5, 2.0, 3.0, math.inf])
def test_noise_off_converges_to_the_l1_constrained_optimum_for_every_p(p):
    d = X.shape[1]
    ref = minimize(lambda z: LOSS.value(z[:d] - z[d:], X, Y), np.full(2 * d, 0.01), method="SLSQP",
                   bounds=[(0, None)] * (2 * d), constraints=[{"type": "ineq", "fun": lambda z: 0.5 - z.sum()}],
                   options={"ftol": 1e-15, "maxiter": 1000}).fun
    res = phased_dp_sgd(XB, YB, p=p, epsilon=math.inf, data_norm_bound=1.0, constraint="l1", radius=0.5,
                        learning_rate=4.0, rng=0)
    assert np.abs(res.weights).sum() <= 0.5 * (1 + 1e-12)
    assert LOSS.value(res.weights, X, Y) - ref < 2e-4  # measured 3e-5 (one pass over 20000 records)


@pytest.mark.parametrize("p", [1.0, 0.5])
def test_p_at_most_one_is_refused(p):
    with pytest.raises(ValueError, match=r"p must be in \(1, inf\]"):
        phased_dp_sgd(XB, YB, p=p, epsilon=1.0, data_norm_bound=1.0)


def test_step_above_one_over_beta_is_refused():
    """β = 1/4 for the logistic loss with ‖x‖ ≤ 1: η = 4.5 > 1/β."""
    with pytest.raises(ValueError, match=r"eta <= 1/\(beta \+ alpha\)"):
        phased_dp_sgd(XB, YB, epsilon=1.0, data_norm_bound=1.0, learning_rate=4.5)
    with pytest.raises(ValueError, match="data_norm_bound is required"):
        phased_dp_sgd(XB, YB, epsilon=1.0, clip_norm=1.0)


def test_event_is_one_gaussian_release_of_the_exact_epsilon(independent):
    res = phased_dp_sgd(XB, YB, p=3.0, epsilon=0.7, delta=1e-5, data_norm_bound=1.0, rng=0)
    assert isinstance(res.event, GaussianEvent) and res.event.relation == "replace_one"
    assert res.event.noise_multiplier == res.noise_multiplier == pytest.approx(res.sigma / res.details["sensitivity"], rel=1e-12)
    exact = independent.gaussian_epsilon(1.0 / res.noise_multiplier, 1e-5)  # Balle–Wang in mpmath
    assert exact <= res.privacy.epsilon <= min(0.7, exact * (1 + 1e-9))
    assert res.privacy.epsilon > 0.69
    assert res.details["releases"] == len(phase_sizes(XB.shape[0]))


def test_paper_noise_by_hand():
    """σ_i = 4Lη_i√(log(1/δ))/ε: z = σ_i/(2Lη_i) = 2√(ln 1e5)/ε = 6.78617 at ε = 1; σ₁ = z·2L·η/4."""
    res = phased_dp_sgd(XB, YB, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, calibration="paper", rng=0)
    assert res.noise_multiplier == pytest.approx(6.78617, rel=1e-5)
    eta = res.details["learning_rate"]
    assert res.sigma == pytest.approx(4 * 1.0 * (eta / 4) * math.sqrt(math.log(1e5)) / 1.0, rel=1e-12)
    assert res.privacy.epsilon == dpcore.get_epsilon(GaussianEvent(res.noise_multiplier, "replace_one"), 1e-5,
                                                     accountant="analytic_gaussian").epsilon


def test_add_remove_is_refused():
    with pytest.raises(ValueError, match="replace_one"):
        phased_dp_sgd(XB, YB, epsilon=1.0, data_norm_bound=1.0, relation="add_remove")
