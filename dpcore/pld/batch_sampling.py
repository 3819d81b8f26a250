"""Dominating pairs of two more batch samplers, as direct sums of scaled pairs.

A *direct sum* w₁·(P₁, Q₁) ⊕ w₂·(P₂, Q₂) (Σw = 1) is the pair of an experiment that first
reveals which branch ran: its hockey-stick curve is Σ wᵢ H_α(Pᵢ‖Qᵢ). When a step's output
distributions are mixtures over a hidden variable whose law is the same under both neighbours,
the hockey-stick divergence is jointly convex, so revealing it can only help the adversary: the
direct sum dominates, for every α ≥ 0 and so for composition (Zhu, Dong, Wang 2022, Thm 10).

**Truncated Poisson** (:class:`~dpcore.events.TruncatedPoissonSampledEvent`, add_remove): each
record joins with probability q, and a batch of more than B records is cut to a uniform B-subset.
Let D′ = D ∪ {x} and K ~ Bin(|D|, q) the number of other records that join. If K ≤ B − 1 the step
is the Poisson-subsampled Gaussian (x joins with probability q, shift Δ). If K ≥ B, x ends up in
the batch with probability q·B/(K + 1) ≤ q·B/(B + 1) and then *replaces* one of the others
(shift ≤ 2Δ): the Poisson-subsampled Gaussian of noise σ/2 at that rate. Revealing the branch,
with ρ = P(K ≥ B) ≤ P(Bin(N − 1, q) ≥ B) (N the public bound on the dataset size; ρ grows with
|D| ≤ N − 1):

    removal pair = (1 − ρ)·Sub_q(N(1, σ²), N(0, σ²)) ⊕ ρ·Sub_{qB/(B+1)}(N(2, σ²), N(0, σ²)),

the addition pair its mirror image. ρ itself is private (|D| may even be 0: plain Poisson), so
the accountants use ρ_max with the second branch raised to Sub_q(N(2, σ²), N(0, σ²)), which
dominates both branches and makes the sum monotone in ρ (proof and cost in :mod:`dpcore.truncation`). This is the analysis of Ganesh 2025 ("Tighter privacy
analysis for truncated Poisson", the truncation inside the PLD instead of in δ) as we derive it
here: the branch probability is bounded at the largest K-free rate, where dp_accounting averages
the rate over K (an average of a convex function of the rate is not bounded by its value at the
average, so we keep the per-K bound).

**Sampling with replacement** (:class:`~dpcore.events.SampledWithReplacementEvent`,
replace_one): B i.i.d. uniform draws from n records; the replaced record is drawn
K ~ Bin(B, 1/n) times. Given K ≤ 1 the other draws are i.i.d. over the other n − 1 records, so the
step is that of sampling without replacement with γ = π₁/(π₀ + π₁) (the coupling proof of
:func:`~dpcore.pld.leaves.without_replacement_model` goes through unchanged); given K = k ≥ 2 it
is a Gaussian with shift kΔ. Revealing the branch:

    pair = (π₀ + π₁)·WOR_γ(σ) ⊕ Σ_{k=2}^{k*} π_k·Gaussian(σ/k) ⊕ (tail mass at loss ±∞),

π_k = Bin(B, 1/n) masses (rounded up), the tail P(K > k*) ≤ 1e-20 charged in full.
"""

from __future__ import annotations

import math
from typing import List, Tuple

import mpmath
import numpy as np

from ..events import GaussianEvent, SampledWithReplacementEvent, TruncatedPoissonSampledEvent, UnsupportedEventError
from ..truncation import truncated_poisson_branches, truncation_probability
from .losses import Atoms, LossModel, Piece, gaussian_model

__all__ = ["direct_sum", "truncated_poisson_models", "with_replacement_models", "truncation_probability"]

_U = 2.0**-53
#: with replacement: the draws counts K > k* beyond this tail probability go to loss ±∞
_MULTIPLICITY_TAIL = 1e-20


class _ScaledPiece(Piece):
    """A piece with both measures multiplied by ``weight`` (the loss is unchanged)."""

    def __init__(self, base: Piece, weight: float) -> None:
        self.base, self.weight = base, float(weight)
        self.lo, self.hi, self.increasing, self.scale = base.lo, base.hi, base.increasing, base.scale

    def loss(self, x):
        return self.base.loss(x)

    def loss_inv(self, loss):
        return self.base.loss_inv(loss)

    def pdf_p(self, x):
        return self.weight * self.base.pdf_p(x)

    def pdf_q(self, x):
        return self.weight * self.base.pdf_q(x)

    def cdf_p(self, x):
        return self.weight * self.base.cdf_p(x)

    def sf_p(self, x):
        return self.weight * self.base.sf_p(x)

    def cdf_q(self, x):
        return self.weight * self.base.cdf_q(x)

    def sf_q(self, x):
        return self.weight * self.base.sf_q(x)

    def mp_loss_inv(self, loss):
        return self.base.mp_loss_inv(loss)

    def mp_tails(self, x):
        w = mpmath.mpf(self.weight)
        return tuple(w * v for v in self.base.mp_tails(x))

    def envelope(self, center, radius):
        mp, mq = self.base.envelope(center, radius)
        return self.weight * mp, self.weight * mq


