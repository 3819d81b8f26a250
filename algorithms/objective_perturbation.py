"""Objective perturbation for generalized linear losses (lecture14 Alg. 1; Chaudhuri, Monteleoni,
Sarwate 2011, Alg. 2).

The proof covers the exact minimiser θ* of the perturbed objective (lecture14 eq. (14.1), written
with the package's objective F = (1/n)Σℓ + (alpha/2)‖w‖²)

    J(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + (λ/(2n))‖w‖² + (1/n)⟨b, w⟩,   λ = n·(alpha + extra ridge).

Exact minimiser (issue 13): a solver only returns a float point θ̂ (damped Newton here, aiming at
``tol/4``), so θ̂ is released with residual noise, as AMP does (Iyengar et al. 2019): its
*certified* gradient norm — float evaluation plus a rounding-error bound,
:func:`algorithms._residual.certified_gradient_norm` — must be ≤ γ = ``tol`` (else
``RuntimeError``); J is (λ/n)-strongly convex, so ‖θ̂ − θ*‖ ≤ nγ/λ on every data set and
θ̂ − θ* has sensitivity 2nγ/λ, covered by noise b₂ spent from the share ``residual_share`` of
the budget: Gaussian b₂ composed with the objective part in the rigorous profile of
:mod:`algorithms._objective_privacy` (its output stage), or for ε-DP an ℓ2-Laplace b₂ with
ε_out = share·(ε − ε_J) composed by adding ε's. The release is θ̂ + b₂ (post-processing of
θ* and θ̂ − θ* + b₂). With the default γ = 1e-10 the residual noise has σ₂ ~ 1e-8·n/λ.

Privacy (replace-one, loss L-Lipschitz with ℓ'' ≤ β on rows ‖x‖ ≤ R, rank-1 Hessians — a GLM):
lecture14 Theorem 14.3 gives ε_J + ε_b where ε_J = ln(1 + 2β/λ) is the Jacobian term and ε_b the
noise term, b − b′ = ∇ℓ(θ; z′) − ∇ℓ(θ; z) having norm ≤ 2L:

* ε-DP (``delta=0``): b with density ∝ exp(−ε_b‖b‖/(2L)) (:class:`mechanisms.L2Laplace`, Gamma
  norm); event ``PureDpEvent(ε_J + ε_b + ε_out)``, reported by dpcore.
* (ε, δ)-DP: Gaussian b. The privacy loss is bounded *pointwise* — the gradient difference g(θ)
  depends on the output, which the lecture's step (14.5)–(14.6) ignores — by ε_J + 2μ² + 2μρ with
  μ = L/σ and ρ ~ χ₂, giving a rigorous privacy profile (:mod:`algorithms._objective_privacy`,
  checked against the exact 1-D output density in the tests). ``calibration="tight"`` (default)
  takes the least σ meeting (ε, δ) under that profile; ``calibration="paper"`` uses lecture14
  Alg. 1's σ² = 10L² log(1/δ)/ε². Either way the event is a ``dpcore.MechanismEvent`` carrying
  that privacy profile δ(ε) for the σ actually used (replace-one), and ε is dpcore's inversion of it
  (``get_epsilon(event, δ, accountant="profile")``); the tight σ is re-checked against that ε. The lecture's constant buys less than its claimed ε/2 for
  the noise part (its tail step uses √2 where ‖g‖ ≤ 2L needs 2√2): at ε = 1, δ = 1e-5 with the
  minimal ridge the release is (≈1.28, δ)-DP, so the paper route reports that and warns.

λ is chosen as Chaudhuri et al. Alg. 2 prescribes, with the lecture's constant: the user's ridge
n·alpha is kept if its Jacobian term is at most ``jacobian_fraction``·ε (default ε/2, lecture14:
"choose ε = ε′/2 and λ = 2β/(e^{ε′/2} − 1)"); otherwise an extra ridge raises λ to
2β/(e^{ε/2} − 1) and the released model minimises F plus that extra ridge. Losses that are not
smooth GLMs with bounded ℓ'' (e.g. the hinge) or not Lipschitz (squared loss) are refused.
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from dpcore._validation import check_positive
from dpcore.events import NonPrivateEvent
from mechanisms.base import greatest_noise_multiplier, least_noise_scale
from mechanisms.gaussian import Gaussian
from mechanisms.laplace import L2Laplace

from ._data import admitted_norm_bound
from ._objective_privacy import calibrate_objective_noise
from ._perturbation import (
    check_share,
    diagnostics,
    jacobian_epsilon,
    newton_solve,
    pure_objective_event,
    release_with_output_noise,
    report_privacy,
    ridge_for_jacobian,
    setup,
    warn_if_over_target,
)
from ._residual import certified_gradient_norm, check_residual, residual_sensitivity
from .constraints import get_constraint
from .result import SolverResult

__all__ = ["objective_perturbation"]


def objective_perturbation(
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
    calibration: str = "tight",
    jacobian_fraction: float = 0.5,
    tol: float = 1e-10,
    residual_share: float = 0.01,
    max_iter: int = 100,
    loss_params: Optional[dict] = None,
    trace: bool = False,
) -> SolverResult:
    """Objective perturbation (lecture14 Alg. 1, Chaudhuri et al. 2011 Alg. 2).

    Parameters
    ----------
    X : array, shape (n, d)
        Features with ‖xᵢ‖₂ ≤ ``data_norm_bound`` (else ``ValueError``).
    y : array, shape (n,)
        Labels ({−1, +1} or {0, 1} for classification; reals for Huber regression).
    loss : {"logistic", "huber", "smoothed_hinge"}
        A Lipschitz GLM with bounded second derivative.
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` solves F exactly with no noise and reports ε = inf.
    delta : float
        0 for ε-DP (Gamma-norm b) or δ in (0, 1) for (ε, δ)-DP (Gaussian b).
    alpha : float
        L2 strength ≥ 0 of F.
    relation : {"replace_one"}
    rng : None, int or numpy.random.Generator
    data_norm_bound : float
        R > 0; L = |ℓ'|_max·R and β = ℓ''_max·R².
    calibration : {"tight", "paper"}
        Gaussian σ from the rigorous profile (default) or lecture14 Alg. 1's constant.
    jacobian_fraction : float
        Share of ε in (0, 1) allowed to the Jacobian term before extra ridge is added (paper: 0.5).
    tol : float
        γ in (0, ∞) (objective units per weight unit): the released point θ̂ must have a certified
        ‖∇J(θ̂)‖₂ ≤ γ (:func:`algorithms._residual.certified_gradient_norm`; the solve aims at γ/4,
        ``RuntimeError`` if the certificate fails), and its distance to the exact minimiser, of
        sensitivity 2nγ/λ, is covered by the residual noise.
    residual_share : float
        Share in (0, 1) of the budget spent on the residual noise: of μ² (Gaussian; the output
        part of :func:`algorithms._objective_privacy.objective_delta`) or of ε − ε_J (ε-DP).
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
        ``details``: ``ridge`` (λ/n), ``extra_ridge``, ``jacobian_epsilon``,
        ``perturbed_grad_norm``, ``certified_grad_norm``, ``residual_sensitivity`` (2nγ/λ),
        ``sigma_residual``, ``L``, ``beta``, ``newton_iterations``.
    """
    t0 = time.perf_counter()
    lossf, eps, dlt, a, calibration, R, data, L, beta, gen = setup(
        X, y, rng, loss, epsilon, delta, alpha, relation, calibration, data_norm_bound, loss_params, need_delta=False)
    frac = check_positive("jacobian_fraction", jacobian_fraction)
    if frac >= 1.0 or (calibration == "paper" and frac != 0.5):
        raise ValueError(f"jacobian_fraction must be in (0, 1) (0.5 with calibration='paper'); got {jacobian_fraction!r}")
    tol = check_positive("tol", tol)
    share = check_share("residual_share", residual_share)
    n, d = data.n, data.d

    ridge_n = ridge_for_jacobian(beta, n, a, frac * eps)
    b = np.zeros(d)
    details = {"L": L, "beta": beta, "label_mapping": data.label_mapping}
    out_sens = residual_sensitivity(tol, ridge_n / n) if ridge_n > 0.0 else math.inf
    if math.isinf(eps):
        event, sigma, mult, sigma_out = NonPrivateEvent(relation), 0.0, 0.0, 0.0
        privacy = report_privacy(event, dlt, "composition")
        eps_j = 0.0
    else:
        eps_j = jacobian_epsilon(beta, ridge_n)
        if dlt == 0.0:
            eps_out = math.nextafter(share * (eps - eps_j), 0.0)
            mech = L2Laplace.calibrate(math.nextafter((eps - eps_j) - eps_out, 0.0), None, 2.0 * L, dimension=d)
            out_mech = L2Laplace.calibrate(eps_out, None, out_sens, dimension=d)
            b = mech.randomize(b, gen)
            event = pure_objective_event(mech.privacy_event(relation), eps_j, out_mech.privacy_event(relation))
            privacy = report_privacy(event, 0.0, "composition")
            sigma, mult, sigma_out = mech.scale, mech.scale / (2.0 * L), out_mech.scale
        else:
            if calibration == "tight":
                mult, mult_out = calibrate_objective_noise(eps, dlt, eps_j, share)
            else:  # the printed σ and the multiplier it buys (rounded down)
                mult = greatest_noise_multiplier(L * math.sqrt(10.0 * math.log(1.0 / dlt)) / eps, 2.0 * L)
                mult_out = mult * math.sqrt((1.0 - share) / share)  # the output part's share of μ²
            sigma, sigma_out = least_noise_scale(mult, 2.0 * L), least_noise_scale(mult_out, out_sens)
            b = Gaussian(sigma, 2.0 * L).randomize(b, gen)
    w, gnorm, evals, iterates = newton_solve(lossf, data.X, data.y, ridge_n / n, b / n, tol=0.25 * tol,
                                             certify=lambda v: certified_gradient_norm(
                                                 lossf, data.X, data.y, v, ridge_n / n, b / n, admitted_norm_bound(R, d)),
                                             certified_tol=tol if sigma_out > 0.0 else math.inf,
                                             max_iter=max_iter)
    if sigma_out > 0.0:  # release w + noise for the certified residual (module docstring, "Exact minimiser")
        cert = certified_gradient_norm(lossf, data.X, data.y, w, ridge_n / n, b / n, admitted_norm_bound(R, d))
        check_residual(cert, tol, "objective_perturbation")
        details["certified_grad_norm"] = cert
        if dlt == 0.0:
            w = out_mech.randomize(w, gen)
        else:
            w, event, privacy = release_with_output_noise(w, mult, mult_out, out_sens, eps_j, dlt, relation, gen)
    if calibration == "paper":
        warn_if_over_target(privacy, eps, "objective_perturbation(calibration='paper')")
    wall = time.perf_counter() - t0
    obj, gn = diagnostics(trace, iterates, data, lossf, a, get_constraint("none"), 1.0 / (beta + ridge_n / n))
    details.update({"ridge": ridge_n / n, "extra_ridge": ridge_n / n - a, "jacobian_epsilon": eps_j,
                    "perturbed_grad_norm": gnorm, "newton_iterations": len(iterates) - 1,
                    "residual_sensitivity": out_sens, "sigma_residual": sigma_out,
                    "noise": "none" if sigma == 0.0 else ("l2_laplace" if dlt == 0.0 else "gaussian")})
    return SolverResult(
        weights=w, privacy=privacy, event=event, objective_trace=obj, grad_norm_trace=gn,
        n_gradient_evaluations=evals, wall_time=wall, noise_multiplier=mult, sigma=sigma,
        solver="objective_perturbation", details=details,
    )
