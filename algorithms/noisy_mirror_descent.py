"""Noisy regularized mirror descent for ℓp, 1 < p < 2 — Su, Zhao, Wang, Algorithm 3 (Theorems 6, 7).

Step t (w₁ = argmin_C Φ, which is 0 for the balls):

    w_{t+1} = argmin_{w∈C} ⟨∇L̂(w_t) + g_t, w − w_t⟩ + (β/c)·D_Φ(w, w_t) + α·Φ(w),

solved exactly: the minimiser is ``argmin_C (β/c + α)Φ(w) − ⟨(β/c)∇Φ(w_t) − ∇L̂(w_t) − g_t, w⟩``, a
closed form for C = ℝᵈ and the ‖·‖_s ball and a certified 1-D root for the ℓ1 ball, the box and the
simplex (:mod:`algorithms.mirror_maps`). Output: the weighted average
ŵ = Σ_t ρᵗ w_{t+1} / Σ_t ρᵗ with ρ = (2β/c + α)/(2β/c) (the uniform average when α = 0).
c = ``step_scale`` is 1 in the paper.

Noise (``noise=``). Per-example gradients are clipped to C (``clip_norm``) in the norm the noise is
calibrated for, so the mean gradient has sensitivity 2C/n under ``replace_one`` on any data:

* ``"gaussian"`` (default): g_t ~ N(0, σ²I) — the generalized Gaussian 𝒢𝒢_{ℓ2} (Definition 4 with
  the noise norm ℓ2), clip in ‖·‖₂. The T releases are ``SelfComposedEvent(GaussianEvent(z), T)``,
  z = σ/(2C/n) the least multiplier dpcore certifies (``"auto"``: the exact analytic Gaussian of the
  composition). **Departure**: the paper's noise norm is the dual's smooth norm ℓr, r = 1 + κ.
* ``"generalized_gaussian"`` (the paper): g_t ~ 𝒢𝒢_{ℓr}(0, σ²), clip in the dual norm ‖·‖_q;
  Lemma 3 (ε_step ≤ 1) per step, the T releases composed by dpcore's ``"composition"`` accountant
  (Kairouz–Oh–Viswanath) from ``SelfComposedEvent(ApproxDpEvent(ε_step, δ/(2T)), T)``;
  ``calibration="accountant"`` takes the largest ε_step ≤ 1 meeting ε, ``calibration="paper"`` the
  printed σ² = 64 L² κ T log(1/δ)/(n² ε²) (L = C; the reported ε is dpcore's for it, with a warning
  if it exceeds the target).

Why Gaussian by default (``benchmarks/bench_mirror_descent.py``, RESULTS.md "ℓp solvers"). The
step's error depends on the noise through ‖g_t‖_r, r = 1 + κ. For a per-example sensitivity C_q in
ℓq the 𝒢𝒢_{ℓr} noise has ‖g‖_r ≈ σ√d with σ ∝ √κ·d^{1/r−1/q}C_q (Lemma 3), while N(0, σ₂²I) with
σ₂ ∝ C₂ ≤ d^{1/2−1/q}C_q has ‖g‖_r ≈ σ₂ d^{1/r}√r: the same order (√κ ≈ √r) — and the Gaussian's
privacy is accounted exactly (analytic Gaussian composition) where Lemma 3 plus KOV composition
loses constants. Measured: 2–6× lower excess risk at equal ε (d = 100, 1000, a9a).

Schedule (``schedule=``). ``"tuned"`` (default; public constants chosen on the benchmark):
T = min(1000, max(100, ⌈1.5·10¹⁰/(n·d)⌉)) (:func:`tuned_steps`; ⌈√n⌉ when ε = inf): T is
privacy-neutral for the Gaussian steps and only lowers the optimisation floor, so it takes what a
fixed work budget allows (≈ 30 s single-core here; n = 50 000: T = 1000 at d = 100, 300 at d = 1000,
100 from d = 3000; measured in RESULTS.md). With ``noise="generalized_gaussian"`` T stays at 100:
its releases compose as (ε₀, δ/(2T))-DP steps (Lemma 3, KOV), which is not privacy-neutral in T, and more
steps measured worse (d = 100, n = 50 000, excess empirical risk, 3 seeds: T = 1000 0.235 / 0.189 / 0.062
against T = 100 0.130 / 0.036 / 0.013 at ε = 0.5 / 1 / 2; d = 1000, one seed: T = 300 0.27 / 0.27 / 0.26
against T = 100 0.29 / 0.27 / 0.13; T = 30 is better at ε = 0.5 on both, which a fixed T does not
capture). α = 0, c = κ — the step of the unscaled mirror map
½‖w‖_s², which is (1/κ)-strongly convex: Φ's normalisation to modulus 1 (worst case over directions) makes the
theorem's step 1/β about κ times too short along the sparse directions an ℓ1-ball solution
lives on. c = κ is not covered by Theorem 7's descent argument (it needs c = 1); it was stable on
every benchmark problem and 2κ was not (a9a). ``"theorem"``: Theorem 7's
T = ⌈(nεκ/√(d log(1/δ)))^{2/5}⌉, α = (4β/T) log₂(n/T), c = 1 (O-constants 1) — the 4β/T·log₂(n/T)
regulariser pulls the iterates to 0 (measured: ≤ 6 % of the gap to w = 0 recovered). Each of
``steps``, ``phi_weight``, ``step_scale`` overrides its schedule value.

Departures: (1) the constraint set C is an extension (the paper is unconstrained); (2) the mirror-map
exponent (see :mod:`algorithms.mirror_maps`); (3) per-example clipping makes the stated
sensitivity hold on any data (the paper assumes L-Lipschitz losses); (4) ``alpha`` is the library's
L2 term (alpha/2)‖w‖² of the objective, whose gradient is added after the noise (data-independent);
the paper's α is ``phi_weight``; (5) the Gaussian noise and the tuned schedule above.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional, Tuple

import numpy as np

import dpcore
from dpcore._jit import jit
from dpcore._validation import check_choice, check_positive
from dpcore.events import ApproxDpEvent, GaussianEvent, NonPrivateEvent, SelfComposedEvent
from mechanisms.base import greatest_noise_multiplier, least_noise_scale
from mechanisms.kernels import generalized_gaussian_noise_kernel

from ._mirror_common import (
    calibrated_gg, check_mirror_calibration, check_releases, check_steps, default_steps_nonprivate, gg_mechanism,
    event_epsilon, mirror_setup, warn_paper_over_target,
)
from ._solver_common import as_generator, calibrated_privacy, finish
from .clipping import clipped_gradient_sum_kernel
from .mirror_maps import bregman_step_kernel, mirror_grad_kernel
from .result import SolverResult

__all__ = ["noisy_mirror_descent", "noisy_mirror_descent_kernel", "paper_sigma", "step_epsilon", "tuned_steps",
           "TUNED_MIN_STEPS", "TUNED_MAX_STEPS", "TUNED_WORK"]

_ACCOUNTANT = "composition"  # generalized Gaussian: Lemma 3 releases, optimal composition of (ε, δ)-DP
_GAUSSIAN_ACCOUNTANT = "auto"  # Gaussian: the exact analytic Gaussian of the composition
#: ``schedule="tuned"``: T = min(TUNED_MAX_STEPS, max(TUNED_MIN_STEPS, ⌈TUNED_WORK/(n·d)⌉)) full-batch steps
#: (:func:`tuned_steps`; benchmarks/bench_mirror_descent.py, RESULTS.md "ℓp solvers").
TUNED_MIN_STEPS = 100
TUNED_MAX_STEPS = 1000
#: Work budget in row-coordinate products (n·d per step; ≈ 2 ns each here: ~30 s single-core per fit).
TUNED_WORK = 1.5e10


def tuned_steps(n: int, d: int) -> int:
    """T of ``schedule="tuned"`` with Gaussian noise for n records of dimension d (public): as many full-batch steps as
    the work budget ``TUNED_WORK`` allows, between 100 and 1000. T does not change the privacy cost
    of the Gaussian steps (the composed multiplier grows as √T, the accumulated signal as T), only
    the optimisation floor, which falls with T (module docstring)."""
    return int(min(TUNED_MAX_STEPS, max(TUNED_MIN_STEPS, math.ceil(TUNED_WORK / (n * d)))))



@jit
def noisy_mirror_descent_kernel(kind, param, X, y, clip_norms, clip, l2, ckind, cradius, r, s, kappa, w0, steps,
                                beta, phi_weight, sigma, noise_norm, snap_every, rng):
    """Run Algorithm 3 with Bregman weight ``beta`` (β/c) and noise 𝒢𝒢_{ℓ noise_norm}(0, sigma²) on the
    mean of the gradients clipped at ``clip`` in the norm ``clip_norms[i]`` (= ‖xᵢ‖ in the noise's
    sensitivity norm) measures. Returns (ŵ, snapshots of w_t every ``snap_every`` steps, releases,
    gradient evaluations, clipped count, 1-D root iterations). ``rng``: the caller's Generator."""
    n, d = X.shape
    w = w0.copy()
    g = np.empty(d)
    gphi = np.empty(d)
    theta = np.empty(d)
    avg = np.zeros(d)
    snaps = np.empty((steps // snap_every + 1, d))
    snaps[0] = w
    log_rho = math.log((2.0 * beta + phi_weight) / (2.0 * beta))
    wsum = 0.0
    releases = 0
    clipped = 0
    root_its = 0
    mu = beta + phi_weight
    for t in range(1, steps + 1):
        clipped += clipped_gradient_sum_kernel(kind, param, X, y, clip_norms, w, clip, g)
        for j in range(d):
            g[j] = g[j] / n
        if sigma > 0.0:
            g += generalized_gaussian_noise_kernel(rng, d, noise_norm, sigma)
        releases += 1
        for j in range(d):
            g[j] += l2 * w[j]
        mirror_grad_kernel(w, s, kappa, gphi)
        for j in range(d):
            theta[j] = (beta * gphi[j] - g[j]) / mu
        root_its += bregman_step_kernel(ckind, cradius, r, s, kappa, theta, w)
        weight = math.exp((t - steps) * log_rho)  # ρᵗ / ρᵀ
        wsum += weight
        for j in range(d):
            avg[j] += weight * w[j]
        if t % snap_every == 0:
            snaps[t // snap_every] = w
    for j in range(d):
        avg[j] /= wsum
    return avg, snaps, releases, steps * n, clipped, root_its


@lru_cache(maxsize=256)
def step_epsilon(steps: int, epsilon: float, delta: float) -> Tuple[float, Optional[dict]]:
    """The largest ε_step ≤ 1 such that T (ε_step, δ/(2T))-DP releases compose (dpcore, optimal
    composition) to ≤ ε at δ; memoised (data-independent). Returns (ε_step, calibration record)."""
    delta_step = delta / (2.0 * steps)

    def event_fn(e: float):
        return SelfComposedEvent(ApproxDpEvent(e, delta_step, "replace_one"), steps)

    if dpcore.get_epsilon(event_fn(1.0), delta, accountant=_ACCOUNTANT).epsilon <= epsilon:
        return 1.0, None
    res = dpcore.calibrate(event_fn, "epsilon_step", epsilon, delta, lower=min(0.5, epsilon / steps), upper=1.0,
                           increasing=True, bounds=(1e-12, 1.0), accountant=_ACCOUNTANT)
    return float(res.value), res.to_dict()


def paper_sigma(lipschitz: float, kappa: float, steps: int, n: int, epsilon: float, delta: float) -> float:
    """σ of Algorithm 3 as printed: σ² = 64 L² κ T log(1/δ)/(n² ε²)."""
    return math.sqrt(64.0 * lipschitz**2 * kappa * steps * math.log(1.0 / delta) / (n**2 * epsilon**2))


def noisy_mirror_descent(
    X: np.ndarray,
    y: np.ndarray,
    *,
    p: float,
    loss: str = "logistic",
    epsilon: float,
    delta: float = 1e-5,
    alpha: float = 0.0,
    steps: Optional[int] = None,
    phi_weight: Optional[float] = None,
    step_scale: Optional[float] = None,
    smoothness: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    relation: str = "replace_one",
    noise: str = "gaussian",
    schedule: str = "tuned",
    calibration: str = "accountant",
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Noisy regularized mirror descent in ℓp, 1 < p < 2 (Su, Zhao, Wang, Algorithm 3; Theorems 6–7).

    Parameters
    ----------
    X, y : array_like
        Data (n × d, d ≥ 2) and labels.
    p : float
        Primal norm order, in (1, 2). For 2 ≤ p ≤ ∞ use :func:`algorithms.phased_dp_sgd` (Theorem 8).
    loss : str
        A loss of :mod:`algorithms.losses`.
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` switches the noise off.
    delta : float
        Target δ in (0, 1) (the generalized Gaussian uses Lemma 3 with δ/(2T) per step).
    alpha : float
        L2 strength of the objective, (alpha/2)‖w‖² (not the paper's α).
    steps : int, optional
        T (full-batch steps); default from ``schedule``.
    phi_weight : float, optional
        The paper's α ≥ 0 (weight of αΦ(w)); default from ``schedule`` (0, or (4β/T) log₂(n/T),
        which needs n > T).
    step_scale : float, optional
        c > 0: the Bregman term is (β/c)·D_Φ (step c/β); default from ``schedule`` (κ, or 1).
    smoothness : float, optional
        β w.r.t. ‖·‖_p; default the loss's ℓ2 constant for ``data_norm_bound`` (an upper bound).
    clip_norm : float, optional
        Per-example bound C on ‖∇ℓ‖ in the noise's sensitivity norm (ℓ2 for ``"gaussian"``, the dual
        ℓq for ``"generalized_gaussian"``: the paper's L); default the loss's Lipschitz constant for
        ``data_norm_bound`` (then a no-op on valid rows, since ‖x‖_q ≤ ‖x‖₂).
    data_norm_bound : float, optional
        Public bound R ≥ ‖xᵢ‖₂ (rows are checked).
    constraint, radius :
        ``"none"`` (the paper), ``"l1"``, ``"linf"``, ``"simplex"`` or ``"lp"`` (‖w‖_s ≤ radius).
    relation : {"replace_one"}
        The analysis divides by the public n.
    noise : {"gaussian", "generalized_gaussian"}
        Noise norm ℓ2 (exact dpcore accounting) or the paper's ℓr (module docstring).
    schedule : {"tuned", "theorem"}
        Defaults of T, α, c (module docstring).
    calibration : {"accountant", "paper"}
        σ from dpcore, or (``noise="generalized_gaussian"`` only) the printed σ.
    rng : None, int or numpy.random.Generator
    trace : bool
        Objective / gradient-mapping traces (diagnostics on the raw data, not private).
    loss_params : dict, optional

    Returns
    -------
    SolverResult
        ``event`` is the composition of the T noisy releases; ``privacy`` dpcore's ε for it
        (``"auto"`` for Gaussian noise, ``"composition"`` for the generalized Gaussian); ``sigma``
        the noise σ on the mean gradient.
    """
    cal = check_mirror_calibration(calibration)
    noise = check_choice("noise", noise, ("gaussian", "generalized_gaussian"))
    schedule = check_choice("schedule", schedule, ("tuned", "theorem"))
    if cal == "paper" and noise != "generalized_gaussian":
        raise ValueError("calibration='paper' is the printed sigma of the generalized Gaussian: pass "
                         "noise='generalized_gaussian'")
    m = mirror_setup(X, y, p=p, loss=loss, alpha=alpha, constraint=constraint, radius=radius,
                     clip_norm=clip_norm, data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta,
                     relation=relation, smoothness=smoothness, loss_params=loss_params,
                     where="noisy_mirror_descent (Algorithm 3)")
    s, geo = m.base, m.geo
    n, d = s.data.n, s.data.d
    private = not math.isinf(epsilon)
    if not private:
        default_T = default_steps_nonprivate(n)
    elif schedule == "tuned":
        default_T = tuned_steps(n, d) if noise == "gaussian" else TUNED_MIN_STEPS
    else:
        default_T = (n * epsilon * geo.kappa / math.sqrt(d * math.log(1.0 / delta))) ** 0.4
    T = check_steps(steps, default_T, None)
    c = (geo.kappa if schedule == "tuned" else 1.0) if step_scale is None else check_positive("step_scale", step_scale)
    beta = m.smoothness
    if phi_weight is not None:
        phi = float(phi_weight)
        if not (phi >= 0.0 and math.isfinite(phi)):
            raise ValueError(f"phi_weight must be in [0, inf); got {phi_weight!r}")
    elif schedule == "tuned":
        phi = 0.0
    else:
        if n <= T:
            raise ValueError(f"the default phi_weight (4*beta/T)*log2(n/T) needs n > T; got n={n}, T={T}")
        phi = 4.0 * beta / T * math.log2(n / T)
    sens = 2.0 * s.clip / n  # sensitivity of the clipped mean gradient (ℓ2 or ℓq), replace-one
    delta_step = None
    calibration_record = None
    if noise == "gaussian":
        clip_norms, noise_norm, accountant = s.data.row_norms, 2.0, _GAUSSIAN_ACCOUNTANT

        def event_fn(z: float):
            return SelfComposedEvent(GaussianEvent(z, "replace_one"), T)

        z, event, privacy, calibration_record = calibrated_privacy(
            event_fn, epsilon=epsilon, delta=delta, noise_multiplier=None, relation="replace_one",
            accountant=accountant)
        sigma = least_noise_scale(z, sens)
    else:
        clip_norms, noise_norm, accountant = m.dual_norms, geo.r, _ACCOUNTANT
        delta_step = delta / (2.0 * T)
        if not private:
            sigma, event = 0.0, NonPrivateEvent("replace_one")
        else:
            if cal == "paper":
                mech = gg_mechanism(geo, paper_sigma(s.clip, geo.kappa, T, n, epsilon, delta), sens)
            else:
                eps_step, calibration_record = step_epsilon(T, epsilon, delta)
                mech = calibrated_gg(geo, eps_step, delta_step, sens)
            sigma = mech.sigma
            event = SelfComposedEvent(mech.privacy_event("replace_one", delta=delta_step), T)
        privacy = event_epsilon(event, delta, accountant)
        if private and cal == "paper":
            warn_paper_over_target(privacy, epsilon, "noisy_mirror_descent")
    gen = as_generator(rng)
    snap_every = max(1, T // 20)
    w, snaps, releases, evals, clipped, root_its = noisy_mirror_descent_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, clip_norms, s.clip, s.reg.alpha, m.constraint.kind,
        m.constraint.radius, geo.r, geo.s, geo.kappa, m.w0, T, beta / c, phi, sigma, noise_norm, snap_every, gen)
    if private:
        check_releases(releases, event.count)
    return finish("noisy_mirror_descent", s, w, snaps, step=c / (beta + c * phi), event=event, privacy=privacy,
                  z=greatest_noise_multiplier(sigma, sens), sensitivity=sens, grad_evals=evals, trace=trace,
                  details={"releases": releases, "clipped": clipped, "steps": T, "p": geo.p, "q": geo.q,
                           "kappa": geo.kappa, "noise": noise, "noise_norm": noise_norm, "mirror_exponent": geo.s,
                           "smoothness": beta, "step_scale": c, "phi_weight": phi, "schedule": schedule,
                           "delta_step": delta_step, "accountant": accountant, "root_iterations": root_its,
                           "calibration": cal, "calibration_result": calibration_record,
                           "mirror_constraint": m.constraint.name}, sigma=sigma)
