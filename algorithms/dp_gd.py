"""DP-GD: full-batch noisy (proximal, projected) gradient descent — wang-ye-xu-2017 Algorithm 4.

Each step releases the clipped gradient sum plus Gaussian noise,
``g̃ = Σᵢ clip_C(∇ℓ(w; xᵢ, yᵢ)) + N(0, σ²I)``, and moves
``w ← Proj_C(prox_{ηr}(w − η·g̃/n))``; with C = ℝᵈ, r = 0 and C ≥ G this is exactly Alg. 4's
``x_t = x_{t−1} − η(∇F(x_{t−1}) + z_{t−1})`` with ``z ~ N(0, (σ/n)²I)``.

Privacy: T Gaussian releases of a sum with sensitivity Δ = C (add_remove) or 2C (replace_one):
``SelfComposedEvent(GaussianEvent(σ/Δ, relation), T)``, σ calibrated by the dpcore accountant.
Theorem 6.1 gives σ² = c·G²T·ln(1/δ)/(n²ε²) (noise on the mean gradient) only "for some constant c";
``calibration="paper"`` uses that formula with an explicit ``paper_constant`` c (default 16: then
ρ-zCDP with ρ = 2ε²/(c·ln(1/δ)) (Bun–Steinke 2016, Prop. 1.6 and Lemma 2.3) converts to
ε′ = ρ + 2√(ρ ln(1/δ)) ≤ ε whenever ε ≤ 2.34·ln(1/δ)), and refuses when dpcore's ε for the
resulting σ exceeds the target — the condition is checked, never assumed. G is the clip norm.
Output ``"last"`` returns x_T (§6.1, PL condition), ``"random"`` returns x_m with m uniform on
{0, …, T−1} (§6.2, non-convex; the index is drawn from ``rng``, independent of the data).

``momentum`` μ > 0 evaluates each noisy gradient at the extrapolated point
``u = x_t + μ(x_t − x_{t−1})`` and steps from there, ``x_{t+1} = Proj_C(prox_{ηr}(u − η·g̃(u)/n))``
(Nesterov 1983 with a constant coefficient; the accelerated proximal gradient of Beck & Teboulle
2009, FISTA, with μ fixed). It only post-processes the same T noisy releases — the event and ε are
unchanged — and it moves along the flat directions of an ill-conditioned loss ~1/(1 − μ) times
faster: on ijcnn1 plain Alg. 4 does not leave the majority classifier within T = 100 steps
(``benchmarks/bench_defaults.py``). μ = 0 is Alg. 4 exactly.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

import dpcore
from dpcore._jit import jit
from dpcore._validation import check_choice, check_delta, check_half_open_unit, check_positive, check_positive_int
from dpcore.events import GaussianEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale
from mechanisms.kernels import gaussian_noise_kernel

from ._solver_common import (
    as_generator, calibrated_privacy, check_counts, check_iterations, check_relation_replace_one, default_step, finish,
    initial_point, noise_off_result, setup,
)
from .clipping import clipped_gradient_sum_kernel, clipped_gradient_sum_parallel_kernel, clipped_sum_sensitivity
from .multiclass import softmax_clipped_sum_kernel
from .regularizers import nonconvex_gradient_kernel, prox_gradient_step_kernel
from .result import SolverResult

__all__ = ["dp_gd", "dp_gd_kernel", "dp_gd_paper_sigma", "BENCHMARK_STEP", "BENCHMARK_MOMENTUM", "check_heavy_ball",
           "default_steps", "default_step_factor"]

BENCHMARK_STEP = 1.9  # largest default η·β (< 2: stable for any data within the norm bound); benchmarks/bench_defaults.py
BENCHMARK_MOMENTUM = 0.9  # default μ for output="last" with the accountant calibration; benchmarks/bench_defaults.py
#: η·β = min(1.9, n·ε/(STEP_NOISE_SCALE·√T)): smaller steps when the per-step noise on the mean gradient,
#: ∝ √T/(n·ε), is large (a9a / ijcnn1 at ε = 0.1: η·β ≈ 0.5–0.8); 1.9 from n·ε/√T ≥ 1140 on.
STEP_NOISE_SCALE = 600.0


def default_steps(n: int, epsilon: Optional[float], scale: float = 15.0) -> int:
    """T = min(100, max(10, ⌈n·ε/scale⌉)) (100 for ε = inf or a given noise multiplier): public n and ε only.
    ``scale`` = 15 is DP-GD's rule; :func:`algorithms.dp_srm.default_srm_steps` passes its own."""
    if epsilon is None or math.isinf(epsilon):
        return 100
    ratio = n * epsilon / scale  # may round to inf for a huge finite ε: compared before ceil, never converted
    return 100 if ratio >= 100 else max(10, math.ceil(ratio))


