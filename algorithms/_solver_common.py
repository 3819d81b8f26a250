"""Plumbing shared by the gradient-perturbation solvers: argument checks, sensitivity / step-size
resolution, privacy calibration through dpcore, and assembling the :class:`SolverResult`.

Privacy is never computed here by hand: a solver hands over a function from noise multiplier to the
dpcore event of exactly what it runs; this module calibrates the multiplier with
``dpcore.calibrate`` (safe side, ε ≤ target) and reports ``dpcore.get_epsilon`` of the final event.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np

import dpcore
from dpcore._validation import (
    check_choice, check_delta, check_nonnegative, check_positive, check_positive_int, check_real_array,
    check_relation,
)
from dpcore.events import (
    ComposedEvent, DpSrmEvent, GaussianEvent, NonPrivateEvent, PoissonSampledEvent, PrivacyEvent,
    RandomAllocationEvent, SampledWithoutReplacementEvent, SampledWithReplacementEvent, SelfComposedEvent,
    ShuffledBatchesEvent, TruncatedPoissonSampledEvent,
)
from dpcore.result import PrivacyResult
from mechanisms.base import least_noise_scale

from ._data import Data, prepare_data
from .constraints import SIMPLEX, Constraint, get_constraint, project_kernel
from .losses import Loss, get_loss
from .multiclass import (
    SOFTMAX_LIPSCHITZ_FACTOR, SOFTMAX_SMOOTHNESS_FACTOR, softmax_minimize, softmax_traces, to_class_major, to_feature_major,
)
from .objective import minimize_objective, traces
from .regularizers import Regularizer
from .result import SolverResult

__all__ = [
    "Setup",
    "setup",
    "check_smoothness",
    "as_generator",
    "calibrated_privacy",
    "check_calibration",
    "finish",
    "check_counts",
    "check_batch_size",
    "accounted_releases",
    "default_step",
    "initial_point",
    "noise_off_result",
    "MAX_ITERATIONS",
    "check_iterations",
    "iteration_count",
    "check_classes",
]

#: Most iterations (steps, epochs, rounds) a solver accepts: the kernels count in int64, and the
#: products of counts they form (releases, gradient evaluations) must not wrap; no run that long ends.
MAX_ITERATIONS = 2**31 - 1


@dataclass(frozen=True)
class Setup:
    """Validated inputs of a solver run."""

    data: Data
    loss: Loss
    reg: Regularizer
    constraint: Constraint
    clip: float
    smoothness: Optional[float]
    start: float
    classes: Optional[int] = None  # k ≥ 3: softmax weights (k × d; flat feature-major in the kernels, algorithms.multiclass)

    @property
    def n_weights(self) -> int:
        """Length of the weight vector: d, or k·d for a softmax fit."""
        return self.data.d * (self.classes or 1)


def as_generator(rng: object) -> np.random.Generator:
    """``rng`` itself if a ``numpy.random.Generator``, else ``numpy.random.default_rng(rng)`` for None
    or a non-negative int seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng (random_state) must be None, an int seed >= 0 or a numpy.random.Generator; "
                             f"got {rng!r}")
        return np.random.default_rng(rng)
    raise ValueError(f"rng (random_state) must be None, an int seed >= 0 or a numpy.random.Generator; got {rng!r}")


def check_batch_size(batch_size: object, n: int) -> int:
    """A batch size b with 1 ≤ b ≤ n."""
    b = check_positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, n={n}]; got {b}")
    return b


def iteration_count(name: str, value: object, count: float) -> int:
    """max(1, ⌈count⌉) for the iteration count implied by argument ``name=value``; ``ValueError`` naming
    ``name`` when it exceeds :data:`MAX_ITERATIONS` (compared before ``ceil``: an inf count never converts)."""
    if not count <= MAX_ITERATIONS:
        raise ValueError(f"{name} must give at most MAX_ITERATIONS={MAX_ITERATIONS} iterations; got {name}={value!r} "
                         f"({count:.4g} iterations)")
    return max(1, math.ceil(count))


def check_iterations(name: str, value: object) -> int:
    """An integer count in [1, :data:`MAX_ITERATIONS`] (steps, epochs, rounds)."""
    count = check_positive_int(name, value)
    if count > MAX_ITERATIONS:
        raise ValueError(f"{name} must be an integer in [1, MAX_ITERATIONS={MAX_ITERATIONS}]; got {value!r}")
    return count


def check_relation_replace_one(relation: str, reason: str) -> str:
    """Refuse any relation but ``"replace_one"``; ``reason`` says why the analysis needs a fixed n."""
    if check_relation("relation", relation) != "replace_one":
        raise ValueError(f"relation must be 'replace_one' ({reason}); got {relation!r}")
    return relation


