"""DP-SRM (wang-jayaraman-evans-gu Alg. 1): convergence with the noise off, privacy through dpcore,
Theorem 5.1's σ (``calibration="paper"``) for hand-computed cases, reproducibility, bad input."""

import importlib
import math

import numpy as np
import pytest

import dpcore
from algorithms.dp_srm import default_srm_steps, dp_srm, dp_srm_paper_sigmas, dp_srm_query, dp_srm_sensitivities
from algorithms.losses import get_loss
from algorithms.objective import objective_value, reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification
from dpcore.events import ComposedEvent, DpSrmEvent, GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent

X, Y, _ = make_classification(400, 5, seed=1)
BIG = 1e6  # clip norms that never bind on ‖x‖ ≤ 1 data with the logistic loss


def _grad_norm(w, reg):
    return float(np.linalg.norm(get_loss("logistic").gradient(w, X, Y) + reg.smooth_gradient(w)))


def test_full_batch_noise_off_is_gradient_descent_and_reaches_the_convex_optimum():
    """b₀ = b = n makes the recursion exact (vᵗ = ∇F(θᵗ)): the l2 problem's minimizer, weights to 1e-6."""
    reg = Regularizer(0.01)
    res = dp_srm(X, Y, epsilon=math.inf, alpha=0.01, batch_size=400, steps=3000, data_norm_bound=1.0,
                 clip_norm=BIG, diff_clip_norm=BIG, momentum=0.5, step_bound=math.inf, output="last", rng=0)
    ref = reference_minimizer(X, Y, get_loss("logistic"), reg)
    np.testing.assert_allclose(res.weights, ref, atol=1e-6)
    assert res.details["releases"] == 3000
    assert res.n_gradient_evaluations == 400 + 2 * 400 * 2999


def test_full_batch_noise_off_reaches_a_stationary_point_of_the_nonconvex_objective():
    reg = Regularizer(nonconvex=0.05)
    res = dp_srm(X, Y, epsilon=math.inf, alpha=0.05, penalty="nonconvex", batch_size=400, steps=3000,
                 data_norm_bound=1.0, clip_norm=BIG, diff_clip_norm=BIG, step_bound=math.inf, output="last", rng=0)
    assert _grad_norm(res.weights, reg) < 1e-6
    assert res.details["regularizer"] == "nonconvex"


def test_minibatch_noise_off_drives_the_gradient_norm_down():
    """Stochastic batches (b = 40 of 400) with momentum 0.1: ‖∇F‖ at the last iterate < 0.015 (0.082 at 0;
    0.0073 observed)."""
    reg = Regularizer(nonconvex=1e-3)
    res = dp_srm(X, Y, epsilon=math.inf, alpha=1e-3, penalty="nonconvex", batch_size=40, epochs=100,
                 data_norm_bound=1.0, clip_norm=BIG, diff_clip_norm=BIG, momentum=0.1, step_bound=math.inf,
                 output="last", rng=1)
    assert _grad_norm(np.zeros(5), reg) > 0.08
    assert _grad_norm(res.weights, reg) < 0.015


def test_the_objective_trace_matches_the_objective():
    res = dp_srm(X, Y, epsilon=1.0, alpha=1e-3, penalty="nonconvex", data_norm_bound=1.0, steps=20, trace=True,
                 output="random", rng=2)
    reg = Regularizer(nonconvex=1e-3)
    assert res.objective_trace.shape == (21,)
    w_last = res.details["output_index"]
    assert 0 <= w_last < 20
    assert math.isclose(res.objective_trace[0], objective_value(np.zeros(5), X, Y, get_loss("logistic"), reg))


@pytest.mark.parametrize("accountant", ["auto", "rdp"])
def test_reported_privacy_bounds_the_event_run(independent, accountant):
    """The event is the releases run (built here from the public schedule); the reported ε is an upper bound:
    not below the PLD accountant's certified lower bound — with the default accountant ("auto": the PLD's upper
    bound) and with the RDP one (an independent route)."""
    res = dp_srm(X, Y, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, batch_size=20, initial_batch_size=40,
                 steps=50, rng=3, accountant=accountant)
    z = res.noise_multiplier
    first = SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), 40, 400)
    later = SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), 20, 400), 49)
    assert res.event == ComposedEvent([first, later])
    assert independent.pld_bounds(res.event, 1e-5)[0] <= res.privacy.epsilon <= 1.0
    assert res.details["releases"] == 50
    # the noise on the later sums is z times (6.1)'s sensitivity 2(γC₁ + (1 − γ)C₂)
    c1, c2, g = res.details["clip_norm"], res.details["diff_clip_norm"], res.details["momentum"]
    assert math.isclose(res.sigma, z * 2 * (g * c1 + (1 - g) * c2))
    assert math.isclose(res.details["initial_sensitivity"], 2 * c1)


