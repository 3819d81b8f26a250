"""Regression estimators (issue 15.1): public target range, AdaSSP (Wang 2018, Alg. 2), the clip rule."""

import math

import numpy as np
import pytest

import dpcore
from algorithms import DPHuberRegressor, DPLinearRegression
from algorithms.estimators import AUTO_CLIP_FRACTION
from algorithms.sufficient_statistics import DEFAULT_BUDGET_SPLIT, adassp, adassp_sensitivities
from algorithms.synthetic import make_regression
from dpcore.events import GaussianEvent

pytestmark = pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")  # seeds: tests only

XR, YR, _ = make_regression(300, 4, seed=11)
LO, HI = float(YR.min()) - 1.0, float(YR.max()) + 3.0  # a public range containing every target, off-centre


@pytest.mark.parametrize("cls, solver", [(DPLinearRegression, "dp_gd"), (DPLinearRegression, "adassp"),
                                         (DPHuberRegressor, "objective_perturbation")])
def test_target_range_centres_scales_and_maps_back(cls, solver):
    """target_range (lo, hi): the fit equals the fit on (y − m)/h with a unit bound, mapped back
    (coef × h, intercept × h + m) — same seed, so the same noise."""
    m, h = (LO + HI) / 2, (HI - LO) / 2
    a = cls(solver=solver, target_range=(LO, HI), alpha=1e-3, random_state=4).fit(XR, YR)
    b = cls(solver=solver, target_bound=1.0, alpha=1e-3, random_state=4).fit(XR, (YR - m) / h)
    np.testing.assert_allclose(a.coef_, h * b.coef_, rtol=1e-9)
    assert a.intercept_ == pytest.approx(h * b.intercept_ + m, rel=1e-12)
    np.testing.assert_allclose(a.predict(XR), h * b.predict(XR) + m, rtol=1e-9)


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_bad_target_range_is_a_value_error_naming_it(cls):
    with pytest.raises(ValueError, match=r"target_range=\(.*\) is violated: target \d+"):
        cls(target_range=(LO + 2.0, HI), random_state=0).fit(XR, YR)
    for bad in ((HI, LO), (1.0, 1.0), (0.0, math.inf), (1.0,), "ab", (0.0, float("nan"))):
        with pytest.raises(ValueError, match="target_range"):
            cls(target_range=bad, random_state=0).fit(XR, YR)
    with pytest.raises(ValueError, match="target_bound or target_range, not both"):
        cls(target_range=(LO, HI), target_bound=100.0, random_state=0).fit(XR, YR)
    # a range too narrow for its magnitude: float centring would push targets outside it (review finding)
    y_far = 1e16 + np.array([2.0, 8.0, 4.0, 6.0] * 75)
    with pytest.raises(ValueError, match="target_range=.* too narrow to represent"):
        cls(target_range=(0.0, 5e-324), random_state=0).fit(XR, np.zeros(XR.shape[0]))
    with pytest.raises(ValueError, match="target_range=.* too narrow for its magnitude"):
        cls(target_range=(1e16 + 2.0, 1e16 + 8.0), random_state=0).fit(XR, y_far)


def test_adassp_needs_a_public_target_bound():
    with pytest.raises(ValueError, match="target_bound"):
        DPLinearRegression(solver="adassp", random_state=0).fit(XR, YR)
    with pytest.raises(ValueError, match="target_bound"):  # the solver checks the bound itself too
        adassp(XR, YR, epsilon=1.0, data_norm_bound=1.0, target_bound=0.5 * float(np.max(np.abs(YR))))