def default_step_factor(n: int, epsilon: Optional[float], steps: int) -> float:
    """η·β = min(1.9, n·ε/(600·√T)) (1.9 for ε = inf or a given noise multiplier): public n, ε, T only.

    The noise on the mean gradient has std ∝ √T/(n·ε); with momentum the noise a step injects is
    carried ~1/(1 − μ) steps, so the step shrinks where that noise is large. Chosen by
    ``benchmarks/bench_defaults.py`` (RESULTS.md "Defaults on real data").
    """
    if epsilon is None or math.isinf(epsilon):
        return BENCHMARK_STEP
    return min(BENCHMARK_STEP, n * epsilon / (STEP_NOISE_SCALE * math.sqrt(steps)))


def check_heavy_ball(value: float, name: str = "momentum") -> float:
    """A heavy-ball / extrapolation coefficient μ as a float in [0, 1); ``ValueError`` naming ``name``
    otherwise. (DP-SRM's γ ∈ (0, 1] is a different quantity: :func:`algorithms.dp_srm.check_momentum`.)"""
    return check_half_open_unit(name, value)


def dp_gd_paper_sigma(epsilon: float, delta: float, *, n: int, steps: int, lipschitz: float,
                      paper_constant: float = 16.0) -> float:
    """σ of wang-ye-xu-2017 Theorem 6.1, eq. (11): √(c·G²T·ln(1/δ)/(n²ε²)), the std of the noise on the
    *mean* gradient (gradient units); the clipped-sum noise is n·σ, multiplier n·σ/(2G) (replace-one)."""
    eps = check_positive("epsilon", epsilon)
    if not math.isfinite(eps):
        raise ValueError("epsilon must be finite for calibration='paper'")
    check_delta("delta", delta)
    n = check_positive_int("n", n)
    T = check_positive_int("steps", steps)
    G = check_positive("lipschitz", lipschitz)
    c = check_positive("paper_constant", paper_constant)
    return math.sqrt(c * G * G * T * math.log(1.0 / delta) / (n * n * eps * eps))


def _paper_privacy(event_fn, epsilon, delta, steps, c, noise_multiplier, accountant, n, clip, sensitivity):
    """(z, event, privacy, record) of the Theorem 6.1 route; ``ValueError`` when dpcore's ε exceeds the target."""
    if noise_multiplier is not None or epsilon is None or math.isinf(epsilon):
        raise ValueError("calibration='paper' needs a finite epsilon (and no noise_multiplier)")
    sigma = dp_gd_paper_sigma(epsilon, delta, n=n, steps=steps, lipschitz=clip, paper_constant=c)
    z = n * sigma / sensitivity  # the sum carries n·σ
    event = event_fn(z)
    privacy = dpcore.get_epsilon(event, delta, accountant=accountant)
    if not privacy.epsilon <= epsilon:
        raise ValueError(f"calibration='paper' with paper_constant={c:g} gives epsilon={privacy.epsilon:.6g} > the "
                         f"target {epsilon:g} (dpcore); raise paper_constant or use calibration='accountant'")
    return z, event, privacy, {"route": "paper", "paper_constant": c, "sigma_mean_gradient": sigma,
                               "noise_multiplier": z}


