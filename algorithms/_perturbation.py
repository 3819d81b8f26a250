"""Shared machinery of the perturbation-based solvers (output / objective / AMP / App-ObjP).

* :func:`setup` — argument, data and loss-constant checks shared by the four solvers;
  :func:`diagnostics` — their (non-private) traces; :func:`warn_if_over_target` — the warning when
  a paper's constants buy less privacy than the paper claims.
* :func:`report_privacy` — ask dpcore for the guarantee of an event (pure ε-DP events with δ = 0
  through ``get_delta``, so the reported δ is dpcore's, not ours).
* :func:`glm_constants` — the Lipschitz constant L and smoothness β of a generalized linear loss
  for rows with ``‖x‖₂ ≤ R`` (refuses losses without finite constants, e.g. the squared loss).
* :func:`jacobian_epsilon` / :func:`ridge_for_jacobian` — the change-of-variables (Jacobian) term of
  objective perturbation, lecture14 Theorem 14.3: for a GLM (rank-1 Hessians, ℓ'' ≤ β) and the
  first-order condition ``b = −n∇L(θ) − λθ``, the density ratio of the Jacobians is at most
  ``1 + 2β/λ``, i.e. ε_J = ln(1 + 2β/λ). Here λ is the ridge coefficient of the *n-scaled*
  objective (``Σ ℓ + (λ/2)‖θ‖² + ⟨b, θ⟩``).
* :func:`calibrate_gaussian_parts` — least multipliers of Gaussian parts composing (dpcore's exact
  ``analytic_gaussian`` composition) to a target (ε, δ) (output perturbation);
  :func:`release_with_output_noise` — the second, Gaussian stage of AMP / App-ObjP with the privacy
  of both stages from :mod:`algorithms._objective_privacy` (rigorous profile of Gaussian objective
  perturbation, lecture14 eqs. (14.4)–(14.6) made exact for θ-dependent gradient differences).
* :func:`newton_solve` — damped Newton for ``mean ℓ + (ridge/2)‖w‖² + ⟨c, w⟩`` to a gradient-norm
  tolerance (machine precision by default); :func:`projected_solve` — accelerated projected
  gradient over a constraint set C with a certified Frank–Wolfe duality gap.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple, Optional, Sequence, Tuple

import numpy as np
import scipy.linalg

import dpcore
from dpcore._validation import check_choice, check_nonnegative, check_positive, check_positive_int
from dpcore.events import ComposedEvent, GaussianEvent, NonPrivateEvent, PrivacyEvent, PureDpEvent
from dpcore.result import PrivacyResult, round_up
from mechanisms.base import as_generator
from mechanisms.base import least_noise_scale
from mechanisms.gaussian import Gaussian

from ._cg import newton_cg_direction
from ._data import Data, admitted_norm_bound, prepare_data
from ._objective_privacy import objective_privacy
from ._solver_common import check_relation_replace_one, check_smoothness
from .constraints import Constraint, dual_gauge_kernel, project_kernel
from .losses import Loss, _f64, get_loss, loss_gradient_margins_kernel
from .objective import gram_top_eigenvalue, traces
from .regularizers import Regularizer
from .rows import hessian_diagonal_kernel, hessian_vector_kernel, weighted_gram

__all__ = [
    "CALIBRATIONS",
    "Setup",
    "setup",
    "check_share",
    "diagnostics",
    "report_privacy",
    "glm_constants",
    "jacobian_epsilon",
    "ridge_for_jacobian",
    "calibrate_gaussian_parts",
    "pure_objective_event",
    "release_with_output_noise",
    "warn_if_over_target",
    "newton_solve",
    "projected_solve",
    "data_smoothness",
]


CALIBRATIONS = ("tight", "paper")


class Setup(NamedTuple):
    """Validated inputs of a perturbation solver."""

    loss: Loss
    epsilon: float
    delta: float
    alpha: float
    calibration: str
    data_norm_bound: float
    data: Data
    L: float
    beta: float
    rng: np.random.Generator


def setup(X, y, rng, loss, epsilon, delta, alpha, relation, calibration, data_norm_bound, loss_params,
          *, need_delta: bool) -> Setup:
    """Validate the arguments shared by the perturbation solvers and the data (rows ‖xᵢ‖₂ ≤ R,
    labels), compute the loss constants (L, β) for the largest row norm the check admits
    (:func:`algorithms._data.admitted_norm_bound`: R plus its rounding slack, so the
    sensitivities hold for every accepted row)."""
    lossf = get_loss(loss, **(loss_params or {}))
    eps = check_positive("epsilon", epsilon, allow_inf=True)
    dlt = check_nonnegative("delta", delta)
    if dlt >= 1.0 or (need_delta and dlt == 0.0):
        raise ValueError(f"delta must be in {'(0, 1)' if need_delta else '[0, 1)'}; got {delta!r}")
    a = check_nonnegative("alpha", alpha)
    check_relation_replace_one(relation, "the perturbation analyses fix n and replace one record")
    calibration = check_choice("calibration", calibration, CALIBRATIONS)
    R = check_positive("data_norm_bound", data_norm_bound)
    glm_constants(lossf, R)  # refuse non-Lipschitz losses before looking at the data
    data = prepare_data(X, y, lossf.task, R, layouts=True)  # every kernel here reads CSR / intercept rows
    lossf.check_targets(data.y)
    L, beta = glm_constants(lossf, admitted_norm_bound(R, data.d))
    return Setup(lossf, eps, dlt, a, calibration, R, data, L, beta, as_generator(rng))


def check_share(name: str, value: float) -> float:
    """A fraction in the open interval (0, 1)."""
    v = check_positive(name, value)
    if v >= 1.0:
        raise ValueError(f"{name} must be in (0, 1); got {value!r}")
    return v


def diagnostics(trace: bool, iterates, data, loss: Loss, alpha: float, constraint: Constraint, step: float):
    """(objective_trace, grad_norm_trace) of F at ``iterates`` (non-private diagnostics computed after
    the clock stops), or two empty arrays when ``trace`` is False."""
    if not trace:
        return np.empty(0), np.empty(0)
    return traces(np.asarray(iterates), data.X, data.y, loss, Regularizer(alpha), constraint, step)


def report_privacy(event: PrivacyEvent, delta: float, accountant: str) -> PrivacyResult:
    """dpcore's guarantee for ``event`` at ``delta`` (δ = 0: pure ε-DP, via ``get_delta``)."""
    if delta > 0.0:
        return dpcore.get_epsilon(event, delta, accountant=accountant)
    if isinstance(event, PureDpEvent):
        return dpcore.get_delta(event, event.epsilon, accountant="composition")
    # noise switched off with delta = 0: dpcore reports ε = inf for any δ; state δ = 0 as asked.
    return replace(dpcore.get_epsilon(event, 0.5, accountant=accountant), delta=0.0)