def check_calibration(calibration: str, paper_reason: str) -> None:
    """Only the accountant route is offered when the paper states σ up to an unspecified constant."""
    check_choice("calibration", calibration, ("accountant", "paper"))
    if calibration == "paper":
        raise ValueError(f"calibration='paper' is not available: {paper_reason}; use calibration='accountant'")


def setup(
    X: object, y: object, *, loss: object, alpha: float, l1: float, constraint: object, radius: Optional[float],
    clip_norm: Optional[float], data_norm_bound: Optional[float], epsilon: Optional[float], delta: float,
    noise_multiplier: Optional[float], loss_params: Optional[dict] = None, penalty: str = "l2",
    layouts: bool = False, classes: Optional[int] = None,
) -> Setup:
    """Validate everything a solver needs; resolve the per-example clip norm C.

    ``clip_norm=None`` uses the Lipschitz constant G of the loss for ‖x‖ ≤ ``data_norm_bound`` (and
    ‖w‖ ≤ the constraint's radius), after checking every row against the bound; clipping at G is then
    a no-op on valid data (a solver may lower the clip below G afterwards, as DP-SRM's default C₁ = 0.85·G does). Without either, ``ValueError``.

    ``penalty="l2"``: r = (alpha/2)‖w‖² + l1‖w‖₁; ``penalty="nonconvex"``: r = alpha·Σⱼ wⱼ²/(1 + wⱼ²)
    + l1‖w‖₁ (wang-jayaraman-evans-gu §7.1; ``alpha`` is its λ).

    ``layouts=True``: the solver's kernels read every row layout of :mod:`algorithms.rows` (CSR kept sparse,
    row scale, intercept column); otherwise ``data.X`` is a dense array (:func:`algorithms._data.prepare_data`).

    ``classes=k`` (k ≥ 3, ``loss="logistic"``): the softmax loss of :mod:`algorithms.multiclass` on labels
    0..k−1; G = √2·R and β = R²/2 replace the binary constants.
    """
    start = time.perf_counter()
    if noise_multiplier is None:
        if epsilon is None:
            raise ValueError("epsilon must be given (in (0, inf]) unless noise_multiplier is")
        check_positive("epsilon", epsilon, allow_inf=True)
    else:
        if epsilon is not None:
            raise ValueError("give either epsilon (calibrated noise) or noise_multiplier (reported ε), not both")
        check_positive("noise_multiplier", noise_multiplier)
    check_delta("delta", delta)
    lossobj = get_loss(loss, **(loss_params or {}))
    check_choice("penalty", penalty, ("l2", "nonconvex"))
    reg = Regularizer(alpha, l1) if penalty == "l2" else Regularizer(0.0, l1, check_nonnegative("alpha", alpha))
    con = get_constraint(constraint, radius)
    if reg.l1 > 0 and con.kind == SIMPLEX:
        # Proj_C ∘ prox_{ηr} is the exact prox of r + I_C for the balls and the box, not for the simplex.
        raise ValueError("l1 must be 0 with constraint='simplex' (‖w‖₁ is constant on the simplex)")
    if classes is not None:
        classes = check_classes(classes, lossobj)
    data = prepare_data(X, y, lossobj.task, data_norm_bound, layouts=layouts, classes=classes)
    lossobj.check_targets(data.y)
    if clip_norm is not None:
        clip = check_positive("clip_norm", clip_norm)
    elif data_norm_bound is None:
        raise ValueError(
            "clip_norm is None and data_norm_bound is None: give clip_norm (per-example gradient clipping) "
            "or data_norm_bound (rows are checked against it and the loss's Lipschitz constant is used)"
        )
    else:
        clip = lossobj.lipschitz(data_norm_bound, con.max_norm(data.d))
        if classes is not None:
            clip *= SOFTMAX_LIPSCHITZ_FACTOR
        if not math.isfinite(clip) or clip <= 0:
            raise ValueError(
                f"loss {lossobj.name!r} has no finite positive Lipschitz constant here ({clip}); give clip_norm"
            )
    smooth = None if data_norm_bound is None else check_smoothness(lossobj.smoothness(data_norm_bound),
                                                                   data_norm_bound)
    if smooth is not None and classes is not None:
        smooth *= SOFTMAX_SMOOTHNESS_FACTOR / lossobj.second_deriv_bound
    return Setup(data, lossobj, reg, con, clip, smooth, start, classes)