@jit
def dp_gd_kernel(kind, param, X, y, row_norms, w0, alpha, l1, ckind, cradius, steps, lr, clip, sigma, out_index, rng,
                 parallel=None, nonconvex=0.0, momentum=0.0, classes=None, record=True):
    """Run ``steps`` noisy full-gradient steps (wang-ye-xu-2017 Alg. 4).

    Returns (output iterate, iterates after every step (steps+1, d) — with ``record`` False only the output
    iterate (1, d): memory O(d) whatever T —, noisy releases, clipped count).
    ``sigma`` is the noise std on the gradient *sum*; ``out_index`` = index of the returned iterate
    (``steps`` for the last one); ``rng`` is the caller's ``numpy.random.Generator`` (advanced in place).
    ``parallel`` True sums the clipped gradients on all Numba threads (plain arrays only); None: serial. ``nonconvex``: λ of the
    data-independent penalty λΣⱼwⱼ²/(1 + wⱼ²), whose exact gradient joins the step. ``momentum`` μ:
    the gradient is taken at u = x_t + μ(x_t − x_{t−1}) and the step starts from u (μ = 0: Alg. 4).
    ``classes`` k: softmax weights (w0 of length k·d; :func:`algorithms.multiclass.softmax_clipped_sum_kernel`,
    labels ``y`` are class codes); None: the binary / regression GLM.
    """
    n = X.shape[0]
    d = w0.shape[0]
    no_index = np.empty(0, np.int64)
    w = w0.copy()
    u = w0.copy()
    prev = w0.copy()
    out = w0.copy()
    g = np.empty(d)
    snaps = np.empty((steps + 1 if record else 1, d))
    snaps[0] = w
    releases = 0
    clipped = 0
    step = lr / n
    for t in range(steps):
        if momentum > 0.0 and t > 0:
            for j in range(d):
                u[j] = w[j] + momentum * (w[j] - prev[j])
        else:
            u[:] = w
        if classes is not None:  # None prunes the branch at compile time
            clipped += softmax_clipped_sum_kernel(X, y, row_norms, u, classes, no_index, False, n, clip, g)
        elif parallel is not None:  # None prunes this branch at compile time (the row layouts have no parallel sum)
            clipped += clipped_gradient_sum_parallel_kernel(kind, param, X, y, row_norms, u, clip, g)
        else:
            clipped += clipped_gradient_sum_kernel(kind, param, X, y, row_norms, u, clip, g)
        if sigma > 0.0:
            g += gaussian_noise_kernel(rng, d, sigma)
        releases += 1
        nonconvex_gradient_kernel(nonconvex, u, float(n), g)
        prox_gradient_step_kernel(u, g, step, lr, alpha, l1, ckind, cradius)
        prev[:] = w
        w[:] = u
        if record:
            snaps[t + 1] = w
        if t + 1 == out_index:
            out[:] = w
    if not record:
        snaps[0] = out
    return out, snaps, releases, clipped


