"""AdaSSP: linear regression by adaptive sufficient-statistics perturbation — Wang (2018), Algorithm 2.

Yu-Xiang Wang, "Revisiting differentially private linear regression: optimal and adaptive
prediction & estimation in unbounded domain", UAI 2018 (arXiv:1803.02596), Algorithm 2 (AdaSSP).
It is not one of the five seed papers of this library; it is the standard strong baseline for
private least squares, offered as ``DPLinearRegression(solver="adassp")``.

Least squares needs only the sufficient statistics XᵀX and Xᵀy. AdaSSP releases three Gaussian
mechanisms and post-processes them:

1. λ̃_min = max(λ_min(XᵀX) + σ₁Z − σ₁√log(6/δ), 0), a private lower bound on the least eigenvalue;
2. λ = max(0, σ₂√(d·log(2d²/ρ)) − λ̃_min), the ridge that keeps XᵀX̂ + λI well conditioned with
   probability ≥ 1 − ρ (σ₂√(d log(2d²/ρ)) bounds the spectral norm of the symmetric noise);
3. XᵀX̂ = XᵀX + σ₂E (E symmetric, upper triangle i.i.d. N(0, 1)), Xᵀŷ = Xᵀy + σ₃z;
4. θ̂ = (XᵀX̂ + λI)⁻¹Xᵀŷ.

The paper splits (ε, δ) into three equal parts; here the three releases are one
``ComposedEvent`` of Gaussian mechanisms whose noise multipliers zᵢ = z/√wᵢ share a common z
calibrated by dpcore for the total (ε, δ) (``budget_split`` = (w₁, w₂, w₃), the shares of
Σ 1/zᵢ² = 1/z²; the composition is exactly a Gaussian mechanism with multiplier z, Dong–Roth–Su
2019 Cor. 3.3), and the paper's σ's are replaced by σᵢ = zᵢΔᵢ. The steps' constants (√log(6/δ),
√(d log(2d²/ρ))) are the paper's; they affect accuracy only (steps 2 and 4 are post-processing).

Sensitivities for ‖xᵢ‖₂ ≤ X, |yᵢ| ≤ Y (both public bounds, checked):

* λ_min(XᵀX): X² under both relations (Weyl: a replaced record adds x′x′ᵀ − xxᵀ, whose
  eigenvalues lie in [−‖x‖², ‖x′‖²]);
* upper triangle of XᵀX (diagonal included): X² (add_remove: Σ_{i≤j} xᵢ²xⱼ² ≤ ‖x‖⁴) and √2·X²
  (replace_one: ‖x′x′ᵀ − xxᵀ‖_F² = ‖x‖⁴ + ‖x′‖⁴ − 2(x·x′)² ≤ 2X⁴ bounds the triangle);
* Xᵀy: X·Y (add_remove) and 2X·Y (replace_one).

``variant="joint"`` (a documented departure, used by ``DPLinearRegression(solver="adassp")``): one
Gaussian release of the augmented second-moment matrix G = ZᵀZ, Z = [X, k·y] with k = X/Y (so both
blocks have the bound X), and a Gaussian-prior posterior mean instead of steps 1, 2 and 4:

1. Ĝ = G + σE, E symmetric with E_jj ~ N(0, 1) and E_jl = E_lj ~ N(0, 1/2) (j ≠ l): the Gaussian
   mechanism on the vector v(G) = (G_jj, √2·G_jl for j < l), whose ℓ2 norm is ‖G‖_F, so its sensitivity
   is the Frobenius norm of a record's change: ‖z′z′ᵀ − zzᵀ‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(z·z′)² ≤ 2B⁴
   (replace_one, attained by z ⟂ z′ of norm B) and ‖zzᵀ‖_F = ‖z‖² ≤ B² (add_remove), B² = X² + k²Y² = 2X².
   (Dwork–Talwar–Thakurta–Zhang 2014, "Analyze Gauss", Algorithm 1, releases AᵀA plus symmetric Gaussian
   noise with i.i.d. upper-triangle entries; the √2-weighted off-diagonal coordinates halve the
   off-diagonal noise variance at the same Δ: the plain upper triangle has Σ_{j≤l} D_jl² =
   (‖D‖_F² + Σ_j D_jj²)/2 ≤ ‖D‖_F², with the same worst case, attained by axis-aligned records.)
   One release of the joint matrix is cheaper than separate XᵀX and Xᵀy releases: their worst cases (x ⟂ x′ for XᵀX, x′ = −x for Xᵀy) cannot co-occur, and 2B⁴ =
   8X⁴ is less than the 2X⁴ + 2·(2XY·k)² = 10X⁴ that separate releases at the same noise would need.
2. M̂ = Ĝ[:d, :d] projected on the PSD cone (eigenvalues clipped at 0) plus n·alpha·I, b̂ = Ĝ[:d, d]/k;
3. θ̂ = τ²M̂(τ²M̂² + s²M̂ + σ_b²I)⁻¹b̂ — the posterior mean of θ under the prior θ ~ N(0, τ²I) for the
   model b̂ = M̂θ + (data noise, covariance s²M̂) + (privacy noise, σ_b²I, σ_b = σ/(√2·k)): the Bayesian
   view of noisy sufficient statistics of Bernstein & Sheldon 2019 ("Differentially private Bayesian
   linear regression", NeurIPS), with its release noise in the likelihood. τ² = Y²/(d·X²) (a
   target of size Y spread over d coordinates of rows of norm X) and s² = Y²/4 are public rules
   (``JOINT_PRIOR_VARIANCE_SHARE``, ``JOINT_NOISE_VARIANCE_SHARE``); all of step 2–3 is post-processing.
   With ε = ∞ (σ = 0) it is ridge regression with λ = s²/τ² (the prior stays).

Why: at n = 309 (diabetes, ε = 1; intercept column c = R/2; 10 splits × 20 seeds) Alg. 2 is limited by
the Xᵀy noise, not by its ridge rule: with the *exact* XᵀX and the whole budget on Xᵀy, the best fixed
ridge (tuned on the data) reaches R² 0.32 in the mean and 0.26 on the worst seed; Alg. 2 reaches 0.23,
the joint release with the posterior mean 0.31 / 0.25 with nothing exact (benchmarks/RESULTS.md,
"Diabetes").

These are the sensitivities of the exact statistics. As for the clipped-gradient sums of the
iterative solvers, the float64 rounding of the n-term sums (at most γₙ·n·X², resp. γₙ·n·X·Y, per
entry; Higham 2002 §3.1, γₙ ≈ nu, u = 2⁻⁵³; about 1e-7 of the sensitivity at n = 3·10⁴) and the
backward error of the symmetric eigensolver behind λ_min (about d·u·‖XᵀX‖₂ ≤ d·u·n·X², of the same
order) are not charged to Δ: charging them would make the noise scale depend on n, which is
private under add_remove.
"""