def direct_sum(parts: List[Tuple[float, LossModel]], infinite: float = 0.0) -> LossModel:
    """Σ wᵢ·(Pᵢ, Qᵢ), plus ``infinite`` P-mass at loss +∞ and Q-mass at −∞ (module docstring).
    The weights are rounded up (extra mass only raises δ)."""
    pieces: List[Piece] = []
    loss, p, q = [], [], []
    for weight, model in parts:
        w = weight * (1.0 + 8.0 * _U)
        if w <= 0.0:
            continue
        pieces.extend(_ScaledPiece(piece, w) for piece in model.pieces)
        loss.append(model.atoms.loss)
        p.append(w * model.atoms.p)
        q.append(w * model.atoms.q)
    if infinite > 0.0:
        loss.append(np.array([math.inf, -math.inf]))
        p.append(np.array([infinite, 0.0]))
        q.append(np.array([0.0, infinite]))
    atoms = Atoms(np.concatenate(loss) if loss else np.zeros(0), np.concatenate(p) if p else np.zeros(0),
                  np.concatenate(q) if q else np.zeros(0))
    return LossModel(tuple(pieces), atoms)


def _gaussian_noise(event, name: str) -> float:
    if not isinstance(event.event, GaussianEvent):
        raise UnsupportedEventError(f"the 'pld' accountant analyses {name} with a GaussianEvent inside; got "
                                    f"{type(event.event).__name__}")
    return event.event.noise_multiplier


def truncated_poisson_models(event: TruncatedPoissonSampledEvent) -> Tuple[LossModel, LossModel]:
    """(removal pair, addition pair) of one truncated-Poisson step (module docstring; the branches
    from :func:`dpcore.truncation.truncated_poisson_branches`)."""
    from .leaves import leaf_models

    branches = truncated_poisson_branches(event)
    if len(branches) == 1:  # no batch can reach the cap: Poisson sampling
        return leaf_models(branches[0][1])
    remove = direct_sum([(weight, leaf_models(step)[0]) for weight, step in branches])
    return remove, remove.reverse()


def _binomial_masses(draws: int, n: int) -> Tuple[np.ndarray, float]:
    """(π₀ … π_{k*} rounded up, an upper bound of P(K > k*)) for K ~ Bin(draws, 1/n)."""
    p = 1.0 / n
    masses = []
    k = 0
    log_pmf = draws * math.log1p(-p)
    while True:
        masses.append(math.exp(log_pmf) * (1.0 + 64.0 * _U * (k + 1)))
        if k == draws:
            return np.array(masses), 0.0
        ratio = (draws - k) / (k + 1.0) * p / (1.0 - p)  # π_{k+1}/π_k, decreasing in k
        log_pmf += math.log(ratio)
        nxt_ratio = (draws - k - 1) / (k + 2.0) * p / (1.0 - p)
        if k >= 1 and nxt_ratio < 1.0:
            tail = math.exp(log_pmf) / (1.0 - nxt_ratio) * (1.0 + 64.0 * _U * (k + 2))
            if tail <= _MULTIPLICITY_TAIL:
                return np.array(masses), tail
        k += 1


def with_replacement_models(event: SampledWithReplacementEvent) -> Tuple[LossModel, LossModel]:
    """The symmetric pair of one step of sampling with replacement (module docstring), twice."""
    from .leaves import without_replacement_model

    sigma = _gaussian_noise(event, "SampledWithReplacementEvent")
    if event.relation != "replace_one":
        raise UnsupportedEventError(
            "sampling with replacement is analysed for relation='replace_one' only (under add/remove "
            f"every other record's draws change with the dataset size); got relation={event.relation!r}")
    masses, tail = _binomial_masses(event.batch_size, event.dataset_size)
    single = masses[0] + masses[1] if masses.size > 1 else masses[0]
    parts = []
    if masses.size > 1:
        gamma = min(1.0, masses[1] / single * (1.0 + 4.0 * _U))
        parts.append((single, without_replacement_model(gaussian_model(sigma), gamma)))
    parts.extend((float(masses[k]), gaussian_model(sigma / k)) for k in range(2, masses.size))
    model = direct_sum(parts, infinite=tail)
    return model, model
