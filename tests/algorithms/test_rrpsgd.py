"""RRPSGD (zhang-zheng-mou-wang-2017 Alg. 2): random rounds, the paper's noise, privacy through dpcore."""

import math

import numpy as np
import pytest
from scipy import stats

from algorithms.dp_sgd import dp_sgd_kernel
from algorithms.losses import get_loss
from algorithms.objective import reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.rrpsgd import rrpsgd, rrpsgd_paper_sigma
from algorithms.synthetic import make_classification
from dpcore.events import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent

X, Y, _ = make_classification(500, 5, seed=1)
XS, YS, _ = make_classification(50, 3, seed=2)


def test_paper_sigma_hand_computed():
    """Line 4: σ² = 4L²·log(3n/δ)·log(2/δ)/ε²; n = 50, L = 1, ε = 1, δ = 1e-5 → 4·16.5236·12.2061 = 806.76."""
    s = rrpsgd_paper_sigma(1.0, 1e-5, n=50, lipschitz=1.0)
    assert s * s == pytest.approx(4 * math.log(150 / 1e-5) * math.log(2 / 1e-5), rel=1e-14)
    assert s * s == pytest.approx(806.756, rel=1e-5)
    assert rrpsgd_paper_sigma(0.5, 1e-5, n=50, lipschitz=2.0) == pytest.approx(4 * s)


def test_paper_calibration_run_reports_an_upper_bound_for_n_squared_rounds(independent):
    res = rrpsgd(XS, YS, epsilon=1.0, data_norm_bound=1.0, calibration="paper", rng=0)
    z = rrpsgd_paper_sigma(1.0, 1e-5, n=50, lipschitz=1.0) / 2.0
    assert res.event == SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), 1, 50), 2500)
    assert independent.pld_bounds(res.event, 1e-5)[0] <= res.privacy.epsilon <= 1.0
    assert 1 <= res.details["rounds"] <= 2500 == res.details["max_rounds"]
    assert res.details["releases"] == res.details["rounds"]


@pytest.mark.parametrize("kwargs, match", [({"epsilon": 2.0}, "epsilon in \\(0, 1\\]"),
                                           ({"batch_size": 2}, "batch_size=1"), ({"max_rounds": 100}, "max_rounds")])
def test_paper_calibration_outside_theorem_4_is_refused(kwargs, match):
    base = dict(epsilon=1.0, data_norm_bound=1.0, calibration="paper")
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        rrpsgd(XS, YS, **base)


def test_rounds_are_uniform_on_1_to_t_max():
    """Constant step: P(R = k) uniform on {1..T_max} (Theorem 5). Chi-square over 10 bins, 2000 draws,
    false-alarm rate 1e-3."""
    rounds = [rrpsgd(XS, YS, noise_multiplier=5.0, data_norm_bound=1.0, max_rounds=20, rng=s).details["rounds"]
              for s in range(2000)]
    counts = np.bincount(rounds, minlength=21)[1:]
    assert counts.sum() == 2000 and min(rounds) >= 1 and max(rounds) <= 20
    assert stats.chisquare(counts).pvalue > 1e-3


def test_accountant_route_accounts_t_max_releases(independent):
    res = rrpsgd(X, Y, epsilon=1.0, data_norm_bound=1.0, batch_size=10, max_epochs=4, rng=1)
    assert res.details["max_rounds"] == 200
    z = res.noise_multiplier
    assert res.event == SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), 10, 500), 200)
    assert independent.pld_bounds(res.event, 1e-5)[0] <= res.privacy.epsilon <= 1.0


def test_default_t_max_is_ten_passes_and_the_papers_n_squared_under_paper_calibration():
    """Default T_max = ⌈10n/b⌉ (n = 500, b = 7: 715), a public rule; calibration='paper' keeps n² (2500 at n = 50)."""
    res = rrpsgd(X, Y, epsilon=1.0, data_norm_bound=1.0, batch_size=7, rng=0)
    assert res.details["max_rounds"] == 715 == math.ceil(10 * 500 / 7)
    assert res.event.count == 715 and 1 <= res.details["rounds"] <= 715
    assert rrpsgd(XS, YS, epsilon=1.0, data_norm_bound=1.0, calibration="paper", rng=0).details["max_rounds"] == 2500


