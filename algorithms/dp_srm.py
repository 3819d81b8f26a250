"""DP-SRM: differentially private stochastic recursive momentum — wang-jayaraman-evans-gu Algorithm 1.

The private gradient estimator (Alg. 1 lines 2–3 and 7–8; the momentum recursion of Cutkosky and
Orabona's STORM) is

    v_p⁰ = (1/b₀)(Σ_{i∈B₀} clip_{C₁}(∇ℓᵢ(θ⁰)) + u⁰),
    v_pᵗ⁺¹ = (1 − γ)·v_pᵗ
             + (1/b)(Σ_{i∈B_{t+1}} [γ·clip_{C₁}(∇ℓᵢ(θᵗ⁺¹)) + (1 − γ)·clip_{C₂}(∇ℓᵢ(θᵗ⁺¹) − ∇ℓᵢ(θᵗ))] + uᵗ⁺¹),

which without clipping is Alg. 1's ``vᵗ⁺¹ = ∇F_B(θᵗ⁺¹) + (1 − γ)(v_pᵗ − ∇F_B(θᵗ))``. The batches are
drawn uniformly without replacement (b₀ then b records, fresh each step) and the step is Alg. 1
line 5's adaptive ``θᵗ⁺¹ = θᵗ − ηₜ·dᵗ`` with ``ηₜ = min{ζ/(n₀L‖dᵗ‖), 1/(2n₀L)}`` — exposed as
``step_bound`` = ζ/(n₀L) (a cap on ‖θᵗ⁺¹ − θᵗ‖) and ``learning_rate`` = 1/(2n₀L).

Sensitivity (§6.1, eq. (6.1)): one record changes the first released sum by ≤ 2C₁ (replace-one) and
each later one by ≤ 2(γC₁ + (1 − γ)C₂) — every record contributes ``γ·clip_{C₁}(g) + (1 − γ)·
clip_{C₂}(Δg)``, of norm ≤ γC₁ + (1 − γ)C₂. (§7.1 prints the two clip norms the other way round;
eq. (6.1) is the one the proof uses.) The noise u has std ``z·Δ`` on the sum, one noise multiplier
z for all releases.

Privacy (``calibration="accountant"``, default): the releases are subsampled Gaussians,
``SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), b₀, n)`` then T − 1 times the same
with b, composed; z is calibrated by dpcore. ``calibration="paper"``: σ₀² and σ² of Theorem 5.1 with
G → C₁ and ζ/n₀ → C₂ (§5 after Corollary 5.3), its conditions σ′² ≥ 0.7 and
α − 1 ≤ 2σ′²·log(1/(τα(1 + σ′²)))/3 checked (``ValueError`` when they fail), accounted as
``DpSrmEvent(σ′, τ, T)`` (Lemma 3.7 × T, :mod:`dpcore.rdp.dp_srm`). Both routes report the ε dpcore
computes for the event.

Departures from Alg. 1, all data-independent: the regulariser r (L2 or the non-convex penalty of
§7.1) is differentiable and known, so its exact gradient is added to the direction
``dᵗ = v_pᵗ + ∇r(θᵗ)`` instead of passing through the estimator and the clipping (the recursion
reproduces ∇r exactly anyway); ``output="last"`` (the default) returns θᵀ instead of Alg. 1's
uniformly random iterate (``output="random"``); ``extrapolation`` μ > 0 (the default for classification
losses) queries the gradients at qᵗ = θᵗ + μ(θᵗ − θᵗ⁻¹) instead of θᵗ — the difference term then
compares qᵗ⁺¹ with qᵗ, the step is θᵗ⁺¹ = qᵗ − ηₜdᵗ and ``step_bound`` caps ‖θᵗ⁺¹ − qᵗ‖ — every query
point is a function of released quantities, so the sensitivities of §6.1 and the event are unchanged.

Defaults (``defaults="benchmark"``; rules of the public n, ε, δ and the loss's constants only, chosen
by ``benchmarks/bench_nonconvex.py --srm-sweep`` on a9a, ijcnn1 and synthetic data, RESULTS.md
"Non-convex solvers"): full batches b₀ = b = n, γ = 1/2, C₂ = C₁/50, no step cap (ζ = ∞), last
iterate, ``accountant="auto"``, for the logistic loss with full batches C₁ = 0.85·G (below), and for classification losses T = :func:`default_srm_steps` (n, ε) = min(100, max(10,
⌈nε/160⌉)) releases, largest step :func:`algorithms.dp_gd.default_step_factor` (n, ε, T)/β =
min(1.9, nε/(600√T))/β and, with full batches, the extrapolation μ = 0.8
(:data:`BENCHMARK_EXTRAPOLATION`: the gradients are queried at θᵗ + μ(θᵗ − θᵗ⁻¹), Nesterov-style — a
function of released iterates only, so the event and ε are unchanged). Regression losses keep T = :func:`algorithms.dp_gd.default_steps`, step 1.9/β,
μ = 0 (not benchmarked). The recursion keeps every release's noise in vᵗ with weight ≈ 1/γ, so its
lower per-release sensitivity 2(γC₁ + (1 − γ)C₂) buys no less noise in the iterates than DP-GD's at
the same T, and minibatch sampling noise only adds: b = n/10 (b₀ = n, 5·T_gd steps) was 0.003–0.016
worse at ε = 0.2 on all three data sets (0.003 worse to 0.0007 better at ε = 1), the paper's settings
0.012–0.029 worse at ε = 0.2 (0.002–0.011 at ε = 1). Fewer,
extrapolated steps are what moved DP-SRM on a9a (Table 2 setting, 10 seeds): 0.1614 / 0.1592 → 0.1607 /
0.1552 at ε = 0.2 / 0.5; DP-GD on the same schedule and extrapolation is within 0.001 on every benchmarked set.
The variance-reduction regime (step cap s, C₂ = s/4 ≥ every per-example gradient difference of the
logistic loss on ‖x‖ ≤ 1 — the C₂ clip a no-op at μ = 0 — and γ = C₂/C₁ as in §7.1) did not win
(``--srm-sweep`` rows "VR regime"; ε = 0.2, 4 sweep seeds, RESULTS.md): γ = C₂/C₁ lost to γ = 3C₂/C₁ in
all 24 a9a and 4 synthetic settings and tied on ijcnn1 (a9a 0.166–0.21 against 0.159 for these defaults
and 0.161 for DP-GD with 20 steps); γ ≥ 3C₂/C₁ reached 0.161 on a9a, 0.0954 on ijcnn1 (defaults 0.0924) and 0.2600 on synthetic data
(defaults 0.2621, DP-GD 20 steps 0.2600). Its per-step noise in vᵗ is small, but a release's noise stays
in the iterates with total weight ≈ 1/γ — ≈ 2(2 − γ)C₁·z at γ = C₂/C₁, twice DP-GD's — and the iterates
integrate it (99 % of the Hessian eigenvalues of the a9a objective at its optimum are below 1/(Tη), so
no direction relaxes within a run).
Averaged outputs (``output="tail_average"`` / ``"ema"``, :func:`averaged_iterate`): the mean of the last
⌈T/2⌉ iterates (Polyak–Ruppert tail averaging) or their bias-corrected exponential moving average (ρ = 0.9) —
post-processing of the iterates the event already accounts for, so ε, z and every sensitivity are those of the
last-iterate run. Options, not defaults: ``benchmarks/bench_nonconvex.py --averaging`` (sweep seeds 5000–5004,
RESULTS.md "Non-convex solvers") finds them lowering the training objective where the run is near stationarity
(a9a ε = 0.5: −0.008 for the tail average) but raising the test error at ε = 0.2 on a9a (+0.0018), Adult (+0.003),
on ijcnn1 at every ε (objective +0.006, error +0.001–0.002) and on breast_cancer (+0.02–0.03, T = 10): with T ∝ nε
the iterates are still travelling and the average lags behind them.
Clip C₁ = :data:`BENCHMARK_CLIP_FRACTION`·G = 0.85·G (the logistic loss — the one benchmarked — with full batches; other
losses and minibatches keep C₁ = G; G the loss's Lipschitz
bound for ``data_norm_bound``, e.g. G = 1 for the logistic loss on ‖x‖ ≤ 1): the noise is ∝ C₁, and a clip below G
trades 15 % of it for the bias of a Huber-like surrogate on the records whose gradients exceed 0.85·G. The
kernel clips at this C₁ and every sensitivity, σ and the event's multiplier follow from it (the same C₁).
``bench_nonconvex.py --averaging --accountant auto`` (sweep seeds 5000–5004, paired by seed, RESULTS.md
"Non-convex solvers"): the test error with 0.85·G is better than with C₁ = G, or worse by at most 0.002 (about one
standard error; synthetic_wide at ε = 1: +0.0020, SE 0.0019), on all ten data sets at ε ∈ {0.2, 0.5, 1} — the six it was chosen on (a9a −0.0013 / −0.0006 at ε = 0.2 / 0.5, Adult −0.0009
at ε = 0.2, breast_cancer −0.036 / −0.015, ijcnn1 and synthetic within ±0.0007) and four held out (wine
−0.030 / −0.033 / −0.033, synthetic_wide −0.001 / −0.003 / +0.002 (SE 0.002), synthetic_wide_large −0.005 / −0.004 / −0.003,
benchmarks/datasets.py's synthetic −0.002 / −0.003 / −0.002); the training objective drops on every set
but digits (+0.014 / +0.051 at ε = 0.5 / 1, where every setting predicts the majority class) and ijcnn1
(≤ +0.0004). 0.8·G lowers the objective further but costs ijcnn1 (+0.0003 test error at ε = 0.2) and digits
(+0.074). Table 2's objective (a9a, 10 seeds, paper 0.3579 / 0.3506): 0.3627 / 0.3502 with C₁ = G and "rdp",
0.3591 / 0.3479 with C₁ = G and "auto", 0.3545 / 0.3449 (worst seed 0.3580 / 0.3474) with these defaults.
``clip_norm=G`` (1.0 on unit rows with the logistic loss) is the previous default; minibatches, regression
losses and ``defaults="paper"`` keep C₁ = G (not benchmarked).
``defaults="paper"``: the §7.1 a9a choices — b₀ = b = 100, 5 data passes, C₂ = C₁/100, γ = C₂/C₁,
step cap ζ/(n₀L) = C₂/β_loss (the C₂ clip is then a no-op at extrapolation 0; it always runs), largest step 1/(2β), and
the last iterate — what §7 reports (Figure 1 plots the objective of the iterates along the run; Alg. 1's uniformly
random iterate, ``output="random"``, is often one of the first steps, near θ⁰ = 0: on a9a it predicted 2–6 % positives
and was worse than the majority class on some seeds, issue 24). Arguments given explicitly override either set.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

import numpy as np

import dpcore
from dpcore.accounting import ACCOUNTANTS
from dpcore._jit import jit
from dpcore._validation import (
    check_choice, check_half_open_unit, check_open_unit, check_positive, check_positive_int, check_sampling_rate,
)
from dpcore.events import ComposedEvent, DpSrmEvent, GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale
from mechanisms.kernels import gaussian_noise_kernel

from ._data import prepare_data
from ._solver_common import (
    Setup, as_generator, calibrated_privacy, check_batch_size, check_counts, check_iterations, check_relation_replace_one,
    default_step, finish, initial_point, iteration_count, setup,
)
from .clipping import clipped_batch_difference_sum_kernel, clipped_batch_gradient_sum_kernel
from .dp_gd import BENCHMARK_STEP, check_heavy_ball, default_step_factor, default_steps
from .dp_sgd import fixed_batch_kernel
from .losses import get_loss, loss_deriv, row_dot
from .regularizers import nonconvex_gradient_kernel
from .result import SolverResult

PAPER_BATCH_SIZE = 100  # §7.1 a9a: b₀ = b = 100 (tuned over {50, 100, 200})
PAPER_EPOCHS = 5.0  # Table 2: 4–5 data passes
BENCHMARK_EXTRAPOLATION = 0.8  # default μ (classification losses); benchmarks/bench_nonconvex.py --srm-sweep
STEPS_SCALE = 160.0  # T = min(100, max(10, ⌈nε/160⌉)); benchmarks/bench_nonconvex.py --srm-sweep
BENCHMARK_CLIP_FRACTION = 0.85  # default C₁ = 0.85·G (logistic loss, full batches); bench_nonconvex.py --averaging
TAIL_FRACTION = 0.5  # output="tail_average": the mean of the last ⌈T/2⌉ iterates
EMA_DECAY = 0.9  # output="ema": weights ∝ 0.9^(T − t) on θᵗ, t = 1..T
AVERAGED_OUTPUTS = ("tail_average", "ema")

__all__ = ["dp_srm", "PAPER_BATCH_SIZE", "PAPER_EPOCHS", "BENCHMARK_EXTRAPOLATION", "BENCHMARK_CLIP_FRACTION",
           "default_srm_steps",
           "TAIL_FRACTION", "EMA_DECAY", "averaged_iterate", "bounded_step_kernel", "dp_srm_event", "dp_srm_kernel",
           "dp_srm_query", "dp_srm_query_kernel", "dp_srm_paper_sigmas", "dp_srm_sensitivities"]


def default_srm_steps(n: int, epsilon: Optional[float]) -> int:
    """T = min(100, max(10, ⌈n·ε/160⌉)) (100 for ε = inf or a given noise multiplier): public n and ε only.

    A ~10× lower step count per unit of n·ε than :func:`algorithms.dp_gd.default_steps`: the full-batch
    recursion with extrapolation needs fewer steps, and each step's noise grows with √T
    (a9a, ε = 0.2: T = 41 instead of 100; RESULTS.md "Non-convex solvers").
    """
    return default_steps(n, epsilon, STEPS_SCALE)


def averaged_iterate(iterates: np.ndarray, output: str, *, tail_fraction: float = TAIL_FRACTION,
                     ema_decay: float = EMA_DECAY) -> np.ndarray:
    """An average of the iterates θ¹, …, θᵀ (Polyak & Juditsky 1992 / Ruppert 1988 tail averaging, or an
    exponential moving average).

    Privacy: post-processing. Every θᵗ is a function of the releases 1..t, all of which the run's event
    composes (T releases whether the output is θᵀ or an average), so any function of θ¹..θᵀ is covered by the
    same ε (Dwork & Roth 2014, Prop. 2.1) — no sensitivity, clip or noise scale changes.

    Parameters
    ----------
    iterates : ndarray, shape (T + 1, d)
        θ⁰ (the initial point, never averaged), θ¹, …, θᵀ (parameter units).
    output : {"tail_average", "ema"}
        ``"tail_average"``: the mean of the last k = ⌈``tail_fraction``·T⌉ iterates θᵀ⁻ᵏ⁺¹..θᵀ.
        ``"ema"``: Σₜ ρᵀ⁻ᵗθᵗ / Σₜ ρᵀ⁻ᵗ over t = 1..T, ρ = ``ema_decay`` (the bias-corrected exponential moving
        average; ρ = 0 is θᵀ).
    tail_fraction : float
        In (0, 1].
    ema_decay : float
        ρ in [0, 1).
    """
    check_choice("output", output, AVERAGED_OUTPUTS)
    T = iterates.shape[0] - 1
    if T < 1:
        raise ValueError(f"iterates must hold θ⁰ and at least one step; got shape {iterates.shape}")
    if output == "tail_average":
        k = math.ceil(check_sampling_rate("tail_fraction", tail_fraction) * T)
        return iterates[T - k + 1:].mean(axis=0)
    rho = check_half_open_unit("ema_decay", ema_decay)
    weights = rho ** np.arange(T - 1, -1, -1, dtype=np.float64)  # θ¹ … θᵀ; ρ^(T−1) may underflow to 0: harmless
    return weights @ iterates[1:] / weights.sum()


def dp_srm_sensitivities(clip_norm: float, diff_clip_norm: float, momentum: float) -> tuple[float, float]:
    """Replace-one ℓ2 sensitivities (Δ₀, Δ) of the first and the later released sums (§6.1, (6.1)).

    Parameters
    ----------
    clip_norm : float
        C₁ > 0, per-example gradient clip (gradient units).
    diff_clip_norm : float
        C₂ > 0, per-example gradient-difference clip (gradient units).
    momentum : float
        γ in (0, 1].

    Returns
    -------
    (float, float)
        ``2C₁`` and ``2(γC₁ + (1 − γ)C₂)``.
    """
    c1 = check_positive("clip_norm", clip_norm)
    c2 = check_positive("diff_clip_norm", diff_clip_norm)
    g = check_momentum(momentum)
    return 2.0 * c1, 2.0 * (g * c1 + (1.0 - g) * c2)


def dp_srm_event(noise_multiplier: float, initial_batch_size: int, batch_size: int, n: int, steps: int):
    """The dpcore event of T DP-SRM releases (accountant route, replace-one): a without-replacement
    subsampled Gaussian on b₀ of n records, then T − 1 on b of n, all at the same noise multiplier."""
    first = SampledWithoutReplacementEvent(GaussianEvent(noise_multiplier, "replace_one"), initial_batch_size, n)
    if steps == 1:
        return first
    later = SampledWithoutReplacementEvent(GaussianEvent(noise_multiplier, "replace_one"), batch_size, n)
    return ComposedEvent([first, SelfComposedEvent(later, steps - 1)])


def check_momentum(momentum: float) -> float:
    g = check_positive("momentum", momentum)
    if g > 1.0:
        raise ValueError(f"momentum must be in (0, 1]; got {momentum!r}")
    return g


def dp_srm_query(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, w_prev: np.ndarray, *, loss: str = "logistic",
    clip_norm: float, diff_clip_norm: float, momentum: float, loss_params: Optional[dict] = None,
) -> np.ndarray:
    """The un-noised sum a later DP-SRM step releases, over all rows (the batch = the dataset):
    ``Σᵢ [γ·clip_{C₁}(∇ℓᵢ(w)) + (1 − γ)·clip_{C₂}(∇ℓᵢ(w) − ∇ℓᵢ(w_prev))]`` — the deterministic part
    whose replace-one sensitivity is ``dp_srm_sensitivities(C₁, C₂, γ)[1]`` (§6.1; for audits).

    Parameters
    ----------
    X, y : arrays
        Features (n, d) and labels (as :func:`dp_srm`).
    w, w_prev : arrays, shape (d,)
        θᵗ and θᵗ⁻¹ (parameter units).
    clip_norm, diff_clip_norm : float
        C₁ and C₂ (gradient units; ``inf`` switches a clip off).
    momentum : float
        γ in (0, 1].
    """
    lossobj = get_loss(loss, **(loss_params or {}))
    data = prepare_data(X, y, lossobj.task, None)
    gamma = check_momentum(momentum)
    c1 = check_positive("clip_norm", clip_norm, allow_inf=True)
    c2 = check_positive("diff_clip_norm", diff_clip_norm, allow_inf=True)
    d = data.d
    w = np.ascontiguousarray(w, dtype=np.float64)
    w_prev = np.ascontiguousarray(w_prev, dtype=np.float64)
    if w.shape != (d,) or w_prev.shape != (d,):
        raise ValueError(f"w and w_prev must have shape ({d},)")
    out, scratch = np.empty(d), np.empty(d)
    dp_srm_query_kernel(lossobj.kind, lossobj.param, data.X, data.y, data.row_norms, w_prev, w, np.arange(data.n),
                        data.n, gamma, c1, c2, np.empty(data.n), out, scratch)
    return out


def dp_srm_paper_sigmas(
    epsilon: float, delta: float, *, n: int, steps: int, batch_size: int, initial_batch_size: int,
    clip_norm: float, diff_clip_norm: float, momentum: float, beta: float = 0.5,
) -> dict:
    """σ₀, σ of Theorem 5.1 (wang-jayaraman-evans-gu), with its conditions checked.

    σ₀² = 14T·C₁²·α/(βn²ε), σ² = 14T·((1 − γ)C₂ + γC₁)²·α/(βn²ε), α = log(1/δ)/((1 − β)ε) + 1
    (G → C₁, ζ/n₀ → C₂ under clipping). σ₀, σ are stds of the noise on the *averaged* estimator v;
    the sums carry b₀σ₀ and bσ. The theorem holds when σ′² = min{b²σ²/(4K²), b₀²σ₀²/(4C₁²)} ≥ 0.7
    (K = (1 − γ)C₂ + γC₁) and α − 1 ≤ 2σ′²·log(1/(τα(1 + σ′²)))/3 with τ = max{b₀, b}/n.

    Returns
    -------
    dict
        ``sigma0``, ``sigma`` (averaged-estimator stds), ``noise_multiplier`` σ′, ``order`` α,
        ``sampling_rate`` τ, ``beta``.

    Raises
    ------
    ValueError
        If σ′² < 0.7 or the order condition fails (the theorem then gives no guarantee).
    """
    eps = check_positive("epsilon", epsilon)
    if not math.isfinite(eps):
        raise ValueError("epsilon must be finite for calibration='paper'")
    b = check_positive_int("batch_size", batch_size)
    b0 = check_positive_int("initial_batch_size", initial_batch_size)
    T = check_positive_int("steps", steps)
    n = check_positive_int("n", n)
    beta = check_open_unit("beta", beta)
    d0, d1 = dp_srm_sensitivities(clip_norm, diff_clip_norm, momentum)
    c1, k = d0 / 2.0, d1 / 2.0
    order = math.log(1.0 / delta) / ((1.0 - beta) * eps) + 1.0
    common = 14.0 * T * order / (beta * n * n * eps)
    sigma0 = math.sqrt(common) * c1
    sigma = math.sqrt(common) * k
    s2 = min(b * b * sigma * sigma / (4.0 * k * k), b0 * b0 * sigma0 * sigma0 / (4.0 * c1 * c1))
    tau = max(b0, b) / n
    if s2 < 0.7:
        raise ValueError(f"calibration='paper' needs sigma'^2 >= 0.7 (Theorem 5.1); got {s2:.6g} — raise steps or "
                         "the batch sizes, or use calibration='accountant'")
    limit = 2.0 * s2 * math.log(1.0 / (tau * order * (1.0 + s2))) / 3.0
    if not order - 1.0 <= limit:
        raise ValueError(f"calibration='paper' needs alpha - 1 <= 2 sigma'^2 log(1/(tau alpha (1+sigma'^2)))/3 "
                         f"(Theorem 5.1); got alpha - 1 = {order - 1.0:.6g} > {limit:.6g} — use "
                         "calibration='accountant'")
    return {"sigma0": sigma0, "sigma": sigma, "noise_multiplier": math.sqrt(s2), "order": order,
            "sampling_rate": tau, "beta": beta}


@jit
def dp_srm_query_kernel(kind, param, X, y, row_norms, w_prev, w, idx, count, gamma, clip1, clip2, ref, s1, s2):
    """The released sum of a later step before noise (§6.1's q̃ₜ with clipping):
    ``s1 ← Σ_k [γ·clip_{C₁}(∇ℓ_k(w)) + (1 − γ)·clip_{C₂}(∇ℓ_k(w) − ∇ℓ_k(w_prev))]`` over rows
    ``idx[:count]`` (``ref``, ``s2``: scratch of lengths n and d). Returns (clipped gradients,
    clipped differences)."""
    for k in range(count):
        i = idx[k]
        ref[i] = loss_deriv(kind, param, row_dot(X, i, w_prev), y[i])
    c1 = clipped_batch_gradient_sum_kernel(kind, param, X, y, row_norms, w, idx, count, clip1, s1)
    c2 = clipped_batch_difference_sum_kernel(kind, param, X, y, row_norms, w, ref, idx, count, clip2, s2)
    for j in range(s1.shape[0]):
        s1[j] = gamma * s1[j] + (1.0 - gamma) * s2[j]
    return c1, c2


@jit
def bounded_step_kernel(w, w_prev, direction, lr, step_bound):
    """Alg. 1 line 5's adaptive step: ``w_prev ← w``, then ``w ← w − η·direction`` with
    ``η = min(lr, step_bound/‖direction‖)`` (``lr`` = 1/(2n₀L), ``step_bound`` = ζ/(n₀L), so
    ‖w − w_prev‖ ≤ step_bound). In place; returns η."""
    nrm = math.sqrt(np.sum(direction * direction))
    eta = lr
    if nrm * lr > step_bound:
        eta = step_bound / nrm
    w_prev[:] = w
    w -= eta * direction
    return eta


@jit
def dp_srm_kernel(kind, param, X, y, row_norms, w0, alpha, nonconvex, steps, b0, b, gamma, clip1, clip2, sigma0,
                  sigma, step_bound, lr, rng, extrapolation=0.0):
    """Run Alg. 1 for ``steps`` = T releases and T updates.

    ``sigma0``, ``sigma``: noise stds on the first / later *sums*; ``step_bound`` = ζ/(n₀L) (inf: no
    cap); ``lr`` = 1/(2n₀L). ``rng``: the caller's ``numpy.random.Generator`` (advanced in place).
    ``extrapolation`` μ ≥ 0: the gradients of step t + 1 are queried at ``qᵗ⁺¹ = θᵗ⁺¹ + μ(θᵗ⁺¹ − θᵗ)``
    (the difference term at qᵗ⁺¹ and qᵗ) and the step starts from there, ``θᵗ⁺¹ = qᵗ − ηₜ·dᵗ``
    (μ = 0: Alg. 1, q = θ). Returns (iterates θ⁰..θᵀ (T+1, d), releases, gradient evaluations,
    clipped gradients, clipped differences).
    """
    n, d = X.shape
    q = w0.copy()  # the query point qᵗ (= θᵗ when μ = 0)
    idx = np.arange(n)
    ref = np.empty(n)
    s1 = np.empty(d)
    s2 = np.empty(d)
    u = np.empty(d)
    direction = np.empty(d)
    q_prev = np.empty(d)
    snaps = np.empty((steps + 1, d))
    snaps[0] = q
    if b0 < n:  # a full batch needs no draw (and keeps the summation order fixed)
        fixed_batch_kernel(rng, idx, b0)
    clipped1 = clipped_batch_gradient_sum_kernel(kind, param, X, y, row_norms, q, idx, b0, clip1, s1)
    clipped2 = 0
    evals = b0
    if sigma0 > 0.0:
        s1 += gaussian_noise_kernel(rng, d, sigma0)
    u[:] = s1 / b0
    releases = 1
    for t in range(steps):
        for j in range(d):
            direction[j] = u[j] + alpha * q[j]
        nonconvex_gradient_kernel(nonconvex, q, 1.0, direction)
        bounded_step_kernel(q, q_prev, direction, lr, step_bound)  # q ← θᵗ⁺¹, q_prev ← qᵗ
        snaps[t + 1] = q
        if t + 1 < steps:
            if extrapolation > 0.0:
                for j in range(d):
                    q[j] += extrapolation * (q[j] - snaps[t, j])
            if b < n:
                fixed_batch_kernel(rng, idx, b)
            c1, c2 = dp_srm_query_kernel(kind, param, X, y, row_norms, q_prev, q, idx, b, gamma, clip1, clip2, ref,
                                         s1, s2)
            clipped1 += c1
            clipped2 += c2
            evals += 2 * b
            if sigma > 0.0:
                s1 += gaussian_noise_kernel(rng, d, sigma)
            for j in range(d):
                u[j] = (1.0 - gamma) * u[j] + s1[j] / b
            releases += 1
    return snaps, releases, evals, clipped1, clipped2


def dp_srm(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: Optional[float] = None,
    delta: float = 1e-5,
    alpha: float = 0.0,
    penalty: str = "l2",
    batch_size: Optional[int] = None,
    initial_batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps: Optional[int] = None,
    momentum: Optional[float] = None,
    extrapolation: Optional[float] = None,
    learning_rate: Optional[float] = None,
    step_bound: Optional[float] = None,
    clip_norm: Optional[float] = None,
    diff_clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    output: Optional[str] = None,
    tail_fraction: Optional[float] = None,
    ema_decay: Optional[float] = None,
    defaults: str = "benchmark",
    relation: str = "replace_one",
    calibration: str = "accountant",
    beta: float = 0.5,
    accountant: str = "auto",
    noise_multiplier: Optional[float] = None,
    w0: Optional[np.ndarray] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Differentially private stochastic recursive momentum (wang-jayaraman-evans-gu Alg. 1).

    Parameters
    ----------
    X, y, loss, delta, data_norm_bound, w0, rng, loss_params :
        As in :func:`algorithms.dp_gd.dp_gd`.
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` switches the noise off (ε = inf reported).
    alpha : float
        Regulariser strength ≥ 0: (alpha/2)‖θ‖² (``penalty="l2"``) or λ of λΣⱼθⱼ²/(1 + θⱼ²)
        (``penalty="nonconvex"``, §7.1; the paper's experiments use 1e-3).
    penalty : {"l2", "nonconvex"}
    batch_size : int, optional
        b, records per later step (without replacement), 1 ≤ b ≤ n; default n (``"paper"``: 100,
        or n when n < 100).
    initial_batch_size : int, optional
        b₀ of the first step; default b.
    epochs : float, optional
        Data passes; T = max(1, ceil((epochs·n − b₀)/(2b)) + 1) (each later step evaluates two
        gradients per record). Without ``epochs`` and ``steps``: T = :func:`default_srm_steps` (n, ε)
        (regression losses: ``dp_gd.default_steps(n, ε)``; ``"paper"``: 5 passes).
    steps : int, optional
        T ≥ 1 releases (= updates).
    momentum : float, optional
        γ in (0, 1]; default 1/2 (``"paper"``: C₂/C₁ capped at 1 — the paper sets γ = C₂, C₁ = 1).
    extrapolation : float, optional
        μ in [0, 1): step t + 1's gradients (and the difference term's second point) are queried at
        θᵗ⁺¹ + μ(θᵗ⁺¹ − θᵗ) and the step starts there (Nesterov-style; post-processing of the
        released iterates — same event, same ε). Default 0.8 for classification losses with full
        batches (b₀ = b = n, the benchmarked case), else 0 (minibatches, regression losses,
        ``"paper"``: Alg. 1).
    learning_rate : float, optional
        Largest step 1/(2n₀L) (parameter units per gradient unit); default
        ``dp_gd.default_step_factor(n, ε, T)``/β = min(1.9, nε/(600√T))/β for classification losses,
        1.9/β for regression losses (``"paper"``: 1/(2β)), β = loss smoothness for
        ‖x‖ ≤ ``data_norm_bound`` plus the regulariser's.
    step_bound : float, optional
        ζ/(n₀L): cap on ‖θᵗ⁺¹ − θᵗ‖ (parameter units, ``inf`` = no cap); default no cap
        (``"paper"``: C₂/β_loss, so that the C₂ clip is a no-op for a β_loss-smooth loss, as in §6.1's
        derivation; no cap when β_loss is unknown).
    clip_norm : float, optional
        C₁ (gradient units); default 0.85·G for the logistic loss with full batches (b₀ = b = n,
        ``defaults="benchmark"``; module docstring), G otherwise — G the loss's Lipschitz constant for
        ``data_norm_bound``. ``clip_norm=G`` is the previous default.
    diff_clip_norm : float, optional
        C₂ (gradient units); default C₁/50 (``"paper"``: C₁/100, the a9a setting C₁ = 1, C₂ = 0.01).
    output : {"last", "random", "tail_average", "ema"}, optional
        θᵀ (default, also with ``defaults="paper"``: what §7 evaluates), θ_m with m uniform on
        {0, …, T − 1} (Alg. 1's output), or an average of the iterates θ¹..θᵀ
        (:func:`averaged_iterate`: the mean of the last ⌈``tail_fraction``·T⌉, or the exponential moving
        average with decay ``ema_decay``). Averaging is post-processing of the released iterates: the event,
        the sensitivities and ε are those of the last-iterate run.
    tail_fraction : float, optional
        In (0, 1]; ``output="tail_average"`` only (default :data:`TAIL_FRACTION` = 1/2).
    ema_decay : float, optional
        ρ in [0, 1); ``output="ema"`` only (default :data:`EMA_DECAY` = 0.9).
    defaults : {"benchmark", "paper"}
        Which set of defaults fills the arguments left ``None`` (module docstring): the benchmarked
        rules or the paper's §7.1 choices.
    relation : {"replace_one"}
        Fixed-size batches are analysed under replace-one; ``"add_remove"`` is refused (the batch
        normalisation b/n and T would be read off the private n).
    calibration : {"accountant", "paper"}
        dpcore calibration of z, or Theorem 5.1's σ₀, σ (conditions checked; needs ``epsilon``).
    beta : float
        β in (0, 1) of Theorem 5.1 (``calibration="paper"`` only).
    accountant : str
        dpcore accountant for calibration and reporting; default ``"auto"`` (dpcore's tightest certified bound:
        the PLD for these subsampled Gaussians). ``bench_nonconvex.py --calibration-time``: full batches, the
        default case, get a noise multiplier 0.91–0.92× the RDP one's at 0.9–1.2× its calibration time (≈ 20 ms
        for n = 124 … 49 990); minibatches b = n/10 and the paper's b = 100 get 0.46× / 0.56× the noise in
        0.23× the time. ``"rdp"`` is the previous default. (``calibration="paper"`` always reports with
        ``"rdp"``: Lemma 3.7 is an RDP bound.)
    noise_multiplier : float, optional
        z = noise std / sensitivity of every release instead of calibrating (``epsilon`` None).
    trace : bool
        Per-iterate objective / gradient-norm traces (non-private diagnostics); default off.

    Returns
    -------
    SolverResult
        ``details``: releases (= T, checked against the event), steps, batch sizes, momentum,
        ``diff_clip_norm``, sensitivities, ``output``, ``output_index`` (T for the averages: they end at θᵀ),
        ``averaging`` (the averaging parameter used, or None), ``clipped`` / ``diff_clipped`` counts.
    """
    check_relation_replace_one(relation, "DP-SRM draws fixed-size batches and normalises by b")
    paper_defaults = check_choice("defaults", defaults, ("benchmark", "paper")) == "paper"
    if output is None:
        output = "last"  # both sets (module docstring; Alg. 1's random iterate: output="random")
    check_choice("output", output, ("random", "last") + AVERAGED_OUTPUTS)
    if tail_fraction is not None and output != "tail_average":
        raise ValueError(f"tail_fraction is for output='tail_average'; got output={output!r}")
    if ema_decay is not None and output != "ema":
        raise ValueError(f"ema_decay is for output='ema'; got output={output!r}")
    average = {}  # averaged_iterate's keyword for the output chosen, checked here (before any work)
    if output == "tail_average":
        average["tail_fraction"] = TAIL_FRACTION if tail_fraction is None else check_sampling_rate("tail_fraction", tail_fraction)
    elif output == "ema":
        average["ema_decay"] = EMA_DECAY if ema_decay is None else check_half_open_unit("ema_decay", ema_decay)
    check_choice("calibration", calibration, ("accountant", "paper"))
    check_choice("accountant", accountant, ACCOUNTANTS)  # also under calibration="paper", which reports with "rdp"
    s = setup(X, y, loss=loss, alpha=alpha, l1=0.0, constraint="none", radius=None, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, penalty=penalty, layouts=True)
    n = s.data.n
    if batch_size is None:
        batch_size = min(n, PAPER_BATCH_SIZE) if paper_defaults else n
    b = check_batch_size(batch_size, n)
    b0 = b if initial_batch_size is None else check_positive_int("initial_batch_size", initial_batch_size)
    if b0 > n:
        raise ValueError(f"initial_batch_size must be in [1, n={n}]; got {b0}")
    tuned = not paper_defaults and s.loss.task == "classification"  # the benchmarked rules
    full_batch_rules = tuned and b0 == b == n  # μ = 0.8 and C₁ = 0.85·G were benchmarked on full batches only
    if clip_norm is None and full_batch_rules and s.loss.name == "logistic":  # C₁: benchmarked on the logistic loss
        # only; G is the Lipschitz bound setup() resolved from data_norm_bound
        s = replace(s, clip=BENCHMARK_CLIP_FRACTION * s.clip)
    c1 = s.clip
    if diff_clip_norm is None:
        c2 = c1 / (100.0 if paper_defaults else 50.0)
    else:
        c2 = check_positive("diff_clip_norm", diff_clip_norm)
    if momentum is None:
        gamma = min(1.0, c2 / c1) if paper_defaults else 0.5
    else:
        gamma = check_momentum(momentum)
    if extrapolation is not None:
        mu = check_heavy_ball(extrapolation, "extrapolation")
    else:
        mu = BENCHMARK_EXTRAPOLATION if full_batch_rules else 0.0
    if steps is not None:
        T = check_iterations("steps", steps)
    elif epochs is not None or paper_defaults:
        passes = PAPER_EPOCHS if epochs is None else check_positive("epochs", epochs)
        T = iteration_count("epochs", epochs, (passes * n - b0) / (2 * b) + 1)
    else:
        T = default_srm_steps(n, epsilon) if tuned else default_steps(n, epsilon)
    factor = 0.5 if paper_defaults else default_step_factor(n, epsilon, T) if tuned else BENCHMARK_STEP
    lr = default_step(learning_rate, s if s.smoothness is None else _with_reg_smoothness(s), factor)
    if step_bound is not None:
        bound = check_positive("step_bound", step_bound, allow_inf=True)
    elif paper_defaults and s.smoothness:
        bound = c2 / s.smoothness
    else:
        bound = math.inf
    sens0, sens = dp_srm_sensitivities(c1, c2, gamma)
    gen = as_generator(rng)
    paper = None
    if calibration == "paper":
        if epsilon is None:
            raise ValueError("calibration='paper' needs epsilon (noise_multiplier is for the accountant route)")
        if math.isinf(epsilon):
            raise ValueError("calibration='paper' needs a finite epsilon (epsilon=inf switches the noise off)")
        paper = dp_srm_paper_sigmas(epsilon, delta, n=n, steps=T, batch_size=b, initial_batch_size=b0,
                                    clip_norm=c1, diff_clip_norm=c2, momentum=gamma, beta=beta)
        event = DpSrmEvent(paper["noise_multiplier"], paper["sampling_rate"], T)
        privacy = dpcore.get_epsilon(event, delta, accountant="rdp")
        z = paper["noise_multiplier"]
        sigma0, sigma = b0 * paper["sigma0"], b * paper["sigma"]
        cal = paper
    else:
        def event_fn(zz: float):
            return dp_srm_event(zz, b0, b, n, T)

        z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                    noise_multiplier=noise_multiplier, relation=relation,
                                                    accountant=accountant)
        sigma0, sigma = least_noise_scale(z, sens0), least_noise_scale(z, sens)
    out_index = int(gen.integers(T)) if output == "random" else T  # averages: T marks "through θᵀ"
    snaps, releases, evals, clipped1, clipped2 = dp_srm_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, initial_point(w0, s), s.reg.alpha,
        s.reg.nonconvex, T, b0, b, gamma, c1, c2, sigma0, sigma, bound, lr, gen, mu)
    check_counts(releases, event)
    if output in AVERAGED_OUTPUTS:
        weights = averaged_iterate(snaps, output, **average)
    else:
        weights = snaps[out_index].copy()
    return finish("dp_srm", s, weights, snaps, step=lr, event=event, privacy=privacy, z=z,
                 sensitivity=sens, grad_evals=evals, trace=trace,
                 details={"releases": releases, "clipped": clipped1, "diff_clipped": clipped2, "steps": T,
                          "batch_size": b, "initial_batch_size": b0, "momentum": gamma, "extrapolation": mu, "diff_clip_norm": c2,
                          "initial_sensitivity": sens0, "learning_rate": lr, "step_bound": bound,
                          "output": output, "output_index": out_index,
                          "averaging": average or None, "calibration": cal, "calibration_route": calibration,
                          "penalty": penalty, "defaults": defaults})


def _with_reg_smoothness(s: Setup) -> Setup:
    """The setup with the regulariser's smoothness added to the loss's (for the default step)."""
    return replace(s, smoothness=s.smoothness + s.reg.smoothness)