def test_benchmark_defaults_are_rules_of_public_quantities():
    """Default set (classification): b₀ = b = n, T = min(100, max(10, ⌈nε/160⌉)), γ = 1/2, C₂ = C₁/50,
    step min(1.9, nε/(600√T))/β, extrapolation 0.8, no cap, last iterate (n = 400, ε = 1: T = 10;
    logistic with ‖x‖ ≤ 1: β = 1/4 → step 4·400/(600√10) = 0.8433)."""
    res = dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, rng=0)
    d = res.details
    assert (d["batch_size"], d["initial_batch_size"], d["steps"], d["releases"]) == (400, 400, 10, 10)
    assert d["momentum"] == 0.5 and d["diff_clip_norm"] == d["clip_norm"] / 50 and d["extrapolation"] == 0.8
    assert d["learning_rate"] == pytest.approx(4 * 400 / (600 * math.sqrt(10)))
    assert math.isinf(d["step_bound"]) and d["output_index"] == 10 and d["defaults"] == "benchmark"
    big = dp_srm(np.repeat(X, 30, axis=0), np.repeat(Y, 30), epsilon=1.0, data_norm_bound=1.0, rng=0).details
    assert big["steps"] == 75 and big["learning_rate"] == pytest.approx(4 * 1.9)  # n = 12000: 12000/160, 1.9 cap
    assert default_srm_steps(10**6, 1.0) == 100 and default_srm_steps(10, 0.1) == 10
    assert default_srm_steps(400, math.inf) == 100


def test_clip_below_g_only_for_the_benchmarked_logistic_loss_with_full_batches():
    """C₁ = 0.85·G was benchmarked on the logistic loss with full batches only: the smoothed hinge, minibatches and
    an explicit clip keep what they ask for (G = 1 on ‖x‖ ≤ 1 for both losses)."""
    run = lambda **kw: dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, steps=3, rng=0, **kw).details["clip_norm"]
    assert run() == pytest.approx(0.85)
    assert run(loss="smoothed_hinge") == pytest.approx(1.0)
    assert run(batch_size=100) == pytest.approx(1.0)
    assert run(clip_norm=0.6) == pytest.approx(0.6)


def test_regression_losses_keep_the_unextrapolated_defaults():
    Xr = X[:, :3]
    d = dp_srm(Xr, Xr @ np.array([0.5, -0.2, 0.1]), loss="huber", epsilon=1.0, data_norm_bound=1.0, rng=0).details
    assert d["extrapolation"] == 0.0 and d["steps"] == 27  # dp_gd.default_steps(400, 1) = ⌈400/15⌉


def test_extrapolation_follows_its_formula():
    """Full batch, noise off: the kernel's iterates equal a NumPy loop of qᵗ = θᵗ + μ(θᵗ − θᵗ⁻¹),
    uᵗ = (1 − γ)uᵗ⁻¹ + S(qᵗ, qᵗ⁻¹)/n with S = :func:`dp_srm_query`'s clipped sum, θᵗ⁺¹ = qᵗ − η(uᵗ + ∇r(qᵗ))
    — with C₂ small enough that the difference clip binds."""
    mu, gamma, lr, c2, T, lam = 0.7, 0.5, 3.0, 0.002, 8, 1e-2
    res = dp_srm(X, Y, epsilon=math.inf, alpha=lam, penalty="nonconvex", batch_size=400, steps=T, clip_norm=1.0,
                 diff_clip_norm=c2, momentum=gamma, extrapolation=mu, learning_rate=lr, data_norm_bound=1.0, rng=0,
                 trace=False)
    reg = Regularizer(nonconvex=lam)
    theta_prev = theta = q = np.zeros(5)
    u = get_loss("logistic").gradient(q, X, Y)  # C₁ = 1 = the Lipschitz bound: the first clip never binds
    for t in range(T):
        if t > 0:
            q_new = theta + mu * (theta - theta_prev)
            s = dp_srm_query(X, Y, q_new, q, clip_norm=1.0, diff_clip_norm=c2, momentum=gamma)
            u = (1 - gamma) * u + s / 400
            q = q_new
        theta_prev, theta = theta, q - lr * (u + reg.smooth_gradient(q))
    np.testing.assert_allclose(res.weights, theta, rtol=1e-10, atol=1e-13)
    assert res.details["diff_clipped"] > 0
    plain = dp_srm(X, Y, epsilon=math.inf, alpha=lam, penalty="nonconvex", batch_size=400, steps=T, clip_norm=1.0,
                   diff_clip_norm=c2, momentum=gamma, extrapolation=0.0, learning_rate=lr, data_norm_bound=1.0, rng=0)
    assert not np.allclose(plain.weights, res.weights)


