"""One-hidden-layer network: per-example gradients, clipping, noise-off convergence, privacy, estimator API."""

import math
import warnings

import numpy as np
import pytest

import dpcore
from algorithms.clipping import clip_vector_kernel
from algorithms.mlp import DPMLPClassifier
from algorithms.mlp_kernels import (
    example_gradient_kernel, mlp_clipped_sum_kernel, mlp_loss_kernel, mlp_srm_query_kernel, n_parameters,
)
from algorithms.synthetic import make_classification
from dpcore.events import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent

X, Y, _ = make_classification(300, 4, seed=1)
Y01 = np.where(Y > 0, "yes", "no")


def _fit(**kw):
    labels = kw.pop("labels", Y01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPMLPClassifier(**kw).fit(X, labels)


def _loss(theta, Xs, ys, h, K):
    return mlp_loss_kernel(theta, Xs, ys, Xs.shape[1], h, K, np.empty(theta.shape[0]))


@pytest.mark.parametrize("K", [1, 3])
def test_example_gradient_matches_central_differences(K):
    rng = np.random.default_rng(0)
    d, h = 4, 3
    theta = rng.normal(size=n_parameters(d, h, K))
    Xs = X[:1].copy()
    ys = np.array([1.0]) if K == 1 else np.array([2.0])
    g = np.empty(theta.shape[0])
    example_gradient_kernel(theta, Xs, ys, 0, d, h, K, g, np.empty(h), np.empty(K), np.empty(K))
    eps = 1e-6
    fd = np.array([(_loss(theta + eps * e, Xs, ys, h, K) - _loss(theta - eps * e, Xs, ys, h, K)) / (2 * eps)
                   for e in np.eye(theta.shape[0])])
    np.testing.assert_allclose(g, fd, atol=1e-7)


def test_clipped_sum_clips_every_example():
    rng = np.random.default_rng(1)
    d, h, K = 4, 5, 1
    theta = 3 * rng.normal(size=n_parameters(d, h, K))
    idx = np.arange(10)
    out = np.empty(theta.shape[0])
    clipped = mlp_clipped_sum_kernel(theta, X, Y, idx, 10, 0.1, d, h, K, out)
    ref = np.zeros_like(out)
    over = 0
    for i in range(10):
        g = np.empty_like(out)
        example_gradient_kernel(theta, X, Y, i, d, h, K, g, np.empty(h), np.empty(K), np.empty(K))
        over += clip_vector_kernel(g, 0.1) > 0.1
        assert np.linalg.norm(g) <= 0.1 * (1 + 1e-12)
        ref += g
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    assert clipped == over >= 1


@pytest.mark.parametrize("K", [1, 3])
def test_computed_clipped_gradient_never_exceeds_the_clip(K):
    # the fused kernel's norm is computed from the outer-product structure: without the rounding margin of
    # clipping.clip_margin the computed clipped vector exceeded C in ~20 % of draws (by up to 4.4e-16 relative)
    rng = np.random.default_rng(0)
    d, h = 30, 8
    P = n_parameters(d, h, K)
    X = 3.0 * rng.normal(size=(400, d))
    y = rng.integers(0, K, 400).astype(np.float64) if K > 1 else np.where(rng.random(400) < 0.5, 1.0, -1.0)
    out = np.empty(P)
    for trial in range(400):
        clip = float(rng.uniform(0.01, 0.5))
        mlp_clipped_sum_kernel(rng.normal(size=P), X, y, np.array([trial]), 1, clip, d, h, K, out)
        assert math.fsum(float(v) * float(v) for v in out) <= clip * clip


def test_tanh_kernel_matches_libm_tanh():
    """The branch-free tanh (rational below 0.625, exp above) is within 5e-16 relative of libm's tanh on
    3.2 M points spanning 1e-8..40 in magnitude and both signs (4.0e-16 observed); ±inf → ±1, NaN → NaN."""
    import numba

    from algorithms.mlp_kernels import tanh_kernel

    @numba.njit
    def many(v):
        out = np.empty_like(v)
        for i in range(v.shape[0]):
            out[i] = tanh_kernel(v[i])
        return out

    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.normal(0.0, s, 400_000) for s in (1e-8, 0.1, 0.6, 2.0, 10.0)]
                        + [np.linspace(-40.0, 40.0, 1_200_000), np.array([0.625, -0.625, 0.6249999999, 19.1, 1e-300])])
    ref = np.tanh(xs)
    assert np.all(ref != 0.0)
    assert np.max(np.abs(many(xs) - ref) / np.abs(ref)) < 5e-16
    assert tanh_kernel(math.inf) == 1.0 and tanh_kernel(-math.inf) == -1.0 and math.isnan(tanh_kernel(math.nan))
    assert tanh_kernel(0.0) == 0.0 and tanh_kernel(800.0) == 1.0 and tanh_kernel(-800.0) == -1.0