def check_classes(classes: object, loss: Loss) -> int:
    """The number k ≥ 3 of classes of a softmax fit (``loss`` must be the logistic loss)."""
    k = check_positive_int("classes", classes)
    if k < 3:
        raise ValueError(f"classes must be an integer >= 3 (the number of classes of a softmax fit; two classes are "
                         f"the binary loss); got {classes!r}")
    if loss.name != "logistic":
        raise ValueError(f"classes (softmax) needs loss='logistic'; got loss={loss.name!r}")
    return k


def check_smoothness(smooth: float, data_norm_bound: float) -> float:
    """The loss smoothness β = c·R² for ``data_norm_bound`` = R, or ``ValueError`` naming data_norm_bound
    when β under- or overflowed float64: a zero, subnormal or infinite β breaks the step rules and the
    ridge and noise formulas built on 1/β."""
    if not sys.float_info.min <= smooth < math.inf:
        raise ValueError(f"data_norm_bound={data_norm_bound!r} gives the loss smoothness {smooth!r}, outside "
                         f"[{sys.float_info.min:.4g}, inf) in float64; rescale X so that its row-norm bound is a "
                         "moderate number")
    return smooth


def logistic_smoothness(data_norm_bound: float, intercept: float) -> float:
    """β = ¼·(R² + c²), the logistic loss's smoothness on rows of norm ≤ R (``data_norm_bound``) with the intercept
    feature c (``intercept``; 0 without one) appended, checked by :func:`check_smoothness` (``ValueError`` naming
    data_norm_bound where it under- or overflows). A step size, not a sensitivity: no rounding direction matters."""
    return check_smoothness(0.25 * (data_norm_bound * data_norm_bound + intercept * intercept), data_norm_bound)


def default_step(learning_rate: Optional[float], s: Setup, factor: float, name: str = "learning_rate") -> float:
    """``learning_rate`` if given, else ``factor / β`` with β the loss smoothness for ‖x‖ ≤ data_norm_bound.

    The default never looks at the data (a step size read off the data would leak).
    """
    if learning_rate is not None:
        return check_positive(name, learning_rate)
    if s.smoothness is None or s.smoothness <= 0:
        raise ValueError(f"{name} is required when data_norm_bound is not given (a data-derived step would leak)")
    return factor / s.smoothness


def calibrated_privacy(
    event_fn: Callable[[float], PrivacyEvent], *, epsilon: Optional[float], delta: float,
    noise_multiplier: Optional[float], relation: str, accountant: str,
) -> Tuple[float, PrivacyEvent, PrivacyResult, Optional[dict]]:
    """(noise multiplier, event, privacy, calibration record).

    ``epsilon = inf`` → noise off, ``NonPrivateEvent``; ``noise_multiplier`` given → its ε is reported;
    otherwise the least multiplier in [``MIN_NOISE_MULTIPLIER`` = 1e-6, ∞) (:mod:`dpcore.calibration`) with
    ε ≤ ``epsilon`` from ``dpcore.calibrate``: a finite ``epsilon`` so loose that the floor meets it
    (ε ≳ 5e11 for one step) gets the floor, with the ε computed there.
    """
    check_relation("relation", relation)
    calibration = None
    if noise_multiplier is None and math.isinf(epsilon):
        z = 0.0
        event: PrivacyEvent = NonPrivateEvent(relation)
    else:
        if noise_multiplier is None:
            from dpcore.calibration import MIN_NOISE_MULTIPLIER

            cal = dpcore.calibrate(
                event_fn, "noise_multiplier", epsilon, delta, lower=0.5, upper=4.0, increasing=False,
                bounds=(MIN_NOISE_MULTIPLIER, math.inf), accountant=accountant,
            )
            z = float(cal.value)
            calibration = cal.to_dict()
            # calibrate's own get_epsilon of event_fn(z) with this accountant, already checked ≤ epsilon
            return z, event_fn(z), cal.privacy, calibration
        z = float(noise_multiplier)
        event = event_fn(z)
    privacy = dpcore.get_epsilon(event, delta, accountant=accountant)
    return z, event, privacy, calibration


def accounted_releases(event: PrivacyEvent) -> Optional[int]:
    """Number of Gaussian-mechanism invocations ``event`` accounts for (None for a non-private event).

    Walks the tree: a self-composition multiplies its child's count, a composition adds, sampling
    wrappers pass through, a ``GaussianEvent`` counts 1.
    """
    if isinstance(event, NonPrivateEvent):
        return None
    if isinstance(event, GaussianEvent):
        return 1
    if isinstance(event, DpSrmEvent):
        return event.steps
    if isinstance(event, SelfComposedEvent):
        return event.count * accounted_releases(event.event)
    if isinstance(event, ComposedEvent):
        return sum(accounted_releases(e) for e in event.events)
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent, TruncatedPoissonSampledEvent,
                          SampledWithReplacementEvent)):
        return accounted_releases(event.event)
    if isinstance(event, RandomAllocationEvent):  # one epoch: num_steps releases
        return event.num_steps * accounted_releases(event.event)
    if isinstance(event, ShuffledBatchesEvent):
        return event.num_batches * accounted_releases(event.event)
    raise ValueError(f"unexpected event in a gradient-perturbation solver: {event!r}")