from __future__ import annotations

import math
import time
from typing import Optional, Sequence

import numpy as np

from dpcore._validation import check_choice, check_delta, check_nonnegative, check_open_unit, check_positive, check_relation
from dpcore.events import ComposedEvent, GaussianEvent
from mechanisms.base import least_noise_scale

from ._data import admitted_norm_bound, prepare_data
from ._solver_common import as_generator, calibrated_privacy
from .losses import get_loss
from .result import SolverResult

__all__ = ["adassp", "adassp_sensitivities", "joint_sensitivity", "DEFAULT_BUDGET_SPLIT",
           "DEFAULT_FAILURE_PROBABILITY", "VARIANTS", "JOINT_PRIOR_VARIANCE_SHARE", "JOINT_NOISE_VARIANCE_SHARE"]

#: Shares (λ_min, XᵀX, Xᵀy) of the Gaussian budget 1/z². λ_min is only used through the ridge λ, which at
#: small n is set by the noise of XᵀX anyway: 5 % suffices (diabetes R² 0.19 vs 0.16 with the paper's equal
#: thirds at ε = 1, 0.43 vs 0.42 at ε = 10; RESULTS.md "Diabetes").
DEFAULT_BUDGET_SPLIT = (0.05, 0.475, 0.475)
#: ρ of Algorithm 2 (the paper's experiments use 0.05).
DEFAULT_FAILURE_PROBABILITY = 0.05
_U64 = 2.0 ** -53
#: "alg2": Wang 2018 Algorithm 2 as printed (three releases, adaptive ridge); "joint": one release of [X, k·y]ᵀ[X, k·y]
#: and the Gaussian-prior posterior mean (module docstring).
VARIANTS = ("alg2", "joint")
#: variant="joint": prior variance τ² = JOINT_PRIOR_VARIANCE_SHARE·Y²/(d·X²) and data-noise variance
#: s² = JOINT_NOISE_VARIANCE_SHARE·Y². Diabetes at ε = 1 (c = R/2, 20 seeds): τ² 0.07 / 0.08 / 0.1 / 0.12 (the rule
#: gives 0.073 for d = 11, X² = 1.25) → R² 0.317 / 0.318 / 0.319 / 0.317; s² 0.1 vs 0.3 equal (RESULTS.md "Diabetes").
JOINT_PRIOR_VARIANCE_SHARE = 1.0
JOINT_NOISE_VARIANCE_SHARE = 0.25