def _numpy_replay(Xr, Yr, w0, *, z, c1, c2, gamma, mu, lr, T, lam, rng):
    """An independent NumPy re-run of a full-batch DP-SRM run (per-example logistic gradients materialised, clipped
    with ``np.linalg.norm``, noise N(0, (z·Δ)²) drawn from ``rng`` in the kernel's order, Δ₀ = 2C₁ and
    Δ = 2(γC₁ + (1 − γ)C₂) of §6.1 (6.1)). Returns θᵀ, the clip counts, the releases and the largest norm of a
    record's contribution to a later release (the per-record bound Δ/2 the event's sensitivity assumes)."""
    n = len(Yr)
    reg, yy = Regularizer(nonconvex=lam), np.where(Yr > 0, 1.0, -1.0)

    def grads(w):  # per-example logistic gradients −y·x/(1 + e^{y⟨w,x⟩}), one row per record
        return (-yy / (1.0 + np.exp(yy * (Xr @ w))))[:, None] * Xr

    def clip(G, c):
        norms = np.linalg.norm(G, axis=1)
        return G * np.minimum(1.0, c / norms)[:, None], int(np.sum(norms > c))

    sens0, sens = 2 * c1, 2 * (gamma * c1 + (1 - gamma) * c2)
    g0, clipped = clip(grads(w0), c1)
    u, diff_clipped, releases, largest = (g0.sum(0) + rng.normal(0.0, z * sens0, len(w0))) / n, 0, 1, 0.0
    theta_prev = theta = q = np.asarray(w0, dtype=np.float64)
    for t in range(T):
        if t > 0:
            q_new = theta + mu * (theta - theta_prev)
            a, k1 = clip(grads(q_new), c1)
            b, k2 = clip(grads(q_new) - grads(q), c2)
            per_record = gamma * a + (1 - gamma) * b
            largest = max(largest, float(np.linalg.norm(per_record, axis=1).max()))
            u = (1 - gamma) * u + (per_record.sum(0) + rng.normal(0.0, z * sens, len(w0))) / n
            clipped, diff_clipped, releases, q = clipped + k1, diff_clipped + k2, releases + 1, q_new
        theta_prev, theta = theta, q - lr * (u + reg.smooth_gradient(q))
    return theta, clipped, diff_clipped, releases, largest


