"""DP-AccMD: accelerated (linear-coupling) mirror descent with Gaussian gradient noise —
wang-ye-xu-2017 Algorithm 3, over an ℓ1 ball or an ℓ2 ball C of radius r.

For k = 0..T−1, with L_C = L·r² the smoothness w.r.t. the Minkowski norm ‖·‖_C:

    α_{k+1} = (k+2)/(4L_C),  r_k = 1/(2α_{k+1}L_C) = 2/(k+2)
    x_{k+1} = r_k z_k + (1 − r_k) y_k
    g̃      = (1/n)(Σᵢ clip_C(∇ℓ(x_{k+1}; zᵢ)) + N(0, σ²I)) + alpha·x_{k+1}
    y_{k+1} = argmin_{y∈C} (L_C/2)‖y − x_{k+1}‖_C² + ⟨g̃, y − x_{k+1}⟩        (Minkowski-norm step)
    z_{k+1} = argmin_{z∈C} B_w(z, z_k) + α_{k+1}⟨g̃, z − z_k⟩                   (mirror step)

and y_T is returned. The listing writes the exact ∇F(x_{k+1}) in the y-step; releasing it would not be
private and Theorem 5.3 accounts T Gaussian releases, so both steps use the one noisy gradient g̃.
The listing's L in α_{k+1}, r_k is read as L_C, the smoothness in the norm the steps use. Lemma 5.1
bounds it by L·‖C‖₂² with the diameter ‖C‖₂ = 2r; for a centrally symmetric C, v/‖v‖_C ∈ C gives
‖v‖₂ ≤ (sup_{w∈C}‖w‖₂)·‖v‖_C = r‖v‖_C for both balls, so f(y) ≤ f(x) + ⟨∇f(x), y − x⟩ + (L r²/2)‖y − x‖_C²
and L_C = L·r² — four times smaller than the lemma's constant, four times longer steps (on a9a at
ε = 1: test error 0.165 → 0.157 with r = 10; ``benchmarks/bench_defaults.py``).

Mirror maps w (1-strongly convex w.r.t. ‖·‖_C, as Alg. 3 requires):

* ℓ2 ball: w(z) = ‖z‖₂²/(2r²); both steps are Euclidean projections.
* ℓ1 ball: w(z) = (κ/2)‖z‖_p², p = min(2, 1 + 1/ln d), κ = d^{2(1−1/p)}/((p−1)r²) — ½‖·‖_p² is
  (p−1)-strongly convex w.r.t. ‖·‖_p and ‖z‖_p ≥ d^{−(1−1/p)}‖z‖₁ (Hölder). The constrained mirror
  step is z = ∇w*(soft(θ, μ)) with θ = ∇w(z_k) − α g̃ and μ ≥ 0 the multiplier of ‖z‖₁ ≤ r (bisection);
  the Minkowski step min_{‖y‖₁≤r} (L_C/2r²)‖y − x‖₁² + ⟨g̃, y⟩ is solved exactly for a given
  multiplier μ of the ball by a greedy over piecewise-linear coordinate moves, μ by bisection (with
  the tie at μ* resolved by complementary slackness).

Privacy: T Gaussian releases of a clipped gradient sum, ``SelfComposedEvent(GaussianEvent(σ/Δ), T)``;
Theorem 5.3 gives σ only "for some constant c", so σ is calibrated by the dpcore accountant.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_choice, check_positive
from dpcore.events import GaussianEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale
from mechanisms.kernels import gaussian_noise_kernel

from ._solver_common import (
    as_generator, calibrated_privacy, check_calibration, check_counts, check_iterations, check_relation_replace_one, finish,
    initial_point, noise_off_result, setup,
)
from .clipping import clipped_gradient_sum_kernel, clipped_sum_sensitivity
from .constraints import L1, L2, project_kernel
from .mirror_maps import mirror_grad_kernel, mirror_inverse_kernel
from .result import SolverResult

__all__ = ["dp_accmd", "dp_accmd_kernel", "l1_minkowski_step", "l1_mirror_step", "lp_mirror_parameters"]

_PAPER = "wang-ye-xu-2017 Theorem 5.3 states sigma^2 = c G^2 T ln(1/delta)/(n^2 eps^2) only 'for some constant c'"
_BISECTIONS = 100


def lp_mirror_parameters(d: int, radius: float) -> tuple[float, float]:
    """(p, κ) of the ℓ1-ball mirror map w(z) = (κ/2)‖z‖_p² (1-strongly convex w.r.t. ‖·‖₁/r)."""
    p = 2.0 if d <= math.e**2 else 1.0 + 1.0 / math.log(d)
    kappa = d ** (2.0 * (1.0 - 1.0 / p)) / ((p - 1.0) * radius * radius)
    return p, kappa


@jit
def l1_mirror_step(z, g, step, p, kappa, radius):
    """argmin_{‖z'‖₁≤r} B_w(z', z) + step·⟨g, z'⟩ for w = (κ/2)‖·‖_p² (exact up to the μ bisection)."""
    q = p / (p - 1.0)
    theta = np.empty_like(z)
    mirror_grad_kernel(z, p, kappa, theta)  # ∇w(z) = κ∇(½‖z‖_p²)
    theta -= step * g
    out = np.empty_like(z)
    mirror_inverse_kernel(theta, q, kappa, out)  # ∇w*(θ) = (1/κ)∇(½‖θ‖_q²)
    if np.sum(np.abs(out)) <= radius:
        return out
    lo = 0.0
    hi = np.max(np.abs(theta))
    u = np.empty_like(theta)
    for _ in range(_BISECTIONS):
        mu = 0.5 * (lo + hi)
        for j in range(theta.shape[0]):
            a = abs(theta[j]) - mu
            u[j] = math.copysign(a, theta[j]) if a > 0.0 else 0.0
        mirror_inverse_kernel(u, q, kappa, out)
        if np.sum(np.abs(out)) <= radius:
            hi = mu
        else:
            lo = mu
    for j in range(theta.shape[0]):
        a = abs(theta[j]) - hi
        u[j] = math.copysign(a, theta[j]) if a > 0.0 else 0.0
    mirror_inverse_kernel(u, q, kappa, out)
    project_kernel(L1, radius, out)  # guards the last ulp; a no-op on the feasible side
    return out