def glm_constants(loss: Loss, data_norm_bound: float) -> Tuple[float, float]:
    """(L, β): ℓ2-Lipschitz constant and smoothness of ℓ(·; x, y) for ``‖x‖₂ ≤ data_norm_bound``.

    Raises ``ValueError`` for losses whose constants are infinite (the squared loss on ℝᵈ).
    """
    L = loss.lipschitz(data_norm_bound)
    beta = loss.smoothness(data_norm_bound)
    if not (math.isfinite(L) and math.isfinite(beta)):
        raise ValueError(
            f"loss must be Lipschitz and smooth for this solver (the privacy proof needs both); "
            f"{loss.name!r} has L={L}, beta={beta} on the whole space — use 'logistic', 'huber' or 'smoothed_hinge'"
        )
    return L, check_smoothness(beta, data_norm_bound)


def jacobian_epsilon(beta: float, ridge_n: float) -> float:
    """ε_J = ln(1 + 2β/λ) (lecture14 Thm 14.3), rounded up; ``ridge_n`` = λ > 0 of the n-scaled objective."""
    if ridge_n <= 0.0:
        raise ValueError(f"the total ridge of the perturbed objective must be in (0, inf); got {ridge_n}")
    return math.nextafter(math.log1p(2.0 * beta / ridge_n), math.inf)


