"""Certified residual of an approximate minimiser, and the sensitivity it contributes (issue 13).

The objective-perturbation proofs (lecture14 Thm 14.3; Chaudhuri et al. 2011 Thm 9) cover the
*exact* minimiser θ* of the perturbed objective; a solver returns a float point θ̂ instead.
For a μ-strongly convex J, ‖θ̂ − θ*‖₂ ≤ ‖∇J(θ̂)‖₂/μ, so if ‖∇J(θ̂)‖₂ ≤ γ on *every* data set the
difference θ̂ − θ* has ℓ2 sensitivity ``2γ/μ`` (:func:`residual_sensitivity`). Releasing
θ̂ + b₂ with b₂ noise for that sensitivity is the AMP argument (Iyengar et al. 2019, Alg. 1;
lecture14 "AMP"): θ* is released by objective perturbation, and θ̂ − θ* + b₂ is, given θ*, a
mechanism of sensitivity 2γ/μ (adaptive composition); the release is post-processing of the pair.

What makes γ hold on every data set is the certificate :func:`certified_gradient_norm`: an upper
bound on the *exact* ‖∇J(θ̂)‖₂, i.e. the float evaluation plus a bound on its rounding error, so a
solver's own float gradient norm (which can sit below the true one) is never trusted. It works for
any inner solver: it only looks at the returned point.

J(w) = (1/n) Σᵢ ℓ(⟨w, xᵢ⟩, yᵢ) + (ridge/2)‖w‖² + ⟨linear, w⟩ for a generalized linear loss ℓ with
|ℓ'| ≤ c and ℓ' c₂-Lipschitz (ℓ'' ≤ c₂), rows with ‖xᵢ‖₂ ≤ R. Rounding-error bound (standard model
of floating-point arithmetic with unit roundoff u = 2⁻⁵³, γ_k = ku/(1 − ku); Higham 2002, §§2.2,
3.1, 4.3):

* margins: |ẑᵢ − zᵢ| ≤ γ_k·Bᵢ, Bᵢ = Σⱼ|xᵢⱼ||wⱼ| ≤ ‖w‖R, with k the terms of the dot product — d, or for
  CSR rows the largest number of stored entries of a row (plus the intercept) — in any order, FMA allowed
  (the rows of :mod:`algorithms.rows` are exact data: the entries fl(sᵢ·xᵢⱼ) every kernel forms).
  B = maxᵢ Bᵢ is computed in the certificate's own pass (rounded up by γ_{k+2}); on sparse rows it is far
  below ‖w‖R when w spreads over many coordinates the row does not touch;
* derivative: |ĉᵢ − ℓ'(zᵢ)| ≤ e_c = e_eval + c₂ γ_k B, with e_eval = 32u·c for logistic and
  Huber (a few correctly-rounded operations and one ``exp``) and 32u·c·(1 + 1/h) for the smoothed
  hinge of half-width h (its subtraction 1 + h − m);
* the mean (1/n) Σᵢ ĉᵢ xᵢ: the products (ĉᵢ times the data entry) and the final division round once each; the sum
  is Neumaier-compensated, |error| ≤ (2u + 4nu²) Σ|aᵢ| per coordinate (Higham 2002, §4.3) — no
  error growing with n at first order. In ℓ2 over coordinates,
  ‖error‖ ≤ e_c R + (4u + 4nu²)(c + e_c) R;
* the ridge and linear parts: u·ridge‖w‖ and γ₂(‖ĝ_loss‖ + ridge‖w‖ + ‖linear‖) for the two
  additions; the computed norm N̂ of the final vector is within γ_{d+2} of the exact norm.

The bound returned is N̂(1 + γ_{d+2}) + 2·(sum of the above), the factor 2 covering lower-order
terms. It is typically ~1e-15·(1 + ‖w‖), far below the default tolerances.
"""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np

from dpcore._jit import jit

from .clipping import vector_norm
from .losses import SMOOTHED_HINGE, Loss, _f64, loss_deriv
from .rows import CSRRows, row_dot, row_entry, row_intercept, row_scale, row_span

__all__ = ["certified_gradient_norm", "residual_sensitivity", "check_residual"]

_U = 2.0 ** -53


def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


@jit
def _neumaier_add(s: np.ndarray, comp: np.ndarray, j: int, a: float) -> None:
    """s[j] += a with the Neumaier compensation term accumulated in comp[j]."""
    t = s[j] + a
    if abs(s[j]) >= abs(a):
        comp[j] += (s[j] - t) + a
    else:
        comp[j] += (a - t) + s[j]
    s[j] = t