def test_noisy_extrapolated_run_releases_exactly_what_the_event_accounts_for(independent):
    """Noise on, μ = 0.9, full batch, both clips binding: an independent NumPy re-run (:func:`_numpy_replay`, the
    same Generator stream) reproduces the iterates only if the kernel queries the extrapolated points qᵗ, applies
    clip_{C₁} and clip_{C₂} to every record there and adds N(0, (z·Δ)²) with the event's z and (6.1)'s Δ, T
    releases in all. Also every record's contribution at the points queried has norm ≤ Δ/2 (the per-record bound
    the event's sensitivity assumes), and the kernel's clip counts equal the NumPy counts."""
    z, mu, gamma, c1, c2, lr, T, lam = 3.0, 0.9, 0.4, 0.3, 0.004, 2.0, 9, 1e-2
    res = dp_srm(X, Y, noise_multiplier=z, alpha=lam, penalty="nonconvex", batch_size=400, steps=T, clip_norm=c1,
                 diff_clip_norm=c2, momentum=gamma, extrapolation=mu, learning_rate=lr, data_norm_bound=1.0,
                 rng=np.random.default_rng(11), accountant="rdp")
    sens = 2 * (gamma * c1 + (1 - gamma) * c2)
    assert res.event == ComposedEvent([SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), 400, 400),
                                       SelfComposedEvent(SampledWithoutReplacementEvent(
                                           GaussianEvent(z, "replace_one"), 400, 400), T - 1)])
    assert res.noise_multiplier == z and res.details["sensitivity"] == pytest.approx(sens)
    assert res.sigma == pytest.approx(z * sens)
    theta, clipped, diff_clipped, releases, largest = _numpy_replay(
        X, Y, np.zeros(5), z=z, c1=c1, c2=c2, gamma=gamma, mu=mu, lr=lr, T=T, lam=lam, rng=np.random.default_rng(11))
    assert largest <= sens / 2 * (1 + 1e-12)
    np.testing.assert_allclose(res.weights, theta, rtol=1e-9, atol=1e-12)
    assert res.details["releases"] == releases == T
    assert (res.details["clipped"], res.details["diff_clipped"]) == (clipped, diff_clipped)
    assert clipped > 0 and diff_clipped > 0
    # full batches: T Gaussian releases of multiplier z, whose exact ε (Balle–Wang) the RDP report bounds from above
    exact = independent.gaussian_epsilon(math.sqrt(T) / z, 1e-5)
    assert exact <= res.privacy.epsilon <= 1.1 * exact


# Unit rows on which, at W0, some records' logistic gradients have norm in (0.85, 1] (margin ≤ −2): a clip at
# 0.85·G binds on them and a clip at G = 1 would not — the two clips give different releases.
_XU = X / np.linalg.norm(X, axis=1, keepdims=True)
_FIT = np.linalg.lstsq(_XU, Y, rcond=None)[0]
_W0 = -4.0 * _FIT / np.linalg.norm(_FIT)  # pointing against the labels: the well-fitted records get margin ≤ −2


def _check_default_clip_replay():
    """The default run (classification, full batches, benchmark defaults; T = 3 releases, noise on) against
    :func:`_numpy_replay` with the *documented* clip C₁ = 0.85·G (G = 1: the logistic loss on ‖x‖ ≤ 1),
    C₂ = C₁/50, γ = 1/2, μ = 0.8 and the noise z·2C₁, z·2(γC₁ + (1 − γ)C₂) those clips give."""
    z, T = 0.7, 3
    res = dp_srm(_XU, Y, noise_multiplier=z, data_norm_bound=1.0, steps=T, w0=_W0, rng=np.random.default_rng(8))
    c1 = 0.85
    c2, gamma = c1 / 50, 0.5
    sens0, sens = 2 * c1, 2 * (gamma * c1 + (1 - gamma) * c2)
    assert res.details["clip_norm"] == pytest.approx(c1) and res.details["initial_sensitivity"] == pytest.approx(sens0)
    assert res.details["sensitivity"] == pytest.approx(sens) and res.sigma == pytest.approx(z * sens)
    theta, clipped, diff_clipped, releases, largest = _numpy_replay(
        _XU, Y, _W0, z=z, c1=c1, c2=c2, gamma=gamma, mu=0.8, lr=res.details["learning_rate"], T=T, lam=0.0,
        rng=np.random.default_rng(8))
    np.testing.assert_allclose(res.weights, theta, rtol=1e-9, atol=1e-12)
    assert (res.details["clipped"], res.details["diff_clipped"], res.details["releases"]) == (clipped, diff_clipped,
                                                                                            releases)
    assert largest <= sens / 2 * (1 + 1e-12)
    return res


