"""What to audit: an :class:`audits.AuditTarget` for every mechanism, solver and planted bug.

Mechanism targets (:func:`mechanism_target`) are batched: one call draws all trials with one
vectorised ``randomize``. Neighbours are the worst case for an additive mechanism of sensitivity Δ
(f(D) = 0, f(D′) = Δ·e₁, so the privacy loss is the mechanism's own), and the distinguisher is the
likelihood-ratio test, most powerful by Neyman–Pearson: the projection of the output on the
difference of the means for Gaussian-type noise (the log-likelihood ratio is linear in it), and the
exact log-likelihood ratio (or a monotone transform of it) for Laplace, ℓ2-Laplace, generalized
Gaussian, discrete, randomized-response and exponential mechanisms.

Solver targets (:func:`solver_target`) run the library's solvers on a small dataset D and on D′
where one record is replaced by a worst-case canary (see :mod:`audits.solver_targets`).

Planted bugs (``planted=NAME``, catalogue in :mod:`audits.planted_bugs`) give the same claim with a
broken implementation; each target reports the claim that the (buggy) code computes with dpcore.

:func:`float_support_target` turns the planted ``float-laplace`` distinguisher (Mironov 2012)
against the library's own Laplace mechanism: its secure (default) lattice release must pass, its
``secure=False`` float path (NumPy's sampler, which the test enumerates) is caught.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial
from typing import Optional, Tuple

import numpy as np

import dpcore
from algorithms.clipping import clipped_sum_sensitivity
from dpcore._validation import check_choice, check_delta, check_positive
from dpcore.events import PoissonSampledEvent, SelfComposedEvent, UnsupportedEventError
from mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    GeneralizedGaussian,
    L2Laplace,
    Laplace,
    RandomizedResponse,
)

from . import planted_bugs as pb
from .solver_targets import SOLVER_NAMES, solver_target
from .target import FunctionTarget

__all__ = ["MECHANISM_NAMES", "SOLVER_NAMES", "PLANTED_BUGS", "mechanism_target", "solver_target",
           "float_support_target", "subsampled_gaussian_target", "curve_event", "with_solver_event"]

MECHANISM_NAMES = (
    "gaussian",
    "subsampled-gaussian",
    "laplace",
    "l2-laplace",
    "generalized-gaussian",
    "discrete-gaussian",
    "discrete-laplace",
    "randomized-response",
    "exponential",
)
PLANTED_BUGS = tuple(pb.CATALOGUE)

_RELATION = "replace_one"
_DIM = 2  # dimension of the vector mechanisms' outputs (ℓ2-Laplace, generalized Gaussian)
_GG_ORDER = 4.0  # p of the generalized Gaussian target (any p in (2, ∞) is covered by its claim)
_EXP_CANDIDATES = 4
_CLIP = 1.0  # clip norm C of the clipped-sum queries (query units)
_CANARY_NORM = 50.0  # norm of the unclipped canary in the no-clipping bug, in units of C
_USED_RATE, _ACCOUNTED_RATE = 1.0, 0.01  # wrong-sampling-rate bug
#: sampling rate of :func:`subsampled_gaussian_target` (at q = 0.1 a σ/√2 bug is caught by the curve
#: estimator at 10⁵ trials per side, and missed by Clopper–Pearson)
SUBSAMPLED_RATE = 0.1


# ----------------------------------------------------------------------------------- scores
def _score(kind: str, y: np.ndarray, origin: float, shift: float, p: float) -> np.ndarray:
    """Likelihood-ratio distinguisher of an output ``y`` (shape (n,) or (n, d)); larger → D′.

    D's answer is ``origin``·e₁ and D′'s is (``origin`` + ``shift``)·e₁.
    """
    y = np.asarray(y, dtype=np.float64)
    first = y if y.ndim == 1 else y[:, 0]
    if kind == "projection":  # Gaussian noise: LLR is affine in ⟨y, e₁⟩
        return first
    if kind == "clipped":  # Laplace-type: LLR = (|y−a| − |y−a−Δ|)/b, a clip of the projection
        return np.clip(first, origin, origin + shift)
    rest = y[:, 1:] if y.ndim == 2 else np.zeros((y.size, 0))
    far = np.column_stack([first - origin, rest])
    near = np.column_stack([first - origin - shift, rest])
    if kind == "l2":  # density ∝ exp(−‖z‖₂/b): LLR ∝ ‖y − f(D)‖₂ − ‖y − f(D′)‖₂
        return np.linalg.norm(far, axis=1) - np.linalg.norm(near, axis=1)
    # kind == "lp": density ∝ exp(−‖z‖_p²/(2σ²)): LLR ∝ ‖y − f(D)‖_p² − ‖y − f(D′)‖_p²
    return np.linalg.norm(far, ord=p, axis=1) ** 2 - np.linalg.norm(near, ord=p, axis=1) ** 2


def _additive_sampler(mech, dim: int, origin: float, shift: float, score: str, p: float, integer: bool,
                      which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n releases of f(D) = origin·e₁ (which = 0) or f(D′) = (origin + shift)·e₁, scored."""
    shape = (n,) if dim == 1 else (n, dim)
    value = np.zeros(shape, dtype=np.int64 if integer else np.float64)
    if dim == 1:
        value[...] = origin + shift * which
    else:
        value[:, 0] = origin + shift * which
    return _score(score, mech.randomize(value, rng), origin, shift, p)


