"""Private selection: run a private algorithm a random number of times and release only the best run.

Hyper-parameters chosen on the private data are part of the mechanism. The repeat-and-select
algorithm of Liu & Talwar (STOC 2019, "Private selection from private candidates") and Papernot &
Steinke (ICLR 2022, "Hyperparameter tuning with Rényi differential privacy", arXiv 2110.03620)
makes that choice private at a modest cost:

1. draw the number of runs K from a distribution fixed in advance (independent of the data);
2. run the private candidate Q K times — each run picks its hyper-parameters at random (its own
   randomness), trains, and scores itself *privately* (the score is part of Q's output, so Q's
   event must include the score's release);
3. release only the best run's output (and nothing about the others).

:class:`RepeatAndSelectEvent` describes steps 1–3 around any inner event (the event of one run of
Q) and draws K itself (:meth:`RepeatAndSelectEvent.sample_count`), so the event that is accounted
is the one whose distribution ran. Distributions (the ``shape`` η of Papernot & Steinke):

* ``shape = math.inf`` — K ~ Poisson(μ), μ = ``mean`` (K = 0 is possible: nothing is released);
* ``shape = η ∈ (−1, ∞)`` — K ~ the truncated negative binomial D_{η,γ} (K ≥ 1),
  P(K = k) ∝ (1 − γ)^k·Γ(k + η)/(Γ(η)·k!) for k ≥ 1, with γ ∈ (0, 1] solved from ``mean``;
  η = 1 is the geometric distribution P(K = k) = γ(1 − γ)^{k−1} (Liu & Talwar's random stopping:
  after every run stop with probability γ), η = 0 the logarithmic distribution
  P(K = k) = (1 − γ)^k/(k·log(1/γ)).

Accounting (the neighbouring relation is the inner event's):

* **RDP, truncated negative binomial** — Papernot & Steinke, Theorem 2: if Q is (λ, ε)- and
  (λ̂, ε̂)-RDP (λ > 1, λ̂ ≥ 1), the selection is (λ, ε′)-RDP with
  ε′ = ε + (1 + η)(1 − 1/λ̂)ε̂ + (1 + η)·log(1/γ)/λ̂ + log(E[K])/(λ − 1); the paper's corollaries are
  its cases η = 0 (logarithmic) and η = 1 (geometric). dpcore takes the least value over the
  default order grid (plus orders near 1) as λ̂ — every λ̂ gives a valid bound.
* **RDP, Poisson** — Papernot & Steinke, Theorem 6: if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with
  e^{ε̂} ≤ 1 + 1/(λ − 1), the selection is (λ, ε′)-RDP with ε′ = ε + μ·δ̂ + log(μ)/(λ − 1). dpcore
  takes ε̂ = log(1 + 1/(λ − 1)) rounded down and δ̂ the library's RDP → (ε̂, δ̂) bound of Q (rounded up).
* **Pure DP** (the ``"composition"`` accountant), truncated negative binomial around a pure ε-DP Q:
  (2 + η)·ε — the limit λ, λ̂ → ∞ of Theorem 2 (D_∞ = lim D_λ); for the geometric distribution
  this is Liu & Talwar's Theorem 3.1 (3ε). Not available for Poisson (its δ̂ term does not vanish).

Every RDP value is rounded up (a relative margin of 2⁻⁴⁰, as the other closed forms), and the RDP
result is converted to (ε, δ) by the library's conversion (``dpcore.conversions``); certification
(``certify=True``) recomputes the formulas in mpmath (:func:`mp_repeat_and_select_rdp`). The PLD
accountant does not analyse this event (the results above are RDP / pure-DP results); under
``accountant="auto"`` it is skipped as unsupported.

Calibration with the selection's cost included: :func:`calibrate_selected_noise_multiplier` (and
``dpcore calibrate --tune-candidates K --tune-distribution …``) finds the noise of each run such
that the whole tuned run meets the target, and reports the share of one run and of the selection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ._jit import jit
from ._validation import _as_real, check_choice, check_positive
from .events import PrivacyEvent, _checked_event, _WrapperEvent
from .orders import DEFAULT_ORDERS
from .rdp._numerics import inflate

__all__ = [
    "RepeatAndSelectEvent",
    "SELECTION_DISTRIBUTIONS",
    "selection_event",
    "liu_talwar_selection",
    "repeat_and_select_rdp",
    "pure_selection_epsilon",
    "mp_repeat_and_select_rdp",
    "calibrate_selected_noise_multiplier",
]

#: Named distributions of the number of runs and their shape η (``math.inf`` = Poisson).
SELECTION_DISTRIBUTIONS = {"poisson": math.inf, "geometric": 1.0, "logarithmic": 0.0,
                           "truncated_negative_binomial": None}

#: Orders λ̂ near 1 added to the default grid for the min over λ̂ in Theorem 2 (small λ̂ make its
#: log(1/γ)/λ̂ term largest but its (1 − 1/λ̂)ε̂ term smallest; every λ̂ ≥ 1 is valid).
_SMALL_ORDERS = np.array([1.0001, 1.001, 1.01, 1.02, 1.05])
_LAMBDA_HAT_GRID = np.unique(np.concatenate([_SMALL_ORDERS, DEFAULT_ORDERS]))
#: Largest mean number of runs accepted (the sampler draws K one by one; far beyond any tuning run).
MAX_MEAN = 1e9


def _log_inverse_gamma(gamma: float) -> float:
    return -math.log(gamma)


#: log of float64's smallest normal number: γ below it is refused (it would underflow, or lose its digits).
_LOG_TINY = math.log(2.2250738585072014e-308)


def _x_over_expm1(x: float) -> float:
    """x/(eˣ − 1), stable for every float x: 1 at x = 0 and for |x| below the subnormal range, e^{−x}·x/(1 − e^{−x})
    for large x (no overflow)."""
    if x == 0.0:
        return 1.0
    if x > 700.0:
        return x * math.exp(-x) / -math.expm1(-x)
    return x / math.expm1(x)


def _eta_ratio(log_g: float, shape: float) -> float:
    """η/(γ^{−η} − 1) for log γ < 0, written (−η·log γ)/(e^{−η log γ} − 1)/(−log γ) so that every η — tiny
    (1e-320: no division by an underflowed γ^{−η} − 1), 0 (the logarithmic limit 1/log(1/γ)) or near −1 —
    keeps its digits."""
    return _x_over_expm1(-shape * log_g) / -log_g


def _log_tnb_mean(log_g: float, shape: float) -> float:
    """log E[K] of the truncated negative binomial D_{η,γ} (Papernot & Steinke, §2) from L = log γ ≤ 0.

    E[K] = η(1 − γ)/(γ(1 − γ^η)) and, with x = η·L, η/(1 − γ^η) = (x/(eˣ − 1))/(−L), so
    log E[K] = log(1 − γ) − L + log(x/(eˣ − 1)) − log(−L) (η = 0: x = 0, the logarithmic (1/γ − 1)/log(1/γ)):
    stable for γ far below the float64 range, η near −1 and tiny η (no division by an underflowed 1 − γ^η)."""
    if log_g >= 0.0:
        return 0.0
    x = shape * log_g
    return math.log(-math.expm1(log_g)) - log_g + math.log(_x_over_expm1(x)) - math.log(-log_g)


def _tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial D_{η,γ} (:func:`_log_tnb_mean`)."""
    if gamma >= 1.0:
        return 1.0
    return math.exp(_log_tnb_mean(math.log(gamma), shape))


