"""Grey-box sensitivity checks: measure ‖A(D) − A(D′)‖ of a deterministic part against its declared Δ.

Many private solvers are "deterministic part + calibrated noise": output perturbation adds noise to
the result of gradient descent (Zhang, Zheng, Mou, Wang 2017, Alg. 1, whose noise is calibrated with
Lemma 2 (convex) or Lemma 3 (strongly convex)); Chaudhuri, Monteleoni, Sarwate 2011 (Cor. 8) add
noise to the exact regularised minimiser (Δ₂ = 2L/(nλ) under replace-one); DP-GD adds noise to a sum
of clipped gradients (Δ₂ = C under add/remove, 2C under replace-one). If the deterministic part moves
by more than the Δ its noise was calibrated to, the privacy claim is false, whatever the noise.

:func:`sensitivity_check` runs the deterministic part ``f`` (all internal randomness fixed by the
caller, e.g. a solver at ``epsilon=math.inf``) on neighbouring datasets and maximises the measured
distance with one of three searches (auditing-methods notes §4):

``"random"``
    replace (or add/remove) one record by a random record of the domain — typical, not worst-case,
    sensitivity (Rubinstein & Aldà 2017);
``"structured"``
    boundary records: for every position, the record scaled to the maximal norm with its label
    flipped, a "Dirac" record (all its mass on one coordinate, the least-used one) with either label,
    the record's mirror image; the same on smaller prefixes of the base dataset (Δ grows like 1/n);
``"adversarial"``
    the structured candidates plus random restarts, each followed by a local search (Gaussian moves
    of both differing records on the feature ball, label flips) that keeps a move when the measured
    distance, relative to the declared bound, grows.

**This check only falsifies; it never certifies.** A search that finds nothing above the declared
bound is no proof that the bound holds (the supremum is over all datasets); a measured distance
above it is a concrete witness pair that it does not.

DP-SRM's clipping bound (Wang, Jayaraman, Evans, Gu, eq. (6.1)) is checked the same way by
:func:`audits.dp_srm_check.dp_srm_sensitivity_check`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from dpcore._validation import check_choice, check_nonnegative, check_positive, check_positive_int, check_relation

__all__ = ["SensitivityReport", "sensitivity_check", "SEARCHES"]

SEARCHES = ("random", "structured", "adversarial")

Dataset = Tuple[np.ndarray, np.ndarray]
Declared = Union[float, Callable[[int], float]]


@dataclass(frozen=True)
class SensitivityReport:
    """Outcome of :func:`sensitivity_check`.

    Attributes
    ----------
    max_measured : float
        ‖f(D) − f(D′)‖ (in the chosen norm, output units) of the witness pair.
    declared : float
        The declared bound at the witness pair's dataset size.
    ratio : float
        ``max_measured / declared``; the largest over every pair tried.
    witness : tuple
        ``((X, y), (X′, y′))``: the neighbouring pair with the largest ratio.
    verdict : str
        ``"violated"`` when ``ratio > 1 + tolerance``, else ``"not falsified"`` (never "certified").
    relation, norm, search : str, float, str
        What was checked and how.
    evaluations : int
        Number of evaluations of ``f``.
    tolerance : float
        Relative slack allowed for floating-point error.
    """

    max_measured: float
    declared: float
    ratio: float
    witness: Tuple[Dataset, Dataset]
    verdict: str
    relation: str
    norm: float
    search: str
    evaluations: int
    tolerance: float
    details: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready summary (the witness datasets as nested lists)."""
        (X0, y0), (X1, y1) = self.witness
        return {
            "max_measured": self.max_measured,
            "declared": self.declared,
            "ratio": self.ratio,
            "verdict": self.verdict,
            "relation": self.relation,
            "norm": self.norm,
            "search": self.search,
            "evaluations": self.evaluations,
            "tolerance": self.tolerance,
            "witness": {"X": X0.tolist(), "y": y0.tolist(), "X_prime": X1.tolist(), "y_prime": y1.tolist()},
            **self.details,
        }


