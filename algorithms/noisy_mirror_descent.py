"""Noisy regularized mirror descent for ℓp, 1 < p < 2 — Su, Zhao, Wang, Algorithm 3 (Theorems 6, 7).

Step t (w₁ = argmin_C Φ, which is 0 for the balls):

    w_{t+1} = argmin_{w∈C} ⟨∇L̂(w_t) + g_t, w − w_t⟩ + β·D_Φ(w, w_t) + α·Φ(w),   g_t ~ 𝒢𝒢_{ℓr}(0, σ²),

solved exactly: the minimiser is ``argmin_C (β + α)Φ(w) − ⟨β∇Φ(w_t) − ∇L̂(w_t) − g_t, w⟩``, a closed
form for C = ℝᵈ and the ‖·‖_s ball and a certified 1-D root for the ℓ1 ball, the box and the simplex
(:mod:`algorithms.mirror_maps`). Output: the weighted average
ŵ = Σ_t ρᵗ w_{t+1} / Σ_t ρᵗ with ρ = (2β + α)/(2β).

Privacy (Theorem 6). Per-example gradients are clipped in the dual norm ‖·‖_q to C (a no-op when
C ≥ the loss's Lipschitz constant, the default from ``data_norm_bound``), so the mean gradient has
ℓq sensitivity 2C/n under ``replace_one``; the noise is generalized Gaussian in the dual's smooth
norm ℓr (Lemma 3, ε_step ≤ 1). The T releases are composed by dpcore's ``"composition"`` accountant
(optimal composition, Kairouz–Oh–Viswanath) from
``SelfComposedEvent(ApproxDpEvent(ε_step, δ/(2T), "replace_one"), T)``:

* ``calibration="accountant"`` (default): the largest ε_step ≤ 1 whose composition meets ε (dpcore
  calibration), then the least σ certified by Lemma 3 at (ε_step, δ/(2T));
* ``calibration="paper"``: σ² = 64 L² κ T log(1/δ)/(n² ε²) exactly as printed (L = C); the reported
  ε is dpcore's for that σ (a warning if it exceeds the target).

Departures: (1) the constraint set C is an extension (the paper is unconstrained); (2) the mirror-map
exponent (see :mod:`algorithms.mirror_maps`); (3) per-example clipping in ‖·‖_q makes the stated
sensitivity hold on any data (the paper assumes L-Lipschitz losses); (4) ``alpha`` is the library's
L2 term (alpha/2)‖w‖² of the objective, whose gradient is added after the noise (data-independent);
the paper's α is ``phi_weight``. Defaults (Theorem 7, O-constants 1): T = ⌈(nεκ/√(d log(1/δ)))^{2/5}⌉,
α = (4β/T) log₂(n/T).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional, Tuple

import numpy as np

import dpcore
from dpcore._jit import jit
from dpcore.events import ApproxDpEvent, NonPrivateEvent, SelfComposedEvent
from mechanisms.kernels import generalized_gaussian_noise_kernel

from ._mirror_common import (
    calibrated_gg, check_mirror_calibration, check_releases, check_steps, default_steps_nonprivate, gg_mechanism,
    event_epsilon, mirror_setup, warn_paper_over_target,
)
from ._solver_common import as_generator, finish
from .clipping import clipped_gradient_sum_kernel
from .mirror_maps import bregman_step_kernel, mirror_grad_kernel
from .result import SolverResult

__all__ = ["noisy_mirror_descent", "noisy_mirror_descent_kernel", "paper_sigma", "step_epsilon"]

_ACCOUNTANT = "composition"


@jit
def noisy_mirror_descent_kernel(kind, param, X, y, dual_norms, clip, l2, ckind, cradius, r, s, kappa, w0, steps,
                                beta, phi_weight, sigma, snap_every, rng):
    """Run Algorithm 3. Returns (ŵ, snapshots of w_t every ``snap_every`` steps, releases, gradient
    evaluations, clipped count, 1-D root iterations). ``rng``: the caller's Generator."""
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
        clipped += clipped_gradient_sum_kernel(kind, param, X, y, dual_norms, w, clip, g)
        for j in range(d):
            g[j] = g[j] / n
        if sigma > 0.0:
            g += generalized_gaussian_noise_kernel(rng, d, r, sigma)
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
    smoothness: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    relation: str = "replace_one",
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
        Target δ in (0, 1); at most 1/2 · … (Lemma 3 is used with δ/(2T) per step).
    alpha : float
        L2 strength of the objective, (alpha/2)‖w‖² (not the paper's α).
    steps : int, optional
        T; default Theorem 7's ⌈(nεκ/√(d log(1/δ)))^{2/5}⌉ (⌈√n⌉ when ε = inf).
    phi_weight : float, optional
        The paper's α ≥ 0 (weight of αΦ(w)); default (4β/T) log₂(n/T) (needs n > T).
    smoothness : float, optional
        β w.r.t. ‖·‖_p; default the loss's ℓ2 constant for ``data_norm_bound`` (an upper bound).
    clip_norm : float, optional
        Per-example bound C on ‖∇ℓ‖_q (the paper's L); default the loss's Lipschitz constant for
        ``data_norm_bound`` (then a no-op on valid rows).
    data_norm_bound : float, optional
        Public bound R ≥ ‖xᵢ‖₂ (rows are checked).
    constraint, radius :
        ``"none"`` (the paper), ``"l1"``, ``"linf"``, ``"simplex"`` or ``"lp"`` (‖w‖_s ≤ radius).
    relation : {"replace_one"}
        The analysis divides by the public n.
    calibration : {"accountant", "paper"}
    rng : None, int or numpy.random.Generator
    trace : bool
        Objective / gradient-mapping traces (diagnostics on the raw data, not private).
    loss_params : dict, optional

    Returns
    -------
    SolverResult
        ``event`` is the composition of the T generalized-Gaussian releases; ``privacy`` dpcore's
        ε for it (``"composition"`` accountant); ``sigma`` the noise σ on the mean gradient.
    """
    cal = check_mirror_calibration(calibration)
    m = mirror_setup(X, y, p=p, loss=loss, alpha=alpha, constraint=constraint, radius=radius,
                     clip_norm=clip_norm, data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta,
                     relation=relation, smoothness=smoothness, loss_params=loss_params,
                     where="noisy_mirror_descent (Algorithm 3)")
    s, geo = m.base, m.geo
    n, d = s.data.n, s.data.d
    private = not math.isinf(epsilon)
    if private:
        default_T = (n * epsilon * geo.kappa / math.sqrt(d * math.log(1.0 / delta))) ** 0.4
    else:
        default_T = default_steps_nonprivate(n)
    T = check_steps(steps, default_T, None)
    beta = m.smoothness
    if phi_weight is None:
        if n <= T:
            raise ValueError(f"the default phi_weight (4*beta/T)*log2(n/T) needs n > T; got n={n}, T={T}")
        phi = 4.0 * beta / T * math.log2(n / T)
    else:
        phi = float(phi_weight)
        if not (phi >= 0.0 and math.isfinite(phi)):
            raise ValueError(f"phi_weight must be in [0, inf); got {phi_weight!r}")
    sens_q = 2.0 * s.clip / n  # ℓq sensitivity of the clipped mean gradient, replace-one
    delta_step = delta / (2.0 * T)
    calibration_record = None
    if not private:
        sigma, event = 0.0, NonPrivateEvent("replace_one")
    else:
        if cal == "paper":
            mech = gg_mechanism(geo, paper_sigma(s.clip, geo.kappa, T, n, epsilon, delta), sens_q)
        else:
            eps_step, calibration_record = step_epsilon(T, epsilon, delta)
            mech = calibrated_gg(geo, eps_step, delta_step, sens_q)
        sigma = mech.sigma
        event = SelfComposedEvent(mech.privacy_event("replace_one", delta=delta_step), T)
    privacy = event_epsilon(event, delta, _ACCOUNTANT)
    if private and cal == "paper":
        warn_paper_over_target(privacy, epsilon, "noisy_mirror_descent")
    gen = as_generator(rng)
    snap_every = max(1, T // 20)
    w, snaps, releases, evals, clipped, root_its = noisy_mirror_descent_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, m.dual_norms, s.clip, s.reg.alpha, m.constraint.kind,
        m.constraint.radius, geo.r, geo.s, geo.kappa, m.w0, T, beta, phi, sigma, snap_every, gen)
    if private:
        check_releases(releases, event.count)
    return finish("noisy_mirror_descent", s, w, snaps, step=1.0 / (beta + phi), event=event, privacy=privacy,
                  z=0.0 if sigma == 0.0 else sigma / sens_q, sensitivity=sens_q, grad_evals=evals, trace=trace,
                  details={"releases": releases, "clipped": clipped, "steps": T, "p": geo.p, "q": geo.q,
                           "kappa": geo.kappa, "noise_norm": geo.r, "mirror_exponent": geo.s,
                           "smoothness": beta, "phi_weight": phi, "delta_step": delta_step,
                           "root_iterations": root_its, "calibration": cal, "calibration_result": calibration_record,
                           "mirror_constraint": m.constraint.name})