def _solve_gamma(mean: float, shape: float) -> float:
    """γ ∈ (0, 1] with E[K] = ``mean`` for D_{η,γ}, by bisection in log γ (E[K] decreases in γ).

    The returned γ is the one the sampler uses and the accountant charges (both read it from the
    event), so the root's accuracy only moves E[K] by a few ulps; the accountant uses E[K] of this γ.
    A γ below float64's smallest normal number (η near −1 needs γ ≈ mean^{−1/(1+η)}) is refused."""
    if mean == 1.0:
        return 1.0
    target = math.log(mean)
    lo, hi = _LOG_TINY, 0.0  # log γ bracket: E[K] at lo must reach the mean
    if _log_tnb_mean(lo, shape) < target:
        raise ValueError(f"shape must be farther from -1, or the mean number of runs smaller: for mean {mean!r} and "
                         f"shape {shape!r} the truncated negative binomial's gamma is below float64's smallest "
                         f"normal number 2.2e-308; got shape={shape!r}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _log_tnb_mean(mid, shape) >= target:
            lo = mid
        else:
            hi = mid
    gamma = math.exp(lo)
    if not abs(_tnb_mean(gamma, shape) - mean) <= 1e-9 * mean:  # γ rounds to 1 (η huge): K ≡ 1, not this mean
        raise ValueError(f"shape must be smaller for mean {mean!r}: with shape {shape!r} the truncated negative "
                         f"binomial's gamma rounds to 1 in float64 (E[K] would be {_tnb_mean(gamma, shape)!r}, not "
                         f"{mean!r}); got shape={shape!r}")
    return gamma


@dataclass(frozen=True)
class RepeatAndSelectEvent(_WrapperEvent):
    """Run ``event``'s mechanism K times (K random, data-independent) and release only the best run.

    Parameters
    ----------
    event : PrivacyEvent
        The event of ONE run of the candidate Q, including the private release of its score
        (e.g. the training event composed with a Laplace / Gaussian score).
    mean : float
        E[K] ≥ 1, the mean number of runs (for the truncated negative binomial the γ solving
        E[K] = mean is stored in ``gamma``; the accountant charges E[K] of that γ, ``expected_count``).
    shape : float
        η ∈ (−1, ∞) for the truncated negative binomial (0 logarithmic, 1 geometric — the
        default), or ``math.inf`` for K ~ Poisson(mean).

    Attributes
    ----------
    gamma : float or None
        γ of the truncated negative binomial (1.0: K ≡ 1); None for Poisson.
    """

    event: PrivacyEvent
    mean: float
    shape: float
    gamma: Optional[float]

    def __init__(self, event: PrivacyEvent, mean: float, shape: float = 1.0) -> None:
        mean_f = _as_real("mean", mean)
        if not 1.0 <= mean_f <= MAX_MEAN:
            raise ValueError(f"mean must be in [1, {MAX_MEAN:g}] (the mean number of runs); got {mean!r}")
        shape_f = _as_real("shape", shape)
        if not shape_f > -1.0:
            raise ValueError(f"shape must be in (-1, inf] (eta of the truncated negative binomial; inf = Poisson); "
                             f"got {shape!r}")
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "mean", mean_f)
        object.__setattr__(self, "shape", shape_f)
        object.__setattr__(self, "gamma", None if math.isinf(shape_f) else _solve_gamma(mean_f, shape_f))

    @property
    def distribution(self) -> str:
        """``"poisson"``, ``"geometric"``, ``"logarithmic"`` or ``"truncated_negative_binomial"``."""
        for name, eta in SELECTION_DISTRIBUTIONS.items():
            if eta is not None and eta == self.shape:
                return name
        return "truncated_negative_binomial"

    @property
    def expected_count(self) -> float:
        """E[K] of the distribution that runs (for the truncated negative binomial: of ``gamma``)."""
        return self.mean if math.isinf(self.shape) else _tnb_mean(self.gamma, self.shape)

    def sample_count(self, rng: np.random.Generator) -> int:
        """Draw K (independent of the data) from this event's distribution with ``rng``.

        Poisson: ``rng.poisson(mean)``. Truncated negative binomial: inversion of its CDF with one
        uniform, the pmf from p(1) = η(1 − γ)/(γ^{−η} − 1) (η = 0: (1 − γ)/log(1/γ)) and
        p(k + 1) = p(k)(1 − γ)(k + η)/(k + 1)."""
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator; got {rng!r}")
        if math.isinf(self.shape):
            return int(rng.poisson(self.mean))
        if self.gamma >= 1.0:
            return 1
        u = float(rng.random())
        g, eta = self.gamma, self.shape
        p = -math.expm1(math.log(g)) * _eta_ratio(math.log(g), eta)  # p(1) = η(1 − γ)/(γ^{−η} − 1)
        return int(_tnb_inversion_kernel(u, g, eta, p))