@jit
def _push(slopes, lengths, coords, dirs, k, slope, length, i, s):
    slopes[k] = slope
    lengths[k] = length
    coords[k] = i
    dirs[k] = s
    return k + 1


@jit
def _greedy_l1(x, g, mu, kap):
    """argmin_Δ kap‖Δ‖₁² + ⟨g, Δ⟩ + μ‖x + Δ‖₁ (returns x + Δ): coordinate moves sorted by slope.

    Moving coordinate i by u ≥ 0 in direction s changes ⟨g, ·⟩ + μ‖·‖₁ at rate s·gᵢ − μ while it
    approaches 0 (for at most |xᵢ|) and s·gᵢ + μ afterwards; only moves with negative rate help, and
    at most one direction per coordinate has them (the two rates of opposite directions sum to ≥ 0).
    """
    d = x.shape[0]
    slopes = np.empty(2 * d)
    lengths = np.empty(2 * d)
    coords = np.empty(2 * d, dtype=np.int64)
    dirs = np.empty(2 * d)
    k = 0
    for i in range(d):
        a = x[i]
        for s in (1.0, -1.0):
            toward = a != 0.0 and (a > 0.0) == (s < 0.0)
            if toward and s * g[i] - mu < 0.0:
                k = _push(slopes, lengths, coords, dirs, k, s * g[i] - mu, abs(a), i, s)
            if s * g[i] + mu < 0.0:
                k = _push(slopes, lengths, coords, dirs, k, s * g[i] + mu, math.inf, i, s)
    y = x.copy()
    order = np.argsort(slopes[:k])
    t = 0.0
    for o in order:
        target = -slopes[o] / (2.0 * kap)  # stationary point of kap·t² + slope·t
        if target <= t:
            break
        step = min(lengths[o], target - t)
        y[coords[o]] += dirs[o] * step
        t += step
        if step < lengths[o]:
            break
    return y


