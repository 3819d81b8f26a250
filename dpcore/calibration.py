"""Calibration: the least noise (or the most steps / the largest sampling rate) meeting a target ε.

ε is monotone in every parameter calibrated here (non-increasing in the noise multiplier,
non-decreasing in steps and sampling rate), so a bracketed root finder applies. The result is the
root itself (Brent's method to ``rtol``; exact integer search for step counts), then moved to the
safe side and re-checked: ``get_epsilon(event_fn(value)) ≤ target_epsilon`` holds on return.
This follows the factory design of ``dp_accounting``'s ``mechanism_calibration`` (a function from
parameter to event, solved with Brent's method) with an explicit safe-side guarantee.

For the expensive accountants (``"pld"``, ``"auto"``, which runs the PLD) a continuous parameter
is instead solved by a safeguarded secant in (log value, log ε), where ε is nearly linear: the
``fast`` PLD locates the root cheaply and the requested accountant finishes it to
:data:`LOG_TOLERANCE` in a few full evaluations (:func:`_calibrate_log_secant`). The guarantee is
the same: the returned value's own evaluation with the requested accountant meets the target.

**The contract.** The ε a calibration returns (``result.privacy``, what ``dpcore calibrate``
prints) is the evaluation of the returned value itself — same accountant, same settings and grid,
certified when ``certify=True`` — and it is ≤ the target, always (it is re-checked; a value whose
evaluation misses the target is never returned). The search stops within its tolerance of the
least value meeting the target; the PLD's ε is not exactly monotone in the parameter below its
grid's resolution (~1e-6 relative), so a target met only within that resolution is met by the
returned value, whose ε may then be a little below the target rather than equal to it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Dict, Optional, Tuple

from ._validation import (
    check_choice,
    check_delta,
    check_positive,
    check_positive_int,
    check_relation,
    check_sampling_rate,
)
from .accounting import get_epsilon
from .events import (
    GaussianEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    UnsupportedEventError,
)
from .result import CalibrationResult, PrivacyResult

__all__ = [
    "calibrate",
    "calibrate_noise_multiplier",
    "certify_calibration",
    "calibrate_steps",
    "calibrate_sampling_rate",
    "subsampled_gaussian_event",
]

SAMPLING_SCHEMES = ("poisson", "without_replacement", "none")
#: Largest step count accepted by :func:`subsampled_gaussian_event` (float64 accounting range).
MAX_STEPS = 10**18
#: Least noise multiplier σ/Δ₂ a noise calibration returns (:func:`calibrate_noise_multiplier`,
#: the solvers): one Gaussian step at it is already only (ε ≈ 5e11, δ = 1e-5)-DP, so a target this
#: loose is met on the whole search domain and the floor is returned instead of searching toward 0
MIN_NOISE_MULTIPLIER = 1e-6


def calibrate(
    event_fn: Callable[[float], PrivacyEvent],
    parameter: str,
    target_epsilon: float,
    delta: float,
    *,
    lower: float,
    upper: float,
    increasing: bool,
    bounds: Tuple[float, float] = (0.0, math.inf),
    accountant: str = "auto",
    integer: bool = False,
    rtol: float = 1e-12,
    max_expansions: int = 200,
    certify: bool = False,
) -> CalibrationResult:
    """Solve ``get_epsilon(event_fn(v), delta).epsilon = target_epsilon`` for ``v`` on the safe side.

    Parameters
    ----------
    event_fn : callable
        Maps the parameter value to the privacy event of the algorithm run with it.
    parameter : str
        Name of the parameter (reported in the result).
    target_epsilon : float
        Target ε in (0, ∞), nats.
    delta : float
        Target δ in (0, 1).
    lower, upper : float
        Initial bracket; expanded geometrically (within ``bounds``) until it straddles the target.
    increasing : bool
        True if ε grows with the parameter (steps, sampling rate): the result is the *largest* value
        with ε ≤ target. False if ε shrinks with it (noise): the result is the *smallest* such value.
    bounds : (float, float)
        Hard limits of the parameter's domain; the bracket never leaves them.
    accountant : str
        Passed to :func:`dpcore.get_epsilon`.
    integer : bool
        Search integers only (exact bisection).
    rtol : float
        Relative tolerance of the root (continuous parameters, Brent's method). For ``"pld"`` and
        ``"auto"`` (log-secant solver, ``max_expansions`` replaced by :data:`MAX_EVALUATIONS`) it
        applies in log(value) where the bound comes from a smooth accountant, and
        :data:`LOG_TOLERANCE` where it comes from the PLD.
    certify : bool
        Evaluate the returned value with ``certify=True`` (:func:`dpcore.get_epsilon`); that
        certified evaluation is the returned ``privacy`` and is re-checked against the target.

    Returns
    -------
    CalibrationResult
        ``value`` with ``privacy.epsilon ≤ target_epsilon`` (re-checked; ``privacy`` is the
        evaluation of ``value`` itself, module docstring).

    Raises
    ------
    ValueError
        If no value in ``bounds`` meets the target.
    """
    from scipy.optimize import brentq  # deferred: keeps ``import dpcore`` and the CLI fast

    target = check_positive("target_epsilon", target_epsilon)
    delta = check_delta("delta", delta)
    lo_bound, hi_bound = bounds
    if not (lo_bound <= lower < upper <= hi_bound):
        raise ValueError(f"need bounds[0] <= lower < upper <= bounds[1]; got {bounds}, {lower}, {upper}")
    if not integer and accountant in LOG_SECANT_ACCOUNTANTS and lo_bound >= 0.0 and lower > 0.0:
        # a positive parameter (a noise multiplier, a scale): root-finding in its logarithm
        from .pld.accountant import memoised  # deferred: the PLD package loads on first use

        with memoised():  # "auto" re-runs the fast PLD at the points the proxy visited
            return _calibrate_log_secant(event_fn, parameter, target, delta, lower=lower, upper=upper,
                                         increasing=increasing, bounds=bounds, accountant=accountant, rtol=rtol,
                                         certify=certify)
    evaluations = 0

    def eps(v: float) -> float:
        nonlocal evaluations
        evaluations += 1
        return get_epsilon(event_fn(int(v) if integer else v), delta, accountant=accountant).epsilon

    # Orient so that `safe` (ε ≤ target) and `unsafe` (ε > target) bracket the root.
    # For decreasing ε the safe side is large values; for increasing ε it is small values.
    def expand(v: float, toward_low: bool) -> float:
        if toward_low:
            nxt = max(v / 2.0, lo_bound) if lo_bound > 0 else v / 2.0
        else:
            nxt = min(v * 2.0, hi_bound)
        return math.floor(nxt) if integer and toward_low else (math.ceil(nxt) if integer else nxt)

    safe_end, unsafe_end = (lower, upper) if increasing else (upper, lower)
    safe_toward_low = increasing
    for _ in range(max_expansions):
        if eps(safe_end) <= target:
            break
        nxt = expand(safe_end, safe_toward_low)
        if nxt == safe_end or (integer and nxt < 1):
            raise ValueError(
                f"target_epsilon={target} at delta={delta} cannot be met for {parameter} in {bounds}"
            )
        unsafe_end, safe_end = safe_end, nxt
    else:
        raise ValueError(f"target_epsilon={target} cannot be met for {parameter} in {bounds}")
    for _ in range(max_expansions):
        if eps(unsafe_end) > target:
            break
        nxt = expand(unsafe_end, not safe_toward_low)
        if nxt == unsafe_end:
            # The whole domain on that side meets the target: the domain limit is the answer.
            return _result(parameter, unsafe_end, target, delta, event_fn, accountant, evaluations, (lower, upper),
                           certify)
        safe_end, unsafe_end = unsafe_end, nxt
    else:
        raise ValueError(f"could not bracket the target for {parameter} within {bounds}")

    if integer:
        value = _integer_search(eps, int(safe_end), int(unsafe_end), target)
    else:
        root = brentq(lambda v: eps(v) - target, min(safe_end, unsafe_end), max(safe_end, unsafe_end),
                      rtol=rtol, xtol=1e-300, maxiter=200)
        value = _move_to_safe_side(eps, root, safe_end, target, rtol)
    return _result(parameter, value, target, delta, event_fn, accountant, evaluations, (lower, upper), certify)


#: accountants whose ε evaluation is expensive (PLD FFTs): calibrated by :func:`_calibrate_log_secant`
LOG_SECANT_ACCOUNTANTS = ("pld", "auto")
#: tolerance of the root in log(value) for the accountant (σ to ~4e-6 relative; PLD's ε jitters at
#: about that level as the grid follows σ) and for the cheap proxy that locates it
LOG_TOLERANCE = 4e-6
PROXY_LOG_TOLERANCE = 1e-4
#: largest step in log(value) of one extrapolation (a factor e³ ≈ 20)
MAX_LOG_STEP = 3.0
MAX_EVALUATIONS = 60


def _calibrate_log_secant(event_fn: Callable[[float], PrivacyEvent], parameter: str, target: float, delta: float,
                          *, lower: float, upper: float, increasing: bool, bounds: Tuple[float, float],
                          accountant: str, rtol: float, certify: bool = False) -> CalibrationResult:
    """Continuous calibration for expensive accountants: secant in (log value, log ε), two stages.

    1. A cheap *proxy* — the ``fast`` PLD upper bound (:func:`dpcore.pld.pld_epsilon`), a coarser
       grid — locates the root to :data:`PROXY_LOG_TOLERANCE` and measures the slope
       d log ε / d log value (log ε is nearly linear in log σ, so the secant needs few steps).
    2. The requested ``accountant`` is solved from there with that slope: typically 2–3
       evaluations, each a full certified evaluation, to :data:`LOG_TOLERANCE` — the PLD's ε
       jitters at about that level as its grid follows the parameter. When the bound there comes
       from another accountant (``"auto"`` choosing RDP or an exact profile: smooth and cheap), the
       secant goes on to ``rtol``.

    Only a value whose own ``get_epsilon(event_fn(value), delta, accountant)`` ≤ target is
    returned (its evaluation is the re-check reported in the result); the proxy only chooses where
    to evaluate. If the proxy cannot analyse the event, stage 2 starts from the bracket.
    ``iterations`` of the result counts the evaluations of both stages.
    """
    lo_bound, hi_bound = bounds
    sign = 1.0 if increasing else -1.0  # y = sign·log(value): ε increases with y
    ys = sorted(sign * math.log(b) if b > 0 else -sign * math.inf for b in (lo_bound, hi_bound))
    ylo, yhi = ys
    counts = {"target": 0, "proxy": 0}
    results: Dict[float, PrivacyResult] = {}

    def value(y: float) -> float:
        if y >= yhi:
            return hi_bound if increasing else lo_bound
        if y <= ylo:
            return lo_bound if increasing else hi_bound
        return min(max(math.exp(sign * y), lo_bound), hi_bound)

    def excess(eps: float) -> float:
        if math.isnan(eps):
            raise ArithmeticError(f"the accountant returned epsilon = nan at a {parameter} in the bracket")
        if not eps > 0.0:
            return -math.inf
        return math.log(eps / target) if math.isfinite(eps) else math.inf

    def target_excess(y: float) -> float:
        v = value(y)
        if v not in results:
            counts["target"] += 1
            try:
                results[v] = get_epsilon(event_fn(v), delta, accountant=accountant)
            except UnsupportedEventError as exc:  # e.g. the PLD's work limits at a tiny noise multiplier
                raise UnsupportedEventError(
                    f"target_epsilon={target} at delta={delta} leads the search to {parameter}={v:.6g}, where the "
                    f"{accountant!r} accountant refuses the event: {exc}") from exc
        return excess(results[v].epsilon)

    proxy = _pld_proxy(event_fn, delta, counts)
    start = sign * math.log(lower if increasing else upper)
    try:
        start, slope = _log_secant(lambda y: excess(proxy(value(y))), start, 1.0, ylo, yhi,
                                   PROXY_LOG_TOLERANCE, parameter)
    except (ArithmeticError, ValueError):  # incl. UnsupportedEventError: the proxy gives no guidance
        slope = 1.0
    y, slope = _log_secant(target_excess, start, slope, ylo, yhi, LOG_TOLERANCE, parameter)
    if results[value(y)].accountant != "pld" and rtol < LOG_TOLERANCE:
        y, _ = _log_secant(target_excess, y, slope, ylo, yhi, rtol, parameter)
    v = value(y)
    privacy = (_certified(event_fn, parameter, v, target, delta, accountant) if certify
               else _checked(results[v], parameter, v, target))
    return CalibrationResult(
        parameter=parameter, value=v, target_epsilon=target, target_delta=delta, privacy=privacy,
        iterations=counts["target"] + counts["proxy"], bracket=(lower, upper),
    )


def _pld_proxy(event_fn: Callable[[float], PrivacyEvent], delta: float, counts: Dict[str, int],
               ) -> Callable[[float], float]:
    """Value ↦ ε of the ``fast`` PLD (a certified upper bound on a coarser grid); it raises
    :class:`~dpcore.events.UnsupportedEventError` for events the PLD cannot analyse."""
    from .pld import pld_epsilon  # deferred: accounting dispatches to the PLD package lazily too

    def proxy(v: float) -> float:
        counts["proxy"] += 1
        return pld_epsilon(event_fn(v), delta, fast=True).epsilon

    return proxy


def _log_secant(excess: Callable[[float], float], y: float, slope: float, ylo: float, yhi: float, ytol: float,
                parameter: str) -> Tuple[float, float]:
    """Largest ``y`` in [ylo, yhi] with ``excess(y) ≤ 0`` to within ``ytol``; ``excess`` non-decreasing.

    Safeguarded secant from the evaluated point ``y`` with the slope guess ``slope`` > 0 (replaced
    by the slope through the last two evaluations): steps aim half a tolerance below the estimated
    root, from the bracket end nearer to it; once the root is bracketed, a step that leaves the
    bracket, or the third running that does not halve it, is replaced by a bisection. Stops at a
    safe point (excess ≤ 0) when an unsafe point lies within ``ytol`` above it or the estimated
    distance to the root (from a slope measured between two evaluations, never the guess alone) is
    below ``ytol``.
    Returns (y, last measured slope). ``ValueError`` if even ``ylo`` exceeds the target.
    """
    points = {}

    def ev(x: float) -> float:
        if x not in points:
            points[x] = excess(x)
        return points[x]

    e = ev(y)
    last = (y, e)
    measured_slope = False
    stalled = 0
    width = math.inf
    for _ in range(MAX_EVALUATIONS):
        safe = max((p for p in points.items() if p[1] <= 0.0), default=None)
        unsafe = min((p for p in points.items() if p[1] > 0.0), default=None)
        if safe is not None and unsafe is not None and unsafe[0] - safe[0] <= ytol:
            return safe[0], slope
        if measured_slope and safe is not None and math.isfinite(safe[1]) and -safe[1] / slope <= ytol:
            return safe[0], slope
        if unsafe is None and safe[0] >= yhi:
            return safe[0], slope  # the whole domain on that side meets the target
        if safe is None and unsafe[0] <= ylo:
            raise ValueError(f"the target epsilon cannot be met for {parameter} within its bounds")
        if safe is not None and unsafe is not None:
            new_width = unsafe[0] - safe[0]
            stalled = stalled + 1 if new_width > 0.5 * width else 0
            width = new_width
            near = safe if -safe[1] <= unsafe[1] else unsafe  # secant step from the nearer end
            x = near[0] - near[1] / slope - 0.5 * ytol
            margin = min(0.5 * ytol, 0.25 * width)
            if stalled >= 3 or not (math.isfinite(x) and safe[0] + margin <= x <= unsafe[0] - margin):
                x = 0.5 * (safe[0] + unsafe[0])
                stalled = 0
        else:
            base = safe if safe is not None else unsafe
            if math.isfinite(base[1]):
                step = -base[1] / slope - 0.5 * ytol
                step = math.copysign(min(max(abs(step), 0.5 * ytol), MAX_LOG_STEP), step if step else 1.0)
            else:
                step = MAX_LOG_STEP * (1.0 if base is safe else -1.0)
            x = min(max(base[0] + step, ylo), yhi)
        e = ev(x)
        if math.isfinite(e) and math.isfinite(last[1]) and x != last[0]:
            measured = (e - last[1]) / (x - last[0])
            if measured > 0.0:
                slope, measured_slope = measured, True
        last = (x, e)
    safe = max((p for p in points.items() if p[1] <= 0.0), default=None)
    if safe is None:
        raise ArithmeticError(f"calibration of {parameter} did not converge")
    return safe[0], slope


def _integer_search(eps: Callable[[float], float], safe: int, unsafe: int, target: float) -> int:
    """Exact bisection between a safe and an unsafe integer."""
    while abs(unsafe - safe) > 1:
        mid = (safe + unsafe) // 2
        if eps(mid) <= target:
            safe = mid
        else:
            unsafe = mid
    return safe


def _move_to_safe_side(eps: Callable[[float], float], root: float, safe: float, target: float, rtol: float) -> float:
    """Step from ``root`` toward the known-safe endpoint until ε ≤ target (at most the endpoint)."""
    if eps(root) <= target:
        return root
    step = 4 * rtol
    while True:
        candidate = root + (safe - root) * min(1.0, step)
        if step >= 1.0 or eps(candidate) <= target:
            return candidate if step < 1.0 else safe
        step *= 4


def _checked(privacy: PrivacyResult, parameter: str, value: float, target: float) -> PrivacyResult:
    """``privacy`` if its ε meets the target — the re-check that makes the guarantee."""
    if not privacy.epsilon <= target:
        raise ArithmeticError(f"calibration result {parameter}={value} gives epsilon={privacy.epsilon} > {target}")
    return privacy


def _certified(event_fn: Callable[[float], PrivacyEvent], parameter: str, value: float, target: float, delta: float,
               accountant: str) -> PrivacyResult:
    """The certified evaluation (``certify=True``) of ``value`` under ``accountant``, re-checked ≤ target."""
    return _checked(get_epsilon(event_fn(value), delta, accountant=accountant, certify=True), parameter, value, target)


def certify_calibration(result: CalibrationResult, event_fn: Callable[[float], PrivacyEvent],
                        accountant: str) -> CalibrationResult:
    """``result`` (of a calibration run with ``certify=False``) with ``privacy`` replaced by the certified
    evaluation of its value under the same ``accountant`` — what ``certify=True`` returns — re-checked
    against the target (``ArithmeticError`` if it misses it). Lets a caller show the certification
    as a stage of its own (``dpcore calibrate``)."""
    return dataclasses.replace(result, privacy=_certified(event_fn, result.parameter, result.value,
                                                          result.target_epsilon, result.target_delta, accountant))


def _result(parameter, value, target, delta, event_fn, accountant, evaluations, bracket,
            certify: bool = False) -> CalibrationResult:
    privacy = (_certified(event_fn, parameter, value, target, delta, accountant) if certify else
               _checked(get_epsilon(event_fn(value), delta, accountant=accountant), parameter, value, target))
    return CalibrationResult(
        parameter=parameter, value=value, target_epsilon=target, target_delta=delta,
        privacy=privacy, iterations=evaluations, bracket=bracket,
    )


def subsampled_gaussian_event(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    *,
    sampling: str = "poisson",
    dataset_size: Optional[int] = None,
    relation: Optional[str] = None,
) -> PrivacyEvent:
    """Event of ``steps`` compositions of a (subsampled) Gaussian mechanism.

    Parameters
    ----------
    noise_multiplier : float
        σ / Δ₂, with Δ₂ the sensitivity under ``relation``.
    sampling_rate : float
        q in (0, 1]; for ``"without_replacement"`` the batch is q·dataset_size (must be an integer).
    steps : int
        Number of compositions T ≥ 1.
    sampling : {"poisson", "without_replacement", "none"}
    dataset_size : int, optional
        n, required for ``"without_replacement"``.
    relation : {"add_remove", "replace_one"}, optional
        Default: ``"add_remove"`` for Poisson and no sampling, ``"replace_one"`` without replacement
        (the relations the amplification theorems are proved for).
    """
    sampling = check_choice("sampling", sampling, SAMPLING_SCHEMES)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    if steps > MAX_STEPS:
        raise ValueError(f"steps must be an integer in [1, {MAX_STEPS:.0e}]; got {steps}")
    if relation is None:
        relation = "replace_one" if sampling == "without_replacement" else "add_remove"
    relation = check_relation("relation", relation)
    base = GaussianEvent(noise_multiplier, relation)
    if sampling == "none" or (sampling == "poisson" and q == 1.0):
        step_event: PrivacyEvent = base
    elif sampling == "poisson":
        step_event = PoissonSampledEvent(base, q)
    else:
        if dataset_size is None:
            raise ValueError("dataset_size is required for sampling='without_replacement'")
        n = check_positive_int("dataset_size", dataset_size)
        batch = q * n
        if abs(batch - round(batch)) > 1e-9 * max(1.0, batch) or round(batch) < 1:
            raise ValueError(
                f"sampling_rate * dataset_size must be a whole batch size >= 1; got {q} * {n} = {batch}"
            )
        step_event = SampledWithoutReplacementEvent(base, int(round(batch)), n)
    return step_event if steps == 1 else SelfComposedEvent(step_event, steps)


def calibrate_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    sampling_rate: float = 1.0,
    steps: int = 1,
    sampling: str = "poisson",
    dataset_size: Optional[int] = None,
    relation: Optional[str] = None,
    accountant: str = "auto",
    certify: bool = False,
) -> CalibrationResult:
    """Least noise multiplier σ/Δ₂ such that ``steps`` (subsampled) Gaussian steps are (ε, δ)-DP.

    See :func:`subsampled_gaussian_event` for the parameters. ``accountant`` and ``certify`` as in
    :func:`dpcore.get_epsilon` (the returned ``privacy`` is the evaluation of the returned σ with
    them, ≤ the target: :func:`calibrate`). σ is searched in [:data:`MIN_NOISE_MULTIPLIER`, 1e8]:
    a target met by the whole range returns the floor; ``ValueError`` if even 1e8 misses it.
    """
    event_fn = lambda s: subsampled_gaussian_event(  # noqa: E731
        s, sampling_rate, steps, sampling=sampling, dataset_size=dataset_size, relation=relation)
    event_fn(1.0)  # validate the fixed arguments before searching
    return calibrate(event_fn, "noise_multiplier", target_epsilon, delta, lower=0.5, upper=2.0,
                     increasing=False, bounds=(MIN_NOISE_MULTIPLIER, 1e8), accountant=accountant, certify=certify)


def calibrate_steps(
    target_epsilon: float,
    delta: float,
    *,
    noise_multiplier: float,
    sampling_rate: float = 1.0,
    sampling: str = "poisson",
    dataset_size: Optional[int] = None,
    relation: Optional[str] = None,
    accountant: str = "auto",
    max_steps: int = 10**9,
    certify: bool = False,
) -> CalibrationResult:
    """Largest number of steps T ≤ ``max_steps`` such that the run is (ε, δ)-DP (``certify`` as in
    :func:`calibrate_noise_multiplier`)."""
    event_fn = lambda t: subsampled_gaussian_event(  # noqa: E731
        noise_multiplier, sampling_rate, int(t), sampling=sampling, dataset_size=dataset_size, relation=relation)
    event_fn(1)
    max_steps = check_positive_int("max_steps", max_steps, minimum=2)
    return calibrate(event_fn, "steps", target_epsilon, delta, lower=1, upper=2, increasing=True,
                     bounds=(1, max_steps), accountant=accountant, integer=True, certify=certify)


def calibrate_sampling_rate(
    target_epsilon: float,
    delta: float,
    *,
    noise_multiplier: float,
    steps: int,
    relation: Optional[str] = None,
    accountant: str = "auto",
    certify: bool = False,
) -> CalibrationResult:
    """Largest Poisson sampling rate q ∈ (0, 1] such that ``steps`` subsampled Gaussian steps are (ε, δ)-DP
    (``certify`` as in :func:`calibrate_noise_multiplier`)."""
    event_fn = lambda q: subsampled_gaussian_event(  # noqa: E731
        noise_multiplier, q, steps, sampling="poisson", relation=relation)
    event_fn(0.5)
    return calibrate(event_fn, "sampling_rate", target_epsilon, delta, lower=1e-4, upper=1e-2, increasing=True,
                     bounds=(1e-12, 1.0), accountant=accountant, certify=certify)