@jit
def _tnb_inversion_kernel(u, g, eta, p):  # pragma: no cover - compiled
    """The least k with Σ_{j≤k} p(j) ≥ u, from p = p(1) by p(k + 1) = p(k)(1 − γ)(k + η)/(k + 1)
    (stops where the pmf underflows). Work O(k): E[K] = 1e9 draws in about a second compiled."""
    k = 1
    cdf = p
    while cdf < u and p > 0.0:
        p *= (1.0 - g) * (k + eta) / (k + 1)
        k += 1
        cdf += p
    return k


def selection_event(event: PrivacyEvent, candidates: float, distribution: str = "geometric",
                    shape: Optional[float] = None) -> RepeatAndSelectEvent:
    """The repeat-and-select event of ``candidates`` runs on average of ``event``.

    Parameters
    ----------
    event : PrivacyEvent
        One run of the candidate (training and its private score).
    candidates : float
        Mean number of runs E[K] ≥ 1.
    distribution : {"poisson", "geometric", "logarithmic", "truncated_negative_binomial"}
        The distribution of K; ``"truncated_negative_binomial"`` needs ``shape`` (η ∈ (−1, ∞)).
    shape : float, optional
        η for ``"truncated_negative_binomial"`` only.
    """
    distribution = check_choice("distribution", distribution, tuple(SELECTION_DISTRIBUTIONS))
    eta = SELECTION_DISTRIBUTIONS[distribution]
    if eta is None:
        if shape is None:
            raise ValueError("shape (eta in (-1, inf)) is required for distribution='truncated_negative_binomial'")
        eta = shape
    elif shape is not None and shape != eta:
        raise ValueError(f"shape={shape!r} contradicts distribution={distribution!r} (shape {eta:g})")
    return RepeatAndSelectEvent(event, candidates, eta)