def adassp_sensitivities(norm_bound: float, target_bound: float, relation: str) -> tuple:
    """ℓ2 sensitivities (Δ_λmin, Δ_XᵀX, Δ_Xᵀy) for rows ‖x‖₂ ≤ ``norm_bound`` and |y| ≤ ``target_bound``
    under ``relation`` (module docstring), each rounded up."""
    X2 = norm_bound * norm_bound
    XY = norm_bound * target_bound
    if check_relation("relation", relation) == "replace_one":
        values = (X2, math.sqrt(2.0) * X2, 2.0 * XY)
    else:
        values = (X2, X2, XY)
    return tuple(math.nextafter(math.nextafter(v, math.inf), math.inf) for v in values)


def joint_sensitivity(bound: float, relation: str) -> float:
    """ℓ2 sensitivity of v(ZᵀZ) (the Frobenius-isometric upper triangle, module docstring) for rows
    ‖zᵢ‖₂ ≤ ``bound``: √2·bound² under replace_one, bound² under add_remove, rounded up."""
    b2 = bound * bound
    value = math.sqrt(2.0) * b2 if check_relation("relation", relation) == "replace_one" else b2
    return math.nextafter(math.nextafter(value, math.inf), math.inf)


def _check_split(budget_split: Sequence[float]) -> tuple:
    try:
        w = tuple(float(v) for v in budget_split)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"budget_split must be three positive shares summing to 1; got {budget_split!r}") from exc
    if len(w) != 3 or not all(math.isfinite(v) and v > 0 for v in w) or abs(sum(w) - 1.0) > 1e-9:
        raise ValueError(f"budget_split must be three positive shares summing to 1; got {budget_split!r}")
    return w