def test_work_layout_transposes_the_first_layer_and_round_trips():
    from algorithms.mlp_kernels import from_work_layout, to_work_layout

    d, h, K = 4, 3, 2
    theta = np.arange(float(n_parameters(d, h, K)))
    work, back = np.empty_like(theta), np.empty_like(theta)
    to_work_layout(theta, d, h, work)
    np.testing.assert_array_equal(work[:h * d].reshape(d, h), theta[:h * d].reshape(h, d).T)
    np.testing.assert_array_equal(work[h * d:], theta[h * d:])
    from_work_layout(work, d, h, back)
    np.testing.assert_array_equal(back, theta)


def test_sparse_rows_keep_the_non_zero_features():
    from algorithms.mlp_kernels import sparse_rows

    Xs = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, -3.0, 0.5]])
    ptr, ind, val, sq = sparse_rows(Xs, np.arange(3), 3)
    assert ptr.tolist() == [0, 1, 1, 4] and ind[:4].tolist() == [1, 0, 1, 2] and val[:4].tolist() == [2, 1, -3, 0.5]
    np.testing.assert_array_equal(sq, [4.0, 0.0, 10.25])
    ptr, ind, val, sq = sparse_rows(Xs, np.array([2, 0]), 2)
    assert ptr.tolist() == [0, 3, 4] and ind[:4].tolist() == [0, 1, 2, 1] and sq.tolist() == [10.25, 4.0]


def test_clipped_sum_on_sparse_rows_equals_the_materialised_clipped_sum():
    """Rows with ~80 % zero features (a few empty), a random subset in random order, K = 1 and 3, h = 5
    (one block of four hidden units and a remainder): the fused kernel (work layout, CSR rows, prefetch
    hints) equals Σ clip_C(example gradient) to 1e-12."""
    rng = np.random.default_rng(4)
    d, h = 12, 5
    Xs = rng.normal(size=(60, d)) * (rng.random((60, d)) < 0.2)
    Xs[[3, 17, 40]] = 0.0
    for K in (1, 3):
        ys = rng.integers(0, K, 60).astype(np.float64) if K > 1 else np.where(rng.random(60) < 0.5, 1.0, -1.0)
        theta = rng.normal(size=n_parameters(d, h, K))
        idx = rng.permutation(60)[:25]
        out, ref = np.empty(theta.shape[0]), np.zeros(theta.shape[0])
        clipped = mlp_clipped_sum_kernel(theta, Xs, ys, idx, 25, 0.3, d, h, K, out)
        over = 0
        for i in idx:
            g = np.empty_like(out)
            example_gradient_kernel(theta, Xs, ys, i, d, h, K, g, np.empty(h), np.empty(K), np.empty(K))
            over += clip_vector_kernel(g, 0.3) > 0.3
            ref += g
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-14)
        assert clipped == over >= 1


def test_srm_query_contribution_is_bounded_by_6_1():
    """One record's contribution to DP-SRM's later sum has norm ≤ γC₁ + (1 − γ)C₂ (half of (6.1)'s Δ)."""
    rng = np.random.default_rng(2)
    d, h, K = 4, 5, 1
    theta, prev = rng.normal(size=(2, n_parameters(d, h, K))) * 3
    out = np.empty(theta.shape[0])
    for i in range(20):
        mlp_srm_query_kernel(theta, prev, X, Y, np.array([i]), 1, 0.1, 1.0, 0.05, d, h, K, out)
        assert np.linalg.norm(out) <= (0.1 * 1.0 + 0.9 * 0.05) * (1 + 1e-12)


