"""What an audit needs from the thing it audits: the :class:`AuditTarget` protocol.

An audit target bundles one privacy claim (ε, δ, neighbouring relation, noise family) with a
*batched* sampler of attack scores: ``sample(which, n, rng)`` runs the mechanism or solver ``n``
times on ``D`` (``which=0``) or on its neighbour ``D′`` (``which=1``) and returns the distinguisher's
score of every output, larger meaning "looks like ``D′``" (the likelihood-ratio direction of
Kairouz, Oh, Viswanath 2015, Thm. 2.1: DP is a bound on every test's error pair).

For the one-run audit (Steinke, Nasr, Jagielski 2023, Alg. 1) a target may also provide
``sample_one_run(m, rng) -> (included, scores)``: ``m`` canaries, each included independently with
probability ½, and one score per canary. Targets without it are audited one-run style by
:func:`one_run_from_sample`, which runs one independent trial per canary (each canary then affects
exactly one run, so the per-canary guarantee is the mechanism's own (ε, δ)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional, Protocol, Tuple, runtime_checkable

import numpy as np

from dpcore._validation import (
    check_choice,
    check_delta,
    check_positive,
    check_positive_int,
    check_real_array,
    check_relation,
)
from dpcore.events import PrivacyEvent

__all__ = [
    "AuditTarget",
    "FunctionTarget",
    "NOISE_FAMILIES",
    "SHIFT_NOISES",
    "check_target",
    "one_run_from_sample",
    "shift_target",
]

NOISE_FAMILIES = ("gaussian", "laplace", "pure", "other")


@runtime_checkable
class AuditTarget(Protocol):
    """A privacy claim plus a batched sampler of distinguisher scores.

    Attributes
    ----------
    name : str
        Human-readable name, e.g. ``"gaussian"`` or ``"dp_gd[half-noise]"``.
    claimed_epsilon : float
        The ε the implementation claims (nats), in (0, inf].
    delta : float
        The δ of the claim, in (0, 1).
    relation : str
        Neighbouring relation of ``D`` and ``D′``: ``"add_remove"`` or ``"replace_one"``.
    noise_family : str
        ``"gaussian"``, ``"laplace"``, ``"pure"`` or ``"other"``. The Gaussian-DP estimator is only
        valid for ``"gaussian"`` (Nasr et al. 2023, §4: the μ → ε step assumes a Gaussian trade-off).

    Targets may also carry ``statistic`` (str, what the score is, for reports),
    ``sample_one_run(m, rng)`` and ``event`` (the dpcore privacy event the claim was computed from,
    for the same relation: its certified trade-off curve is what the ``"curve"`` and
    ``"fdp-one-run"`` estimators test, :mod:`audits.fdp`).
    """

    name: str
    claimed_epsilon: float
    delta: float
    relation: str
    noise_family: str

    def sample(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``n`` scores (float64, shape ``(n,)``) of runs on ``D`` (0) or ``D′`` (1)."""
        ...


def check_target(target: object) -> None:
    """Validate the claim fields of ``target``; raise ``ValueError`` naming the bad field."""
    for attr in ("name", "claimed_epsilon", "delta", "relation", "noise_family", "sample"):
        if not hasattr(target, attr):
            raise ValueError(f"target must provide {attr!r} (see audits.AuditTarget); got {target!r}")
    check_positive("target.claimed_epsilon", target.claimed_epsilon, allow_inf=True)
    check_delta("target.delta", target.delta)
    check_relation("target.relation", target.relation)
    check_choice("target.noise_family", target.noise_family, NOISE_FAMILIES)
    event = getattr(target, "event", None)
    if event is not None:
        if not isinstance(event, PrivacyEvent):
            raise ValueError(f"target.event must be a dpcore PrivacyEvent (or None); got {event!r}")
        if event.relation != target.relation:
            raise ValueError(f"target.event is for relation {event.relation!r} but the target claims "
                             f"{target.relation!r}; they must agree")


def one_run_from_sample(
    target: AuditTarget, m: int, rng: np.random.Generator
) -> Tuple[np.ndarray, np.ndarray]:
    """One-run canaries built from ``target.sample``: each included w.p. ½, one run per canary.

    Parameters
    ----------
    target : AuditTarget
        Any target.
    m : int
        Number of canaries (≥ 1).
    rng : numpy.random.Generator
        Source of the inclusion bits and of the runs.

    Returns
    -------
    included : ndarray of bool, shape (m,)
    scores : ndarray of float64, shape (m,)
    """
    m = check_positive_int("m", m)
    included = rng.random(m) < 0.5
    scores = np.empty(m)
    n1 = int(included.sum())
    scores[~included] = _as_scores(target.sample(0, m - n1, rng), m - n1, "sample(0, ...)")
    scores[included] = _as_scores(target.sample(1, n1, rng), n1, "sample(1, ...)")
    return included, scores


def _as_scores(values: object, n: int, what: str) -> np.ndarray:
    arr = check_real_array(f"target.{what}", values).reshape(-1)
    if arr.shape != (n,):
        raise ValueError(f"target.{what} must return {n} scores; got shape {np.shape(values)}")
    if np.isnan(arr).any():
        raise ValueError(f"target.{what} returned NaN scores")
    return arr


