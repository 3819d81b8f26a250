"""Truncated DP mirror descent for heavy-tailed gradients in ℓp, 1 < p < 2 — Su, Zhao, Wang,
Algorithm 7 (batched; Theorems 11 / 16) and Algorithm 4 (shuffled, local noise; Theorems 9, 10).

Both make one pass over the data in T disjoint batches of b = ⌊n/T⌋ records (the n − Tb left over
are not used) and step

    w_t = argmin_{w∈C} ⟨ḡ_t, w⟩ + γ·D_Φ(w, w_{t−1}),      ŵ = (1/T) Σ_t w_t   (γ_t = γ constant),

solved exactly (:mod:`algorithms.mirror_maps`). **Truncation, exactly as the paper defines it**
(Alg. 4 line 6, Alg. 7 line 5; Remark 4): a per-example gradient whose dual norm ‖∇ℓ(w_{t−1}, x)‖_q
exceeds τ = βM + λ is *set to zero* (not clipped); M is the ‖·‖_p diameter of C. So every kept
gradient has dual norm ≤ τ, whatever the data.

* Algorithm 7 (:func:`batched_truncated_mirror_descent`): ḡ_t = (1/b) Σ_{x∈B_t} g_x + Z_t with
  Z_t ~ 𝒢𝒢_{ℓr}(σ₁²). Replacing one record changes one batch average by at most 2τ/b in ‖·‖_q; each
  record is in exactly one batch, so the run is as private as one release (parallel composition;
  later batches are post-processing). σ₁ is the least Lemma 3 certifies at (ε, δ) — Theorem 16's
  σ₁² = O(κτ² log(1/δ)/(b²ε²)) with the constant of Lemma 3 — and the event is that release's
  ``ApproxDpEvent``. Valid for 0 < ε ≤ 1, 0 < δ ≤ 1/2 (Lemma 3's range; Theorem 11 states ε < 1).
* Algorithm 4 (:func:`shuffled_truncated_mirror_descent`): the records are shuffled (a uniformly
  random, secret permutation) and each report is a local randomizer g_x + Z_x, Z_x ~ 𝒢𝒢_{ℓr}(σ₁²),
  (ε₀, δ₀)-DP by Lemma 3 (local sensitivity 2τ); ḡ_t = (1/b) Σ (g_x + Z_x). Privacy by
  amplification by shuffling: dpcore's ``ShuffledEvent(ε₀, Tb, delta0=δ₀)`` at δ (Feldman, McMillan,
  Talwar 2021, adaptive local randomizers; dpcore adds their Theorem 3.8 term
  (e^ε + 1)(1 + e^{−ε₀}/2)·Tb·δ₀ for approximate-DP local randomizers). δ₀ is fixed so that the
  term is ≤ δ/2 at the target ε.
  Theorem 9 holds only for ε = O(√(log(n/δ)/n)); concretely the local ε₀ cannot exceed 1 (Lemma 3),
  so for targets above what ε₀ = 1 reaches after shuffling ε₀ = 1 is used and the release reports the
  smaller ε dpcore gives it (more private than asked; Algorithm 7 spends such a budget).

Defaults (O-constants 1; M, κ, d, n, ε, δ as in the theorems; γ = √T):
Alg. 7 (Theorem 16): λ = (√(nε)·M/(κ (d log(1/δ))^{1/4}))^{2/3}, T = nε/(Mλ√(d log(1/δ))).
Alg. 7 ``schedule="tuned"`` (its default): T = 5 batches and γ = β/(10κ) (step 10κ/β; public
constants chosen on ``benchmarks/bench_mirror_descent.py``), λ as in Theorem 16. With one pass the
noise on a batch average scales as τT/n, so few large batches with long steps win; Theorem 16's T
(25–100 there) and γ = √T left the iterates at w ≈ 0 (RESULTS.md, "ℓp solvers"). The accounting
is unchanged: T is public and data-independent (σ is calibrated for the b = ⌊n/T⌋ used) and γ only
enters after the noisy release (post-processing). ``schedule="theorem"`` keeps Theorem 16's T and
γ. The tuned step is not covered by the theorem's rate.
Alg. 4 (Theorem 10): λ = √(nε)/(κ² d log(1/δ))^{1/4}, T = M²n²ε²/(λ² d log(1/δ)).

**Where Algorithm 4 can learn** (O-constants 1, log(1/δ') = 1, δ = 1e-5, p = 1.1, ℓ1 ball R = 5 so
M = 10, ±1 features; RESULTS.md "ℓp solvers"). Theorem 9's regime caps ε at what ε₀ = 1 reaches
after shuffling: ε_max(n) = 0.0188 at n = 5·10⁴, 0.0035 at 10⁶, 0.00021 at 10⁸ (dpcore, ≈ n^{−0.56}).
Theorem 10's bound M(κ²d log(1/δ))^{1/4}/√(nε) at ε = ε_max(n) is then 10.7 at n = 5·10⁴ and
5.6 at 10⁶ (d = 1000; 5.8 / 3.0 / 1.2 at n = 5·10⁴ / 10⁶ / 10⁸ for d = 100), while no model of the
logistic loss is worse than w = 0 by more than ln 2 (measured excess risk of w = 0: 0.265): the
bound falls only as ≈ n^{−0.2} and stays above ln 2 until n ≈ 4·10¹⁰ (d = 1000), and Theorem 10's
own sample-size condition n ≥ max{β², 1}M²√(dκ² log(1/δ))/ε fails at every n below ≈ 3·10⁹
(d = 1000; 1.6·10⁸ for d = 100). At the benchmark's n = 5·10⁴ the theorem therefore promises
nothing, and w ≈ 0 is what its regime delivers, not a defect of this implementation.
β (smoothness w.r.t. ‖·‖_p) defaults to the loss's ℓ2 constant for ``data_norm_bound``.
``alpha`` is the library's L2 term, whose gradient αw is added after the noise (data-independent).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional

import numpy as np

import dpcore
from dpcore._jit import jit
from dpcore._validation import check_choice
from dpcore.events import NonPrivateEvent, ShuffledEvent
from mechanisms.kernels import generalized_gaussian_noise_kernel

from ._mirror_common import (
    MirrorSetup, calibrated_gg, check_mirror_calibration, check_releases, check_steps, default_steps_nonprivate,
    event_epsilon, gg_mechanism, mirror_setup, warn_paper_over_target,
)
from ._solver_common import as_generator, finish
from .clipping import clip_margin, truncated_coefficient
from .losses import loss_deriv, row_axpy, row_dot
from .mirror_maps import bregman_step_kernel, mirror_grad_kernel, primal_diameter
from .result import SolverResult

__all__ = ["batched_truncated_mirror_descent", "shuffled_truncated_mirror_descent",
           "truncated_gradient_sum_kernel", "truncated_mirror_descent_kernel", "local_epsilon", "TUNED_BATCHES",
           "TUNED_STEP_SCALE"]

#: T of Algorithm 7's ``schedule="tuned"`` (benchmarks/bench_mirror_descent.py).
TUNED_BATCHES = 5
#: c of Algorithm 7's ``schedule="tuned"``: γ = β/(c·κ), the step c·κ/β.
TUNED_STEP_SCALE = 10.0


@jit
def truncated_gradient_sum_kernel(kind, param, X, y, dual_norms, w, idx, start, count, tau, out) -> int:
    """``out ← Σ g_x`` over rows idx[start:start+count] with g_x = ∇ℓ(w; x) if ‖∇ℓ‖_q ≤ τ else 0
    (Su–Zhao–Wang's truncation, decided by :func:`algorithms.clipping.truncated_coefficient`).
    ``dual_norms[i] = ‖xᵢ‖_q`` (:func:`algorithms.clipping.lq_row_norms_kernel`). Returns how many were zeroed."""
    out[:] = 0.0
    zeroed = 0
    tau_safe = clip_margin(tau, X.shape[1])
    for k in range(start, start + count):
        i = idx[k]
        c = loss_deriv(kind, param, row_dot(X, i, w), y[i])
        kept = truncated_coefficient(c, dual_norms[i], tau_safe)
        if kept == c:
            row_axpy(c, X, i, out)
        else:
            zeroed += 1
    return zeroed


@jit
def truncated_mirror_descent_kernel(kind, param, X, y, dual_norms, perm, steps, batch, tau, l2, ckind, cradius, r, s,
                                    kappa, w0, gamma, sigma, local_noise, snap_every, rng):
    """One pass of Algorithm 7 (``local_noise=False``: one 𝒢𝒢 draw per batch average) or Algorithm 4
    (``local_noise=True``: one draw per record, averaged). Batch t is perm[t·b:(t+1)·b]. Returns
    (ŵ, snapshots, noisy releases, gradient evaluations, zeroed count, 1-D root iterations)."""
    d = X.shape[1]
    w = w0.copy()
    g = np.empty(d)
    gphi = np.empty(d)
    theta = np.empty(d)
    avg = np.zeros(d)
    snaps = np.empty((steps // snap_every + 1, d))
    snaps[0] = w
    releases = 0
    zeroed = 0
    root_its = 0
    for t in range(steps):
        zeroed += truncated_gradient_sum_kernel(kind, param, X, y, dual_norms, w, perm, t * batch, batch, tau, g)
        if sigma > 0.0:
            if local_noise:
                for _ in range(batch):
                    g += generalized_gaussian_noise_kernel(rng, d, r, sigma)
                    releases += 1
            else:
                for j in range(d):
                    g[j] /= batch
                g += generalized_gaussian_noise_kernel(rng, d, r, sigma)
                for j in range(d):
                    g[j] *= batch
                releases += 1
        mirror_grad_kernel(w, s, kappa, gphi)
        for j in range(d):
            theta[j] = gphi[j] - (g[j] / batch + l2 * w[j]) / gamma
        root_its += bregman_step_kernel(ckind, cradius, r, s, kappa, theta, w)
        for j in range(d):
            avg[j] += w[j]
        if (t + 1) % snap_every == 0:
            snaps[(t + 1) // snap_every] = w
    for j in range(d):
        avg[j] /= steps
    return avg, snaps, releases, steps * batch, zeroed, root_its


@lru_cache(maxsize=256)
def local_epsilon(users: int, epsilon: float, delta: float, delta0: float) -> float:
    """The largest local ε₀ ≤ 1 such that dpcore's ``"shuffle"`` accountant gives ε ≤ ``epsilon`` at
    total δ for ``ShuffledEvent(ε₀, users, delta0=δ₀)`` (Thm 3.8 term included). When even ε₀ = 1 (Lemma 3's
    largest) stays below ``epsilon`` — a target above Theorem 9's regime ε = O(√(log(n/δ)/n)), e.g. ε = 1 on
    small data — it is 1: the release is then more private than asked, and dpcore reports the smaller ε.
    Memoised (data-independent)."""

    def event_fn(e0: float):
        return ShuffledEvent(e0, users, delta0=delta0)

    top = dpcore.get_epsilon(event_fn(1.0), delta, accountant="shuffle").epsilon
    if top <= epsilon:
        return 1.0
    res = dpcore.calibrate(event_fn, "epsilon0", epsilon, delta, lower=0.5, upper=1.0, increasing=True,
                           bounds=(1e-9, 1.0), accountant="shuffle")
    return float(res.value)


def _common(X, y, p, loss, alpha, constraint, radius, clip_norm, data_norm_bound, epsilon, delta, relation, smoothness,
            loss_params, where) -> MirrorSetup:
    m = mirror_setup(X, y, p=p, loss=loss, alpha=alpha, constraint=constraint, radius=radius, clip_norm=clip_norm,
                     data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, relation=relation,
                     smoothness=smoothness, loss_params=loss_params, where=where)
    if m.constraint.name == "none":
        raise ValueError(f"constraint must be a bounded set for {where} (the truncation level uses its diameter M); "
                         "got 'none'")
    return m


def _lambda_tau(m: MirrorSetup, lam: Optional[float], truncation: Optional[float], default_lam: float):
    M = primal_diameter(m.constraint, m.geo)
    if truncation is not None:
        if lam is not None:
            raise ValueError("give either lam (tau = beta*M + lam) or truncation (tau itself), not both")
        tau = float(truncation)
        if not (tau > 0.0 and math.isfinite(tau)):
            raise ValueError(f"truncation must be in (0, inf); got {truncation!r}")
        return None, tau, M
    if lam is None and not (default_lam >= 0.0 and math.isfinite(default_lam)):
        raise ValueError(f"the default lam for this epsilon / delta is {default_lam!r}, outside [0, inf) in float64; "
                         "use a moderate epsilon, or give lam or truncation")
    lm = default_lam if lam is None else float(lam)
    if not (lm >= 0.0 and math.isfinite(lm)):
        raise ValueError(f"lam must be in [0, inf); got {lam!r}")
    tau = m.smoothness * M + lm
    if tau <= 0.0:
        raise ValueError("the truncation level beta*M + lam must be positive")
    return lm, tau, M


def _run(m: MirrorSetup, T, tau, gamma, sigma, local, rng, details):
    """Shuffle, run the kernel, collect the details."""
    s, geo = m.base, m.geo
    n = s.data.n
    b = n // T
    gen = as_generator(rng)
    perm = gen.permutation(n)
    snap_every = max(1, T // 20)
    try:
        w, snaps, releases, evals, zeroed, root_its = truncated_mirror_descent_kernel(
            s.loss.kind, s.loss.param, s.data.X, s.data.y, m.dual_norms, perm, T, b, tau, s.reg.alpha,
            m.constraint.kind, m.constraint.radius, geo.r, geo.s, geo.kappa, m.w0, gamma, sigma, local, snap_every, gen)
    except ZeroDivisionError as exc:  # an infinite mirror point θ = ∇φ(w) − g/γ reached the Bregman root solve
        raise ValueError(f"gamma={gamma!r}, alpha={s.reg.alpha!r}, truncation={tau!r}: the mirror step overflowed "
                         "float64; use moderate gamma / alpha / smoothness / lam values") from exc
    details = dict(details)
    details.update(releases=releases, truncated=zeroed, steps=T, batch_size=b, truncation=tau, gamma=gamma, p=geo.p,
                   q=geo.q, kappa=geo.kappa, noise_norm=geo.r, mirror_exponent=geo.s, smoothness=m.smoothness,
                   root_iterations=root_its, mirror_constraint=m.constraint.name)
    return w, snaps, releases, evals, details


def batched_truncated_mirror_descent(
    X: np.ndarray,
    y: np.ndarray,
    *,
    p: float,
    loss: str = "logistic",
    epsilon: float,
    delta: float = 1e-5,
    alpha: float = 0.0,
    constraint: str = "l1",
    radius: Optional[float] = 1.0,
    steps: Optional[int] = None,
    gamma: Optional[float] = None,
    lam: Optional[float] = None,
    truncation: Optional[float] = None,
    smoothness: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    clip_norm: Optional[float] = None,
    relation: str = "replace_one",
    schedule: str = "tuned",
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Truncated DP batched mirror descent (Su, Zhao, Wang, Algorithm 7; Theorems 11 and 16).

    Parameters
    ----------
    X, y : array_like
        Data (n × d, d ≥ 2), labels.
    p : float
        Primal norm order in (1, 2) (Theorem 16); 2 ≤ p ≤ ∞ is refused (the paper defers that case to
        Kamath, Liu, Zhang 2022, not implemented here).
    epsilon : float
        Target ε in (0, 1] (Lemma 3's range), or ``inf`` (noise off).
    delta : float
        Target δ in (0, 1/2].
    alpha : float
        L2 strength of the objective (library convention).
    constraint, radius :
        A bounded set: ``"l1"`` (default, radius 1), ``"linf"``, ``"simplex"``, ``"lp"`` (‖w‖_s ≤ radius).
    steps : int, optional
        T (batches) in [1, n]; default from ``schedule`` (⌈√n⌉ when ε = inf, either schedule).
    gamma : float, optional
        γ > 0 of the Bregman term; default from ``schedule`` (√T when ε = inf, either schedule).
    lam, truncation : float, optional
        λ (τ = βM + λ; default Theorem 16's) or τ itself (then the default T uses λ = τ). With
        Lipschitz data a τ equal to the public bound on ‖∇ℓ‖_q keeps every gradient and adds less noise
        than the heavy-tail default βM + λ.
    smoothness : float, optional
        β w.r.t. ‖·‖_p; default from ``data_norm_bound``.
    data_norm_bound, clip_norm : float, optional
        As in :func:`algorithms.noisy_mirror_descent.noisy_mirror_descent`; ``clip_norm`` is only used
        to size defaults (the truncation τ bounds the sensitivity).
    relation : {"replace_one"}
    schedule : {"tuned", "theorem"}
        Defaults of T and γ when private: ``"tuned"`` T = min(5, n), γ = β/(10κ); ``"theorem"``
        Theorem 16's T = nε/(Mλ√(d log(1/δ))) and γ = √T (module docstring). The privacy
        accounting is the same for both (σ is calibrated for the T used).
    rng : None, int or numpy.random.Generator
    trace : bool
    loss_params : dict, optional

    Returns
    -------
    SolverResult
        ``event``: the ``ApproxDpEvent`` of one Lemma 3 release (each record is in one batch);
        ``details["truncated"]`` counts zeroed gradients (a diagnostic, not private).
    """
    where = "batched_truncated_mirror_descent (Algorithm 7)"
    schedule = check_choice("schedule", schedule, ("tuned", "theorem"))
    m = _common(X, y, p, loss, alpha, constraint, radius, clip_norm, data_norm_bound, epsilon, delta, relation,
                smoothness, loss_params, where)
    geo, n, d = m.geo, m.base.data.n, m.base.data.d
    private = not math.isinf(epsilon)
    M = primal_diameter(m.constraint, geo)
    L = math.log(1.0 / delta)
    default_lam = (math.sqrt(n * epsilon) * M / (geo.kappa * (d * L) ** 0.25)) ** (2.0 / 3.0) if private else 1.0
    lm, tau, M = _lambda_tau(m, lam, truncation, default_lam)
    lam_for_T = tau if lm is None else lm  # with τ given, λ ≈ τ in the theorem's T (λ ≥ βM there, so τ ≤ 2λ)
    tuned = private and schedule == "tuned"
    if tuned:
        default_T = TUNED_BATCHES
    elif private:
        default_T = n * epsilon / (M * max(lam_for_T, 1e-300) * math.sqrt(d * L))
    else:
        default_T = default_steps_nonprivate(n)
    T = check_steps(steps, min(default_T, n), n)
    b = n // T
    if gamma is not None:
        gam = float(gamma)
    else:
        gam = m.smoothness / (TUNED_STEP_SCALE * geo.kappa) if tuned else math.sqrt(T)
    if not (gam > 0.0 and math.isfinite(gam)):
        raise ValueError(f"gamma must be in (0, inf); got {gamma!r}")
    sens_q = 2.0 * tau / b
    if private:
        mech = calibrated_gg(geo, epsilon, delta, sens_q)
        sigma = mech.sigma
        event = mech.privacy_event("replace_one", delta=delta)
    else:
        sigma, event = 0.0, NonPrivateEvent("replace_one")
    privacy = event_epsilon(event, delta, "composition")
    w, snaps, releases, evals, details = _run(m, T, tau, gam, sigma, False, rng, {"lam": lm, "schedule": schedule})
    if private:
        check_releases(releases, T)  # T batch releases on disjoint batches: one release per record
    return finish("batched_truncated_mirror_descent", m.base, w, snaps, step=1.0 / gam, event=event, privacy=privacy,
                  z=0.0 if sigma == 0.0 else sigma / sens_q, sensitivity=sens_q, grad_evals=evals, trace=trace,
                  details=details, sigma=sigma)


def shuffled_truncated_mirror_descent(
    X: np.ndarray,
    y: np.ndarray,
    *,
    p: float,
    loss: str = "logistic",
    epsilon: float,
    delta: float = 1e-5,
    alpha: float = 0.0,
    constraint: str = "l1",
    radius: Optional[float] = 1.0,
    steps: Optional[int] = None,
    gamma: Optional[float] = None,
    lam: Optional[float] = None,
    truncation: Optional[float] = None,
    smoothness: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    clip_norm: Optional[float] = None,
    relation: str = "replace_one",
    calibration: str = "accountant",
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Shuffled truncated DP mirror descent (Su, Zhao, Wang, Algorithm 4; Theorems 9 and 10).

    Parameters are those of :func:`batched_truncated_mirror_descent`, plus ``calibration``:
    ``"accountant"`` (default) — the largest local ε₀ ≤ 1 whose shuffled ε (dpcore, ``"shuffle"``
    accountant at δ, local δ₀ included) meets ε, then the least σ₁ Lemma 3 certifies at (ε₀, δ₀); ``"paper"`` —
    σ₁² = log(n/δ)·κτ²·log(1/δ)/(nε²) as printed (constant 1), reported by dpcore for that σ₁.
    ε ≤ 1 (Theorem 9's regime); above what ε₀ = 1 reaches after shuffling, ε₀ = 1 is used and ``privacy``
    is the smaller ε it buys (:func:`local_epsilon`). Defaults: Theorem 10 (module docstring).

    Returns
    -------
    SolverResult
        ``event``: ``ShuffledEvent(ε₀, Tb, delta0=δ₀)``; ``privacy`` is dpcore's ε for it at δ (the
        split δ_shuffle + Theorem 3.8 term in ``details["delta_split"]``).
    """
    where = "shuffled_truncated_mirror_descent (Algorithm 4)"
    cal = check_mirror_calibration(calibration)
    m = _common(X, y, p, loss, alpha, constraint, radius, clip_norm, data_norm_bound, epsilon, delta, relation,
                smoothness, loss_params, where)
    geo, n, d = m.geo, m.base.data.n, m.base.data.d
    private = not math.isinf(epsilon)
    if private and not epsilon <= 1.0:  # checked before the defaults below, which overflow for a huge ε
        raise ValueError(f"epsilon must be in (0, 1] for {where} (Theorem 9's regime); got {epsilon!r}")
    M = primal_diameter(m.constraint, geo)
    L = math.log(1.0 / delta)
    default_lam = math.sqrt(n * epsilon) / (geo.kappa**2 * d * L) ** 0.25 if private else 1.0
    lm, tau, M = _lambda_tau(m, lam, truncation, default_lam)
    lam_for_T = tau if lm is None else lm  # with τ given, λ ≈ τ in the theorem's T (λ ≥ βM there, so τ ≤ 2λ)
    if private:  # float products (not **): a huge or tiny lam gives inf / 0 instead of OverflowError
        num, lam_T = M * n * epsilon, max(lam_for_T, 1e-300)
        den = lam_T * lam_T * d * L
        default_T = num * num / den if den > 0.0 else math.inf
    else:
        default_T = default_steps_nonprivate(n)
    T = check_steps(steps, min(default_T, n), n)
    b = n // T
    users = T * b
    if users < 2:
        raise ValueError(f"shuffling needs at least 2 reports; got n={n}, steps={T}")
    gam = math.sqrt(T) if gamma is None else float(gamma)
    if not (gam > 0.0 and math.isfinite(gam)):
        raise ValueError(f"gamma must be in (0, inf); got {gamma!r}")
    local_sens = 2.0 * tau  # ‖g_x − g_x'‖_q ≤ 2τ after truncation
    split = None
    if private:
        # δ₀ leaves half of δ to the shuffle bound at the target ε: (e^ε+1)(1+e^{−ε₀}/2)·n·δ₀ ≤ δ/2
        delta0 = delta / (2.0 * 1.5 * (math.exp(epsilon) + 1.0) * users)
        if cal == "paper":
            sig = math.sqrt(math.log(n / delta) * geo.kappa * tau**2 * L / (n * epsilon**2))
            mech = gg_mechanism(geo, sig, local_sens)
        else:
            mech = calibrated_gg(geo, local_epsilon(users, epsilon, delta, delta0), delta0, local_sens)
        try:
            eps0 = mech.lemma3_epsilon(delta0)
        except ValueError as exc:  # only reachable with the printed sigma
            raise ValueError(f"calibration='paper': the printed sigma_1 = {mech.sigma:.6g} leaves the local randomizer "
                             f"outside Lemma 3's range at delta0 = {delta0:.3g} ({exc}); no guarantee can be "
                             "claimed, use calibration='accountant'") from exc
        sigma = mech.sigma
        event = ShuffledEvent(eps0, users, delta0=delta0)
        privacy = event_epsilon(event, delta, "shuffle")
        split = {k: privacy.details[k] for k in ("delta_shuffle", "local_delta_term", "delta0", "epsilon0")}
        if cal == "paper":
            warn_paper_over_target(privacy, epsilon, "shuffled_truncated_mirror_descent")
    else:
        sigma, event = 0.0, NonPrivateEvent("replace_one")
        privacy = event_epsilon(event, delta, "composition")
    w, snaps, releases, evals, details = _run(m, T, tau, gam, sigma, True, rng,
                                              {"lam": lm, "delta_split": split, "calibration": cal})
    if private:
        check_releases(releases, event.n)  # one local report per shuffled record
    return finish("shuffled_truncated_mirror_descent", m.base, w, snaps, step=1.0 / gam, event=event,
                  privacy=privacy, z=0.0 if sigma == 0.0 else sigma / local_sens, sensitivity=local_sens,
                  grad_evals=evals, trace=trace, details=details, sigma=sigma)