def ridge_for_jacobian(beta: float, n: int, alpha: float, eps_jacobian: float) -> float:
    """Least λ ≥ n·alpha with ln(1 + 2β/λ) ≤ ``eps_jacobian`` (Chaudhuri et al. 2011 Alg. 2: extra
    ridge only when the user's regulariser is too weak). ``eps_jacobian = inf`` → n·alpha.

    For ε_J > 690 the ridge is the one for ε_J = 690 (2β·e⁻⁶⁹⁰, larger than needed, so its Jacobian term
    is still ≤ ``eps_jacobian``) instead of an ``expm1`` overflow or a ridge that underflows to 0.
    ``ValueError`` (naming epsilon) when ε_J is so small that the ridge overflows float64."""
    if math.isinf(eps_jacobian):
        need = 0.0
    else:
        need = 2.0 * beta / math.expm1(min(eps_jacobian, 690.0)) if eps_jacobian > 0.0 else math.inf
        if not math.isfinite(need):
            raise ValueError(f"epsilon is too small for objective perturbation: its Jacobian share eps_J="
                             f"{eps_jacobian!r} needs a ridge 2*beta/(exp(eps_J) - 1) beyond float64; "
                             "eps_J = jacobian_fraction*epsilon must be above about 1e-300")
    ridge = max(n * alpha, need)
    if not math.isfinite(ridge):
        raise ValueError(f"alpha={alpha!r} is too large: the ridge n*alpha overflows float64")
    if ridge > 0.0 and not math.isinf(eps_jacobian):
        while jacobian_epsilon(beta, ridge) > eps_jacobian:  # float rounding: step to the safe side
            ridge = math.nextafter(ridge, math.inf)
    return ridge


def calibrate_gaussian_parts(epsilon: float, delta: float, shares: Sequence[float], relation: str) -> list:
    """Noise multipliers m_k (σ_k/Δ_k) of Gaussian parts composing to (epsilon, delta)-DP exactly.

    The composition of Gaussian mechanisms is a Gaussian mechanism with μ² = Σ 1/m_k² (Dong, Roth,
    Su 2019, Cor. 3.3); part k receives the share ``shares[k]`` of μ². Checked with dpcore.
    """
    sigma = dpcore.analytic_gaussian_sigma(epsilon, delta, 1.0)
    if not (sigma < math.inf and sigma * sigma * sys.float_info.max > 1.0):  # μ² = 1/σ² must be a finite float
        raise ValueError(f"epsilon={epsilon!r} at delta={delta!r} calibrates a Gaussian noise multiplier {sigma!r} "
                         "whose 1/sigma^2 is not a finite float64; use a moderate epsilon, or epsilon=inf for noise off")
    total = float(sum(shares))
    mults = [sigma / math.sqrt(s / total) for s in shares]
    for _ in range(64):
        ev = ComposedEvent([GaussianEvent(m, relation) for m in mults])
        if dpcore.get_epsilon(ev, delta, accountant="analytic_gaussian").epsilon <= epsilon:
            return mults
        mults = [m * (1.0 + 1e-12) for m in mults]
    raise ArithmeticError("could not calibrate the Gaussian parts to the safe side")  # pragma: no cover


def pure_objective_event(noise_event: PureDpEvent, eps_jacobian: float, *stages: PureDpEvent) -> PureDpEvent:
    """ε-DP objective perturbation: the Gamma-norm noise's ε plus the Jacobian term (lecture14 Thm 14.3),
    plus the ε of further pure stages run given the minimiser (e.g. the residual noise; basic
    composition), summed exactly and rounded up."""
    total = round_up(sum((Fraction(e.epsilon) for e in stages), Fraction(noise_event.epsilon) + Fraction(eps_jacobian)))
    return PureDpEvent(total, noise_event.relation)


def release_with_output_noise(
    w: np.ndarray, objective_multiplier: float, output_multiplier: float, out_sensitivity: float, eps_jacobian: float,
    delta: float, relation: str, rng: np.random.Generator,
) -> Tuple[np.ndarray, PrivacyEvent, PrivacyResult]:
    """Second stage of AMP / App-ObjP / objective perturbation's residual noise: ``w + N(0, σ_out² I)`` with
    σ_out = :func:`mechanisms.base.least_noise_scale` (``output_multiplier``, ``out_sensitivity``) (multiplier 0:
    noise off, ε = inf) and the privacy of both stages — objective noise with multiplier
    ``objective_multiplier``, output noise with ``output_multiplier``, plus the Jacobian term — as the
    ``MechanismEvent`` of :func:`algorithms._objective_privacy.objective_privacy`, inverted by dpcore
    (``"profile"``). The event takes the multipliers the calibration returned, and the noise stds are at
    least those multipliers times the sensitivities exactly, so the report never exceeds the target by a
    rounding (issue 21: a multiplier recomputed as σ/Δ lost the last bits). Returns ``(released point,
    event, privacy)``."""
    if output_multiplier == 0.0:
        event = NonPrivateEvent(relation)
        return w.copy(), event, report_privacy(event, delta, "composition")
    out = Gaussian(least_noise_scale(output_multiplier, out_sensitivity), out_sensitivity).randomize(w, rng)
    event, privacy = objective_privacy(objective_multiplier, output_multiplier, eps_jacobian, delta, relation)
    return out, event, privacy