def test_default_clip_is_085_g_in_the_kernel_and_in_the_noise():
    """Defaults (issue 24 item 5): C₁ = 0.85·G is what the kernel clips at and what the sensitivities, the noise and
    the event's multiplier are derived from — an independent NumPy replay of three releases. At W0 the first
    release's clip binds on records whose gradient norm lies in (0.85, 1], so a kernel clipping at G, or noise
    scaled for G, gives different iterates (the planted bugs below)."""
    norms = 1.0 / (1.0 + np.exp(np.where(Y > 0, 1.0, -1.0) * (_XU @ _W0)))  # ‖∇ℓᵢ(W0)‖ on unit rows
    assert np.any((norms > 0.85) & (norms <= 1.0)) and np.any(norms < 0.85)
    res = _check_default_clip_replay()
    assert res.details["clipped"] > 0
    # the previous default and the paper's set keep C₁ = G; so do minibatches and regression losses (not benchmarked)
    assert dp_srm(_XU, Y, noise_multiplier=0.7, data_norm_bound=1.0, steps=2, clip_norm=1.0).details["clip_norm"] == 1.0
    assert dp_srm(_XU, Y, noise_multiplier=0.7, data_norm_bound=1.0, defaults="paper").details["clip_norm"] == 1.0
    assert dp_srm(_XU, Y, noise_multiplier=0.7, data_norm_bound=1.0, steps=2, batch_size=100).details["clip_norm"] == 1.0
    huber = dp_srm(_XU, _XU @ np.ones(5), loss="huber", noise_multiplier=0.7, data_norm_bound=1.0, steps=2)
    assert huber.details["clip_norm"] == get_loss("huber").lipschitz(1.0, math.inf)


def _planted_kernel_clip_at_g(kernel):
    def run(*args):
        args = list(args)
        args[12] = args[12] / 0.85  # clip1: the kernel clips at G while the event and the noise use 0.85·G
        return kernel(*args)
    return run


def _planted_noise_for_g(sensitivities):
    return lambda c1, c2, gamma: sensitivities(c1 / 0.85, c2, gamma)  # noise scaled for C₁ = G, kernel at 0.85·G


@pytest.mark.parametrize("planted", ["kernel clips at G", "noise and sensitivity for G", "default left at G"])
def test_default_clip_replay_catches_a_mismatched_clip(monkeypatch, planted):
    module = importlib.import_module("algorithms.dp_srm")  # algorithms.dp_srm the attribute is the function

    if planted == "kernel clips at G":
        monkeypatch.setattr(module, "dp_srm_kernel", _planted_kernel_clip_at_g(module.dp_srm_kernel))
    elif planted == "noise and sensitivity for G":
        monkeypatch.setattr(module, "dp_srm_sensitivities", _planted_noise_for_g(module.dp_srm_sensitivities))
    else:
        monkeypatch.setattr(module, "BENCHMARK_CLIP_FRACTION", 1.0)
    with pytest.raises(AssertionError):
        _check_default_clip_replay()


def test_paper_defaults_are_the_section_7_1_choices():
    """defaults='paper': b = 100, 5 passes (T = ⌈(5·400 − 100)/200⌉ + 1 = 11), C₂ = C₁/100, γ = C₂/C₁,
    step cap C₂/β_loss = 0.04, step 1/(2β) = 2, the last iterate (what §7 evaluates; Alg. 1's random one on request);
    explicit arguments still win."""
    d = dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, defaults="paper", rng=0).details
    assert (d["batch_size"], d["initial_batch_size"], d["steps"]) == (100, 100, 11)
    assert d["diff_clip_norm"] == d["clip_norm"] / 100 and d["momentum"] == pytest.approx(0.01)
    assert d["step_bound"] == pytest.approx(0.04) and d["learning_rate"] == pytest.approx(2.0)
    assert d["output_index"] == 11
    d = dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, defaults="paper", output="random", rng=0).details
    assert 0 <= d["output_index"] < 11
    d = dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, defaults="paper", batch_size=50, output="last", rng=0).details
    assert d["batch_size"] == 50 and d["output_index"] == d["steps"] == 21


def test_noise_multiplier_route_reports_its_epsilon(independent):
    """Default full batches: 10 Gaussian releases of multiplier 2 — the exact ε (Balle–Wang, mpmath) is 7.511; the
    default report (accountant "auto", the PLD) bounds it from above within 0.1 %, the RDP report (7.5 % above it at
    these parameters) too."""
    res = dp_srm(X, Y, noise_multiplier=2.0, data_norm_bound=1.0, steps=10, rng=0)
    assert res.details["batch_size"] == res.details["initial_batch_size"] == X.shape[0] and res.event.relation == "replace_one"
    exact = independent.gaussian_epsilon(math.sqrt(10) / 2.0, 1e-5)
    assert exact == pytest.approx(7.511276, rel=1e-6)
    assert res.privacy.accountant == "pld" and exact <= res.privacy.epsilon <= 1.001 * exact
    rdp = dp_srm(X, Y, noise_multiplier=2.0, data_norm_bound=1.0, steps=10, rng=0, accountant="rdp").privacy.epsilon
    assert exact <= rdp <= 1.1 * exact