@dataclass(frozen=True)
class FunctionTarget:
    """A concrete :class:`AuditTarget` from a batched score function.

    Parameters
    ----------
    name : str
        Name used in reports.
    claimed_epsilon : float
        Claimed ε (nats), in (0, inf].
    delta : float
        Claimed δ, in (0, 1).
    sampler : callable
        ``sampler(which, n, rng) -> ndarray[n]``: scores of ``n`` runs on ``D`` (``which=0``) or
        ``D′`` (``which=1``). Must be picklable (a module-level function or a
        ``functools.partial`` of one) to be used with a process pool.
    relation : str
        ``"add_remove"`` (default) or ``"replace_one"``.
    noise_family : str
        One of :data:`NOISE_FAMILIES`.
    statistic : str
        Description of the score for reports (e.g. ``"output"``, ``"loss on canary"``).
    one_run_sampler : callable, optional
        ``one_run_sampler(m, rng) -> (included, scores)``; if omitted, :func:`one_run_from_sample`.
    event : dpcore PrivacyEvent, optional
        The privacy event the claim comes from (same ``relation``), e.g.
        ``dpcore.PoissonSampledEvent(dpcore.GaussianEvent(sigma), q)``: the ``"curve"`` and
        ``"fdp-one-run"`` estimators test its certified trade-off curve.
    """

    name: str
    claimed_epsilon: float
    delta: float
    sampler: Callable[[int, int, np.random.Generator], np.ndarray]
    relation: str = "add_remove"
    noise_family: str = "other"
    statistic: str = "score"
    one_run_sampler: Optional[Callable[[int, np.random.Generator], Tuple[np.ndarray, np.ndarray]]] = None
    event: Optional[PrivacyEvent] = None

    def __post_init__(self) -> None:
        check_target(self)
        if not callable(self.sampler):
            raise ValueError(f"sampler must be callable; got {self.sampler!r}")

    def sample(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """Scores of ``n`` runs on ``D`` (``which=0``) or ``D′`` (``which=1``); float64, shape (n,)."""
        if which not in (0, 1):
            raise ValueError(f"which must be 0 (D) or 1 (D'); got {which!r}")
        n = check_positive_int("n", n, minimum=0)
        return _as_scores(self.sampler(which, n, rng), n, f"sample({which}, ...)")

    def sample_one_run(self, m: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """``m`` canaries included w.p. ½ each and their scores (Steinke et al. 2023, Alg. 1)."""
        if self.one_run_sampler is None:
            return one_run_from_sample(self, m, rng)
        m = check_positive_int("m", m)
        included, scores = self.one_run_sampler(m, rng)
        included = np.asarray(included, dtype=bool).reshape(-1)
        if included.shape != (m,):
            raise ValueError(f"one_run_sampler must return {m} inclusion bits; got {included.shape}")
        return included, _as_scores(scores, m, "sample_one_run(...)")


#: Noise laws of :func:`shift_target`.
SHIFT_NOISES = ("gaussian", "laplace", "none")


def _shift_scores(which: int, n: int, rng: np.random.Generator, *, noise: str, scale: float, sensitivity: float):
    """``n`` releases of a scalar query worth 0 on D and Δ on D′, plus noise, drawn at once."""
    loc = sensitivity * float(which)
    if noise == "gaussian":
        return rng.normal(loc, scale, size=n)
    if noise == "laplace":
        return rng.laplace(loc, scale, size=n)
    return np.full(n, loc)


def shift_target(
    name: str,
    claimed_epsilon: float,
    delta: float,
    *,
    noise: str,
    scale: float = 1.0,
    sensitivity: float = 1.0,
    relation: str = "add_remove",
    event: Optional[PrivacyEvent] = None,
) -> FunctionTarget:
    """The textbook location mechanism as a batched, picklable audit target.

    A scalar query equal to 0 on ``D`` and to ``sensitivity`` on ``D′`` is released with
    ``N(0, scale²)`` (Gaussian mechanism, Dwork & Roth 2014, Thm. A.1 / Balle & Wang 2018),
    ``Lap(scale)`` noise (Laplace mechanism, Dwork & Roth 2014, Thm. 3.6) or none. The distinguisher
    is the output itself, which is the likelihood-ratio direction for these location families, so
    the audit can be tight. Used to check the auditor itself (tightness, validity, power) with
    vectorised NumPy sampling.

    Parameters
    ----------
    name : str
        Name for reports.
    claimed_epsilon, delta : float
        The claim under test (ε in (0, inf], δ in (0, 1)).
    noise : str
        ``"gaussian"``, ``"laplace"`` or ``"none"``.
    scale : float
        σ of the Gaussian or b of the Laplace noise (> 0; ignored for ``"none"``), in query units.
    sensitivity : float
        Δ, the query's change between ``D`` and ``D′`` (> 0).
    relation : str
        Relation the claim is stated for.
    event : dpcore PrivacyEvent, optional
        The privacy event of the claim (for the ``"curve"`` and ``"fdp-one-run"`` estimators), e.g.
        ``dpcore.GaussianEvent(claimed_sigma / sensitivity)``; the claim, not necessarily the noise used.
    """
    noise = check_choice("noise", noise, SHIFT_NOISES)
    scale = check_positive("scale", scale)
    sensitivity = check_positive("sensitivity", sensitivity)
    family = {"gaussian": "gaussian", "laplace": "laplace", "none": "other"}[noise]
    sampler = partial(_shift_scores, noise=noise, scale=scale, sensitivity=sensitivity)
    return FunctionTarget(name, claimed_epsilon, delta, sampler, relation=relation, noise_family=family,
                          statistic="output", event=event)
