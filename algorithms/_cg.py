"""Preconditioned conjugate gradients for the inexact Newton steps of the non-private inner solves
(:func:`algorithms._perturbation.newton_solve`, :func:`algorithms.multiclass.softmax_minimize`).

Only the optimiser: the accuracy a privacy proof needs is certified on the returned point
(:mod:`algorithms._residual`), never taken from the solver.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Tuple

import numpy as np

__all__ = ["newton_cg_direction"]


def newton_cg_direction(hessian_vector: Callable[[np.ndarray], np.ndarray], g: np.ndarray, gnorm: float,
                        diag: Optional[np.ndarray] = None, max_iter: int = 500) -> Tuple[np.ndarray, int]:
    """(p, products) with H p ≈ −g: CG preconditioned by the positive ``diag`` (Jacobi; None: none), stopped at
    the residual min(0.1, √‖g‖)·‖g‖ (the forcing term of inexact Newton, superlinear), on non-positive
    curvature, or after ``max_iter`` products; −g if no step was made."""
    p = np.zeros_like(g)
    r = -g
    s = r if diag is None else r / diag
    q = s.copy()
    rs = float(r @ s)
    target = min(0.1, math.sqrt(gnorm)) * gnorm
    for it in range(1, max_iter + 1):
        hv = hessian_vector(q)
        curv = float(q @ hv)
        if not curv > 0.0:
            break
        step = rs / curv
        p += step * q
        r -= step * hv
        if float(np.linalg.norm(r)) <= target:
            return p, it
        s = r if diag is None else r / diag
        rs_new = float(r @ s)
        q = s + (rs_new / rs) * q
        rs = rs_new
    return (p if p.any() else -g), max_iter
