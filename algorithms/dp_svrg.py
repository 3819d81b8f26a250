"""DP-SVRG and DP-SVRG++ — wang-ye-xu-2017 Algorithms 1 and 2 (prox-SVRG with Gaussian noise).

Epoch s: a snapshot gradient at x̃, then inner steps
``v = (1/b) Σ_{i∈B} clip(∇ℓ(x; zᵢ) − ∇ℓ(x̃; zᵢ)) + ṽ + u``, ``x ← Proj_C(prox_{ηr}(x − ηv))``,
and x̃ ← the average of the epoch's inner iterates (Alg. 1 line 10 / Alg. 2).

* Alg. 1 (``dp_svrg``, strongly convex F^r): m inner steps per epoch, each epoch restarts at x̃.
* Alg. 2 (``dp_svrg_pp``, non-strongly convex): m_s = 2^s·m inner steps, and the epoch starts at the
  previous epoch's *last* iterate (x_0^{s+1} = x_{m_s}^s).

Privacy (what the kernel runs, all of it accounted; relation ``replace_one``):

* the snapshot ṽ = ∇F(x̃) reaches every inner step, so it is released once per epoch as a Gaussian
  mechanism on the clipped gradient sum (Δ = 2C): ``SelfComposedEvent(GaussianEvent(z), T)``;
  the paper's listing uses the exact ∇F(x̃), which its Theorem 4.1 does not account for;
* each inner step is a Gaussian mechanism on a uniformly drawn batch of b distinct records
  (Alg. 1 "Pick i_t ∈ [n]" is b = 1), clipped differences with Δ = 2C_diff:
  ``SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z), b, n), Σ_s m_s)``;

composed with ``ComposedEvent``. One noise multiplier z (σ/Δ) is calibrated for both by the dpcore
accountant: Theorems 4.1 / 4.3 state σ only "for some constant c" (under an ε ≤ c₁Tm/n² condition).

``momentum`` μ > 0 takes each inner step's noisy gradient v at the extrapolated point
``u = x_t + μ(x_t − x_{t−1})`` and steps from there, ``x_{t+1} = Proj_C(prox_{ηr}(u − ηv(u)))``
(heavy-ball/Nesterov extrapolation with a constant coefficient, as :func:`algorithms.dp_gd.dp_gd`'s
``momentum``). It is post-processing: u is a function of earlier releases (the noisy snapshot and
inner gradients that produced x_t and x_{t−1}) and public data only, and each inner release is still
the clipped sum of per-example differences ∇ℓ(u; zᵢ) − ∇ℓ(x̃; zᵢ) at a point fixed before the batch
is drawn, so its sensitivity 2·C_diff (replace-one) and the event, hence ε, are unchanged. μ = 0 is
the listings exactly.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from dpcore._jit import jit
from dpcore.events import ComposedEvent, GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale
from mechanisms.kernels import gaussian_noise_kernel

from ._solver_common import (
    as_generator, calibrated_privacy, check_batch_size, check_calibration, check_counts, check_iterations,
    check_relation_replace_one, default_step, finish, initial_point, iteration_count, noise_off_result, setup,
)
from .clipping import clipped_batch_difference_sum_kernel, clipped_sum_sensitivity, snapshot_gradient_sum_kernel
from .dp_gd import BENCHMARK_STEP, check_heavy_ball
from .dp_sgd import default_batch_size, fixed_batch_kernel
from .regularizers import prox_gradient_step_kernel
from .result import SolverResult

#: inner batch when batch_size=None: min(n, BATCH_FACTOR·dp_sgd's b) = min(n, ⌈1024·min(ε, 1)^(−0.6)⌉)
#: (benchmarks/bench_defaults.py: 1024 at ε ≥ 1; ≈ 4096 at ε = 0.1, where b = 1024 left a9a at 0.26–0.27)
BATCH_FACTOR = 4
#: Most epochs of dp_svrg_pp: epoch k runs 2^k·m inner steps, so 2^(T+1) − 2 ≤ MAX_ITERATIONS needs T ≤ 30.
MAX_DOUBLING_EPOCHS = 30
#: defaults for classification losses (benchmarks/bench_defaults.py, RESULTS.md "Defaults on real data"):
#: μ of the inner steps, and the inner-difference clip as a share of its worst case deriv_range·R
#: (a9a, ε = 1: 0.1700 / 0.1707 test error with (0, 1) → 0.162 with (0.5, 0.5); 0.25 collapses a9a to
#: the majority class). Regression losses: μ = 0, share 1.
BENCHMARK_MOMENTUM = 0.5
DIFF_CLIP_FACTOR = 0.5

__all__ = ["dp_svrg", "dp_svrg_pp", "dp_svrg_kernel", "BENCHMARK_MOMENTUM", "DIFF_CLIP_FACTOR"]

_PAPER = "wang-ye-xu-2017 Theorems 4.1/4.3 state sigma only 'for some constant c'"


@jit
def dp_svrg_kernel(kind, param, X, y, row_norms, w0, alpha, l1, ckind, cradius, epochs, m, doubling, lr,
                   clip_full, clip_diff, sigma_full, sigma_inner, batch, rng, momentum=0.0):
    """DP-SVRG (``doubling=False``, Alg. 1) or DP-SVRG++ (``doubling=True``, Alg. 2).

    ``momentum`` μ: each inner step takes its noisy variance-reduced gradient at
    u = x_t + μ(x_t − x_{t−1}) and steps from u (μ = 0: the listings). x_{t−1} restarts at the epoch's
    starting point (Alg. 1: x̃; Alg. 2: carried over from the previous epoch).

    ``sigma_full`` / ``sigma_inner``: noise std on the snapshot gradient sum / the inner batch sum.
    Returns (x̃_T, x̃ after every epoch (epochs+1, d), snapshot releases, inner releases,
    gradient evaluations, clipped count). ``rng``: the caller's ``numpy.random.Generator`` (advanced in place).
    """
    n, d = X.shape
    x_tilde = w0.copy()
    x = w0.copy()
    x_prev = w0.copy()
    u = np.empty(d)
    vt = np.empty(d)
    h = np.empty(d)
    avg = np.empty(d)
    perm = np.arange(n)
    ref = np.empty(n)  # ℓ'(⟨x̃, xᵢ⟩, yᵢ) stored at the snapshot: inner steps need one dot product
    snaps = np.empty((epochs + 1, d))
    snaps[0] = x_tilde
    full_releases = 0
    inner_releases = 0
    evals = 0
    clipped = 0
    for s in range(1, epochs + 1):
        clipped += snapshot_gradient_sum_kernel(kind, param, X, y, row_norms, x_tilde, clip_full, vt, ref)
        if sigma_full > 0.0:
            vt += gaussian_noise_kernel(rng, d, sigma_full)
        full_releases += 1
        evals += n
        for j in range(d):
            vt[j] /= n
        if doubling:
            ms = m * (2 ** s)
        else:
            ms = m
            x[:] = x_tilde
            x_prev[:] = x_tilde
        avg[:] = 0.0
        for t in range(ms):
            for j in range(d):
                u[j] = x[j] + momentum * (x[j] - x_prev[j])
                x_prev[j] = x[j]
            fixed_batch_kernel(rng, perm, batch)
            clipped += clipped_batch_difference_sum_kernel(kind, param, X, y, row_norms, u, ref, perm, batch,
                                                           clip_diff, h)
            if sigma_inner > 0.0:
                h += gaussian_noise_kernel(rng, d, sigma_inner)
            inner_releases += 1
            evals += batch
            for j in range(d):
                h[j] = h[j] / batch + vt[j]
            prox_gradient_step_kernel(u, h, lr, lr, alpha, l1, ckind, cradius)
            for j in range(d):
                x[j] = u[j]
                avg[j] += x[j]
        for j in range(d):
            x_tilde[j] = avg[j] / ms
        snaps[s] = x_tilde
    return x_tilde, snaps, full_releases, inner_releases, evals, clipped


def _run(name, doubling, X, y, *, loss, epsilon, delta, alpha, l1, epochs, inner_steps, batch_size, learning_rate,
         step_factor, momentum, clip_norm, data_norm_bound, constraint, radius, relation, calibration, accountant,
         noise_multiplier, w0, rng, trace, loss_params, tol) -> SolverResult:
    check_calibration(calibration, _PAPER)
    check_relation_replace_one(relation, "DP-SVRG samples inner batches without replacement")
    T = check_iterations("epochs", epochs)
    if doubling and T > MAX_DOUBLING_EPOCHS:  # epoch k runs 2^k·m inner steps: refuse before forming 2^T
        raise ValueError(f"epochs must be an integer in [1, {MAX_DOUBLING_EPOCHS}] for dp_svrg_pp (epoch k runs "
                         f"2^k inner steps); got {epochs!r}")
    s = setup(X, y, loss=loss, alpha=alpha, l1=l1, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, layouts=True)
    n = s.data.n
    if batch_size is None:  # public rule of ε, capped at n (public under replace-one)
        b = min(BATCH_FACTOR * default_batch_size(epsilon), n)
    else:
        b = check_batch_size(batch_size, n)
    per_pass = math.ceil(n / b)
    if inner_steps is None:
        m = per_pass if not doubling else max(1, math.ceil(per_pass / 2 ** (T - 1)))
    else:
        m = check_iterations("inner_steps", inner_steps)
    total_inner = m * T if not doubling else m * (2 ** (T + 1) - 2)
    iteration_count("epochs and inner_steps", (epochs, inner_steps), total_inner)
    lr = default_step(learning_rate, s, step_factor)
    classification = s.loss.task == "classification"  # the benchmarked rules (regression: the listings' ones)
    if momentum is None:
        mu = BENCHMARK_MOMENTUM if classification else 0.0
    else:
        mu = check_heavy_ball(momentum)
    # Clip of the difference term: with clip_norm=None the exact bound |ℓ'(z) − ℓ'(z')|·‖x‖ ≤ deriv_range·R,
    # times DIFF_CLIP_FACTOR for classification losses (a public constant; the sensitivity is 2·clip_diff).
    clip_diff = s.clip if clip_norm is not None else (
        s.loss.deriv_range * data_norm_bound * (DIFF_CLIP_FACTOR if classification else 1.0))
    sens_full = clipped_sum_sensitivity(s.clip, relation)
    sens_inner = clipped_sum_sensitivity(clip_diff, relation)

    def event_fn(z: float):
        return ComposedEvent([
            SelfComposedEvent(GaussianEvent(z, relation), T),
            SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, relation), b, n), total_inner),
        ])

    z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                noise_multiplier=noise_multiplier, relation=relation,
                                                accountant=accountant)
    if noise_multiplier is None and math.isinf(epsilon) and tol is not None:
        return noise_off_result(name, s, w0, tol=tol, event=event, privacy=privacy, trace=trace,
                                details={"learning_rate": lr, "epochs": T, "inner_steps": m, "batch_size": b})
    gen = as_generator(rng)
    w, snaps, full_rel, inner_rel, evals, clipped = dp_svrg_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, initial_point(w0, s), s.reg.alpha,
        s.reg.l1, s.constraint.kind, s.constraint.radius, T, m, doubling, lr, s.clip, clip_diff,
        least_noise_scale(z, sens_full), least_noise_scale(z, sens_inner), b, gen, mu)
    check_counts(full_rel + inner_rel, event)
    return finish(name, s, w, snaps, step=lr, event=event, privacy=privacy, z=z, sensitivity=sens_inner,
                  grad_evals=evals, trace=trace,
                  details={"releases": {"snapshot": full_rel, "inner": inner_rel}, "clipped": clipped,
                           "learning_rate": lr, "momentum": mu, "epochs": T, "inner_steps": m, "batch_size": b,
                           "clip_norm_difference": clip_diff, "sigma_snapshot": least_noise_scale(z, sens_full),
                           "calibration": cal})


def dp_svrg(
    X: np.ndarray, y: np.ndarray, *, loss: str = "logistic", epsilon: Optional[float] = None, delta: float = 1e-5,
    alpha: float = 0.0, l1: float = 0.0, epochs: int = 5, inner_steps: Optional[int] = None,
    batch_size: Optional[int] = None, learning_rate: Optional[float] = None, momentum: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None, constraint: str = "none", radius: Optional[float] = None,
    relation: str = "replace_one", calibration: str = "accountant", accountant: str = "rdp",
    noise_multiplier: Optional[float] = None, w0: Optional[np.ndarray] = None, rng: object = None,
    trace: bool = False, loss_params: Optional[dict] = None, tol: Optional[float] = 1e-9,
) -> SolverResult:
    """DP-SVRG (wang-ye-xu-2017 Alg. 1) for strongly convex F^r = mean loss + r, r = (alpha/2)‖·‖² + l1‖·‖₁.

    Parameters
    ----------
    epochs : int
        T outer iterations (snapshots).
    inner_steps : int, optional
        m inner steps per epoch; default ⌈n/b⌉ (one pass of inner batches).
    batch_size : int, optional
        b records per inner step, drawn without replacement (Alg. 1 is b = 1); default
        min(n, 4·:func:`algorithms.dp_sgd.default_batch_size`) = min(n, ⌈1024·min(ε, 1)^(−0.6)⌉)
        (n is public under replace-one): 1024 at ε ≥ 1, ≈ 4096 at ε = 0.1, where the inner noise
        σ/b dominates (``benchmarks/bench_defaults.py``).
    learning_rate : float, optional
        η; default 1.9/β, β = c₂·data_norm_bound² (data-independent; with T = 5 epochs and b = 1024
        chosen by ``benchmarks/bench_defaults.py`` on a9a, RESULTS.md "Defaults"). Theorem 4.2's
        η = 1/(12β) (η ≤ 1/(12L)) is ``learning_rate=1/(12β)``; on a9a it does not leave the
        majority classifier within the privacy budget.
    momentum : float, optional
        μ in [0, 1): each inner step's noisy gradient is taken at x_t + μ(x_t − x_{t−1}) (module
        docstring; post-processing of the same releases, ε unchanged). Default 0.5 for classification
        losses (``BENCHMARK_MOMENTUM``, ``benchmarks/bench_defaults.py``: with the halved difference
        clip below, a9a at ε = 1 goes from 0.170 to 0.162 test error), 0 — Alg. 1 / 2 — for
        regression losses.
    clip_norm : float, optional
        C for both the snapshot per-example gradients and the inner differences. None → the
        Lipschitz constant G for the snapshot and, for the differences, deriv_range·data_norm_bound
        (their worst case) times ``DIFF_CLIP_FACTOR`` = 0.5 for classification losses (1 for
        regression): a public constant, accounted as the inner sensitivity; the differences are
        small near the snapshot, and the inner noise, which dominates, halves.
    Other parameters as in :func:`algorithms.dp_gd.dp_gd` (``tol``: the ``epsilon=inf`` convergence
    tolerance); ``relation`` must be ``"replace_one"``.
    """
    return _run("dp_svrg", False, X, y, loss=loss, epsilon=epsilon, delta=delta, alpha=alpha, l1=l1, epochs=epochs,
                inner_steps=inner_steps, batch_size=batch_size, learning_rate=learning_rate, step_factor=BENCHMARK_STEP,
                momentum=momentum, clip_norm=clip_norm, data_norm_bound=data_norm_bound, constraint=constraint,
                radius=radius, relation=relation, calibration=calibration, accountant=accountant,
                noise_multiplier=noise_multiplier, w0=w0, rng=rng, trace=trace, loss_params=loss_params, tol=tol)


def dp_svrg_pp(
    X: np.ndarray, y: np.ndarray, *, loss: str = "logistic", epsilon: Optional[float] = None, delta: float = 1e-5,
    alpha: float = 0.0, l1: float = 0.0, epochs: int = 4, inner_steps: Optional[int] = None,
    batch_size: Optional[int] = None, learning_rate: Optional[float] = None, momentum: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None, constraint: str = "none", radius: Optional[float] = None,
    relation: str = "replace_one", calibration: str = "accountant", accountant: str = "rdp",
    noise_multiplier: Optional[float] = None, w0: Optional[np.ndarray] = None, rng: object = None,
    trace: bool = False, loss_params: Optional[dict] = None, tol: Optional[float] = 1e-9,
) -> SolverResult:
    """DP-SVRG++ (wang-ye-xu-2017 Alg. 2) for convex, not necessarily strongly convex F^r.

    Epoch s runs m_s = 2^s·m inner steps; default m = ⌈⌈n/b⌉ / 2^(T−1)⌉ so the last epoch is about two
    passes. Default η = 1.9/β, T = 4, b = 1024, μ = 0.5 and the halved difference clip for classification
    losses (benchmark, as :func:`dp_svrg`; μ carries over epoch boundaries, as the iterate does); Theorem 4.4's
    η = 1/(13β) is ``learning_rate=1/(13β)``. Other parameters as in :func:`dp_svrg`.
    """
    return _run("dp_svrg_pp", True, X, y, loss=loss, epsilon=epsilon, delta=delta, alpha=alpha, l1=l1,
                epochs=epochs, inner_steps=inner_steps, batch_size=batch_size, learning_rate=learning_rate,
                step_factor=BENCHMARK_STEP, momentum=momentum, clip_norm=clip_norm, data_norm_bound=data_norm_bound,
                constraint=constraint, radius=radius, relation=relation, calibration=calibration, accountant=accountant,
                noise_multiplier=noise_multiplier, w0=w0, rng=rng, trace=trace, loss_params=loss_params, tol=tol)
