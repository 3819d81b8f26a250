"""The regularized ERM objective F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + r(w) and diagnostics on it.

Used for the per-pass traces of :class:`algorithms.result.SolverResult`, as the non-private
reference (:func:`reference_minimizer`, scipy L-BFGS-B) the tests compare solvers with, and as the
noise-off solver (:func:`minimize_objective`: with ``epsilon=inf`` there is no privacy budget to
respect, so the first-order solvers run to a convergence tolerance instead of a fixed budget).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from scipy.optimize import minimize

from .constraints import Constraint, project_kernel
from .losses import Loss, _f64
from .regularizers import Regularizer, prox_gradient_step_kernel, prox_kernel
from .rows import hessian_diagonal_kernel, weighted_gram

__all__ = ["objective_value", "gradient_mapping_norm", "traces", "reference_minimizer", "data_smoothness",
           "gram_top_eigenvalue", "minimize_objective"]


def objective_value(w: np.ndarray, X: np.ndarray, y: np.ndarray, loss: Loss, reg: Regularizer) -> float:
    """F(w) = mean loss + r(w) (:class:`algorithms.regularizers.Regularizer`)."""
    return loss.value(w, X, y) + reg.value(w)


def gradient_mapping_norm(
    w: np.ndarray, X: np.ndarray, y: np.ndarray, loss: Loss, reg: Regularizer, constraint: Constraint, step: float
) -> float:
    """‖(w − P(w − η∇f(w)))/η‖₂ with f the mean loss (plus the non-convex penalty, if any),
    P = Proj_C ∘ prox_{ηr}, η = ``step``.

    Zero exactly at the minimizers of F over C (at the stationary points with the non-convex
    penalty); equals ‖∇F(w)‖/(1+ηα) when C = ℝᵈ and l1 = 0.
    """
    w = np.ascontiguousarray(w, dtype=np.float64)
    v = w - step * (loss.gradient(w, X, y) + Regularizer(nonconvex=reg.nonconvex).smooth_gradient(w))
    prox_kernel(reg.alpha, reg.l1, step, v)
    project_kernel(constraint.kind, constraint.radius, v)
    return float(np.linalg.norm(w - v) / step)


def traces(
    snapshots: np.ndarray, X: np.ndarray, y: np.ndarray, loss: Loss, reg: Regularizer, constraint: Constraint,
    step: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Objective and gradient-mapping norm at each row of ``snapshots`` (iterates after each pass)."""
    obj = np.array([objective_value(w, X, y, loss, reg) for w in snapshots])
    gn = np.array([gradient_mapping_norm(w, X, y, loss, reg, constraint, step) for w in snapshots])
    return obj, gn


def reference_minimizer(
    X: np.ndarray, y: np.ndarray, loss: Loss, reg: Regularizer, *, tol: float = 1e-12, max_iter: int = 10_000
) -> np.ndarray:
    """Non-private minimizer of F over ℝᵈ by scipy L-BFGS-B (l1 = 0) or on the split w = u − v,
    u, v ≥ 0 (l1 > 0). For tests and baselines only."""
    X = _f64(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    d = X.shape[1]
    if reg.l1 == 0.0:
        def fg(w):
            return objective_value(w, X, y, loss, reg), loss.gradient(w, X, y) + reg.smooth_gradient(w)

        res = minimize(fg, np.zeros(d), jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "gtol": tol, "ftol": tol})
        return res.x

    def fg_split(uv):
        w = uv[:d] - uv[d:]
        g = loss.gradient(w, X, y) + reg.smooth_gradient(w)
        f = loss.value(w, X, y) + Regularizer(reg.alpha, 0.0, reg.nonconvex).value(w) + reg.l1 * float(uv.sum())
        return f, np.concatenate([g + reg.l1, -g + reg.l1])

    res = minimize(fg_split, np.zeros(2 * d), jac=True, method="L-BFGS-B", bounds=[(0.0, math.inf)] * (2 * d),
                   options={"maxiter": max_iter, "gtol": tol, "ftol": tol})
    return res.x[:d] - res.x[d:]


#: λ_max(XᵀX/n) is computed exactly (d × d Gram matrix, by blocks) up to this d
GRAM_MAX_D = 2000