def check_counts(kernel_releases: int, event: PrivacyEvent) -> None:
    """Refuse to release a model whose kernel made other noisy releases than ``event`` accounts for."""
    accounted = accounted_releases(event)
    if accounted is not None and kernel_releases != accounted:
        raise RuntimeError(f"kernel performed {kernel_releases} noisy releases but the event accounts {accounted}")


def finish(
    name: str, s: Setup, weights: np.ndarray, snapshots: np.ndarray, *, step: float, event: PrivacyEvent,
    privacy: PrivacyResult, z: float, sensitivity: float, grad_evals: int, details: dict, trace: bool,
    sigma: Optional[float] = None,
) -> SolverResult:
    """Assemble the result; traces (diagnostics, not private) are computed after the clock stops. ``sigma``:
    the noise std the kernel drew with (default :func:`mechanisms.base.least_noise_scale` (z, sensitivity),
    the Gaussian solvers' rule)."""
    wall = time.perf_counter() - s.start
    if trace and s.classes is not None:
        obj, gn = softmax_traces(snapshots, s.data.X, s.data.y, s.classes, s.reg, s.constraint, step)
    elif trace:
        obj, gn = traces(snapshots, s.data.X, s.data.y, s.loss, s.reg, s.constraint, step)
    else:
        obj, gn = np.empty(0), np.empty(0)
    details = dict(details)
    details.update(clip_norm=s.clip, sensitivity=sensitivity, label_mapping=s.data.label_mapping,
                   loss=s.loss.name, regularizer=s.reg.name, constraint=s.constraint.name)
    weights = np.asarray(weights)
    if s.classes is not None:
        weights = to_class_major(weights, s.classes, s.data.d)
    return SolverResult(
        weights=weights, privacy=privacy, event=event, objective_trace=obj, grad_norm_trace=gn,
        n_gradient_evaluations=int(grad_evals), wall_time=wall, noise_multiplier=z,
        sigma=least_noise_scale(z, sensitivity) if sigma is None else sigma, solver=name, details=details,
    )


def initial_point(w0: Optional[np.ndarray], s: Setup) -> np.ndarray:
    """``w0`` (default 0) checked and projected onto the constraint set."""
    if w0 is None:
        w = np.zeros(s.n_weights)
    elif s.classes is not None:
        w0 = check_real_array("w0", w0)
        if w0.size != s.n_weights or not np.all(np.isfinite(w0)):
            raise ValueError(f"w0 must be a finite (k, d) = ({s.classes}, {s.data.d}) array")
        w = to_feature_major(w0, s.classes, s.data.d)
    else:
        w = np.array(check_real_array("w0", w0), copy=True).ravel()  # complex refused, not made real
        if w.shape[0] != s.n_weights or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be a finite vector of length d={s.data.d}" if s.classes is None else
                             f"w0 must be a finite (k, d) = ({s.classes}, {s.data.d}) array")
    project_kernel(s.constraint.kind, s.constraint.radius, w)
    return w


def noise_off_result(name: str, s: Setup, w0: Optional[np.ndarray], *, tol: float, event: PrivacyEvent,
                     privacy: PrivacyResult, trace: bool, details: dict) -> SolverResult:
    """``epsilon=inf``: no privacy budget to respect, so instead of the private schedule the solver's
    objective F = mean loss + r over C is minimised to the gradient-mapping tolerance ``tol``
    (:func:`algorithms.objective.minimize_objective`; unclipped gradients — clipping only serves
    privacy). ``details["noise_off"]`` records the method's residual and iteration count."""
    tol = check_positive("tol", tol)
    if s.classes is not None:
        w, gmap, iters, iterates = softmax_minimize(s.data.X, s.data.y, s.classes, s.reg, s.constraint, tol=tol,
                                                    w0=initial_point(w0, s))
    else:
        w, gmap, iters, iterates = minimize_objective(s.data.X, s.data.y, s.loss, s.reg, s.constraint, tol=tol,
                                                      w0=initial_point(w0, s))
    details = dict(details, noise_off={"gradient_mapping_norm": gmap, "iterations": iters, "tol": tol})
    return finish(name, s, w, np.array(iterates), step=1.0 / (s.smoothness or 1.0), event=event, privacy=privacy,
                  z=0.0, sensitivity=0.0, grad_evals=iters * s.data.n, trace=trace, details=details)
