"""Output perturbation: of the regularised ERM minimiser (Chaudhuri, Monteleoni, Sarwate 2011,
Alg. 1 / Corollary 8), or of gradient descent (Zhang, Zheng, Mou, Wang 2017, Algorithm 1).

``method="minimizer"`` (the default when alpha > 0 and no GD schedule is given): minimise F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) +
(alpha/2)‖w‖² by damped Newton (:func:`algorithms._perturbation.newton_solve`, aiming at γ/4) to a
*certified* ‖∇F(ŵ)‖₂ ≤ γ (``gradient_tol``; float value plus rounding-error bound,
:func:`algorithms._residual.certified_gradient_norm`; ``RuntimeError`` otherwise) and release ``ŵ + z``. Sensitivity under replace-one:
F is alpha-strongly convex and F_D − F_D′ = (ℓ(·; z) − ℓ(·; z′))/n has a gradient of norm ≤ 2L/n,
so the exact minimisers satisfy ‖w*_D − w*_D′‖ ≤ 2L/(n·alpha) (Chaudhuri et al. 2011, Corollary 8
— the strong-convexity argument of their Lemma 7); strong convexity also gives
‖ŵ − w*‖ ≤ ‖∇F(ŵ)‖/alpha ≤ γ/alpha on *each* dataset, so the released point has
Δ = 2L/(n·alpha) + 2γ/alpha (the residual accounted, with the tolerance — never the achieved,
data-dependent norm). One Newton solve replaces thousands of gradient steps.

``method="gd"`` (the only choice when alpha = 0): run T steps of full-batch gradient descent on F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + (alpha/2)‖w‖² from
w₀ = 0 with a constant step η, then release ``w_T + z``:

The noise z is the same for both methods:

* ε-DP (``delta=0``): z has density ∝ exp(−ε‖z‖₂/Δ) (Alg. 1 line 5; :class:`mechanisms.L2Laplace`),
  event ``PureDpEvent(ε)``;
* (ε, δ)-DP: Gaussian z with σ calibrated for ℓ2 sensitivity Δ — by default the analytic Gaussian
  mechanism (Balle & Wang 2018, the least σ), or with ``calibration="paper"`` the constant of
  Alg. 1 line 7, density ∝ exp(−ε²‖z‖²/(4 log(2/δ) Δ²)), i.e. σ = Δ √(2 log(2/δ))/ε. Either way
  the event is ``GaussianEvent(σ/Δ)`` and dpcore reports its exact ε (analytic Gaussian accountant).

Sensitivity Δ of w_T (replace-one neighbours, "differ in one entry"):

* Lemma 2 (convex, β-smooth, L-Lipschitz, η ≤ 1/β): Δ_T ≤ 3LTη/n (the constant of Theorem 3,
  Δ = 3LT/(βn) at η = 1/β; it follows from the recursion Δ²_{t+1} ≤ Δ²_t + 4ηLΔ_t/n + 8η²L²/n²
  of the proof sketch);
* Lemma 3 (µ-strongly convex, η ≤ 1/(β + µ)): Δ_T ≤ 5L(µ + β)/(nµβ), independent of T.

Here µ = alpha, β = β_ℓ + alpha (the regularised per-example function) and L is the Lipschitz
constant of the loss ℓ only: the regulariser is common to both neighbours, so in the stability
recursion only ∇ℓ(·; zᵢ) − ∇ℓ(·; zᵢ′) (norm ≤ 2L) enters as a perturbation while the rest of the
step is the (contractive) gradient map of the shared objective. With alpha > 0 both lemmas hold and
the smaller bound is used.
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_choice, check_positive
from dpcore.events import NonPrivateEvent
from mechanisms.base import greatest_noise_multiplier, least_noise_scale
from mechanisms.gaussian import Gaussian
from mechanisms.laplace import L2Laplace

from ._data import admitted_norm_bound
from ._perturbation import (
    calibrate_gaussian_parts,
    diagnostics,
    newton_solve,
    report_privacy,
    setup,
    warn_if_over_target,
)
from ._residual import certified_gradient_norm, check_residual
from ._solver_common import check_iterations
from .constraints import get_constraint
from .losses import mean_gradient_kernel
from .result import SolverResult

__all__ = ["output_perturbation_gd", "gd_sensitivity", "minimizer_sensitivity", "default_steps"]


@jit
def gd_kernel(kind: int, param: float, X: np.ndarray, y: np.ndarray, alpha: float, step: float, steps: int,
              every: int) -> tuple:
    """``steps`` full-gradient steps w ← w − η(∇(1/n)Σℓ + alpha·w) from 0; snapshots every ``every``."""
    d = X.shape[1]
    w = np.zeros(d)
    g = np.empty(d)
    snaps = np.empty((steps // every + 2, d))
    snaps[0] = w
    k = 1
    for t in range(steps):
        mean_gradient_kernel(kind, param, X, y, w, g)
        for j in range(d):
            w[j] -= step * (g[j] + alpha * w[j])
        if (t + 1) % every == 0:
            snaps[k] = w
            k += 1
    if steps % every != 0:
        snaps[k] = w
        k += 1
    return w, snaps[:k]


def gd_sensitivity(L: float, beta: float, mu: float, n: int, steps: int, step_size: float) -> float:
    """ℓ2 sensitivity of w_T under replace-one (Zhang et al. 2017, Lemmas 2 and 3).

    Parameters
    ----------
    L : float
        Lipschitz constant of the loss ℓ (not of the regulariser).
    beta : float
        Smoothness of the regularised per-example function, β_ℓ + alpha.
    mu : float
        Strong convexity (alpha); 0 for the convex case.
    n, steps : int
        Dataset size and number of GD steps T actually run.
    step_size : float
        η; must be ≤ 1/β (Lemma 2). Lemma 3 is used in addition when µ > 0 and η ≤ 1/(β + µ).
    """
    if step_size > 1.0 / beta:
        raise ValueError(f"step_size must be in (0, 1/beta={1.0 / beta}] for Lemma 2; got {step_size}")
    delta = 3.0 * L * steps * step_size / n
    if mu > 0.0 and step_size <= 1.0 / (beta + mu):
        delta = min(delta, 5.0 * L * (mu + beta) / (n * mu * beta))
    return math.nextafter(delta, math.inf)


def minimizer_sensitivity(L: float, mu: float, n: int, gradient_tol: float) -> float:
    """ℓ2 sensitivity 2L/(nµ) + 2γ/µ of a point with ‖∇F‖ ≤ γ for a µ-strongly convex F (replace-one;
    Chaudhuri et al. 2011 Corollary 8 plus the residual, module docstring), rounded up."""
    if mu <= 0.0:
        raise ValueError(f"alpha must be > 0 for method='minimizer' (strong convexity); got {mu}")
    return math.nextafter(2.0 * L / (n * mu) + 2.0 * gradient_tol / mu, math.inf)


def default_steps(L: float, beta: float, mu: float, n: int, d: int, epsilon: float, delta: float) -> int:
    """T of Zhang et al. Theorem 2 (µ > 0) or Theorem 3 (µ = 0) with unit constants and D = 1.

    Theorem 2: T = (µ² + β²)/(µβ) · log(µ²n²ε²/(L²·d²))   (d² → d·log(1/δ) for (ε, δ)-DP);
    Theorem 3: T = (β²n²ε²/(L²·d²))^{1/3}                  (same replacement).
    ``epsilon = inf`` uses ε = n in these formulas. The result is clipped to [1, 100 000].
    """
    eps = min(epsilon, float(n))
    dim = d * d if delta == 0.0 else d * math.log(1.0 / delta)
    if mu > 0.0:
        t = (mu * mu + beta * beta) / (mu * beta) * max(1.0, math.log(mu * mu * n * n * eps * eps / (L * L * dim)))
    else:
        t = (beta * beta * n * n * eps * eps / (L * L * dim)) ** (1.0 / 3.0)
    return int(min(100_000, max(1, math.ceil(t))))


def output_perturbation_gd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: float,
    delta: float,
    alpha: float = 0.0,
    relation: str = "replace_one",
    rng: object = None,
    data_norm_bound: float = 1.0,
    steps: Optional[int] = None,
    step_size: Optional[float] = None,
    calibration: str = "tight",
    loss_params: Optional[dict] = None,
    trace: bool = False,
    method: str = "auto",
    gradient_tol: float = 1e-10,
) -> SolverResult:
    """Private ERM with output perturbation: of the minimiser (Chaudhuri et al. 2011) or of GD
    (Zhang et al. 2017, Alg. 1).

    Parameters
    ----------
    X : array, shape (n, d)
        Features; every row must satisfy ‖xᵢ‖₂ ≤ ``data_norm_bound`` (else ``ValueError``).
    y : array, shape (n,)
        Labels in {−1, +1} or {0, 1} (mapped 0 → −1) for classification losses; reals for regression.
    loss : {"logistic", "huber", "smoothed_hinge"}
        A Lipschitz, smooth generalized linear loss (the squared loss is refused: not Lipschitz).
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` runs the same GD without noise and reports ε = inf.
    delta : float
        δ in [0, 1): 0 gives ε-DP with Gamma-norm noise, > 0 (ε, δ)-DP with Gaussian noise.
    alpha : float
        L2 strength ≥ 0 of the objective, F = mean loss + (alpha/2)‖w‖²; alpha > 0 enables Lemma 3.
    relation : {"replace_one"}
        Neighbouring relation of the paper ("differ in one entry").
    rng : None, int or numpy.random.Generator
        Source of the noise.
    data_norm_bound : float
        R > 0, the promised bound on ‖xᵢ‖₂ (feature units); L and β are computed from it.
    steps : int, optional
        ``method="gd"``: T; default :func:`default_steps` (Theorems 2/3). The sensitivity uses the T
        actually run.
    step_size : float, optional
        η in (0, 1/β]; default 1/(β + alpha) if alpha > 0 (Lemma 3) else 1/β (Lemma 2).
    calibration : {"tight", "paper"}
        Gaussian σ: analytic Gaussian (default) or Alg. 1 line 7's constant.
    loss_params : dict, optional
        ``huber_delta`` / ``smoothing`` for :func:`algorithms.losses.get_loss`.
    trace : bool
        Compute the objective / gradient-norm traces (non-private diagnostics on the raw data;
        default off).
    method : {"auto", "minimizer", "gd"}
        What is perturbed (module docstring). ``"auto"``: ``"gd"`` when ``steps`` or ``step_size``
        is given or alpha = 0, else ``"minimizer"`` (with ``epsilon = inf``: F minimised to
        ``gradient_tol``, no noise).
    gradient_tol : float
        γ > 0 of ``method="minimizer"``: ‖∇F(ŵ)‖₂ ≤ γ is certified, and 2γ/alpha enters Δ.

    Returns
    -------
    SolverResult
        ``details`` holds ``sensitivity``, ``method``, ``L``, ``beta``, ``lemma``; ``steps``,
        ``step_size`` (gd) or ``gradient_norm``, ``newton_iterations`` (minimizer).
    """
    t0 = time.perf_counter()
    lossf, eps, dlt, a, calibration, R, data, L, beta, gen = setup(
        X, y, rng, loss, epsilon, delta, alpha, relation, calibration, data_norm_bound, loss_params, need_delta=False)
    n, d = data.n, data.d
    beta = beta + a  # smoothness of the regularised per-example function
    method = check_choice("method", method, ("auto", "minimizer", "gd"))
    if method == "auto":
        explicit_gd = steps is not None or step_size is not None
        method = "gd" if explicit_gd or a == 0.0 else "minimizer"
    if method == "minimizer":
        gamma = check_positive("gradient_tol", gradient_tol)
        w, gnorm, evals, snaps = newton_solve(
            lossf, data.X, data.y, a, np.zeros(d), tol=0.25 * gamma,
            certify=lambda v: certified_gradient_norm(lossf, data.X, data.y, v, a, np.zeros(d), admitted_norm_bound(R, d)),
            certified_tol=gamma if a > 0 and not math.isinf(eps) else math.inf)
        if a > 0 and not math.isinf(eps):  # γ must bound the exact ‖∇F(ŵ)‖, not its float value (issue 13)
            gnorm = certified_gradient_norm(lossf, data.X, data.y, w, a, np.zeros(d), admitted_norm_bound(R, d))
            check_residual(gnorm, gamma, "output_perturbation_gd(method='minimizer')")
        sens = minimizer_sensitivity(L, a, n, gamma) if a > 0 else math.inf
        T, eta = len(snaps) - 1, 1.0 / beta
        extra = {"gradient_norm": gnorm, "newton_iterations": T,
                 "lemma": "Chaudhuri et al. 2011 Cor. 8 + 2*gradient_tol/alpha"}
    else:
        if steps is None:
            steps = default_steps(L, beta, a, n, d, eps, dlt)
        T = check_iterations("steps", steps)
        eta = (1.0 / (beta + a) if a > 0 else 1.0 / beta) if step_size is None else check_positive("step_size", step_size)
        sens = gd_sensitivity(L, beta, a, n, T, eta)
        every = max(1, T // 20)
        w, snaps = gd_kernel(lossf.kind, lossf.param, data.X, data.y, a, eta, T, every)
        evals = T * n
        extra = {"steps": T, "step_size": eta,
                 "lemma": "min(Lemma 2, Lemma 3)" if a > 0 and eta <= 1.0 / (beta + a) else "Lemma 2"}
    if math.isinf(sens) and not math.isinf(eps):
        raise ValueError("alpha must be > 0 for method='minimizer' with a finite epsilon (strong convexity)")
    if math.isinf(eps):
        event, sigma = NonPrivateEvent(relation), 0.0
        out = w.copy()
        accountant = "composition"
    elif dlt == 0.0:
        try:
            mech = L2Laplace.calibrate(eps, None, sens, dimension=d)
        except OverflowError as exc:  # the exact (Fraction) scale Δ·d/ε does not fit a float64
            raise ValueError(f"epsilon={eps!r} is too small: the L2-Laplace scale for sensitivity {sens!r} "
                             "overflows float64") from exc
        out = mech.randomize(w, gen)
        event, sigma, accountant = mech.privacy_event(relation), mech.scale, "composition"
    else:
        if calibration == "tight":  # least σ by the analytic Gaussian, checked with dpcore
            (mult,) = calibrate_gaussian_parts(eps, dlt, [1.0], relation)
            sigma = least_noise_scale(mult, sens)  # σ/Δ ≥ mult exactly: the calibrated event holds
            if not 0.0 < sigma < math.inf:
                raise ValueError(f"epsilon={eps!r} gives the noise std {sigma!r} (sensitivity {sens!r}), outside "
                                 "(0, inf) in float64; use a moderate epsilon, or epsilon=inf for noise off")
            mech = Gaussian(sigma, sens)
        else:  # Alg. 1 line 7 as printed; dpcore reports what it buys (warning if above target)
            mech = Gaussian(sens * math.sqrt(2.0 * math.log(2.0 / dlt)) / eps, sens)
        out = mech.randomize(w, gen)
        event, sigma, accountant = mech.privacy_event(relation), mech.sigma, "analytic_gaussian"
    privacy = report_privacy(event, dlt, accountant)
    if calibration == "paper":
        warn_if_over_target(privacy, eps, "output_perturbation_gd(calibration='paper')")
    wall = time.perf_counter() - t0
    obj, gn = diagnostics(trace, snaps, data, lossf, a, get_constraint("none"), eta)
    return SolverResult(
        weights=out, privacy=privacy, event=event, objective_trace=obj, grad_norm_trace=gn,
        n_gradient_evaluations=evals, wall_time=wall,
        noise_multiplier=0.0 if sigma == 0.0 else greatest_noise_multiplier(sigma, sens), sigma=sigma,
        solver="output_perturbation_gd",
        details={"sensitivity": sens, "method": method, "L": L, "beta": beta, **extra,
                 "noise": "none" if sigma == 0.0 else ("l2_laplace" if dlt == 0.0 else "gaussian"),
                 "label_mapping": data.label_mapping},
    )
