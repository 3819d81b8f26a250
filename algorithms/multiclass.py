"""k-class logistic regression: one-vs-rest with the budget split, and the softmax (multinomial) loss with
per-example clipping of the whole gradient matrix.

**One-vs-rest** (any binary solver): k binary fits, class c against the rest. Under replace-one a record
is in every binary problem (its label changes them all), so the k releases compose: each fit gets the
per-class target (ε_k, δ_k) of :func:`ovr_budget` and the whole fit is the one dpcore event of
:func:`ovr_privacy` — ``SelfComposedEvent(ApproxDpEvent(ε_k, δ_k), k)`` under the optimal composition
theorem (Kairouz, Oh, Viswanath 2015, Thm 3.3; ``accountant="composition"``), or k pure ε_k-DP releases
(δ = 0) summed. Each fit's own ε (dpcore's, at δ_k) is checked ≤ ε_k before the event is formed.

**Softmax** (DP-GD / DP-SGD, ``classes=k``): weights W (k × d), in the kernels one feature-major vector
(entry (c, j) at j·k + c: a sparse row's k·nnz weights are nnz contiguous runs); the loss
of record (x, y) is log Σ_c e^{⟨w_c, x⟩} − ⟨w_y, x⟩ and its gradient is the outer product
``gᵢ = cᵢ xᵢᵀ`` with cᵢ = softmax(W xᵢ) − e_{yᵢ} (a k-vector, ‖cᵢ‖₂ ≤ √2), so
‖gᵢ‖_F = ‖cᵢ‖₂·‖xᵢ‖₂. Clipping is done in coefficient space exactly as for a binary GLM
(:func:`algorithms.clipping.clipped_coefficient` on the norm ‖cᵢ‖₂ from
:func:`algorithms.clipping.vector_norm`, threshold :func:`algorithms.clipping.clip_margin` for the
dimension k·d of the matrix): cᵢ is scaled by c̄/‖cᵢ‖ with c̄ ≤ C′/‖xᵢ‖ (rounded toward 0), NaN → 0.
Each step releases one clipped sum of matrices plus Gaussian noise on all k·d entries: the event is the
binary one (same Δ = 2C under replace-one, one Gaussian release per step), whatever k — no split.
The softmax loss is (√2·R)-Lipschitz in W (Frobenius) for ‖x‖ ≤ R and ½R²-smooth.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence, Tuple

import numpy as np

import dpcore
from dpcore.events import (
    ApproxDpEvent, NonPrivateEvent, PrivacyEvent, PureDpEvent, SelfComposedEvent,
)
from dpcore.result import PrivacyResult, round_up

from dpcore._jit import jit

from ._cg import newton_cg_direction
from .clipping import clip_margin, clipped_coefficient, vector_norm
from .constraints import Constraint, project_kernel
from .losses import _f64
from .regularizers import Regularizer, prox_kernel
from .rows import row_entry, row_intercept, row_scale, row_span

__all__ = ["ovr_budget", "ovr_privacy", "softmax_margins", "softmax_row_axpy", "softmax_coefficients",
           "softmax_clipped_sum_kernel", "to_class_major", "to_feature_major",
           "softmax_loss_gradient_kernel", "softmax_objective", "softmax_minimize", "softmax_traces",
           "SOFTMAX_LIPSCHITZ_FACTOR", "SOFTMAX_SMOOTHNESS_FACTOR"]

#: ‖softmax(z) − e_y‖₂ ≤ √2: the softmax loss is √2·R-Lipschitz in W for rows ‖x‖₂ ≤ R
SOFTMAX_LIPSCHITZ_FACTOR = math.sqrt(2.0)
#: the Hessian of log Σ e^{z_c} in z has norm ≤ 1/2: the loss is (R²/2)-smooth in W
SOFTMAX_SMOOTHNESS_FACTOR = 0.5


def ovr_budget(epsilon: float, delta: float, k: int, relation: str = "replace_one") -> Tuple[float, float]:
    """(ε_k, δ_k) of each of the k one-vs-rest fits such that their composition is (ε, δ)-DP.

    δ = 0: ε_k = ε/k rounded down (pure DP, basic composition). δ > 0: δ_k = δ/(2k) and the largest ε_k
    with dpcore's ``"composition"`` ε of ``SelfComposedEvent(ApproxDpEvent(ε_k, δ_k), k)`` ≤ ε at δ
    (optimal composition; ``dpcore.calibrate``). ε = inf: (inf, δ).
    """
    if math.isinf(epsilon):
        return math.inf, delta
    if delta == 0.0:
        return math.nextafter(epsilon / k, 0.0), 0.0
    delta_k = delta / (2.0 * k)
    cal = dpcore.calibrate(lambda e: SelfComposedEvent(ApproxDpEvent(e, delta_k, relation), k), "epsilon",
                           epsilon, delta, lower=epsilon / k, upper=epsilon, increasing=True,
                           bounds=(epsilon * 1e-12, epsilon), accountant="composition")
    return float(cal.value), delta_k


def ovr_privacy(privacies: Sequence[PrivacyResult], epsilon_k: float, delta_k: float, delta: float,
                relation: str = "replace_one") -> Tuple[PrivacyEvent, PrivacyResult]:
    """The one event of a k-class one-vs-rest fit and dpcore's guarantee for it at ``delta``.

    ``privacies`` are the k binary fits' own results (dpcore's, at δ_k); each must satisfy ε ≤ ε_k
    (``RuntimeError`` otherwise: the budget split was not respected)."""
    k = len(privacies)
    if any(math.isinf(p.epsilon) for p in privacies):
        event = NonPrivateEvent(relation)
        return event, dpcore.get_epsilon(event, delta if delta > 0.0 else 0.5, accountant="composition")
    for p in privacies:
        if not (p.epsilon <= epsilon_k and p.delta <= delta_k):
            raise RuntimeError(f"a one-vs-rest fit reported ({p.epsilon}, {p.delta})-DP above its share "
                               f"({epsilon_k}, {delta_k})")
    if delta_k == 0.0:
        event = SelfComposedEvent(PureDpEvent(epsilon_k, relation), k)
        total = round_up(Fraction(epsilon_k) * k)
        return event, dpcore.get_delta(event, total, accountant="composition")
    event = SelfComposedEvent(ApproxDpEvent(epsilon_k, delta_k, relation), k)
    return event, dpcore.get_epsilon(event, delta, accountant="composition")


# ------------------------------------------------------------------------------------ softmax kernels


@jit
def _feature_major_row_pass(M: np.ndarray, z: np.ndarray, k: int, X, i: int, accumulate: bool) -> None:
    """One pass over the stored entries a = fl(sᵢ·xᵢⱼ) of row i (and the intercept c) against the feature-major
    k·d vector M (entry (c, j) at M[j·k + c]): ``accumulate`` False: z[c] += a·M[j·k + c] (margins);
    True: M[j·k + c] += z[c]·a (z ⊗ row i added to M)."""
    d = X.shape[1]
    sc = row_scale(X, i)
    lo, hi = row_span(X, i)
    c0 = row_intercept(X)
    for t in range(lo, hi + (1 if c0 != 0.0 else 0)):
        if t < hi:
            j, v = row_entry(X, i, t)
            a = sc * v
        else:
            j, a = d - 1, c0
        base = j * k
        if accumulate:
            for c in range(k):
                M[base + c] += z[c] * a
        else:
            for c in range(k):
                z[c] += a * M[base + c]


@jit
def softmax_margins(W: np.ndarray, k: int, X, i: int, z: np.ndarray) -> None:
    """z[c] ← ⟨w_c, row i⟩ for the feature-major W (entry (c, j) at W[j·k + c]: the k weights a stored entry of
    the row meets are contiguous)."""
    for c in range(k):
        z[c] = 0.0
    _feature_major_row_pass(W, z, k, X, i, False)


@jit
def softmax_row_axpy(z: np.ndarray, k: int, X, i: int, out: np.ndarray) -> None:
    """out ← out + z ⊗ row i (feature-major: out[j·k + c] += z[c]·x_ij, the row entries fl(sᵢ·xᵢⱼ))."""
    _feature_major_row_pass(out, z, k, X, i, True)


@jit
def softmax_coefficients(W: np.ndarray, k: int, X, i: int, label: int, z: np.ndarray) -> float:
    """z ← softmax(W xᵢ) − e_label (W feature-major, :func:`softmax_margins`); returns the loss
    log Σ e^{zc} − z_label (nats)."""
    softmax_margins(W, k, X, i, z)
    mx = -math.inf
    for c in range(k):
        mx = max(mx, z[c])
    zy = z[label]
    tot = 0.0
    for c in range(k):
        z[c] = math.exp(z[c] - mx) if mx < math.inf else (1.0 if z[c] == mx else 0.0)
        tot += z[c]
    for c in range(k):
        z[c] /= tot
    z[label] -= 1.0
    return math.log(tot) + mx - zy


@jit
def softmax_clipped_sum_kernel(X, labels: np.ndarray, row_norms: np.ndarray, W: np.ndarray, k: int, idx: np.ndarray,
                               use_idx: bool, count: int, clip: float, out: np.ndarray) -> int:
    """``out ← Σ clip_C(gᵢ)`` over rows i = idx[t] (or t), t < count, gᵢ = cᵢxᵢᵀ the softmax gradient matrix
    (flat k·d, feature-major), clipped in coefficient space (module docstring). Returns the number clipped."""
    d = X.shape[1]
    if out.shape[0] != k * d or W.shape[0] != k * d:
        raise ValueError("softmax_clipped_sum_kernel: W and out must have k*d entries")
    out[:] = 0.0
    z = np.empty(k)
    clip_safe = clip_margin(clip, k * d + k)
    clipped = 0
    for t in range(count):
        i = idx[t] if use_idx else t
        softmax_coefficients(W, k, X, i, int(labels[i]), z)
        cn = vector_norm(z)
        for c in range(k):
            if not math.isfinite(z[c]):  # overflowed margins: the record contributes 0 (never a NaN norm as 0)
                cn = math.nan
        cbar = clipped_coefficient(cn, row_norms[i], clip_safe)
        if cbar != cn:
            clipped += 1
            f = cbar / cn if cn > 0.0 and cn < math.inf else 0.0
            f = np.nextafter(f, 0.0) if f > 0.0 else 0.0  # the quotient's rounding: step below it
            for c in range(k):
                z[c] = z[c] * f if f > 0.0 else 0.0  # NaN / inf coefficients (overflowed margins) give 0
        softmax_row_axpy(z, k, X, i, out)
    return clipped


@jit
def softmax_loss_gradient_kernel(X, labels: np.ndarray, W: np.ndarray, k: int, out: np.ndarray) -> float:
    """Mean softmax loss (nats); ``out`` ← its mean gradient (flat k·d, feature-major), unclipped (non-private
    uses)."""
    n = X.shape[0]
    out[:] = 0.0
    z = np.empty(k)
    total = 0.0
    for i in range(n):
        total += softmax_coefficients(W, k, X, i, int(labels[i]), z)
        softmax_row_axpy(z, k, X, i, out)
    out /= n
    return total / n


def to_class_major(w: np.ndarray, k: int, d: int) -> np.ndarray:
    """The (k, d) weight matrix of a feature-major flat vector (the kernels' layout)."""
    return np.ascontiguousarray(np.asarray(w).reshape(d, k).T)


def to_feature_major(W: np.ndarray, k: int, d: int) -> np.ndarray:
    """The kernels' flat feature-major vector of a (k, d) weight matrix."""
    return np.ascontiguousarray(np.asarray(W, dtype=np.float64).reshape(k, d).T).ravel()


def softmax_objective(W: np.ndarray, X, labels: np.ndarray, k: int, reg: Regularizer) -> Tuple[float, np.ndarray]:
    """(F(W), ∇ of its smooth part): mean softmax loss + r(W), r of :class:`algorithms.regularizers.Regularizer`
    on the flat W (its l1 part is in the value only; non-private uses)."""
    g = np.empty(W.shape[0])
    f = softmax_loss_gradient_kernel(_f64(X), labels, W, k, g)
    return f + reg.value(W), g + reg.smooth_gradient(W)


def softmax_traces(snapshots: np.ndarray, X, labels: np.ndarray, k: int, reg: Regularizer, constraint: Constraint,
                   step: float) -> Tuple[np.ndarray, np.ndarray]:
    """Objective and gradient-mapping norm (step ``step``; :func:`algorithms.objective.gradient_mapping_norm`)
    of the softmax fit at each snapshot (non-private diagnostics)."""
    obj, gn = [], []
    for w in np.asarray(snapshots):
        w = np.ascontiguousarray(w, dtype=np.float64).ravel()
        f, g = softmax_objective(w, X, labels, k, Regularizer(0.0, 0.0, reg.nonconvex))
        obj.append(f - Regularizer(0.0, 0.0, reg.nonconvex).value(w) + reg.value(w))
        v = w - step * g
        prox_kernel(reg.alpha, reg.l1, step, v)
        project_kernel(constraint.kind, constraint.radius, v)
        gn.append(float(np.linalg.norm(w - v)) / step)
    return np.array(obj), np.array(gn)


@jit
def softmax_hessian_vector_kernel(X, labels: np.ndarray, W: np.ndarray, k: int, V: np.ndarray, out: np.ndarray) -> None:
    """``out`` ← (1/n) Σᵢ ∇²ℓᵢ(W)·V for the softmax loss (flat k·d, feature-major): per row
    (diag(p) − ppᵀ)(V xᵢ) ⊗ xᵢ with p = softmax(W xᵢ) (non-private uses)."""
    n = X.shape[0]
    out[:] = 0.0
    z = np.empty(k)
    u = np.empty(k)
    for i in range(n):
        softmax_coefficients(W, k, X, i, int(labels[i]), z)
        z[int(labels[i])] += 1.0  # back to p
        softmax_margins(V, k, X, i, u)
        pu = 0.0
        for c in range(k):
            pu += z[c] * u[c]
        for c in range(k):
            u[c] = z[c] * (u[c] - pu)
        softmax_row_axpy(u, k, X, i, out)
    out /= n


def softmax_minimize(X, labels: np.ndarray, k: int, reg: Regularizer, constraint: Constraint, *, tol: float,
                     w0: np.ndarray, max_iter: int = 200) -> Tuple[np.ndarray, float, int, list]:
    """Minimise the softmax objective (L2 part of ``reg`` only, C = ℝᵏᵈ) by Newton-CG to ‖∇F‖₂ ≤ ``tol``
    (``epsilon=inf``: no privacy budget). Steps are accepted on the Armijo decrease of F, or at F's float
    floor on a decrease of ‖∇F‖. Returns ``(W flat, ‖∇F‖₂, Newton iterations, iterates)``; ``ValueError`` for
    l1 / constraints / the non-convex penalty, ``RuntimeError`` if tol is not reached."""
    if reg.l1 or reg.nonconvex or constraint.kind != 0:
        raise ValueError("epsilon=inf with classes (softmax) supports the L2 penalty without constraint only; "
                         "pass tol=None to run the private schedule with the noise off")
    X = _f64(X)
    w = np.ascontiguousarray(w0, dtype=np.float64).copy()
    f, g = softmax_objective(w, X, labels, k, reg)
    gnorm = float(np.linalg.norm(g))
    iterates, hv = [w.copy()], np.empty_like(w)

    def softmax_hessian_vector(v, at):
        softmax_hessian_vector_kernel(X, labels, at, k, v, hv)
        return hv + reg.alpha * v

    it = 0
    while gnorm > tol and it < max_iter:
        it += 1
        p, _ = newton_cg_direction(lambda v: softmax_hessian_vector(v, w), g, gnorm, max_iter=250)
        if not float(g @ p) < 0.0:
            p = -g
        t = 1.0
        while t > 1e-12:
            f_new, g_new = softmax_objective(w + t * p, X, labels, k, reg)
            if f_new <= f + 1e-4 * t * float(g @ p) or (
                    abs(f_new - f) <= 1e-13 * max(1.0, abs(f)) and float(np.linalg.norm(g_new)) < gnorm):
                break
            t *= 0.5
        if t <= 1e-12:
            break
        w, f, g = w + t * p, f_new, g_new
        gnorm = float(np.linalg.norm(g))
        iterates.append(w.copy())
    if not gnorm <= tol:
        raise RuntimeError(f"the softmax objective was not minimised to tol={tol} (gradient norm {gnorm:.3e})")
    return w, gnorm, it, iterates