def liu_talwar_selection(event: PrivacyEvent, stop_probability: float) -> RepeatAndSelectEvent:
    """Liu & Talwar's random stopping (STOC 2019, Alg. 1 / Thm 3.1): after each run of ``event`` stop
    with probability γ = ``stop_probability`` ∈ (0, 1] and release the best run so far — K geometric
    with mean 1/γ (``shape=1``). A pure ε-DP candidate gives a 3ε-DP selection (``"composition"``
    accountant); any candidate with an RDP curve is accounted by Papernot & Steinke's Theorem 2."""
    g = _as_real("stop_probability", stop_probability)
    if not 0.0 < g <= 1.0:
        raise ValueError(f"stop_probability must be in (0, 1]; got {stop_probability!r}")
    return RepeatAndSelectEvent(event, 1.0 / g, 1.0)


# ------------------------------------------------------------------------------------------ RDP


def _lambda_hat_term(gamma: float, shape: float, inner_rdp: Callable[[np.ndarray], np.ndarray]) -> float:
    """(1 + η)·min over λ̂ of [(1 − 1/λ̂)ε̂(λ̂) + log(1/γ)/λ̂] (Theorem 2), rounded up."""
    grid = _LAMBDA_HAT_GRID
    values = (1.0 - 1.0 / grid) * inner_rdp(grid) + _log_inverse_gamma(gamma) / grid
    return float(inflate(np.array([(1.0 + shape) * float(np.min(values))]))[0])