def gram_top_eigenvalue(X) -> Optional[float]:
    """λ_max(XᵀX/n) for d ≤ :data:`GRAM_MAX_D` (any layout of :mod:`algorithms.rows`, blocked Gram matrix:
    no n×d temporary), else None."""
    n, d = X.shape
    if d > GRAM_MAX_D:
        return None
    X = _f64(X)
    return float(np.linalg.eigvalsh(weighted_gram(X, np.ones(n)) / n)[-1])


def data_smoothness(loss: Loss, X) -> float:
    """Smoothness of the mean loss on *this* data: ℓ''_max·λ_max(XᵀX/n) (a step size for non-private
    solves only — it is read off the data). Exact eigenvalue for d ≤ 2000, else ℓ''_max·mean ‖xᵢ‖² (the trace
    bound)."""
    lam = gram_top_eigenvalue(X)
    if lam is None:  # λ_max ≤ trace(XᵀX)/n = mean ‖xᵢ‖²
        diag = np.empty(X.shape[1])
        hessian_diagonal_kernel(_f64(X), np.ones(X.shape[0]), diag)
        lam = float(diag.sum()) / X.shape[0]
    return loss.second_deriv_bound * lam * (1.0 + 1e-9) + 1e-300


def minimize_objective(
    X: np.ndarray, y: np.ndarray, loss: Loss, reg: Regularizer, constraint: Constraint, *, tol: float = 1e-9,
    max_iter: int = 200_000, w0: np.ndarray | None = None,
) -> tuple[np.ndarray, float, int, list]:
    """Minimise F = mean loss + r over C to ``‖G(w)‖₂ ≤ tol`` (G the gradient mapping at step 1/β_data).

    Smooth unconstrained F (l1 = 0, C = ℝᵈ): damped Newton (:func:`algorithms._perturbation.newton_solve`,
    G = ∇F; Newton-CG for large d). ``X`` may be any layout of :mod:`algorithms.rows`. Otherwise (or when Newton stalls on a
    singular Hessian) accelerated proximal gradient (FISTA, Beck & Teboulle 2009) with the gradient-based adaptive
    restart of O'Donoghue & Candès (2015), which recovers linear convergence on strongly convex F
    without knowing the modulus; the step 1/β_data uses :func:`data_smoothness` (non-private use:
    ``epsilon=inf``). The stopping rule is the gradient mapping at the extrapolated point, so the
    returned point is one prox step from it; for α-strongly convex F, F(w) − min F ≤ ‖G‖²/α.
    Returns ``(w, ‖G‖₂, iterations, iterates)``; ``RuntimeError`` if ``tol`` is not reached.
    """
    X = _f64(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    d = X.shape[1]
    if constraint.kind == 0 and reg.l1 == 0.0 and reg.nonconvex == 0.0:
        from ._perturbation import newton_solve  # noqa: PLC0415 (that module imports this one)

        try:
            w, gnorm, _, iterates = newton_solve(loss, X, y, reg.alpha, np.zeros(d), tol=tol, w0=w0)
            return w, gnorm, len(iterates) - 1, iterates
        except RuntimeError:  # singular Hessian (e.g. Huber rows all in the linear part, alpha = 0): FISTA
            pass
    step = 1.0 / (data_smoothness(loss, X) + 2.0 * reg.nonconvex)  # alpha is in the prox
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    project_kernel(constraint.kind, constraint.radius, w)
    v = w.copy()
    t = 1.0
    gnorm = math.inf
    iterates = [w.copy()]
    it = 0
    while it < max_iter:
        it += 1
        g = loss.gradient(v, X, y) + reg.smooth_gradient(v) - reg.alpha * v
        w_new = v.copy()
        prox_gradient_step_kernel(w_new, g, step, step, reg.alpha, reg.l1, constraint.kind, constraint.radius)
        gnorm = float(np.linalg.norm(v - w_new)) / step
        if gnorm <= tol:
            w = w_new
            break
        if float((v - w_new) @ (w_new - w)) > 0.0:  # restart: the momentum points uphill
            t = 1.0
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        v = w_new + ((t - 1.0) / t_next) * (w_new - w)
        w, t = w_new, t_next
        if it % 50 == 0:
            iterates.append(w.copy())
    iterates.append(w.copy())
    if not gnorm <= tol:
        raise RuntimeError(f"the objective was not minimised to tol={tol} within max_iter={max_iter} "
                           f"(gradient mapping {gnorm:.3e})")
    return w, gnorm, it, iterates
