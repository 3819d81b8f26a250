"""dp_accounting ``DpEvent`` trees → dpcore events, for a certified number on a run already
described for dp_accounting or jax_privacy.

Works on the event objects by their class names and attributes (dp_accounting 0.4–0.6 and the
``RandomAllocationDpEvent`` of its random-allocation pull request), so importing this module does
not import dp_accounting. dp_accounting puts the neighbouring relation on the accountant, not the
events; pass it as ``relation`` (``"add_remove"`` = ``ADD_OR_REMOVE_ONE``, ``"replace_one"`` =
``REPLACE_ONE``). Noise multipliers are taken as they are (σ over the sensitivity under that
relation, the convention of both libraries). Events dpcore has no analysis for — and every
``UnsupportedDpEvent`` — raise :class:`~dpcore.events.UnsupportedEventError` naming the class.

=====================================  ===============================================
dp_accounting                           dpcore
=====================================  ===============================================
NoOpDpEvent / NonPrivateDpEvent         NoOpEvent / NonPrivateEvent
GaussianDpEvent(σ)                      GaussianEvent(σ)
LaplaceDpEvent(b)                       LaplaceEvent(b)
RandomizedResponseDpEvent(p, k)         PureDpEvent(ln(1 + k(1 − p)/p)) (replace_one only;
                                        p = 0: NonPrivateEvent, p = 1: NoOpEvent)
PoissonSampledDpEvent(q, e)             PoissonSampledEvent(e, q)
SampledWithoutReplacementDpEvent        SampledWithoutReplacementEvent(e, m, n)
SampledWithReplacementDpEvent           SampledWithReplacementEvent(e, m, n)
TruncatedSubsampledGaussianDpEvent      TruncatedPoissonSampledEvent(Gaussian(σ), q, B, N)
RandomAllocationDpEvent(e, k, t)        RandomAllocationEvent(e, t, k)
SelfComposedDpEvent(e, c)               SelfComposedEvent(e, c)
ComposedDpEvent([e…])                   ComposedEvent([e…])
=====================================  ===============================================
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath

from .._validation import check_relation
from ..events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    SelfComposedEvent,
    TruncatedPoissonSampledEvent,
    UnsupportedEventError,
)

__all__ = ["from_dp_event"]


def from_dp_event(dp_event: Any, relation: str = "add_remove") -> PrivacyEvent:
    """The dpcore event of a dp_accounting ``DpEvent`` tree (module docstring)."""
    relation = check_relation("relation", relation)
    kind = type(dp_event).__name__

    def sub(e: Any) -> PrivacyEvent:
        return from_dp_event(e, relation)

    if kind == "NoOpDpEvent":
        return NoOpEvent(relation)
    if kind == "NonPrivateDpEvent":
        return NonPrivateEvent(relation)
    if kind == "GaussianDpEvent":
        return GaussianEvent(dp_event.noise_multiplier, relation)
    if kind == "LaplaceDpEvent":
        return LaplaceEvent(dp_event.noise_multiplier, relation)
    if kind == "RandomizedResponseDpEvent":
        return _randomized_response(dp_event.noise_parameter, dp_event.num_buckets, relation)
    if kind == "PoissonSampledDpEvent":
        return PoissonSampledEvent(sub(dp_event.event), dp_event.sampling_probability)
    if kind == "SampledWithoutReplacementDpEvent":
        return SampledWithoutReplacementEvent(sub(dp_event.event), dp_event.sample_size, dp_event.source_dataset_size)
    if kind == "SampledWithReplacementDpEvent":
        return SampledWithReplacementEvent(sub(dp_event.event), dp_event.sample_size, dp_event.source_dataset_size)
    if kind == "TruncatedSubsampledGaussianDpEvent":
        return TruncatedPoissonSampledEvent(GaussianEvent(dp_event.noise_multiplier, relation),
                                            dp_event.sampling_probability, dp_event.truncated_batch_size,
                                            dp_event.dataset_size)
    if kind == "RandomAllocationDpEvent":
        return RandomAllocationEvent(sub(dp_event.event), dp_event.num_steps, dp_event.num_selected)
    if kind == "SelfComposedDpEvent":
        return SelfComposedEvent(sub(dp_event.event), dp_event.count)
    if kind == "ComposedDpEvent":
        return ComposedEvent([sub(e) for e in dp_event.events])
    raise UnsupportedEventError(f"dpcore has no analysis for the dp_accounting event {kind}")


def _randomized_response(p: float, k: int, relation: str) -> PrivacyEvent:
    """k-ary randomized response that outputs a uniform bucket with probability p, else the input:
    the output's probability ratio between two inputs is at most (1 − p + p/k)/(p/k), so it is
    ε-DP with ε = ln(1 + k(1 − p)/p), rounded up (tight: the ratio at the input bucket). Neighbours
    change the input (replace_one), as dp_accounting requires."""
    from ..result import round_up

    if relation != "replace_one":
        raise UnsupportedEventError("RandomizedResponseDpEvent is analysed for relation='replace_one' (a changed "
                                    f"input), as in dp_accounting; got relation={relation!r}")
    if not (0.0 <= p <= 1.0) or int(k) != k or k < 1:
        raise ValueError(f"RandomizedResponseDpEvent needs noise_parameter in [0, 1] and num_buckets >= 1; got "
                         f"p={p!r}, k={k!r}")
    if p == 1.0 or k == 1:  # the output ignores the input
        return NoOpEvent(relation)
    if p == 0.0:
        return NonPrivateEvent(relation)
    ratio = Fraction(int(k)) * (1 - Fraction(p)) / Fraction(p)  # exact
    with mpmath.workdps(40):
        epsilon = mpmath.log1p(mpmath.mpf(ratio.numerator) / ratio.denominator)
    return PureDpEvent(round_up(epsilon), relation)
