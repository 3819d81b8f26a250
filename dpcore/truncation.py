"""Truncated Poisson sampling as a direct sum of Poisson-subsampled Gaussian steps.

One step of DP-SGD on truncated-Poisson batches (:class:`~dpcore.events.TruncatedPoissonSampledEvent`:
rate q, cap B, N a public bound on the dataset size, add_remove) is dominated, for every hockey-stick
order α ≥ 0 and in each order of neighbours, by the direct sum

    (1 − ρ)·Sub_q(σ) ⊕ ρ·Sub_{qB/(B+1)}(σ/2),     ρ ≥ P(Bin(N − 1, q) ≥ B),

of two Poisson-subsampled Gaussian pairs revealed with their branch (the derivation is in
:mod:`dpcore.pld.batch_sampling`; Ganesh 2025 analyses the truncation inside the PLD). The PLD
accountant composes the direct sum itself; the RDP accountant bounds it by the Rényi divergence of
a direct sum, (1/(α−1))·log Σᵢ wᵢ·e^{(α−1)·Dᵢ(α)} (:func:`dpcore.rdp.direct_sum.direct_sum_rdp`):
hockey-stick dominance at every order is dominance of every f-divergence (each is an integral of
hockey-stick divergences, Liese & Vajda 2006, Thm 11), Rényi's included.
"""

from __future__ import annotations

from typing import List, Tuple

import mpmath

from .events import GaussianEvent, PoissonSampledEvent, TruncatedPoissonSampledEvent, UnsupportedEventError

__all__ = ["truncation_probability", "truncated_poisson_branches"]

_U = 2.0**-53


def truncation_probability(sampling_rate: float, max_batch_size: int, dataset_size: int) -> float:
    """Upper bound of P(Bin(N − 1, q) ≥ B): the probability that the other records alone fill the
    batch (mpmath regularized incomplete beta at 30 digits, rounded up)."""
    n_other, b = dataset_size - 1, max_batch_size
    if b > n_other:
        return 0.0
    if sampling_rate == 1.0:
        return 1.0
    with mpmath.workdps(30):
        value = mpmath.betainc(b, n_other - b + 1, 0, sampling_rate, regularized=True)
    return min(1.0, float(value) * (1.0 + 1e-12) + 1e-300)


def truncated_poisson_branches(event: TruncatedPoissonSampledEvent) -> List[Tuple[float, PoissonSampledEvent]]:
    """The branches of one truncated-Poisson step's dominating direct sum (module docstring) as
    (weight, Poisson-subsampled Gaussian event): [(1 − ρ, Sub_q(σ)), (ρ, Sub_{qB/(B+1)}(σ/2))], or
    the untruncated step alone when no batch can reach the cap (ρ = 0). Refuses (naming the event's
    part) anything but a Gaussian step under add_remove."""
    if not isinstance(event.event, GaussianEvent):
        raise UnsupportedEventError("truncated Poisson sampling is analysed with a GaussianEvent inside; got "
                                    f"{type(event.event).__name__}")
    if event.relation != "add_remove":
        raise UnsupportedEventError(
            "truncated Poisson sampling is analysed for relation='add_remove'; got "
            f"relation={event.relation!r}")
    sigma = event.event.noise_multiplier
    q, b = event.sampling_rate, event.max_batch_size
    rho = truncation_probability(q, b, event.dataset_size)
    single = PoissonSampledEvent(GaussianEvent(sigma), q)
    if rho == 0.0:
        return [(1.0, single)]
    swapped = PoissonSampledEvent(GaussianEvent(sigma / 2.0), min(1.0, q * b / (b + 1.0) * (1.0 + 4.0 * _U)))
    return [(1.0 - rho, single), (rho, swapped)]
