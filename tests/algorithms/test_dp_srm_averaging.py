"""DP-SRM's averaged outputs (``output="tail_average"`` / ``"ema"``): the released average is the NumPy average of
the iterates the run released, the noise-off average reaches SciPy's optimum, the noise and the event are those of
the last-iterate run, the one-step replay harness still conforms, bad input is refused."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from algorithms.dp_srm import averaged_iterate, dp_srm
from algorithms.synthetic import make_classification
from audits.conformance import check_solver

X, Y, _ = make_classification(300, 4, seed=7)
# noise on, both clips binding, extrapolation, explicit step: θᵗ does not depend on T, so the t-step run's
# last iterate is the T-step run's θᵗ (same Generator stream, same multiplier z)
NOISY = dict(noise_multiplier=2.0, alpha=1e-2, penalty="nonconvex", clip_norm=0.4, diff_clip_norm=0.01, momentum=0.5,
             extrapolation=0.8, learning_rate=3.0, data_norm_bound=1.0)
T = 9


def _iterates(**kw):
    """θ¹..θᵀ of one seeded run, each taken as the last iterate of the run stopped after t steps."""
    return np.array([dp_srm(X, Y, steps=t, output="last", rng=np.random.default_rng(4), **kw).weights
                     for t in range(1, T + 1)])


@pytest.mark.parametrize("batch_size", [300, 60])
def test_averages_equal_numpy_averages_of_the_released_iterates(batch_size):
    """Tail mean of the last ⌈fT⌉ iterates and the normalised EMA Σρᵀ⁻ᵗθᵗ/Σρᵀ⁻ᵗ over t = 1..T (θ⁰ excluded),
    against NumPy on iterates obtained from separate runs (full batches, and minibatches of 60 without
    replacement). Catches a wrong window, θ⁰ in the average, reversed or unnormalised EMA weights."""
    kw = dict(NOISY, batch_size=batch_size)
    theta = _iterates(**kw)
    assert not np.allclose(theta[-1], theta[-2])  # the iterates move: the averages are not θᵀ
    for fraction, k in ((0.5, 5), (0.3, 3), (1.0, 9), (1e-9, 1)):
        res = dp_srm(X, Y, steps=T, output="tail_average", tail_fraction=fraction, rng=np.random.default_rng(4), **kw)
        np.testing.assert_allclose(res.weights, theta[T - k:].mean(axis=0), rtol=1e-10, atol=1e-13)
    for rho in (0.9, 0.5, 0.0):
        res = dp_srm(X, Y, steps=T, output="ema", ema_decay=rho, rng=np.random.default_rng(4), **kw)
        w = np.array([rho ** (T - t) for t in range(1, T + 1)])
        np.testing.assert_allclose(res.weights, (w[:, None] * theta).sum(axis=0) / w.sum(), rtol=1e-10, atol=1e-13)
    assert res.details["averaging"] == {"ema_decay": 0.0} and res.details["output"] == "ema"


def test_averaging_changes_neither_the_noise_nor_the_event():
    """Same z, σ, Δ, event and ε as the last-iterate run, and the same iterates (the trace of F is identical)."""
    runs = [dp_srm(X, Y, epsilon=0.7, steps=T, output=o, rng=3, trace=True, data_norm_bound=1.0)
            for o in ("last", "tail_average", "ema")]
    last = runs[0]
    for r in runs[1:]:
        assert r.event == last.event and r.privacy == last.privacy
        assert (r.noise_multiplier, r.sigma, r.details["sensitivity"]) == (last.noise_multiplier, last.sigma,
                                                                           last.details["sensitivity"])
        np.testing.assert_array_equal(r.objective_trace, last.objective_trace)
        assert not np.array_equal(r.weights, last.weights)


def _scipy_optimum(alpha):
    """argmin (1/n)Σ log(1 + e^{−yᵢ⟨w, xᵢ⟩}) + (α/2)‖w‖² by SciPy's L-BFGS-B (analytic gradient)."""
    def f(w):
        m = Y * (X @ w)
        return np.mean(np.logaddexp(0.0, -m)) + 0.5 * alpha * w @ w, X.T @ (-Y / (1.0 + np.exp(m))) / len(Y) + alpha * w

    return minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options=dict(gtol=1e-12, ftol=1e-15)).x


@pytest.mark.parametrize("output", ["tail_average", "ema"])
def test_noise_off_average_reaches_the_scipy_optimum(output):
    """ε = inf, default clips (C₂ = C₁/50 binds on the first steps) and extrapolation: the average of the iterates
    converges to the strongly convex problem's minimiser (weights to 1e-6)."""
    res = dp_srm(X, Y, epsilon=math.inf, alpha=0.05, steps=1500, output=output, data_norm_bound=1.0, rng=0)
    assert res.details["diff_clipped"] > 0
    np.testing.assert_allclose(res.weights, _scipy_optimum(0.05), atol=1e-6)


@pytest.mark.parametrize("output", ["tail_average", "ema"])
def test_one_step_replay_conforms_with_averaging(output):
    """The replay harness (audits.conformance) on neighbours differing in one record, with the averaged output."""
    rng = np.random.default_rng(5)
    D = (rng.normal(size=(6, 3)) / 2.0, rng.choice([-1.0, 1.0], 6))
    X1, y1 = D[0].copy(), D[1].copy()
    X1[2], y1[2] = [0.5, -0.5, 0.5], -y1[2]
    report = check_solver("dp_srm", D, (X1, y1), seed=1, output=output)
    assert report.verdict == "conforms", report.to_dict()


def test_averaged_iterate_direct():
    it = np.arange(12.0).reshape(4, 3)  # θ⁰..θ³
    np.testing.assert_array_equal(averaged_iterate(it, "tail_average", tail_fraction=0.5), (it[2] + it[3]) / 2)
    np.testing.assert_allclose(averaged_iterate(it, "ema", ema_decay=0.5), (0.25 * it[1] + 0.5 * it[2] + it[3]) / 1.75)
    tiny = averaged_iterate(np.ones((2001, 2)), "ema", ema_decay=1e-3)  # ρ^1999 underflows to 0: still the mean
    np.testing.assert_array_equal(tiny, np.ones(2))
    with pytest.raises(ValueError, match="iterates"):
        averaged_iterate(it[:1], "ema")


@pytest.mark.parametrize("kwargs, name", [
    ({"output": "tail_average", "tail_fraction": 0.0}, "tail_fraction"),
    ({"output": "tail_average", "tail_fraction": 1.5}, "tail_fraction"),
    ({"output": "tail_average", "tail_fraction": float("nan")}, "tail_fraction"),
    ({"output": "ema", "ema_decay": 1.0}, "ema_decay"), ({"output": "ema", "ema_decay": -0.1}, "ema_decay"),
    ({"output": "ema", "ema_decay": float("nan")}, "ema_decay"),
    ({"output": "last", "tail_fraction": 0.5}, "tail_fraction"), ({"output": "tail_average", "ema_decay": 0.5}, "ema_decay"),
    ({"output": "mean"}, "output"),
])
def test_bad_averaging_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, steps=5, **kwargs)