@pytest.mark.parametrize("K", [1, 3])
def test_fused_srm_query_equals_the_materialised_one(K):
    """The fused DP-SRM sum (no per-example gradient materialised) equals Σ [γ·clip_{C₁}(g(θ)) +
    (1 − γ)·clip_{C₂}(g(θ) − g(θ_prev))] built from example_gradient_kernel and clip_vector_kernel, to 1e-12,
    on sparse rows in random order with both clips binding for some records; the clip counts agree."""
    rng = np.random.default_rng(5)
    d, h, gamma, c1, c2 = 12, 5, 0.3, 1.5, 0.5
    Xs = rng.normal(size=(60, d)) * (rng.random((60, d)) < 0.3)
    ys = rng.integers(0, K, 60).astype(np.float64) if K > 1 else np.where(rng.random(60) < 0.5, 1.0, -1.0)
    theta = rng.normal(size=n_parameters(d, h, K))
    prev = theta + 0.2 * rng.normal(size=theta.shape[0])
    idx = rng.permutation(60)[:30]
    out, ref = np.empty(theta.shape[0]), np.zeros(theta.shape[0])
    got = mlp_srm_query_kernel(theta, prev, Xs, ys, idx, 30, gamma, c1, c2, d, h, K, out)
    n1 = n2 = 0
    for i in idx:
        g, gp = np.empty_like(out), np.empty_like(out)
        example_gradient_kernel(theta, Xs, ys, i, d, h, K, g, np.empty(h), np.empty(K), np.empty(K))
        example_gradient_kernel(prev, Xs, ys, i, d, h, K, gp, np.empty(h), np.empty(K), np.empty(K))
        diff = g - gp
        n1 += clip_vector_kernel(g, c1) > c1
        n2 += clip_vector_kernel(diff, c2) > c2
        ref += gamma * g + (1 - gamma) * diff
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-14)
    assert got == (n1, n2) and 1 <= n1 < 30 and 1 <= n2 < 30


@pytest.mark.parametrize("solver, kw", [("dp_gd", dict(epochs=3000, learning_rate=1.0, heavy_ball=0.0,
                                                       lr_schedule="constant", optimizer="momentum")),
                                        ("dp_srm", dict(epochs=3000, batch_size=300, learning_rate=1.0,
                                                        diff_clip_norm=1e6, momentum=0.5, output="last"))])
def test_noise_off_full_batch_drives_the_gradient_norm_down(solver, kw):
    """Full batches, huge clip norms, no noise: ‖∇F‖ (mean loss + weight decay) < 2e-3 (≈ 0.1 at the start)."""
    est = _fit(hidden_units=4, solver=solver, epsilon=math.inf, clip_norm=1e6, alpha=1e-3, random_state=0, **kw)
    d, h, K = est._shape
    grad = np.empty(est._theta.shape[0])
    mlp_loss_kernel(est._theta, X, Y, d, h, K, grad)
    assert np.linalg.norm(grad + 1e-3 * est._theta) < 2e-3
    assert math.isinf(est.privacy_.epsilon)