def repeat_and_select_rdp(event: RepeatAndSelectEvent, alpha: np.ndarray,
                          inner_rdp: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """RDP curve (nats, upper bounds) of a :class:`RepeatAndSelectEvent` at orders ``alpha`` > 1.

    ``inner_rdp(orders)`` is the RDP curve of ``event.event`` (upper bounds). Papernot & Steinke
    Theorem 2 (truncated negative binomial) or Theorem 6 (Poisson); module docstring."""
    alpha = np.asarray(alpha, dtype=float)
    if not math.isinf(event.shape) and event.gamma >= 1.0:  # K ≡ 1: one run
        return inner_rdp(alpha)
    at_alpha = inner_rdp(alpha)
    am1 = alpha - 1.0
    if math.isinf(event.shape):  # Theorem 6
        from .conversions import rdp_to_delta

        grid = _LAMBDA_HAT_GRID
        curve = inner_rdp(grid)
        extra = np.empty_like(alpha)
        for i, a1 in enumerate(am1):
            eps_hat = math.nextafter(math.log1p(1.0 / a1), 0.0)  # rounded down: e^ε̂ ≤ 1 + 1/(λ − 1)
            delta_hat = rdp_to_delta(grid, curve, eps_hat)[0]  # an upper bound (rounded up)
            extra[i] = event.mean * delta_hat
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = at_alpha + extra + math.log(event.mean) / am1
    else:  # Theorem 2
        c = _lambda_hat_term(event.gamma, event.shape, inner_rdp)
        log_mean = math.log(event.expected_count)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = at_alpha + c + log_mean / am1
    out = np.where(np.isnan(out), np.inf, out)
    return inflate(out)


def mp_repeat_and_select_rdp(event: RepeatAndSelectEvent, order: float,
                             inner_mp: Callable[[float], "object"], dps: int) -> "object":
    """The RDP of :func:`repeat_and_select_rdp` at one order recomputed in mpmath (certification).

    ``inner_mp(order)`` is the inner event's RDP in mpmath. λ̂ (Theorem 2) is the grid order the fast
    path's minimum picks (any λ̂ is valid; the check is that the fast value bounds the formula there);
    E[K] and log(1/γ) are recomputed from γ in mpmath; for Theorem 6 δ̂ is recomputed by the mpmath
    Mironov / Balle et al. conversion at the fast path's best order."""
    import mpmath

    from .conversions import log_delta_at_orders

    with mpmath.workdps(dps):
        lam = mpmath.mpf(order)
        base = inner_mp(order)
        if not math.isinf(event.shape) and event.gamma >= 1.0:
            return base
        if math.isinf(event.shape):
            grid = _LAMBDA_HAT_GRID
            from .rdp_accountant import compute_rdp

            curve = compute_rdp(event.event, grid)
            eps_hat = mpmath.log1p(1 / (lam - 1))
            best = math.inf
            best_order = float(grid[0])
            for method in ("mironov", "balle2020"):
                values = log_delta_at_orders(grid, curve, float(eps_hat), method)
                j = int(np.argmin(values))
                if values[j] < best:
                    best, best_order = float(values[j]), float(grid[j])
            a_hat = mpmath.mpf(best_order)
            r_hat = inner_mp(best_order)
            mironov = mpmath.exp((a_hat - 1) * (r_hat - eps_hat))
            balle = mpmath.exp((a_hat - 1) * (r_hat - eps_hat + mpmath.log1p(-1 / a_hat)) - mpmath.log(a_hat))
            kl = inner_mp(float(grid[int(np.argmin(curve))]))  # the KL → TV rule of dpcore.conversions
            tv = mpmath.sqrt(min(kl / 2, -mpmath.expm1(-kl)))
            delta_hat = min(mironov, balle, tv, mpmath.mpf(1))
            return base + mpmath.mpf(event.mean) * delta_hat + mpmath.log(mpmath.mpf(event.mean)) / (lam - 1)
        g, eta = mpmath.mpf(event.gamma), mpmath.mpf(event.shape)
        if eta == 0:
            mean = (1 / g - 1) / mpmath.log(1 / g)
        else:
            mean = eta * (1 - g) / (g * (1 - g ** eta))
        from .rdp_accountant import compute_rdp

        grid = _LAMBDA_HAT_GRID
        fast = (1.0 - 1.0 / grid) * compute_rdp(event.event, grid) + _log_inverse_gamma(event.gamma) / grid
        lam_hat = mpmath.mpf(float(grid[int(np.argmin(fast))]))
        term = (1 + eta) * ((1 - 1 / lam_hat) * inner_mp(float(lam_hat)) + mpmath.log(1 / g) / lam_hat)
        return base + term + mpmath.log(mean) / (lam - 1)


# ---------------------------------------------------------------------------------------- pure DP


def pure_selection_epsilon(event: RepeatAndSelectEvent, inner_pure_epsilon: Optional[float]) -> Optional[float]:
    """ε of the selection when the inner event is pure ``inner_pure_epsilon``-DP (rounded up), else None.

    Truncated negative binomial: (2 + η)·ε (Theorem 2 of Papernot & Steinke as λ, λ̂ → ∞; η = 1 is
    Liu & Talwar's Theorem 3.1, 3ε); K ≡ 1: ε. Poisson: None (no pure-DP bound)."""
    if inner_pure_epsilon is None or math.isinf(event.shape):
        return None
    if event.gamma >= 1.0:
        return inner_pure_epsilon
    return float(inflate(np.array([(2.0 + event.shape) * inner_pure_epsilon]))[0])


# ------------------------------------------------------------------------------------ calibration


def calibrate_selected_noise_multiplier(target_epsilon: float, delta: float, *, candidates: float,
                                        distribution: str = "geometric", shape: Optional[float] = None,
                                        sampling_rate: float = 1.0, steps: int = 1, sampling: str = "poisson",
                                        dataset_size: Optional[int] = None, relation: Optional[str] = None,
                                        accountant: str = "rdp"):
    """Least noise multiplier of each run such that the whole tuned run — ``candidates`` runs on
    average of ``steps`` (subsampled) Gaussian steps, the best one released — is (ε, δ)-DP.

    Parameters are those of :func:`dpcore.calibrate_noise_multiplier` and of :func:`selection_event`.
    ``accountant`` defaults to ``"rdp"`` (the analyses of the selection are RDP / pure-DP results).

    Returns
    -------
    (CalibrationResult, PrivacyResult)
        The calibration of the tuned run (``value`` = σ/Δ₂ of each run, ``privacy`` the whole tuned
        run's ε ≤ target) and the ε of ONE run at that σ (same accountant): the selection's share
        is ``calibration.privacy.epsilon − one_run.epsilon``.
    """
    from .accounting import get_epsilon
    from .calibration import MIN_NOISE_MULTIPLIER, calibrate, subsampled_gaussian_event

    check_positive("target_epsilon", target_epsilon)

    def run(s: float) -> PrivacyEvent:
        return subsampled_gaussian_event(s, sampling_rate, steps, sampling=sampling, dataset_size=dataset_size,
                                         relation=relation)

    selection_event(run(1.0), candidates, distribution, shape)  # validate the fixed arguments first
    result = calibrate(lambda s: selection_event(run(s), candidates, distribution, shape), "noise_multiplier",
                       target_epsilon, delta, lower=0.5, upper=2.0, increasing=False,
                       bounds=(MIN_NOISE_MULTIPLIER, 1e8), accountant=accountant)
    return result, get_epsilon(run(result.value), delta, accountant=accountant)