def _rr_sampler(mech: RandomizedResponse, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Report 0 (D) or 1 (D′); score = 1[output = 1] (the LLR is increasing in it)."""
    return (mech.randomize(np.full(n, which), rng) == 1).astype(np.float64)


def _exponential_utilities(shift: float) -> Tuple[np.ndarray, np.ndarray]:
    """u(D) = (0, Δ, …, Δ), u(D′) = (Δ, 0, …, 0): every utility moves by Δ, in opposite directions."""
    u0 = np.full(_EXP_CANDIDATES, shift)
    u0[0] = 0.0
    return u0, shift - u0


def _exponential_sampler(mech: ExponentialMechanism, shift: float, which: int, n: int,
                         rng: np.random.Generator) -> np.ndarray:
    """Selected candidate r scored by its exact LLR log P_D′[r] − log P_D[r]."""
    u0, u1 = _exponential_utilities(shift)
    llr = np.log(mech.probabilities(u1)) - np.log(mech.probabilities(u0))
    r = mech.randomize(np.broadcast_to(u1 if which else u0, (n, u0.size)), rng)
    return llr[np.asarray(r, dtype=np.int64)]


# ------------------------------------------------------------------------------- claims
def _claim(event, delta: float) -> float:
    """The ε the implementation reports for ``event`` at ``delta`` (dpcore, rounded up).

    An event that carries only a privacy profile δ(ε) (the generalized Gaussian's Lemma 3 bound),
    which no dpcore accountant converts, is inverted directly: the least ε on a bisection grid
    with δ(ε) ≤ ``delta``, taken from the safe (upper) end.
    """
    try:
        return float(dpcore.get_epsilon(event, delta, accountant="auto").epsilon)
    except UnsupportedEventError:
        profile = getattr(event, "privacy_profile", None)
        if profile is None:
            raise
    lo, hi = 0.0, 1.0
    while profile(hi) > delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if profile(mid) > delta else (lo, mid)
    return hi


def _mechanism(name: str, epsilon: float, delta: float):
    """(calibrated mechanism, dim, score kind, p, integer, noise family) of a correct target."""
    if name == "gaussian":
        return Gaussian.calibrate(epsilon, delta, sensitivity=1.0), 1, "projection", 2.0, False, "gaussian"
    if name == "laplace":
        return Laplace.calibrate(epsilon, sensitivity=1.0), 1, "clipped", 1.0, False, "laplace"
    if name == "l2-laplace":
        return L2Laplace.calibrate(epsilon, sensitivity=1.0, dimension=_DIM), _DIM, "l2", 2.0, False, "laplace"
    if name == "generalized-gaussian":
        mech = GeneralizedGaussian.calibrate(epsilon, delta, sensitivity=1.0, p=_GG_ORDER, dimension=_DIM)
        return mech, _DIM, "lp", _GG_ORDER, False, "other"
    if name == "discrete-gaussian":
        return DiscreteGaussian.calibrate(epsilon, delta, sensitivity=1), 1, "projection", 2.0, True, "other"
    if name == "discrete-laplace":
        return DiscreteLaplace.calibrate(epsilon, sensitivity=1), 1, "clipped", 1.0, True, "pure"
    if name == "randomized-response":
        return RandomizedResponse.calibrate(epsilon, k=2), 1, "", 0.0, True, "pure"
    return ExponentialMechanism.calibrate(epsilon, sensitivity=1.0), 1, "", 0.0, False, "pure"


def _correct_target(name: str, epsilon: float, delta: float) -> FunctionTarget:
    mech, dim, score, p, integer, family = _mechanism(name, epsilon, delta)
    if name == "randomized-response":
        sampler, statistic = partial(_rr_sampler, mech), "indicator of output 1 (LLR)"
    elif name == "exponential":
        sampler, statistic = partial(_exponential_sampler, mech, 1.0), "log-likelihood ratio of the selection"
    else:
        sampler = partial(_additive_sampler, mech, dim, 0.0, 1.0, score, p, integer)
        statistic = {"projection": "projection on the mean difference", "clipped": "clipped projection (LLR)",
                     "l2": "l2 log-likelihood ratio", "lp": f"l{p:g} log-likelihood ratio"}[score]
    event = mech.privacy_event(_RELATION)
    return FunctionTarget(name, _claim(event, delta), delta, sampler, _RELATION, family, statistic,
                          event=curve_event(event))


def curve_event(event) -> Optional[dpcore.events.PrivacyEvent]:
    """``event`` when the curve estimators can use it (its noise scale can be varied,
    :func:`audits.fdp_claim.scaled_event`, and the PLD supports it), else None."""
    from .fdp_claim import scaled_event

    try:
        scaled_event(event, 1.0)
    except UnsupportedEventError:
        return None
    return event


def with_solver_event(target: FunctionTarget) -> FunctionTarget:
    """A solver target of :func:`solver_target` with its privacy event attached (for the curve estimators).

    The event is the one the solver itself reports (``SolverResult.event``) for the very keywords
    the trials use, from one run on D′; None when the curve estimators cannot use it
    (:func:`curve_event`), e.g. objective perturbation's profile-only ``MechanismEvent``.
    """
    from .solver_targets import _solver

    runs = target.sampler
    if not all(hasattr(runs, a) for a in ("name", "kwargs", "datasets")):
        raise ValueError(f"target {target.name!r} is not a solver target of audits.targets.solver_target")
    result = _solver(runs.name)(*runs.datasets[1], rng=0, **dict(runs.kwargs))
    return dataclasses.replace(target, event=curve_event(result.event))


def subsampled_gaussian_target(epsilon: float, delta: float, *, sampling_rate: float = SUBSAMPLED_RATE,
                               noise_factor: float = 1.0) -> FunctionTarget:
    """A Poisson-subsampled Gaussian sum (one step, add_remove): D′ adds a record C·e₁ that each run
    includes with probability ``sampling_rate``; score = the released sum (its likelihood ratio is
    increasing in it, for both orders of neighbours).

    The claim is dpcore's ε of ``PoissonSampledEvent(GaussianEvent(σ), q)`` with σ calibrated to
    (``epsilon``, ``delta``); the target carries that event, so the ``"curve"`` and
    ``"fdp-one-run"`` estimators test the subsampled curve itself (no Gaussian-DP label is valid
    here). ``noise_factor`` ≠ 1 plants a bug: the noise actually drawn is σ·noise_factor (e.g.
    1/√2: a variance halved by a wrong normalisation) while the claim stays σ's.

    Parameters
    ----------
    epsilon : float
        Target ε in (0, ∞) (nats).
    delta : float
        δ in (0, 1).
    sampling_rate : float
        q in (0, 1).
    noise_factor : float
        Factor (> 0) on the noise actually drawn.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    q = check_positive("sampling_rate", sampling_rate)
    if q >= 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1); got {sampling_rate!r}")
    factor = check_positive("noise_factor", noise_factor)
    sigma = dpcore.calibrate_noise_multiplier(epsilon, delta, sampling_rate=q, steps=1, sampling="poisson",
                                              relation="add_remove").value
    event = PoissonSampledEvent(Gaussian(sigma * _CLIP, _CLIP).privacy_event("add_remove"), q)
    name = "subsampled-gaussian" if factor == 1.0 else f"subsampled-gaussian[noise x{factor:.4g}]"
    return FunctionTarget(name, _claim(event, delta), delta,
                          partial(_subsampled_sum_sampler, Gaussian(sigma * factor * _CLIP, _CLIP), q), "add_remove",
                          "other", "released sum (likelihood-ratio order)", event=event)


# ------------------------------------------------------------------------------ planted bugs
def _float_laplace_sampler(scale: float, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Naive float Laplace at f(D) = 0 / f(D′) = 1; score = [reachable from D′] − [reachable from D]."""
    y = pb.naive_float_laplace(float(which), scale, n, rng)
    return (pb.naive_float_laplace_support(y, 1.0, scale).astype(np.float64)
            - pb.naive_float_laplace_support(y, 0.0, scale))


def _float_support_sampler(mech: Laplace, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """The library's Laplace at f(D) = 0 / f(D′) = 1, scored by the same support test."""
    y = mech.randomize(np.full(n, float(which)), rng)
    return (pb.naive_float_laplace_support(y, 1.0, mech.scale).astype(np.float64)
            - pb.naive_float_laplace_support(y, 0.0, mech.scale))


def float_support_target(epsilon: float, delta: float, *, secure: bool = True) -> FunctionTarget:
    """The library's :class:`mechanisms.Laplace` attacked with Mironov's floating-point support test.

    The score of an output y is [y reachable from f(D′) = 1] − [y reachable from f(D) = 0] by the
    textbook float inverse-CDF sampler (:func:`audits.planted_bugs.naive_float_laplace_support`).

    ``secure=False`` audits the float path, ``value`` + NumPy's ``Generator.laplace``, an
    inverse-CDF sampler in float64 whose uniform lies on the 2⁻⁵³ grid — the construction Mironov
    2012 (§3) breaks: its outputs are (up to the rare inexact ``2 − 2U`` of NumPy's upper branch)
    among those the support test enumerates, and the audit reads ``"violated"``. The default
    (``secure=True``) audits the exact lattice release, whose outputs are the lattice gℤ under both
    neighbours; being ε-DP, it must pass this (and every other) distinguisher.

    Parameters
    ----------
    epsilon : float
        ε in (0, ∞) of the calibrated Laplace mechanism (Δ = 1).
    delta : float
        δ in (0, 1) of the claim (the mechanism claims pure ε-DP).
    secure : bool
        Which path of :class:`mechanisms.Laplace` is audited.
    """
    mech = Laplace.calibrate(check_positive("epsilon", epsilon), sensitivity=1.0, secure=secure)
    delta = check_delta("delta", delta)
    name = "laplace[float-support-test]" if mech.secure else "laplace(secure=False)[float-support-test]"
    return FunctionTarget(name, _claim(mech.privacy_event(_RELATION), delta), delta,
                          partial(_float_support_sampler, mech), _RELATION, "laplace",
                          "support test: reachable from D' minus reachable from D (Mironov 2012)")


def _two_query_sampler(mech: Gaussian, reuse: bool, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Queries q₁ (0 on D, 1 on D′) and q₂ (0 on both); score = released q₁ − q₂."""
    answers = np.zeros((n, 2))
    answers[:, 0] = which
    y = pb.reused_noise_release(answers, mech, rng) if reuse else mech.randomize(answers, rng)
    return y[:, 0] - y[:, 1]


def _double_release_sampler(mech: Gaussian, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """f(D) = 0, f(D′) = 1 released twice; score = sum of both releases (the LR statistic)."""
    return pb.double_release(np.full(n, float(which)), mech, rng).sum(axis=1)


def _clipped_sum_sampler(mech, skip_clipping: bool, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Sum query over records clipped to C: D holds −C·e₁, D′ holds the canary 50C·e₁ instead."""
    record = np.array([[_CANARY_NORM * _CLIP if which else -_CLIP]])
    if skip_clipping:
        total = pb.unclipped_sum(record, _CLIP)
    else:
        total = (record * min(1.0, _CLIP / float(np.abs(record).max()))).sum(axis=0)
    return mech.randomize(np.full(n, total[0]), rng)


def _subsampled_sum_sampler(mech: Gaussian, rate: float, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Poisson-subsampled sum: D′ adds the record C·e₁, included w.p. ``rate``; score = output."""
    included = (rng.random(n) < rate) & bool(which)
    return mech.randomize(_CLIP * included.astype(np.float64), rng)


def _planted_mechanism_target(name: str, bug: str, epsilon: float, delta: float) -> FunctionTarget:
    label = f"{name}[{bug}]"
    if bug == "half-noise":
        mech, dim, score, p, _, family = _mechanism(name, epsilon, delta)
        sampler = partial(_additive_sampler, pb.half_noise(mech), dim, 0.0, 1.0, score, p, False)
        event = mech.privacy_event(_RELATION)
        return FunctionTarget(label, _claim(event, delta), delta, sampler, _RELATION, family,
                              "likelihood-ratio statistic of the correct mechanism", event=curve_event(event))
    if bug == "float-laplace":
        mech = Laplace.calibrate(epsilon, sensitivity=1.0)
        event = mech.privacy_event(_RELATION)
        return FunctionTarget(label, _claim(event, delta), delta, partial(_float_laplace_sampler, mech.scale),
                              _RELATION, "laplace", "support test: reachable from D' minus reachable from D "
                              "(Mironov 2012)", event=curve_event(event))
    if bug == "add-remove-sensitivity":
        # the buggy code calibrates to Δ = C (add/remove) and claims replace-one
        mech = Laplace.calibrate(epsilon, sensitivity=pb.add_remove_sensitivity(_CLIP, _RELATION))
        sampler = partial(_additive_sampler, mech, 1, -_CLIP, 2.0 * _CLIP, "clipped", 1.0, False)
        event = mech.privacy_event(_RELATION)
        return FunctionTarget(label, _claim(event, delta), delta, sampler, _RELATION, "laplace",
                              "clipped projection (LLR for a replace-one change of 2C)", event=curve_event(event))
    return _planted_gaussian_query_target(label, bug, epsilon, delta)


def _planted_gaussian_query_target(label: str, bug: str, epsilon: float, delta: float) -> FunctionTarget:
    """The Gaussian-query bugs: no-clipping, double-spending, reused-noise, wrong-sampling-rate."""
    if bug == "no-clipping":
        mech = Gaussian.calibrate(epsilon, delta, sensitivity=clipped_sum_sensitivity(_CLIP, _RELATION))
        event = mech.privacy_event(_RELATION)
        return FunctionTarget(label, _claim(event, delta), delta, partial(_clipped_sum_sampler, mech, True),
                              _RELATION, "gaussian", "projection on the canary direction", event=event)
    if bug == "double-spending":
        mech = Gaussian.calibrate(epsilon, delta, sensitivity=1.0)
        event = mech.privacy_event(_RELATION)
        return FunctionTarget(label, _claim(event, delta), delta, partial(_double_release_sampler, mech), _RELATION,
                              "gaussian", "sum of the two releases (likelihood-ratio statistic)", event=event)
    if bug == "reused-noise":
        # two releases of Δ = 1 queries, each with σ; their composition is the Gaussian of Δ = √2
        sigma = Gaussian.calibrate(epsilon, delta, sensitivity=math.sqrt(2.0)).sigma
        mech = Gaussian(sigma, 1.0)
        event = SelfComposedEvent(mech.privacy_event(_RELATION), 2)
        return FunctionTarget(label, _claim(event, delta), delta, partial(_two_query_sampler, mech, True),
                              _RELATION, "gaussian", "difference of the two released answers", event=event)
    # wrong-sampling-rate: σ calibrated (and ε claimed) for q = 0.01; the mask is never applied (q = 1)
    calib = dpcore.calibrate_noise_multiplier(epsilon, delta, sampling_rate=_ACCOUNTED_RATE, steps=1,
                                              sampling="poisson", relation="add_remove")
    mech = Gaussian(calib.value * _CLIP, _CLIP)
    event = PoissonSampledEvent(mech.privacy_event("add_remove"), _ACCOUNTED_RATE)
    return FunctionTarget(label, _claim(event, delta), delta, partial(_subsampled_sum_sampler, mech, _USED_RATE),
                          "add_remove", "other", "projection on the canary direction", event=event)


def mechanism_target(name: str, epsilon: float, delta: float, *, planted: Optional[str] = None) -> FunctionTarget:
    """Audit target for the library mechanism ``name`` calibrated to (``epsilon``, ``delta``).

    Parameters
    ----------
    name : str
        One of :data:`MECHANISM_NAMES`.
    epsilon : float
        Target ε in (0, ∞) (nats) passed to the mechanism's ``calibrate``; the target's
        ``claimed_epsilon`` is dpcore's ε for the calibrated mechanism (≤ ``epsilon``).
    delta : float
        δ in (0, 1) of the claim (pure-DP mechanisms are calibrated without δ; an ε-DP claim is also
        an (ε, δ) claim).
    planted : str, optional
        A mechanism bug of :data:`PLANTED_BUGS` (``half-noise``, ``no-clipping``, ``reused-noise``,
        ``wrong-sampling-rate``, ``add-remove-sensitivity``, ``float-laplace``, ``double-spending``).
        ``no-clipping``, ``reused-noise``, ``wrong-sampling-rate`` and ``double-spending`` break
        Gaussian queries (``name="gaussian"``),
        ``add-remove-sensitivity`` and ``float-laplace`` the Laplace mechanism (``name="laplace"``).

    Returns
    -------
    FunctionTarget
        Batched, picklable target (relation ``replace_one``, except ``add_remove`` for the
        subsampling bug).
    """
    name = check_choice("name", name, MECHANISM_NAMES)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if planted is None:
        if name == "subsampled-gaussian":
            return subsampled_gaussian_target(epsilon, delta)
        return _correct_target(name, epsilon, delta)
    bug = pb.CATALOGUE.get(planted)
    if bug is None or bug.kind != "mechanism":
        names = tuple(k for k, v in pb.CATALOGUE.items() if v.kind == "mechanism")
        raise ValueError(f"planted must be one of {names} for a mechanism; got {planted!r}")
    allowed = ("gaussian", "laplace", "l2-laplace", "generalized-gaussian") if planted == "half-noise" else (bug.base,)
    if name not in allowed:
        raise ValueError(f"planted={planted!r} breaks {allowed}; got name={name!r}")
    return _planted_mechanism_target(name, planted, epsilon, delta)