def warn_if_over_target(privacy: PrivacyResult, target_epsilon: float, what: str) -> None:
    """Warn when a paper's constants buy less privacy than the paper claims (the report stays dpcore's)."""
    if privacy.epsilon > target_epsilon:
        warnings.warn(
            f"{what}: the paper's noise constants give epsilon={privacy.epsilon:.6g} > target {target_epsilon:.6g} "
            "under the exact analysis (reported as such); use calibration='tight' to meet the target",
            UserWarning, stacklevel=3,
        )


# ------------------------------------------------------------------------------------------ solvers


def _value_grad(loss: Loss, X, y, w, ridge, linear, z=None, g=None) -> Tuple[float, np.ndarray]:
    """(J(w), ∇J(w)) in one pass over the rows; the margins go to ``z`` (length n) when given."""
    z = np.empty(X.shape[0]) if z is None else z
    g = np.empty(X.shape[1]) if g is None else g
    f = loss_gradient_margins_kernel(loss.kind, loss.param, X, y, w, z, g)
    f += 0.5 * ridge * float(w @ w) + float(linear @ w)
    g += ridge * w + linear
    return f, g


#: Newton forms the d × d Hessian XᵀDX/n (blocked BLAS, n·d² flops, memory BLOCK_ROWS·d + d²) up to this d;
#: beyond it, Hessian-free Newton-CG (two row reads per product, Jacobi preconditioner) — the product costs
#: n·d (dense) or nnz (CSR) instead of n·d² (benchmarks/bench_shapes.py, RESULTS.md "Shapes and sizes").
EXPLICIT_HESSIAN_MAX_D = 256
#: conjugate-gradient iterations per Newton step at most
CG_MAX_ITER = 500


#: Newton keeps its Hessian for the next step when a full step shrank ‖∇J‖ at least this much (the iterate
#: then moves little, and the old Hessian still contracts the gradient fast); any slower step refreshes it.
HESSIAN_REUSE_RATIO = 0.05
#: Newton's first SUBSAMPLED_HESSIAN_STEPS steps (far from the minimiser, where any good curvature steers) use the
#: Hessian of every ⌊n/(50·d)⌋-th row (n ≫ d), the later ones the full Hessian: at 3·10⁵ × 100 the gradient norms
#: follow the full-Hessian ones (3.0e-2 → 1.1e-2 → 4.9e-3 → 1.7e-3 against → 8.9e-3 → 3.2e-3 → 8.1e-4) at a
#: fiftieth of the cost (benchmarks/bench_shapes.py --dense)
SUBSAMPLED_HESSIAN_ROWS_PER_FEATURE = 50
SUBSAMPLED_HESSIAN_STEPS = 3


def _hessian_solver(X, h: np.ndarray, ridge: float, stride: int = 1):
    """(solve, products) for H = Xᵀdiag(h)X/n + ridge·I: ``solve(g, gnorm)`` returns (p ≈ −H⁻¹g, Hessian-vector
    products used). Exact (Cholesky of the blocked Gram matrix, ``products`` = 0) for d ≤
    ``EXPLICIT_HESSIAN_MAX_D`` — from every ``stride``-th row only (weights × stride: a subsampled Hessian) when
    ``stride`` > 1 —, else preconditioned CG to the relative residual min(0.1, √‖g‖) (inexact Newton,
    superlinear; the accuracy of the returned point is checked separately)."""
    n, d = X.shape
    if d <= EXPLICIT_HESSIAN_MAX_D:
        if stride > 1:
            weights = np.zeros(n)
            weights[::stride] = np.sqrt(h[::stride] * (n / len(h[::stride])))
        else:
            weights = np.sqrt(h)
        H = weighted_gram(X, weights) / n
        H[np.diag_indices(d)] += ridge
        try:
            factor = scipy.linalg.cho_factor(H, check_finite=False)
            return (lambda g, gnorm: (-scipy.linalg.cho_solve(factor, g, check_finite=False), 0)), 0
        except (np.linalg.LinAlgError, ValueError):
            def dense(g, gnorm):
                try:
                    return -np.linalg.solve(H, g), 0
                except np.linalg.LinAlgError:
                    return -g, 0
            return dense, 0
    diag = np.empty(d)
    hessian_diagonal_kernel(X, h, diag)
    diag = diag / n + ridge
    diag[~(diag > 0.0)] = 1.0
    hv = np.empty(d)

    def product(v):
        hessian_vector_kernel(X, h, v, hv)
        return hv / n + ridge * v

    def cg(g, gnorm):
        return newton_cg_direction(product, g, gnorm, diag, CG_MAX_ITER)

    return cg, 0