def adassp(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "squared",
    epsilon: Optional[float],
    delta: float = 1e-5,
    alpha: float = 0.0,
    data_norm_bound: float,
    target_bound: Optional[float] = None,
    relation: str = "replace_one",
    variant: str = "alg2",
    budget_split: Optional[Sequence[float]] = None,
    failure_probability: Optional[float] = None,
    accountant: str = "auto",
    noise_multiplier: Optional[float] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Private least squares by AdaSSP (Wang 2018, Algorithm 2); module docstring for the mechanism.

    Parameters
    ----------
    X : array, shape (n, d)
        Features (finite; an intercept is a constant column appended by the caller).
    y : array, shape (n,)
        Real targets, |yᵢ| ≤ ``target_bound``.
    loss : {"squared"}
        Only the squared loss has these sufficient statistics.
    epsilon : float or None
        Target ε in (0, ∞] (nats); ``inf`` releases the statistics without noise (λ = 0: the exact
        ridge/OLS solution). None when ``noise_multiplier`` is given.
    delta : float
        δ in (0, 1).
    alpha : float
        Extra public ridge ≥ 0 (objective units): θ̂ minimises (1/2n)‖Xθ − y‖² + (alpha/2)‖θ‖² on the
        noisy statistics, i.e. nα is added to AdaSSP's λ. Needs n public: ``alpha > 0`` is refused
        with ``relation="add_remove"``.
    data_norm_bound : float
        Public X with ‖xᵢ‖₂ ≤ X (rows are checked; feature units).
    target_bound : float
        Public Y with |yᵢ| ≤ Y (target units; checked, ``ValueError`` naming it when violated).
    relation : {"replace_one", "add_remove"}
        Neighbouring relation of the guarantee (sensitivities in the module docstring).
    variant : {"alg2", "joint"}
        ``"alg2"`` (default): Algorithm 2 as printed — λ̃_min, XᵀX̂, Xᵀŷ and the adaptive ridge.
        ``"joint"``: one Gaussian release of [X, k·y]ᵀ[X, k·y] and the Gaussian-prior posterior mean
        (module docstring; the default of ``DPLinearRegression(solver="adassp")``: diabetes R² at ε = 1
        0.23 → 0.30 (10 seeds: 0.31), at ε = 10 0.44 → 0.45).
    budget_split : three floats, optional
        ``"alg2"`` only: shares (w₁, w₂, w₃) > 0, Σ = 1, of the Gaussian budget for λ_min, XᵀX and Xᵀy;
        default ``DEFAULT_BUDGET_SPLIT`` = (0.05, 0.475, 0.475) (the paper: equal thirds).
    failure_probability : float, optional
        ``"alg2"`` only: ρ in (0, 1) of the ridge rule (accuracy only); default 0.05.
    accountant : str
        dpcore accountant for calibration and reporting (``"auto"``: the composed Gaussians are
        accounted exactly as one Gaussian mechanism, Balle–Wang 2018).
    noise_multiplier : float, optional
        Use this common z (σᵢ = z/√wᵢ·Δᵢ) instead of calibrating (then ``epsilon`` must be None; the ε
        spent is reported). The audit (:mod:`audits.solver_targets`) calibrates once and reuses z.
    rng : None, int or numpy.random.Generator
        Source of the noise.
    trace : bool
        Opt-in, NOT private: ``objective_trace`` holds (1/2n)‖Xθ̂ − y‖² + (alpha/2)‖θ̂‖² on the raw data.
    loss_params : dict, optional
        Must be empty or None (the squared loss has no parameters).

    Returns
    -------
    SolverResult
        ``weights`` = θ̂ (only they are private); ``event`` the composed Gaussian event;
        ``details`` (``"alg2"``): ``ridge`` (λ + nα, a function of the private releases), ``sigmas``
        (σ₁, σ₂, σ₃), ``sensitivities``, ``budget_split``; (``"joint"``): ``sigma`` (σ of v(Ĝ)),
        ``sensitivity``, ``target_weight`` (k), ``prior_variance`` (τ²), ``noise_variance`` (s²).
        ``details["released"]`` holds the Gaussian releases themselves — ``"alg2"``: ``lambda_min``
        (λ_min(XᵀX) + σ₁Z, before the shift and the clamp at 0), ``XtX`` (XᵀX̂, whose upper triangle is
        the release) and ``Xty``; ``"joint"``: ``gram`` (Ĝ). They are covered by ``event`` like θ̂ (θ̂ is
        their post-processing); the sensitivity-conformance replay (:mod:`audits.conformance`) compares
        them on neighbouring datasets.
    """
    start = time.perf_counter()
    if loss != "squared" or loss_params:
        raise ValueError(f"solver 'adassp' fits the squared loss without loss_params; got loss={loss!r}, "
                         f"loss_params={loss_params!r}")
    if noise_multiplier is None:
        check_positive("epsilon", epsilon, allow_inf=True)
    elif epsilon is not None:
        raise ValueError("give either epsilon (calibrated noise) or noise_multiplier (reported ε), not both")
    else:
        check_positive("noise_multiplier", noise_multiplier)
    delta = check_delta("delta", delta)
    alpha = check_nonnegative("alpha", alpha)
    relation = check_relation("relation", relation)
    if alpha > 0 and relation == "add_remove":
        raise ValueError("alpha must be 0 with relation='add_remove' (the ridge n·alpha would reveal n)")
    if target_bound is None:
        raise ValueError("target_bound is required for solver 'adassp' (a public bound on |y|; the estimators pass "
                         "it from target_bound= or target_range=)")
    Y = check_positive("target_bound", target_bound)
    R = check_positive("data_norm_bound", data_norm_bound)
    variant = check_choice("variant", variant, VARIANTS)
    if variant == "joint":
        if budget_split is not None or failure_probability is not None:
            raise ValueError(f"budget_split and failure_probability apply to variant='alg2' only; got "
                             f"budget_split={budget_split!r}, failure_probability={failure_probability!r}")
    else:
        w = _check_split(DEFAULT_BUDGET_SPLIT if budget_split is None else budget_split)
        rho = DEFAULT_FAILURE_PROBABILITY if failure_probability is None else failure_probability
        rho = check_open_unit("failure_probability", rho)
    data = prepare_data(X, y, "regression", R)
    get_loss("squared", target_bound=Y).check_targets(data.y)
    n, d = data.n, data.d
    if variant == "joint":
        return _joint(data, Y, admitted_norm_bound(R, d), epsilon=epsilon, delta=delta, alpha=alpha, relation=relation,
                      accountant=accountant, noise_multiplier=noise_multiplier, rng=rng, trace=trace, start=start)
    sens = adassp_sensitivities(admitted_norm_bound(R, d), Y, relation)

    def event_fn(z: float):
        return ComposedEvent([GaussianEvent(z / math.sqrt(wi), relation) for wi in w])

    z, event, privacy, calibration = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                        noise_multiplier=noise_multiplier, relation=relation,
                                                        accountant=accountant)
    s1, s2, s3 = (least_noise_scale(z / math.sqrt(wi), si) for wi, si in zip(w, sens))  # the events' multipliers
    gen = as_generator(rng)
    XX = data.X.T @ data.X
    Xy = data.X.T @ data.y
    lam_min = float(np.linalg.eigvalsh(XX)[0])
    lam_min_release = lam_min + s1 * gen.standard_normal()  # the Gaussian release; the rest is post-processing
    lam_min_noisy = max(lam_min_release - s1 * math.sqrt(math.log(6.0 / delta)), 0.0)
    ridge = max(0.0, s2 * math.sqrt(d * math.log(2.0 * d * d / rho)) - lam_min_noisy) + n * alpha
    E = np.triu(gen.standard_normal((d, d)))
    XX_noisy = XX + s2 * (E + np.triu(E, 1).T)
    Xy_noisy = Xy + s3 * gen.standard_normal(d)
    theta = np.linalg.lstsq(XX_noisy + ridge * np.eye(d), Xy_noisy, rcond=None)[0]
    return _result(data, theta, alpha, trace, start, privacy, event, z, s2,
                   {"ridge": ridge, "sigmas": (s1, s2, s3), "sensitivities": sens, "budget_split": w,
                    "failure_probability": rho, "calibration": calibration, "variant": "alg2",
                    "released": {"lambda_min": lam_min_release, "XtX": XX_noisy, "Xty": Xy_noisy}})


def _result(data, theta, alpha, trace, start, privacy, event, z, sigma, details) -> SolverResult:
    """The SolverResult of either variant (``trace``: the non-private objective on the raw data)."""
    wall = time.perf_counter() - start
    objective = np.empty(0)
    if trace:
        r = data.X @ theta - data.y
        objective = np.array([0.5 * float(r @ r) / data.n + 0.5 * alpha * float(theta @ theta)])
    return SolverResult(
        weights=theta, privacy=privacy, event=event, objective_trace=objective, grad_norm_trace=np.empty(0),
        n_gradient_evaluations=0, wall_time=wall, noise_multiplier=z, sigma=sigma, solver="adassp",
        details={**details, "loss": "squared"},
    )


def noisy_gram(Z: np.ndarray, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """ZᵀZ + σE with E symmetric, diagonal N(0, 1) and off-diagonal N(0, 1/2) entries: the Gaussian
    mechanism of noise std ``sigma`` on v(ZᵀZ), where v stacks the diagonal and √2 × the upper triangle
    (the isometry under which :func:`joint_sensitivity` is an ℓ2 sensitivity), since v(E) then has
    i.i.d. N(0, 1) entries.

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Rows [x, k·y] (unitless once scaled).
    sigma : float
        Noise standard deviation on v(ZᵀZ), same units as ZᵀZ's entries.
    gen : numpy.random.Generator
    """
    m = Z.shape[1]
    E = np.triu(gen.standard_normal((m, m)))
    E = E + np.triu(E, 1).T
    E[~np.eye(m, dtype=bool)] *= math.sqrt(0.5)
    return Z.T @ Z + sigma * E


def _joint(data, Y: float, X: float, *, epsilon, delta, alpha, relation, accountant, noise_multiplier, rng, trace,
           start) -> SolverResult:
    """variant="joint" (module docstring): one Gaussian release of v([X, k·y]ᵀ[X, k·y]), k = X/Y, and the
    Gaussian-prior posterior mean. ``X`` is the admitted row bound, ``Y`` the target bound."""
    n, d = data.n, data.d
    k = X / Y
    # rows of Z = [x, k·y]: ‖z‖² ≤ X² + (k·Y)² = 2X²; the factor covers the rounding of k and of k·yᵢ
    bound = math.sqrt((X * X + (k * Y) ** 2) * (1.0 + 8.0 * _U64))
    sens = joint_sensitivity(bound, relation)
    z, event, privacy, calibration = calibrated_privacy(lambda m: GaussianEvent(m, relation), epsilon=epsilon,
                                                        delta=delta, noise_multiplier=noise_multiplier,
                                                        relation=relation, accountant=accountant)
    sigma = least_noise_scale(z, sens)
    gen = as_generator(rng)
    G = noisy_gram(np.hstack([data.X, k * data.y[:, None]]), sigma, gen)
    lam, V = np.linalg.eigh(G[:d, :d])
    M = (V * np.maximum(lam, 0.0)) @ V.T + n * alpha * np.eye(d)  # PSD projection plus the public ridge
    b = G[:d, d] / k
    tau2 = JOINT_PRIOR_VARIANCE_SHARE * Y * Y / (d * X * X)
    s2 = JOINT_NOISE_VARIANCE_SHARE * Y * Y
    sigma_b2 = 0.5 * (sigma / k) ** 2
    theta = tau2 * M @ np.linalg.lstsq(tau2 * M @ M + s2 * M + sigma_b2 * np.eye(d), b, rcond=None)[0]
    return _result(data, theta, alpha, trace, start, privacy, event, z, sigma,
                   {"sigma": sigma, "sensitivity": sens, "target_weight": k, "prior_variance": tau2,
                    "noise_variance": s2, "calibration": calibration, "variant": "joint", "released": {"gram": G}})