# --------------------------------------------------------------------------------- the domain
@dataclass(frozen=True)
class _Domain:
    """Records allowed in a neighbour: ‖x‖₂ ≤ radius; labels ±1 (binary) or in [−B, B]."""

    radius: float
    binary: bool
    label_bound: float

    def random_record(self, d: int, rng: np.random.Generator) -> Tuple[np.ndarray, float]:
        v = rng.normal(size=d)
        v *= self.radius * rng.random() ** (1.0 / d) / max(np.linalg.norm(v), 1e-300)
        if self.binary:
            return v, float(rng.choice((-1.0, 1.0)))
        return v, float(rng.uniform(-self.label_bound, self.label_bound))

    def project(self, x: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(x))
        return x if norm <= self.radius else x * (self.radius / norm)

    def opposite_label(self, y: float) -> float:
        if self.binary:
            return -y
        return -self.label_bound if y >= 0 else self.label_bound


def _domain(X: np.ndarray, y: np.ndarray, radius: Optional[float], label_bound: Optional[float]) -> _Domain:
    r = float(np.max(np.linalg.norm(X, axis=1))) if radius is None else check_positive("radius", radius)
    binary = label_bound is None and bool(np.all(np.isin(y, (-1.0, 1.0))))
    if binary:
        return _Domain(r, True, 1.0)
    b = float(np.max(np.abs(y))) if label_bound is None else check_positive("label_bound", label_bound)
    return _Domain(r, False, b)


# ---------------------------------------------------------------------------- the evaluator
class _Evaluator:
    """Evaluates pairs, tracks the best ratio and the budget."""

    def __init__(self, f, declared: Declared, norm: float, budget: int):
        self.f, self.declared, self.norm, self.budget = f, declared, norm, budget
        self.evaluations = 0
        self.best: Optional[Tuple[float, float, float, Dataset, Dataset]] = None
        self._base_cache: Dict[int, np.ndarray] = {}

    @property
    def exhausted(self) -> bool:
        return self.evaluations >= self.budget

    def output(self, D: Dataset) -> np.ndarray:
        self.evaluations += 1
        out = np.asarray(self.f(D[0], D[1]), dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(out)):
            raise ValueError("f returned non-finite values; sensitivity is unbounded (or f is broken)")
        return out

    def base_output(self, D: Dataset) -> np.ndarray:
        key = id(D[0])
        if key not in self._base_cache:
            self._base_cache[key] = self.output(D)
        return self._base_cache[key]

    def bound(self, n: int) -> float:
        value = self.declared(n) if callable(self.declared) else self.declared
        return check_positive("declared", value)

    def record(self, D0: Dataset, out0: np.ndarray, D1: Dataset, out1: np.ndarray) -> float:
        dist = float(np.linalg.norm(out0 - out1, ord=self.norm))
        bound = self.bound(min(len(D0[1]), len(D1[1])))
        ratio = dist / bound
        if self.best is None or ratio > self.best[0]:
            self.best = (ratio, dist, bound, D0, D1)
        return ratio


def _replace(D: Dataset, i: int, x: np.ndarray, y: float) -> Dataset:
    X2, y2 = D[0].copy(), D[1].copy()
    X2[i], y2[i] = x, y
    return X2, y2


def _pair_ratio(ev: _Evaluator, D: Dataset, relation: str, i: int, rec0, rec1) -> float:
    """Ratio for the pair built at position ``i`` of ``D``.

    replace_one: D with record i := rec0 versus D with record i := rec1 (``rec0=None`` keeps the
    original record, whose output is cached). add_remove: D ∪ {rec1} versus D (``rec1`` not None),
    or D versus D ∖ {record i} (``rec1`` None).
    """
    if relation == "replace_one":
        D0 = D if rec0 is None else _replace(D, i, *rec0)
        out0 = ev.base_output(D) if rec0 is None else ev.output(D0)
        D1 = _replace(D, i, *rec1)
        return ev.record(D0, out0, D1, ev.output(D1))
    if rec1 is None:
        keep = np.arange(len(D[1])) != i
        D1 = (D[0][keep], D[1][keep])
    else:
        D1 = (np.vstack([D[0], rec1[0][None, :]]), np.append(D[1], rec1[1]))
    return ev.record(D, ev.base_output(D), D1, ev.output(D1))


# ----------------------------------------------------------------------------- the searches
def _bases(D: Dataset, min_size: int) -> List[Dataset]:
    """Prefixes of size …, n/4, n/2 (≥ ``min_size``) and the base itself, smallest first (Δ ∝ 1/n)."""
    out = [D]
    m = len(D[1]) // 2
    while m >= min_size:
        out.append((D[0][:m].copy(), D[1][:m].copy()))
        m //= 2
    return out[::-1]