@pytest.mark.parametrize("mu, cosine", [(0.0, False), (0.9, True), (0.5, False)])
def test_heavy_ball_and_cosine_schedule_follow_their_formulas(mu, cosine):
    """Full batch, no noise: the kernel's iterates equal v ← μv + g/n + αθ, θ ← θ − ηₜv with
    ηₜ = η(1 + cos(πt/T))/2 (cosine) or η, the sums taken from the fused clipped-sum kernel."""
    from algorithms.mlp_kernels import mlp_noisy_sgd_kernel

    d, h, K, T, lr, alpha = 4, 3, 1, 7, 0.3, 1e-3
    theta0 = np.random.default_rng(0).normal(size=n_parameters(d, h, K))
    got = mlp_noisy_sgd_kernel(theta0, X, Y, d, h, K, T, 300, lr, 0.5, 0.0, alpha, np.random.default_rng(1), mu,
                               cosine)[0]
    theta, v, s = theta0.copy(), np.zeros_like(theta0), np.empty_like(theta0)
    for t in range(T):
        mlp_clipped_sum_kernel(theta, X, Y, np.arange(300), 300, 0.5, d, h, K, s)
        v = mu * v + s / 300 + alpha * theta
        theta = theta - (lr * 0.5 * (1 + math.cos(math.pi * t / T)) if cosine else lr) * v
    np.testing.assert_allclose(got, theta, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mu, cosine, adam_eps", [(0.9, True, 1e-8), (0.0, False, 0.05), (0.5, False, 1e-8)])
def test_adam_follows_its_formulas(mu, cosine, adam_eps):
    """Full batch, no noise: the kernel's Adam iterates equal a NumPy loop of Kingma & Ba Alg. 1 on
    g = Σ clip(gᵢ)/n + αθ (bias-corrected m, v; β₁ = μ), the sums taken from the fused clipped-sum kernel."""
    from algorithms.mlp_kernels import mlp_noisy_sgd_kernel

    d, h, K, T, lr, alpha, beta2 = 4, 3, 1, 7, 0.05, 1e-3, 0.99
    theta0 = np.random.default_rng(0).normal(size=n_parameters(d, h, K))
    got = mlp_noisy_sgd_kernel(theta0, X, Y, d, h, K, T, 300, lr, 0.5, 0.0, alpha, np.random.default_rng(1), mu,
                               cosine, True, beta2, adam_eps)[0]
    theta, m, v, s = theta0.copy(), np.zeros_like(theta0), np.zeros_like(theta0), np.empty_like(theta0)
    for t in range(T):
        mlp_clipped_sum_kernel(theta, X, Y, np.arange(300), 300, 0.5, d, h, K, s)
        g = s / 300 + alpha * theta
        m = mu * m + (1 - mu) * g
        v = beta2 * v + (1 - beta2) * g * g
        eta = lr * 0.5 * (1 + math.cos(math.pi * t / T)) if cosine else lr
        theta = theta - eta * (m / (1 - mu ** (t + 1))) / (np.sqrt(v / (1 - beta2 ** (t + 1))) + adam_eps)
    np.testing.assert_allclose(got, theta, rtol=1e-11, atol=1e-14)
    assert not np.allclose(got, theta0)


@pytest.mark.parametrize("solver", ["dp_sgd", "dp_gd"])
def test_optimizer_changes_neither_epsilon_nor_event(solver, monkeypatch):
    """Adam and heavy ball post-process the same releases: same z, same ε, same event; Adam gets η = 3/√P,
    ε_a = 1e-8 + σ/b (σ = z·2C, the public noise std of the released sum) and C = 2 by default."""
    import algorithms.mlp as mlp_mod

    seen = {}
    kernel = mlp_mod.mlp_noisy_sgd_kernel

    def spy(*args):
        seen[args[-3]] = args
        return kernel(*args)

    monkeypatch.setattr(mlp_mod, "mlp_noisy_sgd_kernel", spy)
    a, m = (_fit(solver=solver, optimizer=o, epsilon=1.0, epochs=2, batch_size=50, clip_norm=0.5, random_state=0)
            for o in ("adam", "momentum"))
    assert a.noise_multiplier_ == m.noise_multiplier_
    assert a.privacy_ == m.privacy_ and a.privacy_.epsilon <= 1.0
    assert not np.array_equal(a._theta, m._theta)
    b = 300 if solver == "dp_gd" else 50
    args = seen[True]
    assert args[8] == 3.0 / math.sqrt(n_parameters(4, 16, 1))  # learning rate
    assert args[-1] == 1e-8 + a.noise_multiplier_ * 2 * 0.5 / b  # Adam's ε
    assert seen[False][8] == 1.5
    for o in ("adam", "momentum"):  # default clip: 2 for Adam, 1 for heavy ball
        _fit(solver=solver, optimizer=o, epsilon=1.0, epochs=1, batch_size=50, random_state=0)
    assert (seen[True][9], seen[False][9]) == (2.0, 1.0)


def test_default_batch_is_1024_capped_at_n():
    assert _fit(epochs=1, random_state=0, epsilon=1.0).privacy_.epsilon <= 1.0  # n = 300 < 1024: full batch runs
    est = _fit(epochs=1, random_state=0, epsilon=math.inf)
    assert est.get_params()["batch_size"] is None


def test_noise_off_dp_sgd_learns():
    est = _fit(hidden_units=8, solver="dp_sgd", epsilon=math.inf, epochs=30, batch_size=30, random_state=0)
    assert est.score(X, Y01) > 0.68


@pytest.mark.parametrize("solver", ["dp_sgd", "dp_gd", "dp_srm", "rrpsgd"])
def test_reported_privacy_is_dpcores_epsilon_of_the_event(solver):
    est = _fit(solver=solver, epsilon=1.0, epochs=2, batch_size=50, random_state=0)
    assert est.accountant == "auto"  # the default (benchmarks/RESULTS.md, "DPMLPClassifier: accountant auto vs rdp")
    assert est.privacy_.epsilon <= 1.0
    assert est.privacy_.relation == "replace_one"
    assert est.noise_multiplier_ > 0
    if solver in ("dp_sgd", "rrpsgd"):
        ev = SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(est.noise_multiplier_, "replace_one"),
                                                              50, 300), 12)
        assert est.privacy_.epsilon == dpcore.get_epsilon(ev, 1e-5, accountant="auto").epsilon
    if solver == "dp_gd":
        ev = SelfComposedEvent(GaussianEvent(est.noise_multiplier_, "replace_one"), 2)
        assert est.privacy_.epsilon == dpcore.get_epsilon(ev, 1e-5, accountant="auto").epsilon


