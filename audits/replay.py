"""Machinery of the sensitivity-conformance replay (:mod:`audits.conformance`): results, recovery, coupling.

* :class:`ReleaseCheck` / :class:`ConformanceReport` — one release replayed on one neighbouring pair, and
  all of a solver's; :func:`make_check` builds a check from a recovered difference and its rounding bound.
* Recovery of a released query from a solver's output — :func:`step_difference` for one float gradient
  step ``w₁ = w₀ − scale·(q + N)``, :func:`mirror_difference` for a Bregman step ``w = ∇Φ*(−g/μ)`` —
  in mpmath (:mod:`audits.exact_norms`), with a per-coordinate bound on the float rounding of the
  forward computation, so a difference is only reported as above Δ when rounding cannot explain it.
* :func:`run_pair` — the same solver on D and D′ from the same seed (their noise draws coincide).
* :func:`gaussian_consistency` — the event's noise multipliers are the run's, and σ = z·Δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import mpmath
import numpy as np

from dpcore._validation import check_real_array
from dpcore.events import GaussianEvent, PrivacyEvent

from .exact_norms import exact, lp_norm, mirror_gradient, rounded_down, rounded_up

__all__ = ["RTOL", "U", "TINY", "Dataset", "ReleaseCheck", "ConformanceReport", "make_check", "gaussian_multipliers",
           "close", "gaussian_consistency", "step_difference", "sum_difference", "mirror_difference", "pair",
           "run_pair", "differing_index", "require_relation"]

#: Relative tolerance of a verdict beyond the rounding slack (Δ itself is rounded up by the solvers).
RTOL = 1e-9
U = 2.0**-53  # unit roundoff of float64
TINY = 2.0**-1070  # absolute error allowance of a subnormal result (a few units of 2^-1074)

Dataset = Tuple[np.ndarray, np.ndarray]


# ------------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class ReleaseCheck:
    """One release replayed on one neighbouring pair.

    Attributes
    ----------
    solver, release : str
        Who released what (e.g. ``"dp_gd"``, ``"clipped gradient sum at w0"``).
    relation : str
        Neighbouring relation of the pair and of the claim.
    order : float
        Norm of the measurement (2, or the dual q of an ℓp solver).
    measured : float
        ‖q(D) − q(D′)‖ as recovered, rounded up (query units).
    lower : float
        A lower bound of the true change: ``measured`` minus the recovery's rounding slack.
    declared : float
        The sensitivity Δ the event was built with (same units).
    method : str
        ``"coupled replay"``, ``"query kernel"`` or ``"record bound"``.
    """

    solver: str
    release: str
    relation: str
    order: float
    measured: float
    lower: float
    declared: float
    method: str

    @property
    def ratio(self) -> float:
        """lower / declared: > 1 + :data:`RTOL` is a violation."""
        return self.lower / self.declared if self.declared > 0 else math.inf

    @property
    def verdict(self) -> str:
        return "violated" if self.lower > self.declared * (1.0 + RTOL) else "conforms"


@dataclass(frozen=True)
class ConformanceReport:
    """All checks of one solver on one neighbouring pair, plus event-consistency findings.

    ``inconsistencies`` lists mismatches between the declared sensitivity, the noise that ran and the
    privacy event (e.g. σ ≠ z·Δ); any of them, or any violated check, makes the verdict ``"violated"``.
    """

    solver: str
    checks: Tuple[ReleaseCheck, ...]
    inconsistencies: Tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        bad = self.inconsistencies or any(c.verdict == "violated" for c in self.checks)
        return "violated" if bad else "conforms"

    @property
    def worst(self) -> Optional[ReleaseCheck]:
        return max(self.checks, key=lambda c: c.ratio, default=None)

    def to_dict(self) -> Dict[str, Any]:
        return {"solver": self.solver, "verdict": self.verdict, "inconsistencies": list(self.inconsistencies),
                "checks": [{"release": c.release, "relation": c.relation, "order": c.order, "measured": c.measured,
                            "lower": c.lower, "declared": c.declared, "ratio": c.ratio, "verdict": c.verdict,
                            "method": c.method} for c in self.checks]}


def make_check(solver: str, release: str, relation: str, order: float, diff: Sequence, slack: Sequence,
               declared: float, method: str) -> ReleaseCheck:
    """A :class:`ReleaseCheck` from the recovered difference and its per-coordinate rounding bound (mpmath)."""
    m = lp_norm(diff, order)
    s = lp_norm(slack, order) if len(slack) else 0
    return ReleaseCheck(solver, release, relation, float(order), rounded_up(m), rounded_down(max(m - s, 0)),
                        float(declared), method)


# ------------------------------------------------------------------------------- event consistency
def gaussian_multipliers(event: PrivacyEvent) -> List[float]:
    """Noise multipliers σ/Δ of every ``GaussianEvent`` in an event tree."""
    out = [event.noise_multiplier] if isinstance(event, GaussianEvent) else []
    for child in event.children():
        out += gaussian_multipliers(child)
    return out


def close(a: float, b: float, rel: float = 1e-12) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


def gaussian_consistency(res, declared: float, sigma: float, what: str) -> List[str]:
    """The event's Gaussian multipliers are the run's z, and the noise that ran is σ = z·Δ."""
    found = []
    z = float(res.noise_multiplier)
    mults = gaussian_multipliers(res.event)
    if not mults or any(not close(m, z) for m in mults):
        found.append(f"{what}: event multipliers {mults} differ from the run's noise_multiplier {z}")
    if not close(sigma, z * declared):
        found.append(f"{what}: noise std {sigma!r} is not noise_multiplier x declared sensitivity = {z * declared!r}")
    return found


# ------------------------------------------------------------------------------------------ recovery
def step_difference(w_in, out0, out1, scale: float):
    """(out₁ − out₀)/scale and its rounding bound, for outputs of one float step ``out = w_in − scale·(q + N)``.

    With coupled noise (q₀ + N) − (q₁ + N) = (out₁ − out₀)/scale: the change of the released query. Each
    output carries ≤ 2 roundings (the product and the subtraction, relative u each) of magnitude at most
    |w_in| + |out|, plus the caller's ``scale`` may differ from the kernel's by one rounding; 4u of each plus
    an absolute subnormal allowance bounds them.
    """
    w = np.zeros(len(out0))
    if w_in is not None:  # a planted solver may release more coordinates (a bias) than w0 has: those start at 0
        w_in = np.ravel(np.asarray(w_in, dtype=np.float64))[:len(out0)]
        w[:w_in.size] = w_in
    w_in = w
    a, b, w = exact(out0), exact(out1), exact(w_in)
    inv = 1 / mpmath.mpf(scale)
    diff = [(y - x) * inv for x, y in zip(a, b)]
    slack = [(4 * U * (4 * abs(v) + 2 * abs(x) + 2 * abs(y)) + TINY) * inv for v, x, y in zip(w, a, b)]
    return diff, slack


def sum_difference(out0, out1, terms: int, term_bound: float):
    """out₀ − out₁ and its rounding bound for two float sums of ``terms`` terms (a released query evaluated on D
    and D′ at the same point): each sum's rounding is ≤ (terms + 2)·u·Σ|term| per coordinate (Higham 2002, §4.2),
    and Σ|term| ≤ |out| + terms·``term_bound`` (the declared per-term bound; a larger term is a violation anyway)."""
    a, b = exact(out0), exact(out1)
    k = (terms + 2) * U
    return ([x - y for x, y in zip(a, b)],
            [k * (abs(x) + abs(y) + 2 * terms * term_bound) + TINY for x, y in zip(a, b)])


def mirror_difference(w0_out, w1_out, s: float, kappa: float, mu: float, d: int):
    """μ(∇Φ(w₁) − ∇Φ(w₀)) and its rounding bound, for two Bregman steps w = ∇Φ*(θ), θ = −g/μ (from 0).

    Relative error of the float round trip θ → w → ∇Φ(w) per coordinate ≤ (κ + d + 16)·u·(few), bounded by
    2⁻⁴⁰(κ + d + 16) (∇Φ is homogeneous of degree 1, so a scale does not matter). A coordinate whose w is
    subnormal or zero can hide |θⱼ| ≤ ‖θ‖_r·(κ·2⁻¹⁰²⁰/‖θ‖_r)^{s−1} (w = (1/κ)‖θ‖ tᵗ^{r−1}, (r − 1)(s − 1) = 1);
    that whole amount is the slack there.
    """
    out = []
    for w in (w0_out, w1_out):
        th = mirror_gradient(exact(w), s, kappa)
        nrm_r = lp_norm(th, s / (s - 1.0))
        rel = mpmath.mpf(2) ** -40 * (kappa + d + 16)
        tiny = 0 if nrm_r == 0 else nrm_r * (kappa * mpmath.mpf(2) ** -1020 / nrm_r) ** (mpmath.mpf(s) - 1)
        sl = [rel * abs(t) + (tiny if abs(x) < 2.0**-1021 else 0) for t, x in zip(th, np.ravel(w))]
        out.append((th, sl))
    (t0, s0), (t1, s1) = out
    m = mpmath.mpf(mu)
    return [m * (b - a) for a, b in zip(t0, t1)], [m * (x + y) for x, y in zip(s0, s1)]


# ------------------------------------------------------------------------------------------ datasets
def _dataset(name: str, D: object) -> Dataset:
    """``D`` = (X, y) as float64 copies: real (:func:`~dpcore._validation.check_real_array`: never a complex,
    string or object array cast silently), finite, X of shape (n, d) with n ≥ 1 and y of n labels."""
    if isinstance(D, (str, bytes)) or not hasattr(D, "__len__") or len(D) != 2:
        raise ValueError(f"{name} must be a pair (X, y); got {type(D).__name__}")
    X = np.array(check_real_array(f"{name} features X", D[0]), dtype=np.float64, copy=True)
    y = np.array(check_real_array(f"{name} labels y", D[1]), dtype=np.float64, copy=True).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[0] < 1:
        raise ValueError(f"{name} must be (X, y) with X of shape (n, d), n >= 1, and y of shape (n,); got "
                         f"{X.shape}, {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf) in X and y")
    return X, y


def relation_of(D: Dataset, D1: Dataset) -> str:
    """The neighbouring relation of a pair: ``"replace_one"`` (same size, exactly one record — features
    and/or label — differs) or ``"add_remove"`` (``D1`` is ``D`` with one record appended last).

    Raises
    ------
    ValueError
        Naming ``D_prime`` for any other pair: identical datasets (nothing to compare), several records
        changed, a size difference other than one appended record. Such a pair is not a neighbouring pair of
        either relation, so a change above Δ on it would be a false alarm, and a change of 0 no evidence.
    """
    (X0, y0), (X1, y1) = D, D1
    n0, n1 = len(y0), len(y1)
    if n0 == n1:
        changed = np.flatnonzero(np.any(X0 != X1, axis=1) | (y0 != y1))
        if changed.size == 1:
            return "replace_one"
        if changed.size == 0:
            raise ValueError("D_prime must differ from D in exactly one record; got identical datasets")
        raise ValueError(f"D_prime must differ from D in exactly one record (replace_one); got {changed.size} "
                         f"changed records, at rows {changed[:5].tolist()}{' ...' if changed.size > 5 else ''}")
    if n1 == n0 + 1:
        if np.array_equal(X1[:-1], X0) and np.array_equal(y1[:-1], y0):
            return "add_remove"
        raise ValueError("D_prime must be D with one record appended last (add_remove); its first "
                         f"{n0} records differ from D's")
    raise ValueError("D_prime must replace one record of D (same size) or append one record to D (add/remove "
                     f"neighbours, the extra record last); got sizes {n0} and {n1}")


def pair(D: object, D1: object) -> Tuple[Dataset, Dataset, str]:
    """Validated float64 copies of ``D``, ``D1`` and their relation (:func:`relation_of`)."""
    A, B = _dataset("D", D), _dataset("D_prime", D1)
    if A[0].shape[1] != B[0].shape[1]:
        raise ValueError(f"D and D_prime must have the same dimension; got {A[0].shape[1]} and {B[0].shape[1]}")
    return A, B, relation_of(A, B)


def run_pair(solve: Callable, D: Dataset, D1: Dataset, seed: int, kwargs: dict, advance_smaller: bool = False):
    """The solver on D and D′ with the same seed (``advance_smaller``: the smaller dataset's generator one
    draw ahead, for Poisson sampling at rate 1 under add/remove)."""
    runs = []
    for X, y in (D, D1):
        gen = np.random.default_rng(seed)
        if advance_smaller and len(y) < max(len(D[1]), len(D1[1])):
            gen.bit_generator.advance(1)
        runs.append(solve(X, y, rng=gen, **kwargs))
    return runs


def differing_index(D: Dataset, D1: Dataset) -> int:
    """The position of the record D and D′ differ in (the appended one under add/remove); the pair is one
    :func:`pair` accepted, so exactly one record differs."""
    if len(D[1]) != len(D1[1]):
        return len(D[1])
    return int(np.flatnonzero(np.any(D[0] != D1[0], axis=1) | (D[1] != D1[1]))[0])


def require_relation(relation: str, required: str, name: str) -> None:
    """``ValueError`` unless the pair's relation is the one ``name``'s claim is stated for."""
    if relation != required:
        raise ValueError(f"{name} is analysed under {required}; got a pair of {relation} neighbours")
