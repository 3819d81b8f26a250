"""Map the leaves of a privacy-event tree to dominating pairs (:class:`~dpcore.pld.losses.LossModel`).

===============================================  =================================================  ============
event                                            dominating pair                                    relation
===============================================  =================================================  ============
GaussianEvent(σ)                                 N(1, σ²) vs N(0, σ²) (Balle & Wang 2018)           either
LaplaceEvent(b)                                  Lap(0, b) vs Lap(1, b)                             either
PureDpEvent(ε), MechanismEvent(pure_epsilon=ε)   randomized response (Kairouz, Oh, Viswanath 15)    either
ApproxDpEvent(ε, δ)                              worst (ε, δ) pair (Kairouz, Oh, Viswanath 15)      either
MechanismEvent(privacy_profile=δ̂)               convex hull of δ̂ (see :func:`profile_model`)      either
PoissonSampled(leaf, q)                          (qP + (1−q)Q, Q) and (Q, qP + (1−q)Q)              add_remove
                                                 (Zhu, Dong, Wang 2022, Thm 11)
SampledWithoutReplacement(leaf, m, n)            symmetrisation of (γP + (1−γ)Q, Q), γ = m/n        replace_one
                                                 (:func:`without_replacement_model`)
===============================================  =================================================  ============

Every un-sampled pair above is symmetric (its two orders have the same PLD), so only Poisson
sampling creates two orders ("remove" and "add"); a composition is analysed once per order and
the larger ε is reported. Sampling without replacement gives one symmetric pair. Refused with
:class:`~dpcore.events.UnsupportedEventError`: Poisson sampling under replace_one, sampling
without replacement under add_remove (the dataset size, hence γ, is not fixed), sampling of a
composed or sampled event, ``MechanismEvent`` with only an RDP curve, ``ShuffledEvent`` and
``DpSrmEvent``.
"""

from __future__ import annotations

import math
from typing import Callable, Tuple

import numpy as np

from ..events import (
    ApproxDpEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    TruncatedPoissonSampledEvent,
    UnsupportedEventError,
)
from .losses import (
    Atoms,
    LossModel,
    approx_dp_model,
    gaussian_model,
    laplace_model,
    randomized_response_model,
)

__all__ = ["leaf_models", "profile_model", "without_replacement_model"]

#: number of ε samples of a user-supplied privacy profile
PROFILE_SAMPLES = 2000
#: largest sampled ε of a profile (a power of two with e^ε finite in float64: the hull is built
#: in α = e^ε); the profile's value there is carried to loss +∞, i.e. charged to δ in full
PROFILE_MAX_EPSILON = 512.0


def _lower_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hull = []
    for i in range(x.size):
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            if (x[k] - x[j]) * (y[i] - y[j]) - (y[k] - y[j]) * (x[i] - x[j]) <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return np.array(hull)


def profile_model(profile: Callable[[float], float], name: str) -> LossModel:
    """A dominating pair from a privacy profile δ̂(ε) ≥ δ(ε) valid for both orders of neighbours.

    Any pair's hockey-stick curve f(α) = H_α(P‖Q) is convex and non-increasing in α ≥ 0 with
    f(0) = 1, and H_α(P‖Q) = 1 − α + α H_{1/α}(Q‖P) for α < 1. A profile that bounds both orders
    therefore bounds f at α = e^ε (by δ̂(ε)) and at α = e^{−ε} (by 1 − e^{−ε} + e^{−ε}δ̂(ε)). The
    lower convex hull of these samples (made non-increasing, with the point (0, 1)) is ≥ f between
    samples — a chord of a convex function lies above it — and is itself the curve of a discrete
    pair: atoms at log α of each hull vertex with Q-mass the jump of the slope (Zhu, Dong, Wang
    2022, Sec. 3). The sampled range ends where δ̂ ≤ 1e-300 or at ε = :data:`PROFILE_MAX_EPSILON`
    (512, so that e^ε is finite); δ̂ there goes to +∞ (a pessimistic cut).

    This is valid only if δ̂ bounds the profile for *both* orders of every neighbouring pair
    (as ``MechanismEvent.privacy_profile`` is documented to); a one-sided profile must not be
    passed. Values outside [0, 1] or NaN raise ``ValueError``.
    """
    def value(eps: float) -> float:
        d = float(profile(eps))
        if not 0.0 <= d <= 1.0:
            raise ValueError(f"privacy_profile of {name!r} must return delta in [0, 1]; got {d} at epsilon={eps}")
        return d

    top = 1.0
    while value(top) > 1e-300 and top < PROFILE_MAX_EPSILON:
        top *= 2.0
    eps = np.linspace(0.0, top, PROFILE_SAMPLES)
    dlt = np.minimum.accumulate(np.array([value(float(e)) for e in eps]))
    alpha_hi = np.exp(eps)
    alpha_lo = np.exp(-eps[1:])[::-1]
    f_lo = (-np.expm1(-eps[1:]) + np.exp(-eps[1:]) * dlt[1:])[::-1]
    x = np.concatenate([[0.0], alpha_lo, alpha_hi])
    y = np.minimum.accumulate(np.concatenate([[1.0], f_lo, dlt]))
    idx = _lower_hull(x, y)
    hx, hy = x[idx], y[idx]
    slopes = np.append(np.diff(hy) / np.diff(hx), 0.0)
    qmass = np.maximum(np.diff(slopes), 0.0)  # slope jump at each vertex after (0, 1)
    ax = hx[1:]
    atoms = Atoms(np.append(np.log(ax), math.inf), np.append(ax * qmass, hy[-1]), np.append(qmass, 0.0))
    return LossModel((), atoms)