def test_reproducible_from_a_seed():
    a, b, c = (_fit(solver="dp_srm", epochs=2, random_state=s) for s in (3, 3, 4))
    np.testing.assert_array_equal(a._theta, b._theta)
    assert not np.array_equal(a._theta, c._theta)


def test_labels_of_any_values_and_more_than_two_classes():
    y3 = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.2, 0.2])]
    est = _fit(hidden_units=8, epsilon=math.inf, epochs=30, batch_size=30, random_state=0, labels=y3)
    assert list(est.classes_) == ["a", "b", "c"]
    assert est.predict_proba(X).shape == (300, 3)
    assert est.score(X, y3) > 0.85
    assert set(est.predict(X)) <= {"a", "b", "c"}


def test_sklearn_clone_and_pipeline():
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    est = DPMLPClassifier(hidden_units=3, solver="dp_gd", epochs=5)
    assert clone(est).get_params() == est.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(FunctionTransformer(), DPMLPClassifier(epochs=1, random_state=0)).fit(X, Y01)
    assert pipe.predict(X).shape == (300,)


@pytest.mark.parametrize("kw, name", [
    ({"hidden_units": 0}, "hidden_units"), ({"solver": "adam"}, "solver"), ({"epsilon": 0.0}, "epsilon"),
    ({"batch_size": 301}, "batch_size"), ({"learning_rate": -1.0}, "learning_rate"), ({"clip_norm": 0.0}, "clip_norm"),
    ({"alpha": -1.0}, "alpha"), ({"solver": "dp_srm", "momentum": 2.0}, "momentum"), ({"epochs": 0}, "epochs"),
    ({"classes": ["yes"]}, "classes"), ({"delta": 1.0}, "delta"), ({"heavy_ball": 1.0}, "heavy_ball"),
    ({"heavy_ball": -0.1}, "heavy_ball"), ({"lr_schedule": "step"}, "lr_schedule"),
    ({"optimizer": "sgd"}, "optimizer"), ({"optimizer": None}, "optimizer"),
])
def test_bad_input_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        _fit(**kw)


def test_a_label_outside_classes_is_refused():
    with pytest.raises(ValueError, match="y must contain only the labels"):  # 'yes' is not in the public set
        _fit(epochs=1, random_state=0, classes=["no", "maybe"])


def test_predict_before_fit_and_wrong_width():
    with pytest.raises(ValueError, match="not fitted"):
        DPMLPClassifier().predict(X)
    est = _fit(epochs=1, random_state=0)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])


def test_label_set_from_the_data_warns():
    from algorithms import PrivacyLeakWarning
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 3))
    Z /= np.linalg.norm(Z, axis=1)[:, None]
    labels = (Z[:, 0] > 0).astype(int)
    with pytest.warns(PrivacyLeakWarning):
        DPMLPClassifier(epsilon=1.0, epochs=1, batch_size=10).fit(Z, labels)
    m = DPMLPClassifier(epsilon=1.0, epochs=1, batch_size=10, classes=[0, 1, 2]).fit(Z, labels)
    assert m.classes_.tolist() == [0, 1, 2]  # the output layer follows the public label set


# ------------------------------------------------------------------- DP-SRM: the noise that runs is the calibrated one

_SRM = dict(solver="dp_srm", epsilon=1.0, delta=1e-5, epochs=2, batch_size=50)  # T = ⌈2·300/50⌉ = 12 releases
_SRM_T = 12