@jit
def _compensated_mean_gradient(kind: int, param: float, X, y: np.ndarray, w: np.ndarray) -> Tuple[np.ndarray, float]:
    """((1/n) Σᵢ ℓ'(⟨w, xᵢ⟩, yᵢ) xᵢ with Neumaier-compensated sums per coordinate, maxᵢ fl(Σⱼ |xᵢⱼ|·|wⱼ|)) for any
    layout of :mod:`algorithms.rows` (the row entries fl(sᵢ·xᵢⱼ) as the kernels form them, the intercept entry c).
    The second value bounds each margin's dot product for its rounding error (module docstring)."""
    n, d = X.shape
    s = np.zeros(d)
    comp = np.zeros(d)
    c0 = row_intercept(X)
    top = 0.0
    for i in range(n):
        c = loss_deriv(kind, param, row_dot(X, i, w), y[i])
        sc = row_scale(X, i)
        lo, hi = row_span(X, i)
        b = abs(c0 * w[d - 1]) if c0 != 0.0 else 0.0
        for k in range(lo, hi):
            j, v = row_entry(X, i, k)
            a = sc * v
            b += abs(a) * abs(w[j])
            _neumaier_add(s, comp, j, c * a)
        if c0 != 0.0:
            _neumaier_add(s, comp, d - 1, c * c0)
        top = max(top, b)
    out = np.empty(d)
    for j in range(d):
        out[j] = (s[j] + comp[j]) / n
    return out, top


def certified_gradient_norm(loss: Loss, X: np.ndarray, y: np.ndarray, w: np.ndarray, ridge: float,
                            linear: np.ndarray, row_norm_bound: float) -> float:
    """Upper bound on the exact ‖∇J(w)‖₂ (module docstring) at the float point ``w``.

    Parameters
    ----------
    loss : Loss
        A generalized linear loss with finite ``deriv_bound`` (c) and ``second_deriv_bound`` (c₂).
    X, y : arrays
        The data (float64), rows with ‖xᵢ‖₂ ≤ ``row_norm_bound``.
    w : array, shape (d,)
        The point (weight units).
    ridge : float
        Ridge coefficient ≥ 0 of J (the mean-scaled objective's).
    linear : array, shape (d,)
        Linear term of J (e.g. b/n of objective perturbation; its float rounding is included).
    row_norm_bound : float
        R ≥ every ‖xᵢ‖₂.

    Returns
    -------
    float
        B with ‖∇J(w)‖₂ ≤ B for the exact J at the exact float inputs.
    """
    X = _f64(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    linear = np.ascontiguousarray(linear, dtype=np.float64)
    n, d = X.shape
    # terms of a margin's dot product: d, or for CSR rows the most stored entries of a row (+ the intercept)
    k = d if not isinstance(X, CSRRows) else int(np.max(np.diff(X.indptr))) + (1 if X.intercept else 0)
    c, c2, R = loss.deriv_bound, loss.second_deriv_bound, float(row_norm_bound)
    g_loss, abs_dot = _compensated_mean_gradient(loss.kind, loss.param, X, y, w)
    g = g_loss + ridge * w + linear
    wn = vector_norm(w) * (1.0 + _gamma(d + 2))
    ln = vector_norm(linear) * (1.0 + _gamma(d + 2))
    gln = vector_norm(g_loss) * (1.0 + _gamma(d + 2))
    e_eval = 32.0 * _U * c * ((1.0 + 1.0 / loss.param) if loss.kind == SMOOTHED_HINGE else 1.0)
    # margin error ≤ γ_{k+1}·Σⱼ|xᵢⱼ||wⱼ| ≤ γ_{k+1}·abs_dot/(1 − γ_{k+1}) (abs_dot computed in float), and ≤ γ_{k+1}‖w‖R
    dot_bound = min(abs_dot * (1.0 + _gamma(k + 2)), wn * R)
    e_c = e_eval + c2 * _gamma(k) * dot_bound
    e_loss = e_c * R + (4.0 * _U + 4.0 * n * _U * _U) * (c + e_c) * R
    e_rest = _U * ridge * wn + _U * ln + _gamma(2) * (gln + ridge * wn + ln)
    bound = vector_norm(g) * (1.0 + _gamma(d + 2)) + 2.0 * (e_loss + e_rest)
    return math.nextafter(bound, math.inf)


def residual_sensitivity(gradient_tol: float, strong_convexity: float) -> float:
    """ℓ2 sensitivity 2γ/μ of θ̂ − θ* when ‖∇J(θ̂)‖₂ ≤ γ and J is μ-strongly convex on every data set."""
    return 2.0 * gradient_tol / strong_convexity


def check_residual(certificate: float, gradient_tol: float, what: str) -> None:
    """Refuse (``RuntimeError``) to release a point whose certified ‖∇J‖ exceeds the accounted γ."""
    if not certificate <= gradient_tol:
        raise RuntimeError(
            f"{what}: the certified gradient norm {certificate:.3e} exceeds the accounted tolerance {gradient_tol!r}; "
            "the privacy proof needs it — raise the tolerance or alpha"
        )