def dp_gd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: Optional[float] = None,
    delta: float = 1e-5,
    alpha: float = 0.0,
    l1: float = 0.0,
    penalty: str = "l2",
    steps: Optional[int] = None,
    learning_rate: Optional[float] = None,
    momentum: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    output: str = "last",
    relation: str = "replace_one",
    calibration: str = "accountant",
    paper_constant: float = 16.0,
    accountant: str = "rdp",
    noise_multiplier: Optional[float] = None,
    w0: Optional[np.ndarray] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
    parallel: bool = False,
    tol: Optional[float] = 1e-9,
    classes: Optional[int] = None,
) -> SolverResult:
    """Differentially private full-batch gradient descent (wang-ye-xu-2017 Alg. 4).

    Parameters
    ----------
    X : array, shape (n, d)
        Features (finite).
    y : array, shape (n,)
        Labels: {−1, +1} or {0, 1} (mapped to ±1) for classification losses, reals for regression.
    loss : {"logistic", "huber", "squared", "smoothed_hinge"}
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` switches the noise off and reports ε = inf.
    delta : float
        δ in (0, 1).
    alpha, l1 : float
        Regularizer (alpha/2)‖w‖² + l1‖w‖₁ (handled by its exact prox step; data-independent).
    penalty : {"l2", "nonconvex"}
        ``"nonconvex"``: ``alpha`` is λ of λΣⱼwⱼ²/(1 + wⱼ²) (wang-jayaraman-evans-gu §7.1), whose exact
        gradient is added to the noisy step (use with ``output="random"``, §6.2).
    steps : int, optional
        T ≥ 1 iterations, each a full pass over the data. Default :func:`default_steps`:
        min(100, max(10, ⌈n·ε/15⌉)) — a public rule of n (public under replace-one) and ε chosen by
        ``benchmarks/bench_defaults.py``: 100 on a9a / ijcnn1, ≈ 20 on diabetes (n = 309) at ε = 1,
        where 100 noisy steps random-walk far from the optimum.
    learning_rate : float, optional
        η; default for classification losses :func:`default_step_factor`/β = min(1.9, n·ε/(600·√T))/β
        with β = c₂·data_norm_bound² the worst-case loss smoothness (regression losses: 1.9/β): below
        2/β, so noiseless GD is stable on every dataset within the bound, and smaller where the
        per-step noise (∝ √T/(nε)) is large — public n, ε, T and the loss only;
        chosen by ``benchmarks/bench_defaults.py`` on a9a / ijcnn1 (RESULTS.md, "Defaults"), where
        1/β — the step of the analysis (Alg. 4 needs η ≤ 1/L), available as ``learning_rate=1/β`` —
        stops far from the optimum within T = 100 steps.
    momentum : float, optional
        μ in [0, 1): the noisy gradient is taken at x_t + μ(x_t − x_{t−1}) (module docstring;
        post-processing of the same releases, ε unchanged). Default 0.9 for classification losses
        with ``output="last"`` and ``calibration="accountant"`` (``benchmarks/bench_defaults.py``:
        ijcnn1 leaves the majority classifier, a9a at ε = 1 goes from 0.165 to 0.153 test error);
        0 — Alg. 4 as Theorem 6.1 and §6.2 analyse it — with ``output="random"``,
        ``calibration="paper"`` or a regression loss (on diabetes, ``--diabetes``, μ = 0.9 with the
        smaller step lowered R² at ε = 10 from 0.39 to 0.36).
    clip_norm : float, optional
        Per-example gradient clip C. None → C = G, the Lipschitz constant for ‖xᵢ‖ ≤ ``data_norm_bound``
        (rows above the bound raise ``ValueError``).
    data_norm_bound : float, optional
        R with ‖xᵢ‖₂ ≤ R promised by the caller (checked).
    constraint, radius :
        Optional convex set C ("l2", "l1", "linf", "simplex") of that radius; iterates are projected.
    output : {"last", "random"}
        x_T (§6.1) or x_m, m ~ Uniform{0..T−1} (§6.2).
    relation : {"replace_one"}
        Neighbouring relation of the guarantee (Δ = 2C for the clipped sum). ``"add_remove"`` is
        refused: the update divides the noisy sum by n, and the noise scale ησ/n would reveal n.
    calibration : {"accountant", "paper"}
        ``"paper"``: σ² = c·G²T·ln(1/δ)/(n²ε²) of Theorem 6.1 (eq. (11)) with c = ``paper_constant``
        and G = the clip norm; refused (``ValueError``) when dpcore's ε for that σ exceeds ``epsilon``.
    paper_constant : float
        c > 0 of eq. (11) (``calibration="paper"`` only); module docstring for the default 16.
    accountant : str
        dpcore accountant used for calibration and reporting.
    noise_multiplier : float, optional
        Use this σ/Δ instead of calibrating (then ``epsilon`` must be None; the ε spent is reported).
    w0 : array, optional
        Initial point (projected onto C); default 0.
    rng : None, int or numpy.random.Generator
        Source of all randomness.
    trace : bool
        Compute the per-pass objective / gradient-mapping traces (non-private diagnostics on the raw
        data; default off).
    loss_params : dict, optional
        ``huber_delta`` / ``smoothing`` for :func:`algorithms.losses.get_loss`.
    parallel : bool
        Opt-in: sum the clipped per-example gradients on all Numba threads
        (``numba.set_num_threads``). Default single-threaded (the machines are shared). Same
        privacy; results equal the serial ones up to floating-point summation order. Dense X only
        (``ValueError`` for sparse X or the estimators' intercept / row-scale layouts).
    tol : float or None
        ``epsilon=inf`` only: no privacy budget, so F is minimised over C to gradient-mapping norm
        ≤ ``tol`` (:func:`algorithms._solver_common.noise_off_result`) instead of running T steps;
        ``None`` runs the T-step schedule with the noise off (to test the iteration itself).
    classes : int, optional
        k ≥ 3: multinomial logistic regression (softmax) on labels 0..k−1 with ``loss="logistic"`` —
        per-example gradient matrices clipped as a whole, one Gaussian release of all k·d entries per
        step, so the event (and ε) are those of the binary run (:mod:`algorithms.multiclass`); the default
        clip is G = √2·R and the smoothness R²/2. Weights are returned with shape (k, d).

    Returns
    -------
    SolverResult
        ``details["releases"]`` is the number of noisy gradients the kernel produced (= T).
    """
    check_choice("calibration", calibration, ("accountant", "paper"))
    check_relation_replace_one(relation, "DP-GD normalises by n, which add/remove neighbours change")
    check_choice("output", output, ("last", "random"))
    s = setup(X, y, loss=loss, alpha=alpha, l1=l1, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, penalty=penalty, layouts=True, classes=classes)
    if parallel and (s.classes is not None or not isinstance(s.data.X, np.ndarray)):
        raise ValueError("parallel=True needs a dense X and a binary / regression loss (the multi-threaded sum reads "
                         "plain arrays); got sparse X, an estimator's intercept / row-scale layout, or classes")
    steps = default_steps(s.data.n, epsilon) if steps is None else check_iterations("steps", steps)
    classification = s.loss.task == "classification"  # the benchmarked rules (regression: Alg. 4's defaults)
    lr = default_step(learning_rate, s, default_step_factor(s.data.n, epsilon, steps) if classification
                      else BENCHMARK_STEP)
    if momentum is None:
        mu = BENCHMARK_MOMENTUM if classification and output == "last" and calibration == "accountant" else 0.0
    else:
        mu = check_heavy_ball(momentum)
    gen = as_generator(rng)
    sens = clipped_sum_sensitivity(s.clip, relation)

    def event_fn(z: float):
        return SelfComposedEvent(GaussianEvent(z, relation), steps)

    if calibration == "paper":
        z, event, privacy, cal = _paper_privacy(event_fn, epsilon, delta, steps, paper_constant, noise_multiplier,
                                                accountant, s.data.n, s.clip, sens)
    else:
        z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                    noise_multiplier=noise_multiplier, relation=relation,
                                                    accountant=accountant)
    if noise_multiplier is None and math.isinf(epsilon) and tol is not None:
        return noise_off_result("dp_gd", s, w0, tol=tol, event=event, privacy=privacy, trace=trace,
                                details={"learning_rate": lr, "steps": steps, "calibration": cal})
    out_index = steps if output == "last" else int(gen.integers(steps))
    w_init = initial_point(w0, s)
    w, snaps, releases, clipped = dp_gd_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, w_init, s.reg.alpha, s.reg.l1,
        s.constraint.kind, s.constraint.radius, steps, lr, s.clip, least_noise_scale(z, sens), out_index, gen,
        True if parallel else None, s.reg.nonconvex, mu, s.classes, bool(trace))
    check_counts(releases, event)
    return finish("dp_gd", s, w, snaps, step=lr, event=event, privacy=privacy, z=z, sensitivity=sens,
                  grad_evals=steps * s.data.n, trace=trace,
                  details={"releases": releases, "clipped": clipped, "learning_rate": lr, "steps": steps,
                           "momentum": mu, "output_index": out_index, "calibration": cal})

