"""ℓp geometry of Su, Zhao, Wang (su-zhao-wang-dp-sco-non-euclidean): the regularity constant κ,
the mirror map Φ, its gradient and inverse, and exact Bregman steps onto constraint sets.

Geometry (Definition 3 and Algorithms 3, 4, 7). The primal space is (ℝᵈ, ‖·‖_p), 1 < p < 2; its
dual norm is ℓq, q = p/(p − 1) > 2. The dual space is κ-regular with smooth norm ℓr,

    κ = min{1/(p − 1), 2 ln d},      r = 1 + κ = min{q, 1 + 2 ln d},

so generalized-Gaussian gradient noise lives in ℓr (``mechanisms.GeneralizedGaussian(p=r)``) and
a sensitivity measured in ℓq converts to ℓr with the factor d^{1/r − 1/q} ≤ e^{1/2}. The mirror map is

    Φ(w) = (κ/2)·‖w‖_s²,   s = (κ + 1)/κ = r/(r − 1) = max{p, 1 + 1/(2 ln d)},

which is 1-strongly convex w.r.t. ‖·‖_s (Ball, Carlen, Lieb). When 1/(p − 1) ≤ 2 ln d, s = p and Φ
is 1-strongly convex w.r.t. ‖·‖_p; when κ is capped (p < 1 + 1/(2 ln d)), s > p and the modulus
w.r.t. ‖·‖_p is d^{−2(1/p − 1/s)} ≥ 1/e (Nemirovski's choice; the paper states 1). Its conjugate is
Φ*(θ) = ‖θ‖_r²/(2κ), so ∇Φ and ∇Φ* = (∇Φ)⁻¹ are closed forms.

**Departure from the printed text.** The paper writes the exponent of Φ as κ₊ = κ/(κ − 1), the
Hölder conjugate of κ. That is not the conjugate of the dual's smooth-norm exponent κ + 1 and does
not make Φ 1-strongly convex w.r.t. ‖·‖_p (p = 1.5 would give Φ = ‖w‖₂², whose modulus w.r.t. ℓ1.5
decays with d). We use s = (κ + 1)/κ, which equals p whenever 1/(p − 1) ≤ 2 ln d — the mirror
map of Bassily, Guzmán, Nandi (2021) that the paper's analysis relies on.

Bregman steps. Every mirror step of Algorithms 3, 4, 7 has the form
``argmin_{w∈C} μΦ(w) − ⟨θ, w⟩`` (θ collects the noisy gradient and ∇Φ of the previous iterate).
:func:`bregman_step_kernel` solves ``argmin_{w∈C} Φ(w) − ⟨θ, w⟩`` exactly:

* C = ℝᵈ: w = ∇Φ*(θ) (closed form).
* ``"lp"`` (‖w‖_s ≤ R, the ball of the mirror norm — the ℓp ball when s = p): w = t·u(θ) with
  t = min(‖θ‖_r/κ, R) and u the unit ℓs vector dual to θ (closed form).
* ℓ1 ball: KKT gives ∇Φ(w) = soft(θ, ν); ν ≥ 0 is the root of the non-increasing
  ν ↦ ‖∇Φ*(soft(θ, ν))‖₁ − R (the derivative of the concave dual function).
* simplex {w ≥ 0, Σw = R}: ∇Φ(w) = (θ − ν)₊, ν the root of ν ↦ Σ∇Φ*((θ − ν)₊) − R.

  For both, with vⱼ = |θⱼ| (ℓ1) or θⱼ (simplex), m = max v − ν and tⱼ = (vⱼ − ν)₊/m ∈ [0, 1],
  ‖∇Φ*(u)‖₁ = (m/κ)·A^{(2−r)/r}·B with A = Σt^r, B = Σt^{r−1} (both ≥ 1: the top term is 1), and
  its ν-derivative is −(1/κ)A^{(2−r)/r}((2−r)B²/A + (r−1)C), C = Σt^{r−2}: one power cⱼ = tⱼ^{r−2}
  per coordinate gives all three sums (C = Σc, B = Σct, A = Σct²). The powers are computed by the
  branch-free :func:`algorithms._mirror_pow.unit_pows` in loops LLVM vectorises (AVX2), the sums in a
  third, reassociated loop, over the active values kept contiguous. The root is found by Newton
  steps kept inside the certified bracket and aimed at h = −tol/2 (the middle of the stopping window
  below), a probe past each next Newton point — by twice the Newton error predicted from the last
  step's (error/step² times step²; one whole step before there is an estimate) — to close the far
  end, and a bisection whenever the bracket fails to halve, except (twice in a row at most) while
  the best point is within the residual's rounding noise (2·tol) of the window, where Newton's next
  step is the better move; ~2 evaluations per step on the benchmark's θ's at d = 10⁴, 5 for dense ones.
  Start: the top coordinate alone bounds h from below, h(ν) ≥ (top − ν)/κ − R, because adding a
  coordinate whose t is at most every present one never lowers A^{(2−r)/r}·B when r > 2 (with
  x = t^r/A, y = t^{r−1}/B: A ≥ t·B gives y ≥ x(r−2)/r, so 1 + y ≥ (1 + x)^{(r−2)/r}). So the root
  lies above ν₀ = top − κR, and the bracket starts at ν₀ (taken 2^-40 relatively lower, which a
  floating-point check proves still below top − κR), or at 0 for the ℓ1 ball when ν₀ ≤ 0: the
  coordinates at or below ν₀ never enter an evaluation (when the ball cuts deep into noise they
  are most of them: ~98 % of the benchmark's dense θ's at d = 10⁴).
  Active set: tⱼ decreases in ν, so with a the bracket's lower end every coordinate with
  vⱼ ≤ a + τ(max v − a) has tⱼ ≤ τ for all ν in the bracket; with τ = (2^-60/d)^{1/(r−2)} all of
  them together add less than 2^-60 to each of A, B, C (each ≥ 1) — below the sums' own rounding —
  so they are dropped from the active set (those with vⱼ ≤ a are exactly 0) and returned as 0
  (their true values sum to < 2^-60·R). The point is written from the last residual's powers when
  it was evaluated at the returned ν.
* ℓ∞ ball (box): |wⱼ| = min(R, (|θⱼ|/(κN^{2−s}))^{r−1}) with N = ‖w‖_s the root of
  N ↦ ‖w(N)‖_s − N (decreasing).

The 1-D roots are *certified*: the bracket [a, b] with h(a) > 0 ≥ h(b) is kept throughout
(Newton as above for the ℓ1 ball and the simplex, Illinois regula falsi for the box, with a
bisection whenever a step fails to halve the bracket) and shrunk to adjacent floating-point
numbers — for the ℓ1 ball and the simplex, or until the computed h(b) ∈ [−8·2^-52·R, 0], where the
residual is rounding noise (further halving only chases that noise; it took 8–40 of the
evaluations before). The returned point is the end b on the feasible side (‖w‖₁ ≤ R, Σw ≤ R, and
≥ R(1 − 8·2^-52) when the constraint is active, up to rounding of the final sum). No inner
iterative solver with a loose tolerance is used. The ℓ2 ball has no such one-dimensional reduction
for Φ ≠ ½‖·‖₂² and is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_dimension, check_positive

from ._mirror_pow import _bits, _float, unit_pows
from .constraints import L1, LINF, NONE, SIMPLEX, Constraint, get_constraint

__all__ = [
    "LP",
    "MIRROR_CONSTRAINTS",
    "LpGeometry",
    "lp_geometry",
    "check_primal_p",
    "mirror_constraint",
    "primal_diameter",
    "lp_norm_kernel",
    "mirror_grad_kernel",
    "mirror_inverse_kernel",
    "mirror_value",
    "bregman_divergence",
    "bregman_step_kernel",
    "bregman_step",
]

#: Constraint code of the ball of the mirror norm ‖w‖_s ≤ R (the ℓp ball when s = p).
LP = 5
MIRROR_CONSTRAINTS = ("none", "l1", "linf", "simplex", "lp")
_MAX_ROOT_ITERATIONS = 400
#: The ℓ1 / simplex root stops once h(b) ∈ [−_ROOT_TOL·R, 0] (8 units in the last place of R): below
#: that the computed residual is rounding noise (module docstring).
_ROOT_TOL = 8.0 * 2.0**-52


def check_primal_p(p: object, *, low: float, high: float, high_open: bool, where: str) -> float:
    """The primal ℓp order ``p`` in (low, high) / (low, high]; ``ValueError`` naming p and the range."""
    try:
        x = float(p)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"p must be a real number; got {p!r}") from exc
    upper_ok = x < high if high_open else x <= high
    if not (x > low and upper_ok) or math.isnan(x):
        bracket = ")" if high_open else "]"
        raise ValueError(f"p must be in ({low:g}, {high:g}{bracket} for {where}; got p={p!r}")
    return x


@dataclass(frozen=True)
class LpGeometry:
    """Constants of the ℓp geometry (module docstring).

    Attributes
    ----------
    p, q : float
        Primal norm order and its dual q = p/(p − 1).
    d : int
        Dimension.
    kappa : float
        κ = min{1/(p − 1), 2 ln d}.
    r : float
        Smooth norm of the dual, r = 1 + κ (the generalized-Gaussian noise norm).
    s : float
        Mirror-map exponent s = r/(r − 1); Φ(w) = (κ/2)‖w‖_s².
    """

    p: float
    q: float
    d: int
    kappa: float
    r: float
    s: float


def lp_geometry(p: float, d: int) -> LpGeometry:
    """:class:`LpGeometry` for 1 < p < 2 in dimension d ≥ 2."""
    p = check_primal_p(p, low=1.0, high=2.0, high_open=True, where="the l_p mirror map (1 < p < 2)")
    d = check_dimension("dimension", d, minimum=2)
    kappa = min(1.0 / (p - 1.0), 2.0 * math.log(d))
    r = 1.0 + kappa
    return LpGeometry(p=p, q=p / (p - 1.0), d=d, kappa=kappa, r=r, s=r / kappa)


def mirror_constraint(name: object, radius: object) -> Constraint:
    """A constraint set the mirror steps project onto exactly: ``"none"``, ``"l1"``, ``"linf"``,
    ``"simplex"`` (from :mod:`algorithms.constraints`) or ``"lp"`` (the ball ‖w‖_s ≤ radius)."""
    if isinstance(name, Constraint):
        name = name.name if name.kind != LP else "lp"
    if name == "lp":
        return Constraint("lp", LP, check_positive("radius", radius))
    if name not in MIRROR_CONSTRAINTS:
        raise ValueError(
            f"constraint must be one of {MIRROR_CONSTRAINTS} for the mirror-descent solvers (exact Bregman "
            f"projections); got {name!r}"
        )
    return get_constraint(name, radius)


def primal_diameter(con: Constraint, geo: LpGeometry) -> float:
    """‖·‖_p diameter M = sup_{x,y∈C} ‖x − y‖_p of C (Assumption 4); inf for ℝᵈ."""
    R = con.radius
    if con.kind == NONE:
        return math.inf
    if con.kind == L1:
        return 2.0 * R  # ±R e₁
    if con.kind == SIMPLEX:
        return R * 2.0 ** (1.0 / geo.p)  # R(e₁ − e₂)
    if con.kind == LINF:
        return 2.0 * R * geo.d ** (1.0 / geo.p)  # R(1 − (−1))
    # ball of ‖·‖_s (s ≥ p): ‖x‖_p ≤ d^{1/p − 1/s}‖x‖_s, equality on the diagonal; 2R when s = p
    return 2.0 * R * geo.d ** max(0.0, 1.0 / geo.p - 1.0 / geo.s)


# --------------------------------------------------------------------------------------- kernels


@jit
def lp_norm_kernel(v: np.ndarray, a: float) -> float:
    """‖v‖_a for a ≥ 1 (inf allowed), scaled by max |vⱼ| against overflow / underflow."""
    m = 0.0
    for j in range(v.shape[0]):
        m = max(m, abs(v[j]))
    if m == 0.0 or math.isinf(a):
        return m
    acc = 0.0
    for j in range(v.shape[0]):
        if v[j] != 0.0:  # the ℓ1-ball and simplex steps produce sparse vectors: skip the pow
            acc += (abs(v[j]) / m) ** a
    return m * acc ** (1.0 / a)


@jit
def _duality_map(v: np.ndarray, a: float, scale: float, out: np.ndarray) -> float:
    """out ← scale·‖v‖_a·sign(v)|v/‖v‖_a|^{a−1} (the gradient of (scale/2)‖·‖_a²); returns ‖v‖_a."""
    nrm = lp_norm_kernel(v, a)
    if nrm == 0.0:
        out[:] = 0.0
        return 0.0
    for j in range(v.shape[0]):
        t = abs(v[j]) / nrm
        out[j] = math.copysign(scale * nrm * t ** (a - 1.0), v[j]) if t > 0.0 else 0.0
    return nrm


@jit
def mirror_grad_kernel(w: np.ndarray, s: float, kappa: float, out: np.ndarray) -> None:
    """out ← ∇Φ(w) = κ‖w‖_s^{2−s} sign(w)|w|^{s−1}."""
    _duality_map(w, s, kappa, out)


@jit
def mirror_inverse_kernel(theta: np.ndarray, r: float, kappa: float, out: np.ndarray) -> None:
    """out ← ∇Φ*(θ) = (1/κ)‖θ‖_r^{2−r} sign(θ)|θ|^{r−1} (the inverse of ∇Φ)."""
    _duality_map(theta, r, 1.0 / kappa, out)


@jit
def _box_point(theta: np.ndarray, N: float, R: float, r: float, s: float, kappa: float, out: np.ndarray) -> None:
    """out ← w(N): |wⱼ| = min(R, (|θⱼ|/(κN^{2−s}))^{r−1}) with the sign of θⱼ (box KKT at ‖w‖_s = N)."""
    c = kappa * N ** (2.0 - s)
    for j in range(theta.shape[0]):
        a = abs(theta[j])
        if a == 0.0:
            out[j] = 0.0
            continue
        # (a/c)^{r−1} computed in logs to avoid overflow when c is tiny
        lg = (r - 1.0) * (math.log(a) - math.log(c))
        val = R if lg >= math.log(R) else math.exp(lg)
        out[j] = math.copysign(val, theta[j])


@jit
def _residual(x: float, theta: np.ndarray, R: float, r: float, s: float, kappa: float, out: np.ndarray) -> float:
    """Box step: h(N) = ‖w(N)‖_s − N (non-increasing in N), with the candidate point left in ``out``."""
    _box_point(theta, x, R, r, s, kappa, out)
    return lp_norm_kernel(out, s) - x


@jit(fastmath={"reassoc", "contract"}, error_model="numpy")
def _weighted_sums(va: np.ndarray, k: int, nu: float, m: float, c: np.ndarray):
    """(A, B, C) = (Σ cᵢtᵢ², Σ cᵢtᵢ, Σ cᵢ) with cᵢ = tᵢ^{r−2} (reassociated: LLVM keeps vector partial
    sums)."""
    A = 0.0
    B = 0.0
    C = 0.0
    for i in range(k):
        t = (va[i] - nu) / m
        ci = c[i]
        C += ci
        B += ci * t
        A += ci * t * t
    return A, B, C


@jit
def _power_sums(va: np.ndarray, k: int, nu: float, top: float, r: float, buf: np.ndarray):
    """(m, A, B, C) over the active values va[:k] at ν (module docstring); m ≤ 0 means w = 0. Leaves
    tᵢ^{r−2} in buf[:k]."""
    m = top - nu
    if m <= 0.0:
        return m, 0.0, 0.0, 0.0
    unit_pows(va, k, nu, m, r - 2.0, buf)
    A, B, C = _weighted_sums(va, k, nu, m, buf)
    return m, A, B, C


@jit
def _l1_residual(va: np.ndarray, k: int, nu: float, top: float, R: float, r: float, kappa: float, buf: np.ndarray):
    """(h(ν), h′(ν)) of the ℓ1-ball / simplex root (module docstring)."""
    m, A, B, C = _power_sums(va, k, nu, top, r, buf)
    if m <= 0.0:
        return -R, 0.0
    f = A ** ((2.0 - r) / r) / kappa
    return m * f * B - R, -f * ((2.0 - r) * B * B / A + (r - 1.0) * C)


@jit
def _negligible_t(d: int, r: float) -> float:
    """τ = (2^-60/d)^{1/(r−2)}: d coordinates with tⱼ ≤ τ add at most 2^-60 to each of A, B, C (each ≥ 1)."""
    return math.exp(math.log(2.0**-60 / d) / (r - 2.0))


@jit
def _certified_lower_end(top: float, R: float, kappa: float) -> float:
    """ν₀ = top − κR(1 + 2^-40) when the floating-point check proves top − ν₀ > κR, else −inf. Then
    h(ν₀) > 0, since h(ν) ≥ (top − ν)/κ − R (module docstring): the root lies above ν₀."""
    kr = kappa * R
    lo = top - kr * (1.0 + 2.0**-40)
    if top - lo >= kr * (1.0 + 2.0**-41):  # the 2^-41 margin covers the roundings of κR, lo, top − lo
        return lo
    return -math.inf


@jit
def _top(theta: np.ndarray, signed: bool) -> float:
    """max |θⱼ| (``signed``) or max θⱼ; the former as an integer max of the bit patterns (non-negative
    floats order like their bits), which vectorises."""
    if signed:
        bits = 0
        for j in range(theta.shape[0]):
            bits = max(bits, _bits(theta[j]) & 0x7FFFFFFFFFFFFFFF)
        return _float(bits)
    top = -math.inf
    for j in range(theta.shape[0]):
        top = max(top, theta[j])
    return top


@jit
def _gather(theta: np.ndarray, signed: bool, cut: float, va: np.ndarray, idx: np.ndarray) -> int:
    """va[:k], idx[:k] ← the values |θⱼ| (``signed``) or θⱼ above ``cut`` and their indices (branch-free:
    every value is written, the count advances when it is kept); returns k."""
    k = 0
    for j in range(theta.shape[0]):
        v = abs(theta[j]) if signed else theta[j]
        va[k] = v
        idx[k] = j
        k += v > cut
    return k


@jit
def _compact(va: np.ndarray, idx: np.ndarray, k: int, a: float, top: float, tau: float) -> int:
    """Keep in va[:k], idx[:k] the coordinates with value > a + τ·(top − a): the others have
    tⱼ(ν) ≤ τ for every ν ≥ a (tⱼ decreases in ν), i.e. are 0 (value ≤ a) or negligible (module
    docstring). New count."""
    cut = a + tau * (top - a)
    j = 0
    for i in range(k):
        if va[i] > cut:
            va[j] = va[i]
            idx[j] = idx[i]
            j += 1
    return j


@jit
def _shrink(va: np.ndarray, idx: np.ndarray, k: int, nu: float, a: float, b: float, top: float, R: float, r: float,
            kappa: float, tau: float, buf: np.ndarray):
    """Evaluate h at ν ∈ (a, b) and keep the half of [a, b] that holds the root: (a, b, active count, h(ν), h′(ν))."""
    h, dh = _l1_residual(va, k, nu, top, R, r, kappa, buf)
    if h > 0.0:
        return nu, b, _compact(va, idx, k, nu, top, tau), h, dh
    return a, nu, k, h, dh


@jit
def _l1_point(theta: np.ndarray, signed: bool, va: np.ndarray, idx: np.ndarray, k: int, nu: float, top: float,
              r: float, kappa: float, have_powers: bool, buf: np.ndarray, out: np.ndarray) -> None:
    """out ← ∇Φ*(soft(θ, ν)) (ℓ1, ``signed``: va = |θ|, the sign of θ) or ∇Φ*((θ − ν)₊) (simplex: va = θ,
    signs +) from the same sums as the residual (tⱼ^{r−1} = tⱼ·tⱼ^{r−2}); ``have_powers``: buf[:k]
    already holds tⱼ^{r−2} at this ν (the last residual was evaluated here)."""
    out[:] = 0.0
    m = top - nu
    if m <= 0.0:
        return
    if have_powers:
        A, B, C = _weighted_sums(va, k, nu, m, buf)
    else:
        m, A, B, C = _power_sums(va, k, nu, top, r, buf)
    f = A ** ((2.0 - r) / r) / kappa  # wⱼ = (m/κ)A^{(2−r)/r}·tⱼ^{r−2}·tⱼ, tⱼ = (vⱼ − ν)/m: m cancels
    for i in range(k):
        j = idx[i]
        val = f * buf[i] * (va[i] - nu)
        out[j] = (math.copysign(val, theta[j]) if signed else val) if val > 0.0 else 0.0


@jit
def _l1_root(theta: np.ndarray, signed: bool, va: np.ndarray, idx: np.ndarray, k: int, a: float, ha: float,
             da: float, b: float, top: float, R: float, r: float, kappa: float, tau: float, buf: np.ndarray,
             out: np.ndarray) -> int:
    """Shrink [a, b] (h(a) = ha > 0 ≥ h(b), h′(a) = da) by bracketed Newton with a probe (module
    docstring) until the bracket is two adjacent floats or h(b) ∈ [−tol, 0]; leave the point at b in
    ``out``; return the number of residual evaluations."""
    tol = _ROOT_TOL * R
    aim = -0.5 * tol  # Newton aims at the middle of the stopping window [−tol, 0]
    x, hx, dx = a, ha, da
    curv = -1.0  # |error| / step² of the last Newton point (in ν; −1: no estimate yet)
    skips = 0  # bisections skipped in a row
    at_b = False  # whether the last residual (whose powers buf[:k] holds) was evaluated at b
    it = 0
    while it < _MAX_ROOT_ITERATIONS:
        width = b - a
        mid = a + 0.5 * width
        if not (a < mid < b):
            break
        newton = dx < 0.0
        cand = x - (hx - aim) / dx if newton else mid
        if not (a < cand < b):
            cand = mid
            newton = False
        a, b, k, hc, dc = _shrink(va, idx, k, cand, a, b, top, R, r, kappa, tau, buf)
        it += 1
        at_b = -tol <= hc <= 0.0
        if at_b:
            break
        if newton and dc < 0.0:
            s2 = (cand - x) * (cand - x)
            curv = abs((hc - aim) / dc) / s2 if s2 > 0.0 else -1.0
        x, hx, dx = cand, hc, dc
        if dc < 0.0:  # probe past the next Newton point to close the bracket's far end: by twice the
            # predicted Newton error curv·step² (at most one more step; one step while there is no estimate)
            step = -(hc - aim) / dc
            probe = cand + step * (1.0 + (min(1.0, 2.0 * curv * abs(step)) if curv >= 0.0 else 1.0))
            if a < probe < b:
                a, b, k, hp, dp = _shrink(va, idx, k, probe, a, b, top, R, r, kappa, tau, buf)
                it += 1
                at_b = -tol <= hp <= 0.0
                if at_b:
                    break
                if abs(hp - aim) < abs(hx - aim):
                    x, hx, dx = probe, hp, dp
        if b - a > 0.5 * width:  # the bracket failed to halve: bisect once ...
            if abs(hx - aim) <= 2.0 * tol and skips < 2:  # ... unless x is within the residual's rounding
                skips += 1  # noise of the window, where Newton's next step is the better move (twice at most)
                continue
            skips = 0
            mid = a + 0.5 * (b - a)
            a, b, k, hm, dm = _shrink(va, idx, k, mid, a, b, top, R, r, kappa, tau, buf)
            it += 1
            if -tol <= hm <= 0.0:
                at_b = True
                break
            if abs(hm - aim) < abs(hx - aim):  # Newton goes on from the better of x and mid
                x, hx, dx = mid, hm, dm
    _l1_point(theta, signed, va, idx, k, b, top, r, kappa, at_b, buf, out)
    return it


@jit
def _certified_root(a: float, b: float, theta: np.ndarray, R: float, r: float, s: float, kappa: float,
                    out: np.ndarray) -> int:
    """Box step: shrink [a, b] (h(a) > 0 ≥ h(b)) to adjacent floats by Illinois regula falsi; leave w(b)
    in ``out``; return iterations."""
    ha = _residual(a, theta, R, r, s, kappa, out)
    hb = _residual(b, theta, R, r, s, kappa, out)
    side = 0
    it = 0
    while it < _MAX_ROOT_ITERATIONS:
        width = b - a
        mid = a + 0.5 * width
        if not (a < mid < b):
            break
        # Illinois regula falsi point, kept strictly inside the bracket
        x = b - hb * (b - a) / (hb - ha) if ha != hb else mid
        if not (a < x < b):
            x = mid
        hx = _residual(x, theta, R, r, s, kappa, out)
        it += 1
        if hx > 0.0:
            a, ha = x, hx
            if side == 1:
                hb *= 0.5
            side = 1
        else:
            b, hb = x, hx
            if side == -1:
                ha *= 0.5
            side = -1
        if b - a > 0.5 * width:  # slow progress: bisect once
            hm = _residual(mid, theta, R, r, s, kappa, out)
            it += 1
            if hm > 0.0:
                a, ha = mid, hm
            else:
                b, hb = mid, hm
            side = 0
    _residual(b, theta, R, r, s, kappa, out)
    return it


@jit
def bregman_step_kernel(kind: int, radius: float, r: float, s: float, kappa: float, theta: np.ndarray,
                        out: np.ndarray) -> int:
    """out ← argmin_{w∈C} Φ(w) − ⟨θ, w⟩ exactly (module docstring). Returns the number of 1-D root
    iterations (0 for the closed forms)."""
    d = theta.shape[0]
    if kind == NONE:
        mirror_inverse_kernel(theta, r, kappa, out)
        return 0
    if kind == LP:
        nrm = _duality_map(theta, r, 1.0, out)  # out = ‖θ‖_r · u, ‖u‖_s = 1
        if nrm > 0.0:
            t = min(nrm / kappa, radius)
            f = t / nrm
            for j in range(d):
                out[j] *= f
        return 0
    if kind == L1 or kind == SIMPLEX:
        signed = kind == L1
        va = np.empty(d)  # the active values, kept contiguous so the power loop vectorises
        idx = np.empty(d, np.int64)
        buf = np.empty(d)
        tau = _negligible_t(d, r)
        top = _top(theta, signed)
        lo = _certified_lower_end(top, radius, kappa)
        evals = 1
        if signed:
            if top == 0.0:
                out[:] = 0.0
                return 0
            lo = max(lo, 0.0)  # ν ≥ 0; at ν = 0 the unconstrained point may be inside the ball
        elif lo == -math.inf:  # top ≫ κR: no end certified in floating point; double a step until h > 0
            _gather(theta, signed, -math.inf, va, idx)
            step = max(1.0, abs(top))
            lo = top - step
            while _l1_residual(va, d, lo, top, radius, r, kappa, buf)[0] <= 0.0:
                step *= 2.0
                lo = top - step
                evals += 1
            evals += 1
        # only the values above lo + τ(top − lo) ever enter an evaluation: the others are 0 or negligible
        k = _gather(theta, signed, lo + tau * (top - lo), va, idx)
        h0, d0 = _l1_residual(va, k, lo, top, radius, r, kappa, buf)
        if h0 <= 0.0 and lo == 0.0 and signed:  # the unconstrained point ∇Φ*(θ) is inside the ball
            _l1_point(theta, signed, va, idx, k, 0.0, top, r, kappa, True, buf, out)
            return 1
        return evals + _l1_root(theta, signed, va, idx, k, lo, h0, d0, top, top, radius, r, kappa, tau, buf, out)
    # LINF (box |wⱼ| ≤ R)
    mirror_inverse_kernel(theta, r, kappa, out)
    inside = True
    for j in range(d):
        if abs(out[j]) > radius:
            inside = False
            break
    if inside:
        return 0
    nz = 0
    for j in range(d):
        if theta[j] != 0.0:
            nz += 1
    hi = radius * nz ** (1.0 / s)  # ‖w(N)‖_s ≤ R·nz^{1/s} for every N, so h(hi) ≤ 0
    lo = hi
    while _residual(lo, theta, radius, r, s, kappa, out) <= 0.0:
        lo *= 0.5
    return _certified_root(lo, hi, theta, radius, r, s, kappa, out)


# --------------------------------------------------------------------------------- Python helpers


def mirror_value(w: np.ndarray, geo: LpGeometry) -> float:
    """Φ(w) = (κ/2)‖w‖_s²."""
    return 0.5 * geo.kappa * float(lp_norm_kernel(np.ascontiguousarray(w, dtype=np.float64), geo.s)) ** 2


def bregman_divergence(w: np.ndarray, v: np.ndarray, geo: LpGeometry) -> float:
    """D_Φ(w, v) = Φ(w) − Φ(v) − ⟨∇Φ(v), w − v⟩ (Definition 8)."""
    v = np.ascontiguousarray(v, dtype=np.float64)
    g = np.empty_like(v)
    mirror_grad_kernel(v, geo.s, geo.kappa, g)
    return mirror_value(w, geo) - mirror_value(v, geo) - float(g @ (np.asarray(w, dtype=np.float64) - v))


def bregman_step(theta: np.ndarray, geo: LpGeometry, con: Constraint) -> np.ndarray:
    """argmin_{w∈C} Φ(w) − ⟨θ, w⟩ (a new array); see :func:`bregman_step_kernel`."""
    th = np.ascontiguousarray(theta, dtype=np.float64)
    if th.shape != (geo.d,) or not np.all(np.isfinite(th)):
        raise ValueError(f"theta must be a finite vector of length d={geo.d}")
    out = np.empty_like(th)
    bregman_step_kernel(con.kind, con.radius, geo.r, geo.s, geo.kappa, th, out)
    return out
