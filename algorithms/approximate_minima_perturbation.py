"""Approximate minima perturbation, AMP (lecture14 "Algorithm 1: Approximate Minima Perturbation";
Iyengar, Near, Song, Thakkar, Thakurta, Wang 2019, Alg. 1).

1. b₁ ~ N(0, σ₁² I); L_priv(θ) = (1/n)Σℓ(θ; dᵢ) + (Λ/(2n))‖θ‖² + b₁ᵀθ.
2. θ_approx with ‖∇L_priv(θ_approx)‖₂ ≤ γ (damped Newton here, aiming at γ/4; any solver meeting γ
   would do). γ must bound the *exact* gradient norm: it is certified by
   :func:`algorithms._residual.certified_gradient_norm` (float value plus a rounding-error bound),
   ``RuntimeError`` otherwise.
3. Release θ_approx + b₂, b₂ ~ N(0, σ₂² I).

Privacy (replace-one): the exact minimiser θ_min of L_priv is objective perturbation with
b = n·b₁ (sensitivity 2L, Jacobian term ε_J = ln(1 + 2β/Λ), lecture14 Thm 14.3 — for a GLM this is
at most the paper's rβ/Λ with r = min(d, 2)); L_priv is (Λ/n)-strongly convex, so
‖θ_approx − θ_min‖ ≤ nγ/Λ on each dataset and θ_approx − θ_min has ℓ2 sensitivity 2nγ/Λ, hidden
by b₂ (a Gaussian mechanism conditioned on θ_min; the release is post-processing of the pair).
The privacy of both stages with ε_J comes from the rigorous profile of
:mod:`algorithms._objective_privacy` (objective part bounded pointwise, output part dominated by the
Gaussian pair, composed by integration): the event is a ``dpcore.MechanismEvent`` carrying that
privacy profile δ(ε), and dpcore's ``"profile"`` accountant inverts it into the reported ε.

Calibrations:

* ``"tight"`` (default): Λ = max(n·alpha, 2β/(e^{ε/2} − 1)) (Jacobian share ``jacobian_fraction``),
  then the least σ₁, σ₂ meeting (ε, δ) under that profile, the output part receiving the share
  ``output_share`` of the Gaussian privacy budget μ².
* ``"paper"``: the constants of the algorithm box: ε₂ = output_share·ε, ε₁ = ε − ε₂, δ₁ = δ₂ = δ/2,
  ε₁ − ε₃ = min(jacobian_fraction·ε₁, 0.99) (the box needs 0 < ε₁ − ε₃ < 1),
  Λ = max(n·alpha, rβ/(ε₁ − ε₃)), σ₁ = (2L/n)(1 + √(2 log(1/δ₁)))/ε₃,
  σ₂ = (nγ/Λ)(1 + √(2 log(1/δ₂)))/ε₂. The reported ε is dpcore's for these σ with the
  sensitivities above (it may differ from the target ε).
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from dpcore._validation import check_positive
from mechanisms.base import greatest_noise_multiplier, least_noise_scale
from mechanisms.gaussian import Gaussian

from ._data import admitted_norm_bound
from ._objective_privacy import calibrate_objective_noise
from ._perturbation import (
    check_share,
    diagnostics,
    jacobian_epsilon,
    newton_solve,
    release_with_output_noise,
    ridge_for_jacobian,
    setup,
    warn_if_over_target,
)
from ._residual import certified_gradient_norm, check_residual
from .constraints import get_constraint
from .result import SolverResult

__all__ = ["approximate_minima_perturbation"]


def approximate_minima_perturbation(
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
    gradient_tol: float = 1e-8,
    calibration: str = "tight",
    jacobian_fraction: float = 0.5,
    output_share: float = 0.05,
    max_iter: int = 100,
    loss_params: Optional[dict] = None,
    trace: bool = False,
) -> SolverResult:
    """Approximate minima perturbation (Iyengar et al. 2019 Alg. 1 as in lecture14).

    Parameters
    ----------
    X, y : arrays
        Data; ‖xᵢ‖₂ ≤ ``data_norm_bound``; labels as in :func:`objective_perturbation`.
    loss : {"logistic", "huber", "smoothed_hinge"}
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf``: no noise, Λ = n·alpha, reports ε = inf.
    delta : float
        δ in (0, 1) (AMP is (ε, δ)-DP only).
    alpha : float
        L2 strength ≥ 0 of F.
    relation : {"replace_one"}
    rng : None, int or numpy.random.Generator
    data_norm_bound : float
        R > 0.
    gradient_tol : float
        γ > 0, the gradient-norm bound of step 2 (objective units per weight unit).
    calibration : {"tight", "paper"}
    jacobian_fraction : float
        In (0, 1): share of ε (tight) or of ε₁ (paper) for the Jacobian term.
    output_share : float
        In (0, 1): share of the Gaussian budget (tight: of μ²; paper: ε₂/ε) spent on b₂.
    max_iter : int
        Newton iterations.
    loss_params : dict, optional
        ``huber_delta`` / ``smoothing`` for :func:`algorithms.losses.get_loss`.
    trace : bool
        Compute the objective / gradient-norm traces (non-private diagnostics on the raw data;
        default off).

    Returns
    -------
    SolverResult
        ``details``: ``Lambda``, ``gradient_norm`` (certified ≤ γ), ``sigma1``, ``sigma2``,
        ``output_sensitivity`` (2nγ/Λ), ``jacobian_epsilon``.
    """
    t0 = time.perf_counter()
    lossf, eps, dlt, a, calibration, R, data, L, beta, gen = setup(
        X, y, rng, loss, epsilon, delta, alpha, relation, calibration, data_norm_bound, loss_params, need_delta=True)
    gamma = check_positive("gradient_tol", gradient_tol)
    frac = check_share("jacobian_fraction", jacobian_fraction)
    share = check_share("output_share", output_share)
    n, d = data.n, data.d

    if math.isinf(eps):
        Lam, m1, m2, eps_j = n * a, 0.0, 0.0, 0.0
    elif calibration == "tight":
        Lam = ridge_for_jacobian(beta, n, a, frac * eps)
        eps_j = jacobian_epsilon(beta, Lam)
        m1, m2 = calibrate_objective_noise(eps, dlt, eps_j, share)
    else:
        eps2 = share * eps
        eps1 = eps - eps2
        gap = min(frac * eps1, 0.99)
        eps3 = eps1 - gap
        r = min(d, 2)
        Lam = max(n * a, r * beta / gap)
        eps_j = jacobian_epsilon(beta, Lam)
        # the printed σ's, and the multipliers they buy (rounded down) for dpcore's report
        m1 = greatest_noise_multiplier((2.0 * L / n) * (1.0 + math.sqrt(2.0 * math.log(2.0 / dlt))) / eps3,
                                       2.0 * L / n)
        m2 = greatest_noise_multiplier((n * gamma / Lam) * (1.0 + math.sqrt(2.0 * math.log(2.0 / dlt))) / eps2,
                                       2.0 * n * gamma / Lam)
    if Lam <= 0.0:
        raise ValueError("alpha must be > 0 when epsilon=inf (AMP needs a strongly convex L_priv)")
    out_sens = 2.0 * n * gamma / Lam
    sigma1, sigma2 = least_noise_scale(m1, 2.0 * L / n), least_noise_scale(m2, out_sens)
    b1 = np.zeros(d) if sigma1 == 0.0 else Gaussian(sigma1, 2.0 * L / n).randomize(np.zeros(d), gen)
    w, gnorm, evals, iterates = newton_solve(
        lossf, data.X, data.y, Lam / n, b1, tol=0.25 * gamma, max_iter=max_iter,
        certify=lambda v: certified_gradient_norm(lossf, data.X, data.y, v, Lam / n, b1, admitted_norm_bound(R, d)),
        certified_tol=gamma if sigma2 > 0.0 else math.inf)
    if sigma2 > 0.0:  # γ must bound the exact gradient norm, not its float evaluation
        gnorm = certified_gradient_norm(lossf, data.X, data.y, w, Lam / n, b1, admitted_norm_bound(R, d))
        check_residual(gnorm, gamma, "approximate_minima_perturbation")
    out, event, privacy = release_with_output_noise(w, m1, m2, out_sens, eps_j, dlt, relation, gen)
    if calibration == "paper":
        warn_if_over_target(privacy, eps, "approximate_minima_perturbation(calibration='paper')")
    wall = time.perf_counter() - t0
    obj, gn = diagnostics(trace, iterates, data, lossf, a, get_constraint("none"), 1.0 / (beta + Lam / n))
    return SolverResult(
        weights=out, privacy=privacy, event=event, objective_trace=obj, grad_norm_trace=gn,
        n_gradient_evaluations=evals, wall_time=wall,
        noise_multiplier=m1, sigma=sigma1,
        solver="approximate_minima_perturbation",
        details={"Lambda": Lam, "gradient_norm": gnorm, "sigma1": sigma1, "sigma2": sigma2,
                 "output_sensitivity": out_sens, "jacobian_epsilon": eps_j, "L": L, "beta": beta,
                 "label_mapping": data.label_mapping},
    )