def newton_solve(
    loss: Loss, X, y: np.ndarray, ridge: float, linear: np.ndarray, *, tol: float = 1e-10,
    max_iter: int = 100, w0: Optional[np.ndarray] = None, certify=None, certified_tol: float = math.inf,
) -> Tuple[np.ndarray, float, int, list]:
    """Minimise ``J(w) = (1/n)Σℓ(w; xᵢ, yᵢ) + (ridge/2)‖w‖² + ⟨linear, w⟩`` by damped Newton.

    Newton direction from the exact GLM Hessian ``Xᵀ diag(ℓ'') X / n + ridge·I`` (:func:`_hessian_solver`:
    formed by blocks for small d, Newton-CG beyond; kept for the next step after a full step that shrank
    ‖∇J‖ by ``HESSIAN_REUSE_RATIO``), Armijo backtracking on J (at J's floating-point
    resolution a step is accepted if it decreases ‖∇J‖); stops when ``‖∇J(w)‖₂ ≤ tol``. ``X`` may be any
    layout of :mod:`algorithms.rows` (dense, CSR, row scale, intercept column): memory O(n + d²) besides X,
    no n×d temporary. ``certify`` (w ↦ a certified bound on ‖∇J(w)‖, :mod:`algorithms._residual`): when the
    point reached fails ``certified_tol``, Newton goes on to a 16 times smaller float tolerance, three times at
    most — the rounding-error part of the certificate can exceed the float gradient the caller aimed at.
    Returns ``(w, ‖∇J(w)‖₂, gradient evaluations (per-example; a Hessian-vector
    product counts as one), iterates)``. Raises ``RuntimeError`` if the tolerance is not met (the privacy
    proofs of objective perturbation / AMP need it).
    """
    max_iter = check_positive_int("max_iter", max_iter)
    X = _f64(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    linear = np.ascontiguousarray(linear, dtype=np.float64)
    n, d = X.shape
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    z, z_new, g_new = np.empty(n), np.empty(n), np.empty(d)
    f, g = _value_grad(loss, X, y, w, ridge, linear, z)
    evals = n
    iterates = [w.copy()]
    gnorm = float(np.linalg.norm(g))
    solve, refresh, tightenings, previous, goal = None, True, 0, math.inf, tol
    # far from the minimiser a Hessian of every stride-th row steers as well (n ≫ d): the first steps use it
    stride = max(1, n // (SUBSAMPLED_HESSIAN_ROWS_PER_FEATURE * d)) if d <= EXPLICIT_HESSIAN_MAX_D else 1
    for it in range(max_iter):
        if it == SUBSAMPLED_HESSIAN_STEPS:
            stride = 1
        if gnorm <= tol:
            if certify is None or tightenings == 3 or certify(w) <= certified_tol:
                break
            tol, tightenings = tol / 16.0, tightenings + 1
            evals += n
        elif tightenings and gnorm > 0.5 * previous:
            break  # at the float floor: the caller's certificate check decides
        if refresh:
            solve, products = _hessian_solver(X, loss.second_deriv(z, y), ridge, stride)
            evals += products * n
        step, products = solve(g, gnorm)
        evals += products * n
        slope = float(g @ step)
        if not slope < 0.0:
            step, slope = -g, -float(g @ g)
        t = 1.0
        while True:
            w_new = w + t * step
            f_new, g_new = _value_grad(loss, X, y, w_new, ridge, linear, z_new, g_new)
            evals += n
            if f_new <= f + 1e-4 * t * slope or t < 1e-12:
                break
            # at the floating-point floor of J, decrease of the gradient norm decides instead
            if abs(f_new - f) <= 1e-13 * max(1.0, abs(f)) and float(np.linalg.norm(g_new)) < gnorm:
                break
            t *= 0.5
        if t < 1e-12 and float(np.linalg.norm(g_new)) >= gnorm:
            break  # no further progress possible in floating point
        w, f = w_new, f_new
        g, g_new = g_new, g
        z, z_new = z_new, z
        previous, gnorm = gnorm, float(np.linalg.norm(g))
        refresh = not (t == 1.0 and gnorm <= HESSIAN_REUSE_RATIO * previous) or stride > 1
        iterates.append(w.copy())
    if not gnorm <= goal:
        raise RuntimeError(
            f"the perturbed objective was not minimised to tol={goal} (reached ||grad||={gnorm:.3e} after "
            f"{len(iterates) - 1} Newton steps); raise tol or alpha — the privacy proof needs the minimiser"
        )
    return w, gnorm, evals, iterates


def _fw_gap(w: np.ndarray, g: np.ndarray, constraint: Constraint) -> float:
    """Frank–Wolfe gap max_{u∈C} ⟨g, w − u⟩ ≥ J(w) − min_C J for convex J (w ∈ C)."""
    return float(g @ w) + dual_gauge_kernel(constraint.kind, constraint.radius, -g)


def data_smoothness(loss: Loss, X, bound: float) -> float:
    """Smoothness of the mean loss on *this* data, ℓ''_max·λ_max(XᵀX/n) (≤ ``bound`` = ℓ''_max·R²);
    only an optimisation step size — privacy never depends on it (the accuracy is certified)."""
    lam = gram_top_eigenvalue(X)
    return bound if lam is None else min(bound, loss.second_deriv_bound * lam * (1.0 + 1e-9) + 1e-300)


def projected_solve(
    loss: Loss, X: np.ndarray, y: np.ndarray, ridge: float, linear: np.ndarray, constraint: Constraint,
    *, accuracy: float, smoothness: float, max_iter: int = 100_000, check_every: int = 10,
) -> Tuple[np.ndarray, float, int, list]:
    """Minimise J (as in :func:`newton_solve`) over C to a *certified* accuracy J(w) − min_C J ≤ ``accuracy``.

    Accelerated projected gradient for a ``ridge``-strongly convex, ``smoothness + ridge``-smooth J
    (Nesterov 2004, constant momentum (√κ − 1)/(√κ + 1); FISTA momentum if ridge = 0); the certificate
    — the Frank–Wolfe gap (C bounded) or ‖∇J‖²/(2·ridge) (C = ℝᵈ) — is evaluated every
    ``check_every`` iterations. Returns ``(w, certificate, gradient evaluations, iterates)``;
    ``RuntimeError`` if the accuracy is not certified within ``max_iter``.
    """
    max_iter = check_positive_int("max_iter", max_iter)
    n, d = X.shape
    Ls = smoothness + ridge
    sq = math.sqrt(Ls / ridge) if ridge > 0.0 else math.inf
    w = np.zeros(d)
    project_kernel(constraint.kind, constraint.radius, w)
    v = w.copy()
    evals = 0
    iterates = [w.copy()]
    cert = math.inf
    tk = 1.0
    for it in range(max_iter):
        if it % check_every == 0:
            _, gw = _value_grad(loss, X, y, w, ridge, linear)
            evals += n
            cert = float(gw @ gw) / (2.0 * ridge) if constraint.kind == 0 else _fw_gap(w, gw, constraint)
            iterates.append(w.copy())
            if cert <= accuracy:
                break
        _, gv = _value_grad(loss, X, y, v, ridge, linear)
        evals += n
        w_new = v - gv / Ls
        project_kernel(constraint.kind, constraint.radius, w_new)
        if math.isinf(sq):  # FISTA momentum (Beck & Teboulle 2009) when J is only convex
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * tk * tk))
            mom, tk = (tk - 1.0) / t_next, t_next
        else:
            mom = (sq - 1.0) / (sq + 1.0)
        v = w_new + mom * (w_new - w)
        w = w_new
    if not cert <= accuracy:
        raise RuntimeError(
            f"accuracy={accuracy} was not certified within max_iter={max_iter} (gap {cert:.3e}); "
            "the privacy proof of App-ObjP needs it — raise accuracy or max_iter"
        )
    return w, cert, evals, iterates