def test_sensitivities_of_section_6_1():
    assert dp_srm_sensitivities(1.0, 0.01, 0.01) == (2.0, pytest.approx(2 * (0.01 * 1.0 + 0.99 * 0.01)))
    assert dp_srm_sensitivities(3.0, 0.5, 1.0) == (6.0, 6.0)


def test_paper_sigmas_hand_computed():
    """Theorem 5.1: n = 5000, b₀ = b = 10, T = 64000, ε = 4, δ = 1e-5, β = 1/2, C₁ = 1, C₂ = γ = 0.01.

    α = ln(1e5)/2 + 1 = 6.756463; σ₀² = 14·T·α/(β n² ε) = 0.121076; σ = σ₀·(0.99·0.01 + 0.01·1) = σ₀·0.0199;
    σ′² = b²σ₀²/4 = 3.02690; τ = 0.002; order condition 5.7565 ≤ (2/3)·3.0269·ln(1/(0.002·6.7565·4.0269)) = 5.874.
    """
    p = dp_srm_paper_sigmas(4.0, 1e-5, n=5000, steps=64000, batch_size=10, initial_batch_size=10, clip_norm=1.0,
                            diff_clip_norm=0.01, momentum=0.01)
    alpha = math.log(1e5) / 2 + 1
    assert p["order"] == pytest.approx(6.756463, rel=1e-6) == pytest.approx(alpha)
    assert p["sigma0"] ** 2 == pytest.approx(14 * 64000 * alpha / (0.5 * 5000**2 * 4), rel=1e-12)
    assert p["sigma0"] ** 2 == pytest.approx(0.121076, rel=1e-5)
    assert p["sigma"] == pytest.approx(p["sigma0"] * 0.0199, rel=1e-12)
    assert p["noise_multiplier"] ** 2 == pytest.approx(3.02690, rel=1e-5)
    assert p["sampling_rate"] == 0.002
    # the theorem's guarantee, through dpcore's Lemma 3.7 accountant, meets the target
    eps = dpcore.get_epsilon(DpSrmEvent(p["noise_multiplier"], 0.002, 64000), 1e-5).epsilon
    assert eps <= 4.0


def test_paper_sigma_uses_the_smaller_multiplier_of_the_two_batches():
    """b₀ = 5 < b = 10: σ′² = min{b²σ²/(4K²), b₀²σ₀²/(4C₁²)} = 25·0.121076/4 = 0.7567, for which the order
    condition fails (it would hold at the later steps' 3.0269)."""
    with pytest.raises(ValueError, match="alpha - 1 = 5.75646 > 1.8871"):
        dp_srm_paper_sigmas(4.0, 1e-5, n=5000, steps=64000, batch_size=10, initial_batch_size=5, clip_norm=1.0,
                            diff_clip_norm=0.01, momentum=0.01)


@pytest.mark.parametrize("steps, n, match", [(100, 5000, "sigma'\\^2 >= 0.7"), (64000, 500, "alpha - 1")])
def test_paper_calibration_is_refused_when_its_conditions_fail(steps, n, match):
    with pytest.raises(ValueError, match=match):
        dp_srm_paper_sigmas(4.0, 1e-5, n=n, steps=steps, batch_size=10, initial_batch_size=10, clip_norm=1.0,
                            diff_clip_norm=0.01, momentum=0.01)