def test_the_run_is_dp_sgd_for_r_steps():
    """Same generator stream: R is drawn first, then exactly the DP-SGD kernel for R steps."""
    res = rrpsgd(X, Y, noise_multiplier=2.0, data_norm_bound=1.0, batch_size=10, max_rounds=50, rng=4)
    gen = np.random.default_rng(4)
    r = int(gen.integers(1, 51))
    assert r == res.details["rounds"]
    lossobj = get_loss("logistic")
    w = dp_sgd_kernel(lossobj.kind, lossobj.param, X, Y, np.linalg.norm(X, axis=1), np.zeros(5), 0.0, 0.0, 0, math.inf,
                      r, res.details["learning_rate"], 1.0, res.sigma, False, 1.0, 10, 10.0, r, gen, 0.0)[0]
    np.testing.assert_allclose(res.weights, w, rtol=1e-12)


def test_noise_off_convex_reaches_the_optimum_and_nonconvex_a_stationary_point():
    """Full batch (b = n) makes RRPSGD gradient descent for R steps; R ≥ 1500 of U{1..3000} is forced by the seed."""
    for penalty, lam, tol in (("l2", 0.05, 1e-6), ("nonconvex", 0.05, 1e-6)):
        res = rrpsgd(X, Y, epsilon=math.inf, alpha=lam, penalty=penalty, batch_size=500, max_rounds=3000,
                     data_norm_bound=1.0, rng=0)
        assert res.details["rounds"] >= 1500
        reg = Regularizer(lam) if penalty == "l2" else Regularizer(nonconvex=lam)
        g = get_loss("logistic").gradient(res.weights, X, Y) + reg.smooth_gradient(res.weights)
        assert np.linalg.norm(g) < tol
        if penalty == "l2":
            np.testing.assert_allclose(res.weights, reference_minimizer(X, Y, get_loss("logistic"), reg), atol=1e-6)


def test_reproducible_from_a_seed():
    kw = dict(epsilon=1.0, data_norm_bound=1.0, batch_size=10, max_epochs=3)
    np.testing.assert_array_equal(rrpsgd(X, Y, rng=5, **kw).weights, rrpsgd(X, Y, rng=5, **kw).weights)
    assert not np.array_equal(rrpsgd(X, Y, rng=5, **kw).weights, rrpsgd(X, Y, rng=6, **kw).weights)


@pytest.mark.parametrize("kwargs, name", [
    ({"batch_size": 0}, "batch_size"), ({"max_rounds": 0}, "max_rounds"), ({"max_epochs": -1.0}, "max_epochs"),
    ({"max_rounds": 5, "max_epochs": 1.0}, "max_rounds"), ({"relation": "add_remove"}, "relation"),
    ({"calibration": "exact"}, "calibration"), ({"penalty": "l1"}, "penalty"),
    ({"learning_rate": 0.0}, "learning_rate"),
])
def test_bad_input_names_the_argument(kwargs, name):
    base = dict(epsilon=1.0, data_norm_bound=1.0, max_rounds=10)
    base.update(kwargs)
    if "max_epochs" in kwargs and "max_rounds" not in kwargs:
        del base["max_rounds"]
    with pytest.raises(ValueError, match=name):
        rrpsgd(X, Y, **base)


def test_default_batch_is_dp_sgds_public_rule_and_the_paper_keeps_one_sample():
    """Default b = min(n, default_batch_size(ε)) (batch 1 gave worse-than-majority models on a9a); the
    paper's calibration implies b = 1."""
    from algorithms.dp_sgd import default_batch_size

    res = rrpsgd(X, Y, epsilon=0.5, data_norm_bound=1.0, rng=0)
    assert res.details["batch_size"] == min(500, default_batch_size(0.5))
    assert res.details["max_rounds"] == math.ceil(10 * 500 / res.details["batch_size"])
    res = rrpsgd(X, Y, noise_multiplier=3.0, data_norm_bound=1.0, rng=0)
    assert res.details["batch_size"] == default_batch_size(None) == 256
    assert rrpsgd(XS, YS, epsilon=1.0, data_norm_bound=1.0, calibration="paper", rng=0).details["batch_size"] == 1