def _least_used_direction(X: np.ndarray) -> np.ndarray:
    """Unit vector along the smallest singular direction of X (a "Dirac" coordinate if one is unused).

    The influence of a record on a regularised GLM minimiser is largest along the smallest
    eigenvector of the Hessian (influence approximation θ′ − θ ≈ −H⁻¹[∇ℓ(z′) − ∇ℓ(z)]/n).
    """
    _, _, vt = np.linalg.svd(X, full_matrices=True)
    return vt[-1]


def _structured_records(D: Dataset, i: int, dom: _Domain) -> List[Tuple[Any, Any]]:
    """(rec0, rec1) pairs of boundary records at position ``i`` (see module docstring)."""
    X, y = D
    x, lab = X[i], float(y[i])
    norm = float(np.linalg.norm(x))
    edge = x * (dom.radius / norm) if norm > 0 else np.eye(X.shape[1])[0] * dom.radius
    dirac = _least_used_direction(X) * dom.radius
    flip = dom.opposite_label(lab)
    same = dom.opposite_label(flip)  # the label itself (binary) or the bound of its sign (regression)
    return [
        ((dirac, same), (dirac, flip)),
        ((edge, same), (edge, flip)),
        ((edge, same), (-edge, flip)),
        ((dirac, same), (-dirac, same)),
        (None, (x, flip)),
    ]


def _structured(ev: _Evaluator, bases: List[Dataset], relation: str, dom: _Domain, budget: int) -> List[tuple]:
    """Evaluate the boundary candidates (at most ``budget`` evaluations); return them with their ratios."""
    tried: List[tuple] = []
    stop = min(ev.budget, ev.evaluations + budget)
    for D in bases:
        for i in range(len(D[1])):
            pairs = _structured_records(D, i, dom)
            if relation == "add_remove":
                pairs = [(None, None)] + [(None, r1) for _, r1 in pairs]
            for rec0, rec1 in pairs:
                if ev.evaluations >= stop:
                    return tried
                tried.append((_pair_ratio(ev, D, relation, i, rec0, rec1), D, i, rec0, rec1))
    return tried


def _random(ev: _Evaluator, bases: List[Dataset], relation: str, dom: _Domain, rng: np.random.Generator) -> None:
    while not ev.exhausted:
        D = bases[int(rng.integers(len(bases)))]
        i = int(rng.integers(len(D[1])))
        _pair_ratio(ev, D, relation, i, None, dom.random_record(D[0].shape[1], rng))


def _move(rec, dom: _Domain, step: float, rng: np.random.Generator):
    x, lab = rec
    x = dom.project(x + step * dom.radius * rng.normal(size=x.shape))
    if rng.random() < 0.2:
        lab = dom.opposite_label(lab)
    elif not dom.binary:
        lab = float(np.clip(lab + step * dom.label_bound * rng.normal(), -dom.label_bound, dom.label_bound))
    return x, lab


def _climb(ev: _Evaluator, D: Dataset, relation: str, i: int, rec0, rec1, dom: _Domain, rng, steps: int) -> None:
    """Hill climbing on the ratio from one starting pair: Gaussian moves of the differing records."""
    if relation == "add_remove":
        rec0 = None
        rec1 = dom.random_record(D[0].shape[1], rng) if rec1 is None else rec1
    elif rec0 is None:
        rec0 = (D[0][i].copy(), float(D[1][i]))
    current = _pair_ratio(ev, D, relation, i, rec0, rec1)
    step = 0.3
    for _ in range(steps):
        if ev.exhausted:
            return
        new0 = rec0 if rec0 is None or rng.random() < 0.5 else _move(rec0, dom, step, rng)
        new1 = _move(rec1, dom, step, rng)
        value = _pair_ratio(ev, D, relation, i, new0, new1)
        if value > current:
            current, rec0, rec1 = value, new0, new1
        else:
            step = max(step * 0.8, 1e-3)


