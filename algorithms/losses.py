"""Generalized linear losses as Numba kernels, with their Lipschitz / smoothness constants.

Every loss here is a generalized linear loss (lecture14 Definition 14.2): with the margin
``z = ⟨w, x⟩`` it is ``ℓ(w; x, y) = φ(y·z)`` for classification (labels ``y ∈ {−1, +1}``) or
``ℓ(w; x, y) = φ(z − y)`` for regression. Its per-example gradient is ``ℓ'(z, y)·x`` where
``ℓ'(z, y) = dℓ/dz``, so ``‖∇ℓ‖₂ = |ℓ'(z, y)|·‖x‖₂`` — the identity the clipping kernels use.

Objective convention of the package: ``F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + r(w)`` with the L2 part of
``r`` written ``(alpha/2)‖w‖²`` (see :mod:`algorithms.regularizers`).

Losses (``kind`` code, parameter):

* ``"logistic"`` (0): ``φ(m) = log(1 + e^{−m})``; ``|φ'| ≤ 1``, ``φ'' ≤ 1/4``.
* ``"huber"`` (1, ``huber_delta`` = h): Zhang, Zheng, Mou, Wang (2017) §4,
  ``φ(u) = u²/2`` for ``|u| ≤ h`` and ``h(|u| − h/2)`` otherwise; ``|φ'| ≤ h``, ``φ'' ≤ 1``.
* ``"squared"`` (2): ``φ(u) = u²/2``; ``φ'`` unbounded (Lipschitz only on a bounded domain with
  bounded labels), ``φ'' = 1``.
* ``"smoothed_hinge"`` (3, ``smoothing`` = h): the Huberized hinge of Chaudhuri, Monteleoni,
  Sarwate (2011) eq. (7): ``0`` for ``m > 1 + h``, ``(1 + h − m)²/(4h)`` for ``|1 − m| ≤ h``,
  ``1 − m`` for ``m < 1 − h``; ``|φ'| ≤ 1``, ``φ'' ≤ 1/(2h)``.

Kernels take ``(kind, param)`` so that one compiled solver serves every loss.

Regression targets: ``get_loss(..., target_bound=B)`` states a public bound ``|yᵢ| ≤ B``; the
solvers check every target against it (:meth:`Loss.check_targets`, ``ValueError`` naming
``target_bound``) and the squared loss uses it for its Lipschitz constant on a bounded domain. The
clipped solvers' privacy does not rest on it: per-example gradients are clipped whatever ``y`` is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_nonnegative, check_positive

from .rows import FASTMATH as _FAST
from .rows import CSRRows, DenseRows, row_axpy, row_dot

__all__ = [
    "LOGISTIC",
    "HUBER",
    "SQUARED",
    "SMOOTHED_HINGE",
    "LOSS_NAMES",
    "Loss",
    "get_loss",
    "loss_value",
    "loss_deriv",
    "loss_second_deriv",
    "row_dot",
    "row_axpy",
    "mean_loss_kernel",
    "mean_gradient_kernel",
    "loss_gradient_margins_kernel",
]

LOGISTIC, HUBER, SQUARED, SMOOTHED_HINGE = 0, 1, 2, 3
LOSS_NAMES = ("logistic", "huber", "squared", "smoothed_hinge")
_CLASSIFICATION = (LOGISTIC, SMOOTHED_HINGE)


# ------------------------------------------------------------------------------------- scalar kernels


@jit
def loss_value(kind: int, param: float, z: float, y: float) -> float:
    """ℓ at margin ``z = ⟨w, x⟩`` and label ``y`` (nats for logistic; dimensionless otherwise)."""
    if kind == LOGISTIC:
        m = y * z
        if m > 0.0:
            return math.log1p(math.exp(-m))
        return -m + math.log1p(math.exp(m))
    if kind == HUBER:
        u = z - y
        au = abs(u)
        if au <= param:
            return 0.5 * u * u
        return param * (au - 0.5 * param)
    if kind == SQUARED:
        u = z - y
        return 0.5 * u * u
    m = y * z
    if m >= 1.0 + param:
        return 0.0
    if m <= 1.0 - param:
        return 1.0 - m
    s = 1.0 + param - m
    return s * s / (4.0 * param)


@jit
def loss_deriv(kind: int, param: float, z: float, y: float) -> float:
    """dℓ/dz at margin ``z``; the per-example gradient is this times ``x``."""
    if kind == LOGISTIC:
        m = y * z
        if m > 0.0:
            e = math.exp(-m)
            return -y * e / (1.0 + e)
        return -y / (1.0 + math.exp(m))
    if kind == HUBER:
        u = z - y
        if u > param:
            return param
        if u < -param:
            return -param
        return u
    if kind == SQUARED:
        return z - y
    m = y * z
    if m >= 1.0 + param:
        return 0.0
    if m <= 1.0 - param:
        return -y
    return -y * (1.0 + param - m) / (2.0 * param)


@jit
def loss_second_deriv(kind: int, param: float, z: float, y: float) -> float:
    """d²ℓ/dz² at margin ``z`` (labels ±1 so ``y² = 1`` for classification)."""
    if kind == LOGISTIC:
        e = math.exp(-abs(y * z))
        return min(0.25, e / ((1.0 + e) * (1.0 + e)))  # ≤ 1/4 exactly; rounding could add an ulp
    if kind == HUBER:
        return 1.0 if abs(z - y) <= param else 0.0
    if kind == SQUARED:
        return 1.0
    m = y * z
    if abs(1.0 - m) <= param:
        return 1.0 / (2.0 * param)
    return 0.0


# ------------------------------------------------------------------------------------ dataset kernels


@jit
def mean_loss_kernel(kind: int, param: float, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """(1/n) Σᵢ ℓ(w; xᵢ, yᵢ), one streaming pass over ``X``."""
    n = X.shape[0]
    total = 0.0
    for i in range(n):
        total += loss_value(kind, param, row_dot(X, i, w), y[i])
    return total / n


@jit(fastmath=_FAST)
def mean_gradient_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, w: np.ndarray, out: np.ndarray
) -> None:
    """Write (1/n) Σᵢ ∇ℓ(w; xᵢ, yᵢ) into ``out`` (one fused pass over ``X``)."""
    n, d = X.shape
    out[:] = 0.0
    for i in range(n):
        row_axpy(loss_deriv(kind, param, row_dot(X, i, w), y[i]), X, i, out)
    for j in range(d):
        out[j] /= n


@jit(fastmath=_FAST)
def loss_gradient_margins_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, w: np.ndarray, z: np.ndarray, out: np.ndarray
) -> float:
    """One pass: returns (1/n) Σᵢ ℓ(w; xᵢ, yᵢ), writes the mean gradient into ``out`` and the margins
    ⟨w, xᵢ⟩ into ``z`` (for the second derivatives of a Newton step)."""
    n, d = X.shape
    out[:] = 0.0
    total = 0.0
    for i in range(n):
        zi = row_dot(X, i, w)
        z[i] = zi
        total += loss_value(kind, param, zi, y[i])
        row_axpy(loss_deriv(kind, param, zi, y[i]), X, i, out)
    for j in range(d):
        out[j] /= n
    return total / n


@jit
def _deriv_vector(kind: int, param: float, z: np.ndarray, y: np.ndarray, second: bool) -> np.ndarray:
    out = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        if second:
            out[i] = loss_second_deriv(kind, param, z[i], y[i])
        else:
            out[i] = loss_deriv(kind, param, z[i], y[i])
    return out


# --------------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Loss:
    """A generalized linear loss with its constants.

    Attributes
    ----------
    name : str
        One of :data:`LOSS_NAMES`.
    kind : int
        Kernel code passed to the ``loss_*`` kernels.
    param : float
        Huber threshold h (``"huber"``), smoothing width h (``"smoothed_hinge"``); 0 otherwise.
    task : {"classification", "regression"}
        Classification losses expect labels in {−1, +1}.
    deriv_bound : float
        c with ``|ℓ'(z, y)| ≤ c`` for all z, y (``inf`` for squared loss) — the GLM constant used by
        objective perturbation (lecture14 Alg. 1).
    second_deriv_bound : float
        c₂ with ``0 ≤ ℓ''(z, y) ≤ c₂``.
    deriv_range : float
        Width of the range of ℓ' (bounds ``|ℓ'(z, y) − ℓ'(z', y)|``; 1 for logistic, 2h for Huber).
    target_bound : float or None
        Public bound B on ``|yᵢ|`` (regression only; target units), checked by :meth:`check_targets`.
    """

    name: str
    kind: int
    param: float
    task: str
    deriv_bound: float
    second_deriv_bound: float
    deriv_range: float
    target_bound: Optional[float] = None

    # ---------------------------------------------------------------- dataset-level evaluations
    def value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
        """Mean loss (1/n) Σᵢ ℓ(w; xᵢ, yᵢ)."""
        return float(mean_loss_kernel(self.kind, self.param, _f64(X), _f64(y), _f64(w)))

    def gradient(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean gradient (1/n) Σᵢ ∇ℓ(w; xᵢ, yᵢ), shape (d,)."""
        w = _f64(w)
        out = np.empty_like(w)
        mean_gradient_kernel(self.kind, self.param, _f64(X), _f64(y), w, out)
        return out

    def deriv(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-example ℓ'(zᵢ, yᵢ) (vectorised over margins ``z``)."""
        return _deriv_vector(self.kind, self.param, _f64(np.atleast_1d(z)), _f64(np.atleast_1d(y)), False)

    def second_deriv(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-example ℓ''(zᵢ, yᵢ)."""
        return _deriv_vector(self.kind, self.param, _f64(np.atleast_1d(z)), _f64(np.atleast_1d(y)), True)

    def check_targets(self, y: np.ndarray) -> None:
        """Raise ``ValueError`` naming ``target_bound`` if some ``|yᵢ|`` exceeds it (no-op without a bound)."""
        if self.target_bound is None:
            return
        worst = int(np.argmax(np.abs(y)))
        if not abs(y[worst]) <= self.target_bound:
            raise ValueError(
                f"target_bound={self.target_bound!r} is violated: target {worst} is {y[worst]!r}; "
                "targets must satisfy |y| <= target_bound (a public bound, never read off the data)"
            )

    # ---------------------------------------------------------------------------- constants
    def lipschitz(self, radius_x: float, radius_w: float = math.inf, label_bound: Optional[float] = None) -> float:
        """ℓ2-Lipschitz constant in w of ℓ(·; x, y) for ``‖x‖₂ ≤ radius_x`` and ``‖w‖₂ ≤ radius_w``.

        ``|ℓ'|·‖x‖``: ``deriv_bound · radius_x``; for the squared loss ``|z − y| ≤ radius_x·radius_w
        + label_bound`` is needed (``inf`` when the domain is unbounded or no bound is known;
        ``label_bound`` defaults to :attr:`target_bound`).
        """
        rx = check_nonnegative("radius_x", radius_x)
        if self.kind != SQUARED:
            return self.deriv_bound * rx
        if label_bound is None:
            label_bound = self.target_bound
        if label_bound is None or math.isinf(radius_w):
            return math.inf
        rw = check_nonnegative("radius_w", radius_w)
        return rx * (rx * rw + check_nonnegative("label_bound", label_bound))

    def smoothness(self, radius_x: float) -> float:
        """ℓ2-smoothness constant β of ℓ(·; x, y) for ``‖x‖₂ ≤ radius_x``: ``c₂ · radius_x²``."""
        rx = check_nonnegative("radius_x", radius_x)
        return self.second_deriv_bound * rx * rx


def _f64(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous float64 array; a :mod:`algorithms.rows` layout (CSR / dense rows with scale
    and intercept) passes through unchanged."""
    if isinstance(a, (CSRRows, DenseRows)):
        return a
    return np.ascontiguousarray(a, dtype=np.float64)


def get_loss(name: str, *, huber_delta: float = 1.0, smoothing: float = 0.5,
             target_bound: Optional[float] = None) -> Loss:
    """Return the :class:`Loss` called ``name``.

    Parameters
    ----------
    name : {"logistic", "huber", "squared", "smoothed_hinge"}
    huber_delta : float
        Huber threshold h > 0 (same units as the residual ``⟨w, x⟩ − y``); ``"huber"`` only.
    smoothing : float
        Smoothing half-width h > 0 of the Huberized hinge (margin units); ``"smoothed_hinge"`` only.
    target_bound : float, optional
        Public bound B > 0 on |yᵢ| (target units); regression losses only.
    """
    if isinstance(name, Loss):
        return name
    if target_bound is not None:
        if name not in ("huber", "squared"):
            raise ValueError(f"target_bound applies to the regression losses 'huber' and 'squared'; got loss={name!r}")
        target_bound = check_positive("target_bound", target_bound)
    if name == "logistic":
        return Loss("logistic", LOGISTIC, 0.0, "classification", 1.0, 0.25, 1.0)
    if name == "huber":
        h = check_positive("huber_delta", huber_delta)
        return Loss("huber", HUBER, h, "regression", h, 1.0, 2.0 * h, target_bound)
    if name == "squared":
        return Loss("squared", SQUARED, 0.0, "regression", math.inf, 1.0, math.inf, target_bound)
    if name == "smoothed_hinge":
        h = check_positive("smoothing", smoothing)
        return Loss("smoothed_hinge", SMOOTHED_HINGE, h, "classification", 1.0, 1.0 / (2.0 * h), 1.0)
    raise ValueError(f"loss must be one of {LOSS_NAMES}; got {name!r}")