@pytest.mark.slow
def test_paper_calibration_run_reports_the_dp_srm_event():
    Xl, Yl, _ = make_classification(5000, 3, seed=5)
    res = dp_srm(Xl, Yl, epsilon=4.0, data_norm_bound=1.0, batch_size=10, steps=64000, diff_clip_norm=0.01,
                 momentum=0.01, calibration="paper", rng=0)
    p = res.details["calibration"]
    assert res.event == DpSrmEvent(p["noise_multiplier"], 0.002, 64000)
    # Lemma 3.7 (3.5τ²α/σ′² per release) and Lemma 3.9 at the theorem's order α, by hand: dpcore's ε (the best
    # admissible order) is at most that, and the theorem's target 4 holds
    alpha, s2 = p["order"], p["noise_multiplier"] ** 2
    by_hand = 64000 * 3.5 * 0.002**2 * alpha / s2 + math.log(1e5) / (alpha - 1)
    assert res.privacy.epsilon <= by_hand <= 4.0
    assert res.details["releases"] == 64000


def test_paper_calibration_run_is_refused_when_the_conditions_fail():
    with pytest.raises(ValueError, match="Theorem 5.1"):
        dp_srm(X, Y, epsilon=1.0, data_norm_bound=1.0, steps=20, calibration="paper")


def test_reproducible_from_a_seed_and_seed_sensitive():
    kw = dict(epsilon=1.0, data_norm_bound=1.0, steps=30, alpha=1e-3, penalty="nonconvex")
    a = dp_srm(X, Y, rng=7, **kw)
    b = dp_srm(X, Y, rng=np.random.default_rng(7), **kw)
    c = dp_srm(X, Y, rng=8, **kw)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not np.array_equal(a.weights, c.weights)


def test_utility_improves_with_epsilon():
    """Mean objective over 5 seeds at ε = 0.5 exceeds the one at ε = 50 (noise dominates at small ε)."""
    reg, lobj = Regularizer(nonconvex=1e-3), get_loss("logistic")

    def mean_obj(eps):
        return np.mean([objective_value(dp_srm(X, Y, epsilon=eps, alpha=1e-3, penalty="nonconvex",
                                               data_norm_bound=1.0, epochs=5, output="last", rng=s).weights,
                                        X, Y, lobj, reg) for s in range(5)])

    assert mean_obj(0.5) > mean_obj(50.0)


@pytest.mark.parametrize("kwargs, name", [
    ({"momentum": 1.5}, "momentum"), ({"momentum": 0.0}, "momentum"), ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 401}, "batch_size"), ({"initial_batch_size": 0}, "initial_batch_size"),
    ({"diff_clip_norm": -1.0}, "diff_clip_norm"), ({"output": "best"}, "output"),
    ({"relation": "add_remove"}, "relation"), ({"penalty": "l0"}, "penalty"), ({"steps": 0}, "steps"),
    ({"calibration": "tight"}, "calibration"), ({"step_bound": 0.0}, "step_bound"), ({"alpha": -1.0}, "alpha"),
    ({"beta": 1.0, "calibration": "paper"}, "beta"), ({"learning_rate": -1.0}, "learning_rate"),
    ({"defaults": "sklearn"}, "defaults"), ({"steps": None, "epochs": 0.0}, "epochs"),
    ({"extrapolation": 1.0}, "extrapolation"), ({"extrapolation": -0.1}, "extrapolation"),
    ({"accountant": "bogus"}, "accountant"), ({"accountant": None}, "accountant"),
    ({"accountant": "bogus", "calibration": "paper", "batch_size": 10}, "accountant"),
])
def test_bad_input_names_the_argument(kwargs, name):
    base = dict(epsilon=1.0, data_norm_bound=1.0, steps=5)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        dp_srm(X, Y, **base)


@pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")  # seeds: tests only
def test_estimator_runs_the_new_defaults():
    """DPLogisticRegression(solver="dp_srm") passes no clip: it gets C₁ = 0.85·G, G = √(R² + c²) the logistic
    Lipschitz bound of its rows (R = 1) with the intercept column c, and the "auto" accountant (PLD here)."""
    from algorithms import DPLogisticRegression

    clf = DPLogisticRegression(solver="dp_srm", epsilon=0.5, classes=[-1, 1], random_state=0,
                               keep_diagnostics=True).fit(X, Y)
    d = clf.result_.details
    assert d["clip_norm"] == pytest.approx(0.85 * math.sqrt(1.0 + clf.intercept_scaling_ ** 2))
    assert d["initial_sensitivity"] == pytest.approx(2 * d["clip_norm"])
    assert clf.privacy_.accountant == "pld" and clf.privacy_.epsilon <= 0.5
