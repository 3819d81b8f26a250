"""Regularizers r(w) = (alpha/2)‖w‖₂² + l1·‖w‖₁ with their proximal operators.

L2 (``l1 = 0``), L1 (``alpha = 0``) and elastic net (both) are one family. The proximal operator
of ``η·r`` (wang-ye-xu-2017 §4: ``prox_r(y) = argmin_x ½‖x − y‖² + r(x)``) is

    prox_{ηr}(v) = soft_threshold(v, η·l1) / (1 + η·alpha),

exact for the whole family (coordinate-wise: the L2 term rescales the soft-thresholded value).
r is data-independent, so its gradient / prox never needs noise.

The non-convex penalty ``nonconvex·Σⱼ wⱼ²/(1 + wⱼ²)`` (wang-jayaraman-evans-gu §7.1, after Reddi et
al. 2016) has no cheap exact prox; solvers add its gradient ``2λwⱼ/(1 + wⱼ²)²`` to their (noisy)
gradient instead (:func:`nonconvex_gradient_kernel`). Its gradient is ``(9/(8√3))λ``-bounded per
coordinate and ``2λ``-Lipschitz (the second derivative ``λ(2 − 6w²)/(1 + w²)³`` lies in [−λ/2, 2λ]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_nonnegative

from .constraints import project_kernel

__all__ = [
    "Regularizer", "get_regularizer", "prox_kernel", "prox_gradient_step_kernel", "regularizer_value_kernel",
    "REGULARIZER_NAMES", "nonconvex_gradient_kernel",
]

REGULARIZER_NAMES = ("none", "l2", "l1", "elastic_net")


@jit
def prox_kernel(alpha: float, l1: float, step: float, v: np.ndarray) -> None:
    """In place: ``v ← prox_{step·r}(v)`` for r = (alpha/2)‖·‖² + l1‖·‖₁ (step in objective⁻¹ units)."""
    thr = step * l1
    scale = 1.0 / (1.0 + step * alpha)
    if thr == 0.0:
        if scale != 1.0:
            for j in range(v.shape[0]):
                v[j] *= scale
        return
    for j in range(v.shape[0]):
        x = v[j]
        if x > thr:
            v[j] = (x - thr) * scale
        elif x < -thr:
            v[j] = (x + thr) * scale
        else:
            v[j] = 0.0


@jit
def prox_gradient_step_kernel(w, g, scale, lr, alpha, l1, ckind, cradius) -> None:
    """In place: ``w ← Proj_C(prox_{lr·r}(w − scale·g))`` — the (noisy) proximal gradient step of every
    solver here; ``Proj_C ∘ prox`` is the exact prox of r + I_C for the balls and the box."""
    for j in range(w.shape[0]):
        w[j] -= scale * g[j]
    prox_kernel(alpha, l1, lr, w)
    project_kernel(ckind, cradius, w)


@jit
def nonconvex_gradient_kernel(lam: float, w: np.ndarray, scale: float, g: np.ndarray) -> None:
    """In place: ``g += scale·∇(lam·Σⱼ wⱼ²/(1 + wⱼ²))``, i.e. ``g[j] += scale·lam·2wⱼ/(1 + wⱼ²)²``."""
    if lam == 0.0:
        return
    c = 2.0 * scale * lam
    for j in range(w.shape[0]):
        u = 1.0 + w[j] * w[j]
        g[j] += c * w[j] / (u * u)


@jit
def regularizer_value_kernel(alpha: float, l1: float, w: np.ndarray) -> float:
    """(alpha/2)‖w‖₂² + l1‖w‖₁."""
    sq = 0.0
    ab = 0.0
    for j in range(w.shape[0]):
        sq += w[j] * w[j]
        ab += abs(w[j])
    return 0.5 * alpha * sq + l1 * ab


@dataclass(frozen=True)
class Regularizer:
    """r(w) = (alpha/2)‖w‖₂² + l1‖w‖₁ + nonconvex·Σⱼ wⱼ²/(1 + wⱼ²).

    Attributes
    ----------
    alpha : float
        L2 strength ≥ 0 (r is alpha-strongly convex), objective units.
    l1 : float
        L1 strength ≥ 0, objective units.
    nonconvex : float
        λ ≥ 0 of the non-convex penalty (wang-jayaraman-evans-gu §7.1), objective units.
    """

    alpha: float = 0.0
    l1: float = 0.0
    nonconvex: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_nonnegative("alpha", self.alpha))
        object.__setattr__(self, "l1", check_nonnegative("l1", self.l1))
        object.__setattr__(self, "nonconvex", check_nonnegative("nonconvex", self.nonconvex))

    @property
    def name(self) -> str:
        base = self._convex_name()
        if self.nonconvex > 0:
            return "nonconvex" if base == "none" else f"nonconvex+{base}"
        return base

    def _convex_name(self) -> str:
        if self.alpha > 0 and self.l1 > 0:
            return "elastic_net"
        if self.l1 > 0:
            return "l1"
        return "l2" if self.alpha > 0 else "none"

    @property
    def smooth(self) -> bool:
        """True when r is differentiable (no L1 part)."""
        return self.l1 == 0.0

    @property
    def smoothness(self) -> float:
        """Lipschitz constant of the gradient of the smooth part: alpha + 2·nonconvex."""
        return self.alpha + 2.0 * self.nonconvex

    def value(self, w: np.ndarray) -> float:
        w = np.ascontiguousarray(w, dtype=np.float64)
        sq = w * w
        return float(regularizer_value_kernel(self.alpha, self.l1, w)) + self.nonconvex * float(np.sum(sq / (1.0 + sq)))

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """prox_{step·r}(v) (a new array)."""
        out = np.array(v, dtype=np.float64, copy=True)
        prox_kernel(self.alpha, self.l1, float(check_nonnegative("step", step)), out)
        return out

    def smooth_gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the smooth part, alpha·w + nonconvex·2w/(1 + w²)²."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        g = self.alpha * w
        nonconvex_gradient_kernel(self.nonconvex, w, 1.0, g)
        return g


def get_regularizer(name: str, *, alpha: float = 0.0, l1: float = 0.0) -> Regularizer:
    """Build a regularizer by name, checking that the strengths match the name.

    ``"l2"`` needs ``alpha > 0, l1 = 0``; ``"l1"`` needs ``l1 > 0, alpha = 0``; ``"elastic_net"``
    both positive; ``"none"`` both zero.
    """
    r = Regularizer(alpha, l1)
    if name not in REGULARIZER_NAMES:
        raise ValueError(f"regularizer must be one of {REGULARIZER_NAMES}; got {name!r}")
    if r.name != name:
        raise ValueError(f"regularizer {name!r} does not match alpha={alpha!r}, l1={l1!r} (that is {r.name!r})")
    return r