def _fit_srm_spied(monkeypatch, accountant, *, calibrate_with=None, report_with=None, noise_factor=1.0):
    """Fit DP-SRM with the kernel's arguments recorded; the keywords plant bugs: calibrate with one accountant and
    report another's ε (``calibrate_with`` / ``report_with``), or hand the kernel ``noise_factor`` × the noise."""
    import algorithms.mlp as mlp_mod

    seen = {}
    kernel, calibrate = mlp_mod.mlp_dp_srm_kernel, mlp_mod.calibrated_privacy

    def spy(*args):
        args = list(args)
        args[12] *= noise_factor
        args[13] *= noise_factor
        seen["args"] = args
        return kernel(*args)

    def planted(event_fn, **kw):
        z, event, privacy, cal = calibrate(event_fn, **{**kw, "accountant": calibrate_with or kw["accountant"]})
        if report_with:
            privacy = dpcore.get_epsilon(event, kw["delta"], accountant=report_with)
        return z, event, privacy, cal

    monkeypatch.setattr(mlp_mod, "mlp_dp_srm_kernel", spy)
    monkeypatch.setattr(mlp_mod, "calibrated_privacy", planted)
    return _fit(accountant=accountant, random_state=0, **_SRM), seen["args"]


def _check_srm_noise_is_calibrated(est, args):
    """From the σ₀, σ the kernel was given (not from the estimator's attributes): the least noise multiplier that ran,
    z = min(σ₀/Δ₀, σ/Δ) rounded down, must give ε ≤ target under the accountant the estimator names, the reported ε
    must be that accountant's ε of that event, and 1 % less noise must miss the target (calibrated with that
    accountant, not a looser one)."""
    from fractions import Fraction

    from algorithms.dp_srm import dp_srm_event, dp_srm_sensitivities
    from dpcore.result import round_down

    gamma, clip, c2, sigma0, sigma = args[9], args[10], args[11], args[12], args[13]
    sens0, sens = dp_srm_sensitivities(clip, c2, gamma)
    z = round_down(min(Fraction(sigma0) / Fraction(sens0), Fraction(sigma) / Fraction(sens)))
    assert (args[6], args[7], args[8]) == (_SRM_T, 50, 50)  # T, b₀, b: the event's shape
    ran = dpcore.get_epsilon(dp_srm_event(z, 50, 50, 300, _SRM_T), 1e-5, accountant=est.accountant)
    assert ran.epsilon <= 1.0, f"the noise that ran gives epsilon {ran.epsilon} ({est.accountant})"
    assert est.privacy_.epsilon == pytest.approx(ran.epsilon, rel=1e-9), (est.privacy_.epsilon, ran.epsilon)
    assert est.privacy_.accountant == ran.accountant
    less = dpcore.get_epsilon(dp_srm_event(0.99 * z, 50, 50, 300, _SRM_T), 1e-5, accountant=est.accountant)
    assert less.epsilon > 1.0, f"z = {z} is not the least noise for accountant {est.accountant!r}"


@pytest.mark.parametrize("accountant", ["rdp", "auto"])
def test_dp_srm_adds_the_noise_its_accountant_calibrated(accountant, monkeypatch):
    est, args = _fit_srm_spied(monkeypatch, accountant)
    _check_srm_noise_is_calibrated(est, args)
    if accountant == "auto":  # the PLD answers for these without-replacement Gaussians
        assert est.privacy_.accountant == "pld"


@pytest.mark.parametrize("accountant, planted", [
    ("auto", dict(calibrate_with="rdp")),  # calibrated with RDP, its ε reported under the name "auto"
    ("auto", dict(calibrate_with="rdp", report_with="auto")),  # RDP's (more) noise, auto's ε: not auto's least noise
    ("rdp", dict(calibrate_with="auto", report_with="auto")),  # auto's noise and ε, "rdp" named
    ("rdp", dict(calibrate_with="auto")),  # auto's (smaller) noise, rdp's ε of it reported: above the target
    ("auto", dict(noise_factor=0.5)),  # the kernel given half the calibrated noise
])
def test_the_dp_srm_noise_check_catches_planted_bugs(accountant, planted, monkeypatch):
    """The check above fails on an MLP that calibrates with one accountant and reports another's ε, or runs other noise."""
    est, args = _fit_srm_spied(monkeypatch, accountant, **planted)
    with pytest.raises(AssertionError):
        _check_srm_noise_is_calibrated(est, args)
