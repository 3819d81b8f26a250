"""Truncated Poisson sampling as a direct sum of Poisson-subsampled Gaussian steps.

One step of DP-SGD on truncated-Poisson batches (:class:`~dpcore.events.TruncatedPoissonSampledEvent`:
rate q, cap B, N a public bound on the dataset size, add_remove) is dominated, for every hockey-stick
order α ≥ 0 and in each order of neighbours, by the direct sum

    (1 − ρ_max)·Sub_q(σ) ⊕ ρ_max·Sub_q(σ/2),     ρ_max ≥ P(Bin(N − 1, q) ≥ B),

of two Poisson-subsampled Gaussian pairs revealed with their branch; Sub_r(s) is the pair
((1 − r)·N(0, s²) + r·N(1, s²), N(0, s²)) and its mirror image. Proof:

1. *The true step at its own ρ* (:mod:`dpcore.pld.batch_sampling`): with ρ = P(K ≥ B),
   K ~ Bin(|D|, q) the other records that join, the step is dominated by
   (1 − ρ)·Sub_q(σ) ⊕ ρ·Sub_{q'}(σ/2), q' = qB/(B+1) ≤ q (in the truncated branch the record joins
   with probability ≤ q' and replaces another: shift 2 at noise σ, i.e. Sub_{q'}(σ/2)). ρ is not
   known — |D| ≤ N − 1 is private and may be 0 (then ρ = 0: plain Poisson) — only ρ ≤ ρ_max.
2. *Sub_q(σ/2) dominates Sub_q(σ)*: adding independent N(0, 3σ²/4) noise maps both laws of
   Sub_q(σ/2) (in units of the shift, std σ/2) onto those of Sub_q(σ) (std σ): a post-processing,
   so the hockey-stick divergence can only shrink (data processing), in both orders.
3. *Sub_q(s) dominates Sub_{q'}(s) for q' ≤ q*: with P_r = (1 − r)·Q + r·P₁ (Q = N(0, s²),
   P₁ = N(1, s²)), P_{q'} = (1 − λ)·Q + λ·P_q with λ = q'/q ∈ [0, 1]. The hockey-stick divergence
   H_γ (γ = e^ε ≥ 1) is jointly convex and H_γ(Q‖Q) = 0, so H_γ(P_{q'}‖Q) ≤ λ·H_γ(P_q‖Q) ≤
   H_γ(P_q‖Q) and H_γ(Q‖P_{q'}) ≤ λ·H_γ(Q‖P_q) ≤ H_γ(Q‖P_q): both orders, every ε ≥ 0 (the
   orders α < 1 follow from H_α(P‖Q) = 1 − α + α·H_{1/α}(Q‖P)).
4. *Monotone in ρ*: a direct sum's curve is (1 − ρ)·H(A) + ρ·H(B). With B = Sub_q(σ/2), which by
   2–3 dominates both the untruncated branch A = Sub_q(σ) and the true truncated branch, the
   step at any ρ ∈ [0, ρ_max] is dominated by (1 − ρ)·A ⊕ ρ·B, whose curve grows with ρ because
   H(B) ≥ H(A): ρ_max dominates every real ρ. (The earlier second branch Sub_{q'}(σ/2) does not
   always dominate A — at q = 0.5, B = 1 its total variation is 0.17 against A's 0.19 — and then
   substituting ρ_max for ρ under-reported: ε = 0 at q = 0.5, B = 1, N = 100, δ = 0.18, where plain
   Poisson, the |D| ≤ B case, has a certified lower bound 0.031.)

Cost against the old branch Sub_{q'}(σ/2) (PLD accountant, δ = 1e-5, ε old → new; Poisson's ε in
brackets): σ = 1, q = 0.01, N = 60 000, 1000 steps — B = 720: 1.82984 → 1.82984 [1.82836];
B = 620: 8.0085 → 8.0162 (+0.10 %); B = 600: 10.410 → 10.422 (+0.12 %). Small caps pay the factor
(B + 1)/B on the truncated branch's rate: σ = 0.8, q = 0.001, B = 12, N = 1e5, 1e4 steps:
12.285 → 12.977 (+5.6 %); σ = 2, q = 0.05, B = 3, N = 100, 100 steps: 2.532 → 3.343 (+32 %);
σ = 1, q = 0.5, B = 1, N = 100, one step: 7.954 → 8.981 (+13 %).

Every consumer reads :func:`truncated_poisson_branches`: the PLD accountant composes the direct sum
itself; the RDP accountant bounds it by the Rényi divergence of a direct sum,
(1/(α−1))·log Σᵢ wᵢ·e^{(α−1)·Dᵢ(α)} (:func:`dpcore.rdp.direct_sum.direct_sum_rdp`, also monotone in
ρ since D_B ≥ D_A by 2–3), and the mpmath certification evaluates the same branches: hockey-stick
dominance at every order is dominance of every f-divergence (each is an integral of hockey-stick
divergences, Liese & Vajda 2006, Thm 11), Rényi's included.
"""

from __future__ import annotations

from typing import List, Tuple

import mpmath

from .events import GaussianEvent, PoissonSampledEvent, TruncatedPoissonSampledEvent, UnsupportedEventError

__all__ = ["truncation_probability", "truncated_poisson_branches"]



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
    (weight, Poisson-subsampled Gaussian event): [(1 − ρ_max, Sub_q(σ)), (ρ_max, Sub_q(σ/2))], or
    the untruncated step alone when no batch can reach the cap (ρ_max = 0). The second branch
    dominates the first, so the sum dominates the step at every ρ ≤ ρ_max. Refuses (naming the
    event's part) anything but a Gaussian step under add_remove."""
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
    truncated = PoissonSampledEvent(GaussianEvent(sigma / 2.0), q)  # dominates single and the cut branch
    return [(1.0 - rho, single), (rho, truncated)]
