"""The regularized ERM objective F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + r(w) and diagnostics on it.

Used for the per-pass traces of :class:`algorithms.result.SolverResult` and as the non-private
reference (:func:`reference_minimizer`, scipy L-BFGS-B) the tests compare solvers with.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from .constraints import Constraint, project_kernel
from .losses import Loss
from .regularizers import Regularizer, prox_kernel

__all__ = ["objective_value", "gradient_mapping_norm", "traces", "reference_minimizer"]


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
    X = np.ascontiguousarray(X, dtype=np.float64)
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