@jit
def l1_minkowski_step(x, g, kap, radius):
    """argmin_{‖y‖₁≤r} kap‖y − x‖₁² + ⟨g, y⟩ for x in the ball.

    Lagrangian relaxation of ‖y‖₁ ≤ r: for a multiplier μ the minimizer is :func:`_greedy_l1`; μ* is
    found by bisection. The relaxed objective is not strictly convex, so ‖y(μ)‖₁ may jump at μ*; the
    minimizers at μ* then form the segment between y(μ*−) and y(μ*+), and the optimum is the point
    of that segment with ‖y‖₁ = r (complementary slackness), found by a second bisection.
    """
    y = _greedy_l1(x, g, 0.0, kap)
    if np.sum(np.abs(y)) <= radius:
        return y
    lo = 0.0
    hi = np.max(np.abs(g))
    for _ in range(_BISECTIONS):
        mu = 0.5 * (lo + hi)
        if np.sum(np.abs(_greedy_l1(x, g, mu, kap))) <= radius:
            hi = mu
        else:
            lo = mu
    y_in = _greedy_l1(x, g, hi, kap)
    y_out = _greedy_l1(x, g, lo, kap)
    a = 0.0  # weight on y_out; ‖(1−a)·y_in + a·y_out‖₁ is convex in a, ≤ r at a = 0, > r at a = 1
    b = 1.0
    for _ in range(_BISECTIONS):
        m = 0.5 * (a + b)
        if np.sum(np.abs((1.0 - m) * y_in + m * y_out)) <= radius:
            a = m
        else:
            b = m
    y = (1.0 - a) * y_in + a * y_out
    project_kernel(L1, radius, y)
    return y


@jit
def dp_accmd_kernel(kind, param, X, y, row_norms, x0, alpha, ckind, radius, steps, Lc, clip, sigma, p, kappa, rng,
                    record=True):
    """Run wang-ye-xu-2017 Alg. 3 for ``steps`` iterations. Returns (y_T, y_k for k = 0..T — only y_T with
    ``record`` False: memory O(d) —, releases).

    ``rng``: the caller's ``numpy.random.Generator`` (advanced in place).
    """
    n, d = X.shape
    yk = x0.copy()
    zk = x0.copy()
    x = np.empty(d)
    g = np.empty(d)
    snaps = np.empty((steps + 1 if record else 1, d))
    snaps[0] = yk
    releases = 0
    r2 = radius * radius
    kap_y = Lc / (2.0 * r2)  # (L_C/2)‖v‖_C² = (L_C/2r²)‖v‖² for ‖·‖_C = ‖·‖/r
    for k in range(steps):
        a = (k + 2.0) / (4.0 * Lc)
        rk = 1.0 / (2.0 * a * Lc)
        for j in range(d):
            x[j] = rk * zk[j] + (1.0 - rk) * yk[j]
        clipped_gradient_sum_kernel(kind, param, X, y, row_norms, x, clip, g)
        if sigma > 0.0:
            g += gaussian_noise_kernel(rng, d, sigma)
        releases += 1
        for j in range(d):
            g[j] = g[j] / n + alpha * x[j]
        if ckind == L2:
            for j in range(d):
                yk[j] = x[j] - g[j] / (2.0 * kap_y)
                zk[j] = zk[j] - r2 * a * g[j]
            project_kernel(L2, radius, yk)
            project_kernel(L2, radius, zk)
        else:
            yk = l1_minkowski_step(x, g, kap_y, radius)
            zk = l1_mirror_step(zk, g, a, p, kappa, radius)
        if record:
            snaps[k + 1] = yk
    if not record:
        snaps[0] = yk
    return yk, snaps, releases