@pytest.mark.parametrize("alpha", [0.0, 1e-2])
def test_adassp_noise_off_is_ols_or_ridge(alpha):
    """ε = inf: no noise, λ = 0 — the exact minimiser of (1/2n)‖Xθ − y‖² + (α/2)‖θ‖²."""
    B = float(np.max(np.abs(YR)))
    res = adassp(XR, YR, epsilon=math.inf, alpha=alpha, data_norm_bound=1.0, target_bound=B, rng=0)
    n, d = XR.shape
    ref = np.linalg.solve(XR.T @ XR + n * alpha * np.eye(d), XR.T @ YR)
    np.testing.assert_allclose(res.weights, ref, rtol=1e-10, atol=1e-12)
    assert res.privacy.epsilon == math.inf
    est = DPLinearRegression(solver="adassp", epsilon=math.inf, target_range=(LO, HI), random_state=0,
                             solver_params={"variant": "alg2"}).fit(XR, YR)  # the estimator's "joint" keeps its prior
    Xi = np.hstack([XR, np.ones((n, 1))])
    w = np.linalg.lstsq(Xi, YR, rcond=None)[0]  # OLS with intercept
    np.testing.assert_allclose(est.coef_, w[:-1], rtol=1e-8, atol=1e-10)
    assert est.intercept_ == pytest.approx(w[-1], rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_adassp_privacy_is_the_exact_epsilon_of_its_noise(relation, independent):
    """The reported ε is the exact ε (Balle–Wang, in mpmath: tests/algorithms/conftest.py) of the three composed
    Gaussians with the released σᵢ/Δᵢ (one Gaussian of μ² = Σ(Δᵢ/σᵢ)²); it meets the target and equals one
    Gaussian mechanism with multiplier z (dpcore's closed form, a second route)."""
    B = float(np.max(np.abs(YR)))
    res = adassp(XR, YR, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=B, relation=relation, rng=1)
    assert res.privacy.relation == relation and res.privacy.epsilon <= 1.0
    sigmas, sens = res.details["sigmas"], res.details["sensitivities"]
    mu = math.sqrt(sum((d / s) ** 2 for s, d in zip(sigmas, sens)))  # the composed Gaussians: one of μ = √Σ(Δᵢ/σᵢ)²
    exact = independent.gaussian_epsilon(mu, 1e-5)  # Balle–Wang in mpmath
    assert exact <= res.privacy.epsilon <= exact * (1 + 1e-9)
    assert sorted(e.noise_multiplier for e in res.event.events) == pytest.approx(sorted(s / d for s, d in zip(sigmas, sens)))
    single = dpcore.analytic_gaussian_epsilon(res.noise_multiplier, 1e-5)
    assert single == pytest.approx(res.privacy.epsilon, rel=1e-9) and single > 0.999
    for s, d, w in zip(sigmas, sens, DEFAULT_BUDGET_SPLIT):
        assert s / d == pytest.approx(res.noise_multiplier / math.sqrt(w), rel=1e-12)
    with pytest.raises(ValueError, match="alpha must be 0 with relation='add_remove'"):
        adassp(XR, YR, epsilon=1.0, alpha=0.1, data_norm_bound=1.0, target_bound=B, relation="add_remove")


def test_adassp_sensitivities_bound_every_neighbour_and_are_attained():
    """Random replace-one / add-remove neighbours (rows ‖x‖ ≤ 1, |y| ≤ 1) never move λ_min(XᵀX), the
    upper triangle of XᵀX or Xᵀy by more than the stated Δ; e₁ → e₂ attains √2, (e₁, 1) → (−e₁, 1) attains 2."""
    rng = np.random.default_rng(5)
    d_lam, d_xx, d_xy = adassp_sensitivities(1.0, 1.0, "replace_one")
    a_lam, a_xx, a_xy = adassp_sensitivities(1.0, 1.0, "add_remove")
    iu = np.triu_indices(3)
    for _ in range(500):
        X = rng.normal(size=(6, 3))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * rng.uniform(1.0, 2.0)
        y = rng.uniform(-1, 1, 6)
        x2, y2 = rng.normal(size=3), rng.uniform(-1, 1)
        x2 /= max(1.0, np.linalg.norm(x2))
        Xp, yp = X.copy(), y.copy()
        Xp[0], yp[0] = x2, y2
        for (A, a), (Bm, b), dl, dx, dy in (((X, y), (Xp, yp), d_lam, d_xx, d_xy), ((X, y), (X[1:], y[1:]), a_lam, a_xx, a_xy)):
            G, H = A.T @ A, Bm.T @ Bm
            assert abs(np.linalg.eigvalsh(G)[0] - np.linalg.eigvalsh(H)[0]) <= dl
            assert np.linalg.norm((G - H)[iu]) <= dx
            assert np.linalg.norm(A.T @ a - Bm.T @ b) <= dy
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    assert np.linalg.norm((np.outer(e1, e1) - np.outer(e2, e2))[iu]) == pytest.approx(d_xx)
    assert np.linalg.norm(e1 * 1.0 - (-e1) * 1.0) == pytest.approx(d_xy)


def test_adassp_is_reproducible_from_its_seed():
    est = dict(solver="adassp", epsilon=1.0, target_range=(LO, HI))
    a = DPLinearRegression(random_state=3, **est).fit(XR, YR)
    b = DPLinearRegression(random_state=3, **est).fit(XR, YR)
    c = DPLinearRegression(random_state=4, **est).fit(XR, YR)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_ and not np.array_equal(a.coef_, c.coef_)
    assert a.alpha_ == 0.0 and a.privacy_.relation == "replace_one" and a.privacy_.epsilon <= 1.0


def test_auto_clip_is_the_public_rule_and_reaches_the_solver():
    m = DPLinearRegression(target_range=(LO, HI), random_state=0, keep_diagnostics=True).fit(XR, YR)
    # c = R/2 with a target range (intercept_scaling="auto"): C = 0.25·√(1 + 0.25)
    assert m.solver_ == "dp_gd" and m.clip_norm_ == pytest.approx(AUTO_CLIP_FRACTION * math.sqrt(1.25), rel=1e-15)
    assert m.result_.details["clip_norm"] == m.clip_norm_
    m = DPLinearRegression(target_range=(LO, HI), fit_intercept=False, data_norm_bound=2.0, random_state=0).fit(XR, YR)
    assert m.clip_norm_ == pytest.approx(AUTO_CLIP_FRACTION * 2.0, rel=1e-15) and m.intercept_ == (LO + HI) / 2
    with pytest.raises(ValueError, match="clip_norm"):
        DPLinearRegression(clip_norm="big", random_state=0).fit(XR, YR)


def test_auto_huber_delta_is_a_quarter_of_the_scaled_targets():
    """huber_delta='auto': 0.25 of the targets scaled by a public bound / range, else 1.0 (raw units)."""
    from algorithms.estimators import AUTO_HUBER_DELTA

    m = DPHuberRegressor(target_range=(LO, HI), random_state=0, keep_diagnostics=True).fit(XR, YR)
    assert m.solver_ == "dp_gd" and m.huber_delta_ == AUTO_HUBER_DELTA == 0.25
    assert m.result_.details["clip_norm"] == pytest.approx(0.25 * math.sqrt(1.25), rel=1e-12)  # h·√(R² + c²), c = R/2
    assert DPHuberRegressor(epsilon=math.inf).fit(XR, YR).huber_delta_ == 1.0  # raw targets: no privacy only
    assert DPHuberRegressor(huber_delta=0.5, target_bound=10.0, random_state=0).fit(XR, YR).huber_delta_ == 0.5
    with pytest.raises(ValueError, match="huber_delta"):
        DPHuberRegressor(huber_delta="wide", random_state=0).fit(XR, YR)


def test_regression_auto_alpha_and_dp_sgd_schedule_are_the_public_rules():
    """Regressors: alpha='auto' of the perturbation solvers min(0.1, 30/(n·ε′)) / output perturbation
    min(0.1, 1.75·(d/(n·ε′)²)^(1/3)); DP-SGD gets η = 1.9/β and ⌈default_steps(n, ε)/2⌉ steps unless
    solver_params sets them; gradient solvers keep the shared alpha rule."""
    from algorithms.dp_gd import default_steps

    n, d = XR.shape[0], XR.shape[1] + 1
    for eps in (1.0, 10.0, math.inf):
        e = min(eps, 10.0)
        m = DPHuberRegressor(solver="objective_perturbation", epsilon=eps, target_bound=5.0, random_state=0).fit(XR, YR)
        assert m.alpha_ == pytest.approx(min(0.1, 30.0 / (n * e)), rel=1e-12)
    m = DPHuberRegressor(solver="output_perturbation_gd", target_bound=5.0, random_state=0).fit(XR, YR)
    assert m.alpha_ == pytest.approx(min(0.1, 1.75 * (d / n**2) ** (1 / 3)), rel=1e-12)
    m = DPLinearRegression(solver="dp_sgd", epsilon=2.0, target_bound=5.0, random_state=0, keep_diagnostics=True)
    m.fit(XR, YR)
    assert m.alpha_ == pytest.approx(min(0.01, 10.0 / (n * 2.0)), rel=1e-12)  # the shared rule
    assert m.result_.details["steps"] == math.ceil(default_steps(n, 2.0) / 2)
    assert m.result_.details["learning_rate"] == pytest.approx(1.9 / 1.25, rel=1e-12)  # R = 1, c = 1/2: β = 1.25
    m = DPLinearRegression(solver="dp_sgd", target_bound=5.0, random_state=0, keep_diagnostics=True,
                           solver_params={"epochs": 2, "learning_rate": 0.1}).fit(XR, YR)
    assert m.result_.details["learning_rate"] == 0.1 and m.result_.details["steps"] == math.ceil(2 * n / 256)


def test_huber_dp_svrg_defaults_reach_the_solver():
    """DP-SVRG in the regressors: min(30, max(5, ⌈nε/40⌉)) epochs and the difference clip at G = h·√(R² + c²)
    unless given."""
    m = DPHuberRegressor(solver="dp_svrg", target_bound=5.0, random_state=0, keep_diagnostics=True).fit(XR, YR)
    G = 0.25 * math.sqrt(1.25)  # c = R/2 (intercept_scaling="auto" with a target bound)
    assert m.result_.details["clip_norm"] == pytest.approx(G, rel=1e-12)
    assert m.result_.details["clip_norm_difference"] == pytest.approx(G, rel=1e-12)  # default would be 2G
    assert m.result_.details["epochs"] == 8  # n = 300, ε = 1: ⌈300/40⌉
    m = DPHuberRegressor(solver="dp_svrg", target_bound=5.0, epsilon=10.0, random_state=0,
                         keep_diagnostics=True).fit(XR, YR)
    assert m.result_.details["epochs"] == 30  # ⌈3000/40⌉ = 75, capped
    m = DPHuberRegressor(solver="dp_svrg", target_bound=5.0, epsilon=0.1, random_state=0,
                         keep_diagnostics=True).fit(XR, YR)
    assert m.result_.details["epochs"] == 5
    m = DPHuberRegressor(solver="dp_svrg", target_bound=5.0, random_state=0, keep_diagnostics=True,
                         solver_params={"epochs": 3}).fit(XR, YR)
    assert m.result_.details["epochs"] == 3


def _released_xty_noise(res, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(released Xᵀy − Xᵀy)/its σ, read off θ̂ under a huge public ridge nα (θ̂ is then linear in the release to
    ~1e-7): alg2 θ̂ = Xᵀŷ/ridge; joint θ̂ = τ²M(τ²M² + s²M + σ_b²)⁻¹b̂ with M ≈ nα·I, σ_b = σ/(√2·k)."""
    det = res.details
    if det["variant"] == "alg2":
        return (res.weights * det["ridge"] - X.T @ y) / det["sigmas"][2]
    M, tau2, sigma_b = X.shape[0] * 1e8, det["prior_variance"], det["sigma"] / (math.sqrt(2.0) * det["target_weight"])
    b_hat = res.weights * (tau2 * M * M + det["noise_variance"] * M + sigma_b**2) / (tau2 * M)
    return (b_hat - X.T @ y) / sigma_b


@pytest.mark.parametrize("variant", ["alg2", "joint"])
def test_adassp_adds_the_accounted_noise_to_its_statistics(variant):
    """With a huge public ridge (alpha = 1e8) θ̂ recovers the released Xᵀy + σz (joint: Ĝ[:d, d]/k, whose
    off-diagonal noise is σ/√2) to ~1e-7, so the released noise is observable: Σ((Xᵀŷ − Xᵀy)/σ)² over 300 runs
    × d = 2, at the noise multiplier calibrated for ε = 1, must lie in the two-sided χ²₆₀₀ interval of false-alarm
    rate 1e-6 (a missing or mis-scaled Gaussian fails it; joint without the 1/√2 gives χ² ≈ 1200)."""
    from scipy.stats import chi2

    rng = np.random.default_rng(8)
    X = rng.uniform(-0.7, 0.7, (20, 2))
    y = rng.uniform(-1.0, 1.0, 20)
    kwargs = dict(alpha=1e8, data_norm_bound=1.0, target_bound=1.0, variant=variant)
    z = adassp(X, y, epsilon=1.0, rng=0, **kwargs).noise_multiplier  # calibrated once, reused
    gen = np.random.default_rng(9)
    stats = [_released_xty_noise(adassp(X, y, epsilon=None, noise_multiplier=z, rng=gen, **kwargs), X, y)
             for _ in range(300)]
    total = float(np.sum(np.square(stats)))
    assert chi2.ppf(0.5e-6, 600) < total < chi2.isf(0.5e-6, 600)


def test_joint_gram_noise_is_iid_standard_normal_in_isometric_coordinates():
    """The joint release ZᵀZ + σE (whole matrix, not only its last column): E is exactly symmetric and the
    isometric coordinates v(E) — the diagonal and √2 × the upper triangle — are N(0, 1). Over 400 draws of a
    4 × 4 release, Σ v(E)² over the diagonal (χ²₁₆₀₀) and over the upper triangle (χ²₂₄₀₀) each lie in their
    two-sided interval of false-alarm rate 1e-6: off-diagonal N(0, 1) (no √½) gives ≈ 4800, a diagonal
    scaled by √½ gives ≈ 800."""
    from scipy.stats import chi2

    from algorithms.sufficient_statistics import noisy_gram

    rng = np.random.default_rng(3)
    Z = rng.uniform(-1.0, 1.0, (30, 4))
    sigma, gen = 2.5, np.random.default_rng(4)
    iu = np.triu_indices(4, 1)
    diag = off = 0.0
    for _ in range(400):
        E = (noisy_gram(Z, sigma, gen) - Z.T @ Z) / sigma
        assert np.array_equal(E, E.T)
        diag += float(np.sum(np.diag(E) ** 2))
        off += float(np.sum((math.sqrt(2.0) * E[iu]) ** 2))
    assert chi2.ppf(0.5e-6, 1600) < diag < chi2.isf(0.5e-6, 1600)
    assert chi2.ppf(0.5e-6, 2400) < off < chi2.isf(0.5e-6, 2400)


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_auto_intercept_scaling_is_half_the_row_bound_with_scaled_targets(cls):
    """intercept_scaling='auto' (the regressors' default): c = R/2 with a target bound or range, 1.0 without;
    the solver sees rows of norm ≤ √(R² + c²) and the intercept is c·w_{d+1}; a number is used as given."""
    from algorithms.estimators import AUTO_INTERCEPT_FRACTION

    assert cls().intercept_scaling == "auto" and AUTO_INTERCEPT_FRACTION == 0.5
    m = cls(target_range=(LO, HI), data_norm_bound=2.0, random_state=0, keep_diagnostics=True).fit(XR, YR)
    assert m.intercept_scaling_ == 1.0  # R/2
    # the gradient bound 0.25·√(R² + c²) of both regressors' clip rules sees the row bound √(4 + 1)
    assert m.result_.details["clip_norm"] == pytest.approx(0.25 * math.sqrt(5.0), rel=1e-12)
    w = m.result_.weights
    assert m.intercept_ == pytest.approx(w[-1] * 1.0 * (HI - LO) / 2 + (LO + HI) / 2, rel=1e-12)
    m = cls(target_bound=100.0, random_state=0).fit(XR, YR)
    assert m.intercept_scaling_ == 0.5
    assert cls(epsilon=math.inf).fit(XR, YR).intercept_scaling_ == 1.0  # raw targets (noise off): the old constant
    assert cls(target_bound=100.0, intercept_scaling=0.3, random_state=0).fit(XR, YR).intercept_scaling_ == 0.3
    for bad in ("half", 0.0, -1.0):
        with pytest.raises(ValueError, match="intercept_scaling"):
            cls(target_bound=100.0, intercept_scaling=bad, random_state=0).fit(XR, YR)


def test_joint_sensitivity_bounds_every_neighbour_in_isometric_coordinates_and_is_attained():
    """v(G) = (G_jj, √2·G_jl) has ‖v(D)‖ = ‖D‖_F; for rows ‖z‖ ≤ 1 a replaced record moves it by ≤ √2 and an
    added one by ≤ 1 (joint_sensitivity), attained by z ⟂ z′ of norm 1 and by any unit z."""
    from algorithms.sufficient_statistics import joint_sensitivity

    rng = np.random.default_rng(12)
    ro, ar = joint_sensitivity(1.0, "replace_one"), joint_sensitivity(1.0, "add_remove")
    assert ro == pytest.approx(math.sqrt(2.0), rel=1e-15) and ro >= math.sqrt(2.0)
    assert ar == pytest.approx(1.0, rel=1e-15) and ar >= 1.0
    assert joint_sensitivity(2.0, "replace_one") == pytest.approx(4.0 * math.sqrt(2.0), rel=1e-15)
    iu = np.triu_indices(4)
    weight = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))

    def v(D):
        return D[iu] * weight

    for _ in range(500):
        z, z2 = rng.normal(size=4), rng.normal(size=4)
        z /= max(1.0, np.linalg.norm(z)) * rng.uniform(1.0, 1.5)
        z2 /= max(1.0, np.linalg.norm(z2))
        D = np.outer(z2, z2) - np.outer(z, z)
        assert np.linalg.norm(v(D)) == pytest.approx(np.linalg.norm(D), rel=1e-12)
        assert np.linalg.norm(v(D)) <= ro and np.linalg.norm(v(np.outer(z, z))) <= ar
    e1, e2 = np.eye(4)[0], np.eye(4)[1]
    assert np.linalg.norm(v(np.outer(e1, e1) - np.outer(e2, e2))) == pytest.approx(ro, rel=1e-15)


def test_joint_variant_privacy_is_one_gaussian_and_options_are_checked():
    """variant='joint': one GaussianEvent with Δ = √2·B², B² = 2X² (k = X/Y), calibrated by dpcore to ≤ ε;
    the alg2-only options are refused by name; the estimator uses it by default."""
    from algorithms._data import admitted_norm_bound
    from algorithms.sufficient_statistics import JOINT_NOISE_VARIANCE_SHARE, JOINT_PRIOR_VARIANCE_SHARE

    B = float(np.max(np.abs(YR)))
    res = adassp(XR, YR, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=B, variant="joint", rng=1)
    det = res.details
    X = admitted_norm_bound(1.0, XR.shape[1])
    assert det["variant"] == "joint" and det["target_weight"] == pytest.approx(X / B, rel=1e-15)
    assert det["sensitivity"] == pytest.approx(math.sqrt(2.0) * 2.0 * X * X, rel=1e-12)
    assert det["sensitivity"] >= math.sqrt(2.0) * 2.0 * X * X
    assert det["prior_variance"] == pytest.approx(JOINT_PRIOR_VARIANCE_SHARE * B * B / (XR.shape[1] * X * X), rel=1e-12)
    assert det["noise_variance"] == pytest.approx(JOINT_NOISE_VARIANCE_SHARE * B * B, rel=1e-15)
    assert isinstance(res.event, GaussianEvent) and res.event.noise_multiplier == res.noise_multiplier
    assert det["sigma"] == pytest.approx(res.noise_multiplier * det["sensitivity"], rel=1e-15)
    assert res.privacy.epsilon <= 1.0 and res.privacy.epsilon > 0.999
    assert dpcore.analytic_gaussian_epsilon(res.noise_multiplier, 1e-5) == pytest.approx(res.privacy.epsilon, rel=1e-9)
    ar = adassp(XR, YR, epsilon=1.0, data_norm_bound=1.0, target_bound=B, variant="joint", relation="add_remove", rng=1)
    assert ar.privacy.relation == "add_remove"
    assert ar.details["sensitivity"] == pytest.approx(det["sensitivity"] / math.sqrt(2.0), rel=1e-12)
    for bad in ({"budget_split": (0.2, 0.4, 0.4)}, {"failure_probability": 0.1}):
        with pytest.raises(ValueError, match="variant='alg2' only"):
            adassp(XR, YR, epsilon=1.0, data_norm_bound=1.0, target_bound=B, variant="joint", **bad)
    with pytest.raises(ValueError, match="variant"):
        adassp(XR, YR, epsilon=1.0, data_norm_bound=1.0, target_bound=B, variant="ridge")
    m = DPLinearRegression(solver="adassp", target_range=(LO, HI), random_state=0, keep_diagnostics=True).fit(XR, YR)
    assert m.result_.details["variant"] == "joint"
    m = DPLinearRegression(solver="adassp", target_range=(LO, HI), random_state=0, keep_diagnostics=True,
                           solver_params={"variant": "alg2"}).fit(XR, YR)
    assert m.result_.details["variant"] == "alg2"


def test_joint_variant_noise_off_is_ridge_with_the_prior_ratio():
    """ε = inf: σ = 0, so the posterior mean is (XᵀX + nα + s²/τ²)⁻¹Xᵀy (X has full rank here)."""
    B = float(np.max(np.abs(YR)))
    for alpha in (0.0, 1e-2):
        res = adassp(XR, YR, epsilon=math.inf, alpha=alpha, data_norm_bound=1.0, target_bound=B, variant="joint", rng=0)
        n, d = XR.shape
        lam = res.details["noise_variance"] / res.details["prior_variance"]
        ref = np.linalg.solve(XR.T @ XR + (n * alpha + lam) * np.eye(d), XR.T @ YR)
        np.testing.assert_allclose(res.weights, ref, rtol=1e-8, atol=1e-12)
        assert res.privacy.epsilon == math.inf


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_private_fit_without_a_target_bound_is_refused(cls):
    """Issue 24: a private regression on raw targets (diabetes: R² about −4) is refused, naming both arguments;
    epsilon=inf (no noise) still fits the raw targets."""
    with pytest.raises(ValueError, match="target_bound.*target_range"):
        cls(random_state=0).fit(XR, YR)
    assert cls(epsilon=math.inf).fit(XR, YR).score(XR, YR) > 0.5