def _adversarial(
    ev: _Evaluator, bases: List[Dataset], relation: str, dom: _Domain, rng: np.random.Generator, steps: int
) -> None:
    """Structured candidates (half the budget), then local search from the best of them, alternating
    with random restarts."""
    tried = _structured(ev, bases, relation, dom, ev.budget // 2)
    tried.sort(key=lambda t: -t[0])
    k = 0
    while not ev.exhausted:
        if k < len(tried) and (k % 2 == 0 or rng.random() < 0.5):
            _, D, i, rec0, rec1 = tried[k]
            k += 1
        else:
            D = bases[int(rng.integers(len(bases)))]
            i = int(rng.integers(len(D[1])))
            rec0, rec1 = dom.random_record(D[0].shape[1], rng), dom.random_record(D[0].shape[1], rng)
        _climb(ev, D, relation, i, rec0, rec1, dom, rng, steps)


# --------------------------------------------------------------------------------- public API
def sensitivity_check(
    f: Callable[[np.ndarray, np.ndarray], np.ndarray],
    base_dataset: Dataset,
    declared: Declared,
    *,
    relation: str = "replace_one",
    norm: float = 2,
    search: str = "adversarial",
    budget: int = 500,
    rng: Optional[np.random.Generator] = None,
    radius: Optional[float] = None,
    label_bound: Optional[float] = None,
    min_size: int = 8,
    local_steps: int = 20,
    tolerance: float = 1e-6,
) -> SensitivityReport:
    """Largest measured ‖f(D) − f(D′)‖ over neighbouring datasets, against the declared bound.

    Parameters
    ----------
    f : callable
        ``f(X, y) -> array``: the deterministic part of the algorithm (every internal random draw
        fixed, e.g. a solver called with ``epsilon=math.inf`` and a fixed seed).
    base_dataset : tuple (X, y)
        ``X`` of shape (n, d) (features, the units of the domain), ``y`` of shape (n,).
    declared : float or callable
        The sensitivity bound used to calibrate the noise, in the output's units and ``norm``; a
        callable ``declared(n)`` gives it for dataset size n (for add/remove pairs the smaller
        size, the most generous reading of the claim).
    relation : {"replace_one", "add_remove"}
        Neighbouring relation of the claim.
    norm : float
        Norm of the output difference (2, 1 or ``numpy.inf``).
    search : {"random", "structured", "adversarial"}
        Neighbour search (module docstring); ``"adversarial"`` includes the structured candidates.
    budget : int
        Evaluations of ``f`` to spend (the search stops once they are spent; the pair in progress
        may take one more).
    rng : numpy.random.Generator, optional
        Randomness of the search (``default_rng(0)`` if omitted).
    radius : float, optional
        Feature-norm bound ‖x‖₂ ≤ radius of the domain (default: the largest row norm of ``X``).
    label_bound : float, optional
        Labels lie in [−label_bound, label_bound] (regression). If omitted, labels in {−1, +1} are
        treated as binary, otherwise the bound is max |y|.
    min_size : int
        Smallest prefix of the base dataset tried as a base (≥ 2).
    local_steps : int
        Hill-climbing steps after each restart (adversarial search).
    tolerance : float
        Relative slack for floating-point error: violation iff ratio > 1 + tolerance.

    Returns
    -------
    SensitivityReport
        With ``verdict`` ``"violated"`` or ``"not falsified"`` — never a certificate.
    """
    X = np.asarray(base_dataset[0], dtype=np.float64)
    y = np.asarray(base_dataset[1], dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[0] < 2:
        raise ValueError(
            f"base_dataset must be (X, y) with X of shape (n, d), y of shape (n,), n >= 2; got {X.shape}, {y.shape}"
        )
    relation = check_relation("relation", relation)
    search = check_choice("search", search, SEARCHES)
    budget = check_positive_int("budget", budget)
    min_size = check_positive_int("min_size", min_size, minimum=2)
    local_steps = check_positive_int("local_steps", local_steps)
    tolerance = check_nonnegative("tolerance", tolerance)
    if norm not in (1, 2, np.inf, math.inf):
        raise ValueError(f"norm must be 1, 2 or inf; got {norm!r}")
    rng = np.random.default_rng(0) if rng is None else rng
    dom = _domain(X, y, radius, label_bound)
    ev = _Evaluator(f, declared, norm, budget)
    bases = _bases((X, y), min_size)
    if search == "random":
        _random(ev, bases, relation, dom, rng)
    elif search == "structured":
        _structured(ev, bases, relation, dom, budget)
    else:
        _adversarial(ev, bases, relation, dom, rng, local_steps)
    ratio, dist, bound, D0, D1 = ev.best
    verdict = "violated" if ratio > 1.0 + tolerance else "not falsified"
    return SensitivityReport(
        max_measured=dist,
        declared=bound,
        ratio=ratio,
        witness=(D0, D1),
        verdict=verdict,
        relation=relation,
        norm=float(norm),
        search=search,
        evaluations=ev.evaluations,
        tolerance=tolerance,
        details={"radius": dom.radius, "label_bound": None if dom.binary else dom.label_bound},
    )