def dp_accmd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: Optional[float] = None,
    delta: float = 1e-5,
    alpha: float = 0.0,
    constraint: str = "l2",
    radius: float = 20.0,
    steps: int = 100,
    smoothness: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    relation: str = "replace_one",
    calibration: str = "accountant",
    accountant: str = "rdp",
    noise_multiplier: Optional[float] = None,
    w0: Optional[np.ndarray] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
    tol: Optional[float] = 1e-9,
) -> SolverResult:
    """DP-AccMD (wang-ye-xu-2017 Alg. 3) over an ℓ1 or ℓ2 ball.

    Parameters
    ----------
    constraint : {"l1", "l2"}
        The centrally symmetric set C of Alg. 3. Default ``"l2"`` with r = 20 and T = 100
        (``benchmarks/bench_defaults.py``, RESULTS.md "Defaults"): on a9a the former default, the
        unit ℓ1 ball, holds no better model than the majority class (‖w*‖₁ ≫ 1); r = 10 kept ijcnn1
        at the majority rate (its good models have ‖w‖₂ ≈ 20–30); r = 20 and 30 gave the same test
        error at ε = 1, r = 20 the lower one at ε = 0.1; T = 50 or 30 stopped short at ε = 1.
    radius : float
        r > 0 (weight units).
    steps : int
        T iterations (one full-gradient release each).
    smoothness : float, optional
        L, the ℓ2 smoothness of the mean loss + (alpha/2)‖·‖²; default c₂·data_norm_bound² + alpha
        (required when data_norm_bound is None: a data-derived L would leak).
    alpha : float
        L2 regularization (its gradient is added without noise).
    Other parameters as in :func:`algorithms.dp_gd.dp_gd` (``tol``: the ``epsilon=inf`` convergence
    tolerance over C; no l1: C already constrains the ℓ1 norm;
    relation must be ``"replace_one"``).
    """
    check_calibration(calibration, _PAPER)
    check_relation_replace_one(relation, "DP-AccMD normalises by n, which add/remove neighbours change")
    check_choice("constraint", constraint, ("l1", "l2"))
    steps = check_iterations("steps", steps)
    s = setup(X, y, loss=loss, alpha=alpha, l1=0.0, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, layouts=True)
    if smoothness is not None:
        L = check_positive("smoothness", smoothness)
    elif s.smoothness is not None:
        L = s.smoothness + s.reg.alpha
    else:
        raise ValueError("smoothness is required when data_norm_bound is not given (a data-derived L would leak)")
    d = s.data.d
    r = s.constraint.max_norm(d)
    Lc = L * r * r  # ‖v‖₂ ≤ r‖v‖_C (module docstring; Lemma 5.1's diameter is 2r)
    if not 0.0 < Lc < math.inf:  # r² (or L·r²) under- or overflowed: κ = …/r² and the step 1/Lc would too
        raise ValueError(f"radius={radius!r} with smoothness {L!r} gives L*radius^2 = {Lc!r}, outside (0, inf) in "
                         "float64; use a moderate radius / smoothness")
    p, kappa = lp_mirror_parameters(d, s.constraint.radius)
    sens = clipped_sum_sensitivity(s.clip, relation)

    def event_fn(z: float):
        return SelfComposedEvent(GaussianEvent(z, relation), steps)

    z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                noise_multiplier=noise_multiplier, relation=relation,
                                                accountant=accountant)
    if noise_multiplier is None and math.isinf(epsilon) and tol is not None:
        return noise_off_result("dp_accmd", s, w0, tol=tol, event=event, privacy=privacy, trace=trace,
                                details={"steps": steps, "smoothness": L, "smoothness_minkowski": Lc})
    w, snaps, releases = dp_accmd_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, initial_point(w0, s), s.reg.alpha,
        s.constraint.kind, s.constraint.radius, steps, Lc, s.clip, least_noise_scale(z, sens), p, kappa, as_generator(rng),
        bool(trace))
    check_counts(releases, event)
    return finish("dp_accmd", s, w, snaps, step=1.0 / L, event=event, privacy=privacy, z=z, sensitivity=sens,
                  grad_evals=steps * s.data.n, trace=trace,
                  details={"releases": releases, "steps": steps, "smoothness": L, "smoothness_minkowski": Lc,
                           "mirror_p": p, "mirror_kappa": kappa, "calibration": cal})
