"""The moments accountant of Abadi et al. 2016 ("Deep Learning with Differential Privacy", §3.2).

For one step of the Poisson-subsampled Gaussian mechanism (add/remove neighbours) with
μ0 = N(0, σ²), μ1 = N(1, σ²), μ = (1−q)μ0 + qμ1, the log moment at integer λ is

    α(λ) = log max( E_{z∼μ0}[(μ0(z)/μ(z))^λ],  E_{z∼μ}[(μ(z)/μ0(z))^λ] ).

The second term is exp(λ·D_{λ+1}(μ‖μ0)) and the first exp(λ·D_{λ+1}(μ0‖μ)); the second is the
larger (Mironov, Talwar, Zhang 2019, Thm. 4), so α(λ) = λ·D_{λ+1}(μ‖μ0), an exact binomial sum at
integer orders (:func:`dpcore.rdp.poisson_subsampled_gaussian_rdp`, upper-bounded in float64, or
in mpmath with ``dps``). :func:`log_moment` computes both terms of the definition independently by
mpmath numerical integration (:func:`dpcore.rdp.quadrature.mixture_moment_minus_one`; the tests
check the two routes against each other). Log moments add under (adaptive) composition
(Abadi et al., Thm. 2.1), and the tail bound δ = min_λ exp(α(λ) − λε) gives
ε = min_λ (Σ α(λ) + ln(1/δ))/λ — the Mironov conversion of the integer-order RDP curve.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import List, Optional, Tuple

import mpmath
import numpy as np

from ._validation import check_delta, check_positive, check_positive_int, check_sampling_rate
from .events import (
    ComposedEvent,
    GaussianEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    SelfComposedEvent,
    UnsupportedEventError,
    check_count,
)
from .rdp import poisson_subsampled_gaussian_rdp
from .rdp.quadrature import mixture_moment_minus_one
from .result import PrivacyResult, round_up

__all__ = ["MAX_LAMBDA", "log_moment", "moments_epsilon"]

#: largest moment order λ searched (orders above the binomial sums' range are not needed: the
#: bound (α(λ) + log(1/δ))/λ grows once λ is past its optimum)
MAX_LAMBDA = 4096


@lru_cache(maxsize=4096)
def _log_moment_cached(q: float, sigma: float, lam: int, dps: int) -> mpmath.mpf:
    with mpmath.workdps(dps):
        forward = mpmath.log1p(mixture_moment_minus_one(q, sigma, lam + 1, dps=dps))  # E_μ[(μ/μ0)^λ]
        backward = mpmath.log1p(mixture_moment_minus_one(q, sigma, -lam, dps=dps))  # E_μ0[(μ0/μ)^λ]
        return max(forward, backward)


def log_moment(sampling_rate: float, noise_multiplier: float, lam: int, *, dps: int = 40) -> mpmath.mpf:
    """Abadi et al. 2016 log moment α(λ) of one Poisson-subsampled Gaussian step.

    Parameters
    ----------
    sampling_rate : float
        q in (0, 1]; q = 1 is the plain Gaussian mechanism (α(λ) = λ(λ+1)/(2σ²)).
    noise_multiplier : float
        σ = noise standard deviation / ℓ2 sensitivity, in (0, ∞).
    lam : int
        Moment order λ ≥ 1.
    dps : int
        mpmath decimal digits (≥ 15).

    Returns
    -------
    mpmath.mpf
        α(λ) in nats (mpmath numerical integration of the privacy-loss moments).
    """
    q = check_sampling_rate("sampling_rate", sampling_rate)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    lam = check_positive_int("lam", lam)
    dps = check_positive_int("dps", dps, minimum=15)
    return _log_moment_cached(q, sigma, lam, dps)


def _steps(event: PrivacyEvent, count: int, out: List[Tuple[float, float, int]]) -> None:
    """Flatten ``event`` into (q, σ, count) triples of subsampled-Gaussian steps."""
    if isinstance(event, NoOpEvent):
        return
    if isinstance(event, SelfComposedEvent):
        _steps(event.event, check_count("count", count * event.count), out)  # nested counts multiply
    elif isinstance(event, ComposedEvent):
        for child in event.events:
            _steps(child, count, out)
    elif isinstance(event, GaussianEvent):
        out.append((1.0, event.noise_multiplier, count))
    elif isinstance(event, PoissonSampledEvent) and isinstance(event.event, GaussianEvent):
        if event.relation != "add_remove" and event.sampling_rate < 1.0:
            raise UnsupportedEventError(
                "the moments accountant analyses Poisson subsampling only for relation='add_remove'; "
                f"got relation={event.relation!r}"
            )
        out.append((event.sampling_rate, event.event.noise_multiplier, count))
    else:
        raise UnsupportedEventError(
            "the moments accountant supports compositions of Gaussian and Poisson-subsampled Gaussian "
            f"events only; got {type(event).__name__}"
        )


def _total_log_moments(steps: List[Tuple[float, float, int]], lambdas: np.ndarray, dps: Optional[int]) -> np.ndarray:
    """Σ count·α(λ) at each λ, α(λ) = λ·D_{λ+1} (module docstring), each RDP value an upper bound."""
    total = np.zeros(lambdas.size)
    for q, sigma, count in steps:
        rdp = poisson_subsampled_gaussian_rdp(q, sigma, lambdas + 1.0, dps=dps)
        with np.errstate(over="ignore"):
            total = total + float(count) * lambdas * rdp
    return total


def moments_epsilon(event: PrivacyEvent, delta: float, *, max_lambda: int = 32,
                    dps: Optional[int] = None) -> PrivacyResult:
    """ε for a target δ by the moments accountant (Abadi et al. 2016, Thm. 2.1).

    Parameters
    ----------
    event : PrivacyEvent
        Composition (``SelfComposedEvent``/``ComposedEvent``) of ``GaussianEvent`` and
        ``PoissonSampledEvent(GaussianEvent)`` (the latter under ``add_remove``).
    delta : float
        Target δ in (0, 1).
    max_lambda : int
        Moments λ = 1 … max_lambda are searched (Abadi et al. use λ ≤ 32).
    dps : int, optional
        Compute the log moments in mpmath at this many digits (default: the float64 binomial sums,
        rounded up); the final minimisation is in mpmath and rounded up either way.

    Returns
    -------
    PrivacyResult
        ``accountant="moments"``, ``method="moments:abadi2016"``, ``order`` = the optimal λ,
        ε rounded up; ``details`` holds the total log moments.
    """
    delta = check_delta("delta", delta)
    max_lambda = check_positive_int("max_lambda", max_lambda)
    if dps is not None:
        dps = check_positive_int("dps", dps, minimum=15)
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a PrivacyEvent; got {event!r}")
    steps: List[Tuple[float, float, int]] = []
    _steps(event, 1, steps)
    lambdas = np.arange(1, min(max_lambda, MAX_LAMBDA) + 1, dtype=float)
    totals = _total_log_moments(steps, lambdas, dps)
    best = (mpmath.inf, 1)
    with mpmath.workdps(dps or 30):
        log_inv_delta = -mpmath.log(delta)
        for lam, total in zip(lambdas.tolist(), totals.tolist()):
            if not math.isfinite(total):
                continue
            eps = (mpmath.mpf(total) + log_inv_delta) / int(lam)
            if eps < best[0]:
                best = (eps, int(lam))
        epsilon = round_up(max(best[0], mpmath.mpf(0)))
    return PrivacyResult(
        epsilon=epsilon,
        delta=delta,
        relation=event.relation,
        accountant="moments",
        method="moments:abadi2016",
        order=float(best[1]),
        precision=f"mpmath:{dps} digits" if dps is not None else "float64 (binomial sums, rounded up)",
        details={"lambdas": [int(x) for x in lambdas], "log_moments": [float(t) for t in totals]},
    )
