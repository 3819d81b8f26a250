"""Approximate objective perturbation over a convex set C: App-ObjP and App-ObjP-SC
(Su, Zhao, Wang, "DP-SCO in non-Euclidean spaces", Algorithms 1 and 2).

1. G ~ N(0, σ₁² I); J(θ) = F(θ) + ⟨G, θ⟩/n + λ‖θ‖₂² with F = (1/n)Σℓ + (alpha/2)‖θ‖².
2. θ₂ = O(J, α): any point of C with J(θ₂) − min_C J ≤ α. Here: Newton (C = ℝᵈ) or accelerated
   projected gradient, stopped on a *certificate* — ‖∇J‖²/(2μ_J) or the Frank–Wolfe gap — so the
   accuracy α the privacy proof uses really holds. For C = ℝᵈ the gradient norm is certified on the
   exact gradient (float value plus rounding-error bound,
   :func:`algorithms._residual.certified_gradient_norm`); the Frank–Wolfe gap of the constrained
   case is still a float evaluation (its rounding error is not bounded yet).
3. Release θ̂ = Proj_C(θ₂ + H), H ~ N(0, σ₂² I).

Privacy (proof of Theorem 1, replace-one): θ₁ = argmin_C J is objective perturbation (Kifer, Smith,
Thakurta 2012, valid on convex C — lecture14 §14.1.1; see :mod:`algorithms._objective_privacy` for
how the constrained case follows from the unconstrained bound) with Jacobian term ε_J = ln(1 + 2β/λ_n),
λ_n = n(alpha + 2λ) (lecture14 Thm 14.3); J is μ_J = alpha + 2λ strongly convex, so
‖θ₂ − θ₁‖ ≤ √(2α/μ_J) and θ₂ − θ₁ has sensitivity 2√(2α/μ_J) (the paper uses the looser
modulus λ: √(8α/λ)); θ̂ is post-processing of (θ₁, θ₂ − θ₁ + H). Both stages and ε_J are accounted
by the rigorous profile of :mod:`algorithms._objective_privacy`, carried by a ``dpcore.MechanismEvent``
whose privacy profile dpcore's ``"profile"`` accountant inverts into the reported ε.

Calibrations:

* ``"tight"`` (default): λ from ε_J ≤ ``jacobian_fraction``·ε (with alpha > 0 this is
  Alg. 2's λ = max{… − Δ, 0}: the strong convexity already present is used first), the least σ₁,
  σ₂ meeting (ε, δ) under that profile, the output part receiving ``output_share`` of μ².
* ``"paper"``: Alg. 1 (alpha = 0): σ₁² = 128L² log(2.5/δ)/ε², λ = max{rβ/(εn), L/(√n‖C‖₂)}
  (Theorem 2's choice, r = min(d, 2) for a GLM), σ₂² = 64α log(2.5/δ)/(λε²);
  Alg. 2 (alpha = Δ > 0, C bounded): λ = max{rβ/(εn) − Δ, 0}, σ₂² = 64α log(2.5/δ)‖C‖₂²/(Δε²).
  The reported ε is dpcore's for those σ with the sensitivities above.
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from dpcore._validation import check_nonnegative, check_positive, check_positive_int
from mechanisms.base import greatest_noise_multiplier, least_noise_scale
from mechanisms.gaussian import Gaussian

from ._data import admitted_norm_bound
from ._objective_privacy import calibrate_objective_noise
from ._perturbation import (
    check_share,
    data_smoothness,
    diagnostics,
    jacobian_epsilon,
    newton_solve,
    projected_solve,
    release_with_output_noise,
    ridge_for_jacobian,
    setup,
    warn_if_over_target,
)
from ._residual import certified_gradient_norm, check_residual
from .constraints import get_constraint
from .result import SolverResult

__all__ = ["approx_objective_perturbation"]


def approx_objective_perturbation(
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
    constraint: str = "none",
    radius: Optional[float] = None,
    accuracy: float = 1e-10,
    calibration: str = "tight",
    lam: Optional[float] = None,
    jacobian_fraction: float = 0.5,
    output_share: float = 0.05,
    max_iter: int = 100_000,
    loss_params: Optional[dict] = None,
    trace: bool = False,
) -> SolverResult:
    """App-ObjP (alpha = 0) / App-ObjP-SC (alpha > 0) of Su, Zhao, Wang, with projection onto C.

    Parameters
    ----------
    X, y : arrays
        Data; ‖xᵢ‖₂ ≤ ``data_norm_bound``.
    loss : {"logistic", "huber", "smoothed_hinge"}
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf``: no noise, λ = 0, reports ε = inf.
    delta : float
        δ in (0, 1).
    alpha : float
        L2 strength ≥ 0 of F; > 0 makes F alpha-strongly convex (Alg. 2 with Δ = alpha).
    relation : {"replace_one"}
    rng : None, int or numpy.random.Generator
    data_norm_bound : float
        R > 0.
    constraint : {"none", "l2", "l1", "linf", "simplex"}
        The set C (:mod:`algorithms.constraints`); ``radius`` is its size (weight units).
    radius : float, optional
        Required unless ``constraint == "none"``.
    accuracy : float
        α > 0: certified J(θ₂) − min_C J (objective units).
    calibration : {"tight", "paper"}
    lam : float, optional
        λ ≥ 0 of step 1 (overrides the calibration's choice; the Jacobian term follows from it).
    jacobian_fraction, output_share : float
        In (0, 1), see the module docstring (tight calibration).
    max_iter : int
        Iterations of the projected solver.
    loss_params : dict, optional
        ``huber_delta`` / ``smoothing`` for :func:`algorithms.losses.get_loss`.
    trace : bool
        Compute the objective / gradient-norm traces (non-private diagnostics on the raw data;
        default off).

    Returns
    -------
    SolverResult
        ``details``: ``lam``, ``certificate`` (achieved accuracy), ``sigma1``, ``sigma2``,
        ``output_sensitivity``, ``jacobian_epsilon``, ``algorithm`` ("App-ObjP" / "App-ObjP-SC").
    """
    t0 = time.perf_counter()
    lossf, eps, dlt, a, calibration, R, data, L, beta, gen = setup(
        X, y, rng, loss, epsilon, delta, alpha, relation, calibration, data_norm_bound, loss_params, need_delta=True)
    C = get_constraint(constraint, radius)
    acc = check_positive("accuracy", accuracy)
    max_iter = check_positive_int("max_iter", max_iter)
    frac = check_share("jacobian_fraction", jacobian_fraction)
    share = check_share("output_share", output_share)
    n, d = data.n, data.d
    diam = C.diameter(d)
    r = min(d, 2)

    m1 = m2 = eps_j = 0.0
    if math.isinf(eps):
        lam_v = 0.0 if lam is None else check_nonnegative("lam", lam)
    elif lam is not None:
        lam_v = check_nonnegative("lam", lam)
    elif calibration == "tight":
        lam_v = 0.5 * (ridge_for_jacobian(beta, n, a, frac * eps) / n - a)
    elif a == 0.0:
        lam_v = max(r * beta / (eps * n), L / (math.sqrt(n) * diam) if math.isfinite(diam) else 0.0)
    else:
        lam_v = max(r * beta / (eps * n) - a, 0.0)
    mu = a + 2.0 * lam_v
    if not n * mu < math.inf:  # the ridge n·μ of the perturbed objective must be a float64
        raise ValueError(f"alpha={a!r} / lam={lam_v!r} too large: the ridge n*(alpha + 2*lam) overflows float64")
    if mu <= 0.0 and C.kind == 0:
        raise ValueError("alpha or lam must be > 0 when constraint='none' (J must be strongly convex)")
    out_sens = 2.0 * math.sqrt(2.0 * acc / mu) if mu > 0 else 2.0 * diam
    if not math.isinf(eps):
        eps_j = jacobian_epsilon(beta, n * mu)
        if calibration == "tight":
            m1, m2 = calibrate_objective_noise(eps, dlt, eps_j, share) \
                if eps > eps_j else (None, None)
            if m1 is None:
                raise ValueError(f"lam={lam!r} leaves no budget: its Jacobian term {eps_j} is >= epsilon={eps}")
        else:  # the printed σ's, and the multipliers they buy (rounded down) for dpcore's report
            m1 = greatest_noise_multiplier(math.sqrt(128.0 * L * L * math.log(2.5 / dlt)) / eps, 2.0 * L)
            if a == 0.0:
                sigma2 = math.sqrt(64.0 * acc * math.log(2.5 / dlt) / lam_v) / eps
            elif math.isfinite(diam):
                sigma2 = math.sqrt(64.0 * acc * math.log(2.5 / dlt) * diam * diam / a) / eps
            else:
                raise ValueError("calibration='paper' with alpha > 0 (Alg. 2) needs a bounded constraint set C")
            m2 = greatest_noise_multiplier(sigma2, out_sens)
    sigma1, sigma2 = least_noise_scale(m1, 2.0 * L), least_noise_scale(m2, out_sens)
    G = np.zeros(d) if sigma1 == 0.0 else Gaussian(sigma1, 2.0 * L).randomize(np.zeros(d), gen)
    if C.kind == 0:
        target = math.sqrt(2.0 * mu * acc) * (1.0 - 2.0**-50)  # ‖∇J‖²/(2μ) ≤ acc despite the root's rounding
        w, gnorm, evals, iterates = newton_solve(
            lossf, data.X, data.y, mu, G / n, tol=0.5 * math.sqrt(2.0 * mu * acc), max_iter=100,
            certify=lambda v: certified_gradient_norm(lossf, data.X, data.y, v, mu, G / n, admitted_norm_bound(R, d)),
            certified_tol=target if sigma2 > 0.0 else math.inf)
        if sigma2 > 0.0:  # the accuracy must hold for the exact gradient, not its float value (issue 13)
            gnorm = certified_gradient_norm(lossf, data.X, data.y, w, mu, G / n, admitted_norm_bound(R, d))
            check_residual(gnorm, target, "approx_objective_perturbation")
        cert = gnorm * gnorm / (2.0 * mu)
    else:
        w, cert, evals, iterates = projected_solve(lossf, data.X, data.y, mu, G / n, C, accuracy=acc,
                                                   smoothness=data_smoothness(lossf, data.X, beta),
                                                   max_iter=max_iter)
    out, event, privacy = release_with_output_noise(w, m1, m2, out_sens, eps_j, dlt, relation, gen)
    out = C.project(out)
    if calibration == "paper":
        warn_if_over_target(privacy, eps, "approx_objective_perturbation(calibration='paper')")
    wall = time.perf_counter() - t0
    obj, gn = diagnostics(trace, iterates, data, lossf, a, C, 1.0 / (beta + mu))
    return SolverResult(
        weights=out, privacy=privacy, event=event, objective_trace=obj, grad_norm_trace=gn,
        n_gradient_evaluations=evals, wall_time=wall,
        noise_multiplier=m1, sigma=sigma1,
        solver="approx_objective_perturbation",
        details={"lam": lam_v, "certificate": cert, "sigma1": sigma1, "sigma2": sigma2,
                 "output_sensitivity": out_sens, "jacobian_epsilon": eps_j, "L": L, "beta": beta,
                 "algorithm": "App-ObjP-SC" if a > 0 else "App-ObjP", "constraint": C.name,
                 "label_mapping": data.label_mapping},
    )