def _base_model(event: PrivacyEvent) -> LossModel:
    if isinstance(event, GaussianEvent):
        return gaussian_model(event.noise_multiplier)
    if isinstance(event, LaplaceEvent):
        return laplace_model(event.noise_multiplier)
    if isinstance(event, PureDpEvent):
        return randomized_response_model(event.epsilon)
    if isinstance(event, ApproxDpEvent):
        return approx_dp_model(event.epsilon, event.delta)
    if isinstance(event, MechanismEvent):
        if event.privacy_profile is not None:
            return profile_model(event.privacy_profile, event.name)
        if event.pure_epsilon is not None:
            return randomized_response_model(event.pure_epsilon)
        raise UnsupportedEventError(
            f"MechanismEvent {event.name!r} supplies only an RDP curve; the 'pld' accountant needs "
            "privacy_profile= or pure_epsilon=")
    raise UnsupportedEventError(f"the 'pld' accountant cannot analyse {type(event).__name__}")


def without_replacement_model(base: LossModel, rate: float) -> LossModel:
    """Dominating pair of a leaf run on a batch of m of n records drawn without replacement
    (γ = m/n = ``rate``), replace-one neighbours, given the leaf's symmetric pair (P, Q).

    **Lemma.** Let (P, Q) dominate the leaf M under replace-one for both orders (every pair in
    :func:`leaf_models`' table does). Then the symmetric pair (A*, B*) =
    :meth:`~dpcore.pld.losses.LossModel.symmetrized` of (A, B) = (γP + (1−γ)Q, Q) dominates
    M ∘ WOR_{m,n} under replace-one: H_α(M∘S(D)‖M∘S(D′)) ≤ H_α(A*‖B*) for all α ≥ 0 and both
    orders of every neighbouring pair D ≃ D′.

    *Proof.* Let D′ replace record i of D. Conditioned on i ∉ batch (probability 1 − γ) the batch
    is uniform on the m-subsets of D ∖ {i} = D′ ∖ {i}, so M∘S(D) = (1−γ)μ₀ + γμ₁ and
    M∘S(D′) = (1−γ)μ₀ + γμ₁′ with the same μ₀. For α ≥ 1 and α̃ = 1 + (α − 1)/γ, β = α/α̃ ∈ (0, 1],
    advanced joint convexity (Balle, Barthe, Gaboardi 2018, "Privacy amplification by
    subsampling", Thm 2) gives H_α = γ·H_α̃(μ₁‖(1 − β)μ₀ + βμ₁′). Coupling a batch B ∋ i with
    B ∖ {i} ∪ {j} (j uniform outside B; this is uniform on batches without i) and with B′ (i
    replaced), both couplings join replace-one-neighbouring batches, so by joint convexity
    H_α̃(μ₁‖·) ≤ H_α̃(P‖Q) (BBG18, Thm 10, d-compatible couplings). Hence, for α ≥ 1,
    H_α(M∘S(D)‖M∘S(D′)) ≤ γ H_α̃(P‖Q) = H_α(A‖B), and the same for (D′, D) since the relation is
    symmetric. For α < 1, H_α(X‖Y) = 1 − α + α H_{1/α}(Y‖X) and the reverse order is again
    bounded by H_{1/α}(A‖B); H_α(A*‖B*) equals exactly these bounds for α ≥ 1 and α < 1, which is
    what a dominating pair needs (Zhu, Dong, Wang 2022, Def. 7), and dominating pairs compose
    (ZDW22, Thm 10). ∎

    (A, B) alone is *not* a dominating pair for α < 1 (its reverse curve is smaller), which is
    why the symmetrisation — the f-DP bound min{f_γ, f_γ⁻¹}** of Dong, Roth, Su 2022, Thm 4.2 —
    is used. For T = 1 and ε ≥ 0 the bound is attained (a sum query whose record i moves from 1
    to 0 while all others are 0 gives exactly (A, B) for the Gaussian), so it is tight there.
    """
    if rate == 1.0:
        return base
    return base.subsample(rate).symmetrized()


def leaf_models(event: PrivacyEvent) -> Tuple[LossModel, LossModel]:
    """(remove-order pair, add-order pair) of a leaf; the same object twice when symmetric."""
    if isinstance(event, RandomAllocationEvent):  # one epoch (num_selected = 1; see accounting._flatten)
        from .random_allocation import pair_side, random_allocation_models

        return random_allocation_models(event, pair_side())
    if isinstance(event, TruncatedPoissonSampledEvent):
        from .batch_sampling import truncated_poisson_models

        return truncated_poisson_models(event)
    if isinstance(event, SampledWithReplacementEvent):
        from .batch_sampling import with_replacement_models

        return with_replacement_models(event)
    if isinstance(event, PoissonSampledEvent):
        if event.relation != "add_remove":
            raise UnsupportedEventError(
                "the 'pld' accountant analyses Poisson sampling for relation='add_remove' only "
                f"(Zhu, Dong, Wang 2022, Thm 11); got relation={event.relation!r}")
        base = _base_model(event.event)
        if event.sampling_rate == 1.0:
            return base, base
        sub = base.subsample(event.sampling_rate)
        return sub, sub.reverse()
    if isinstance(event, SampledWithoutReplacementEvent):
        if event.relation != "replace_one":
            raise UnsupportedEventError(
                "the 'pld' accountant analyses sampling without replacement for relation='replace_one' "
                f"only (Balle, Barthe, Gaboardi 2018, Thm 10); got relation={event.relation!r}")
        model = without_replacement_model(_base_model(event.event), event.sampling_rate)
        return model, model
    model = _base_model(event)
    return model, model
