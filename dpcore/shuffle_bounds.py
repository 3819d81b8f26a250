"""Shuffled DP-SGD: the valid upper bound, a certified lower bound, and the Poisson number.

A shuffling data loader draws a uniformly random permutation each epoch and cuts it into T
batches; DP-SGD adds Gaussian noise of standard deviation σ·2C to each batch sum (C the clip
norm): σ is relative to the replace-one sensitivity 2C, the relation shuffling is accounted under
(:class:`~dpcore.events.ShuffledBatchesEvent`: under add_remove an added record moves the batch
boundaries and the bound below does not hold). Three numbers, to be read side by side:

``upper``
    A valid upper bound for replace_one: no amplification. n is the same on both neighbours, so
    each record is in exactly one batch of a fixed layout per epoch, an epoch is dominated by one
    Gaussian of multiplier σ and E epochs by E of them (the exact analytic-Gaussian ε of
    μ = √E/σ). This is the bound that is *proven* for adaptive batch queries; it is what dpcore
    reports for shuffling.
``lower``
    A lower bound on the true ε of the shuffled run (Chua et al. 2024, "How private are DP-SGD
    implementations?", ICML, the pair of their shuffle lower bound; multi-epoch form with a fresh
    permutation per epoch as in Chua et al. 2024b, "Scalable DP-SGD: shuffling vs. Poisson
    subsampling", NeurIPS), for replace-one neighbours: every other record has gradient −1 (in
    units of C), the differing record +1 in D and −1 in D′. The batch layout is public (n is
    fixed); relative to each batch's known sum −b_t·C the batch holding the record is 2C above
    under D, and every batch is at 0 under D′: in units of the sensitivity 2C the epoch's outputs
    are MoG(1) vs MoG(0), MoG(m) = Σₜ πₜ·N(m·eₜ, σ²I_T) (πₜ = b_t/n, the chance the record lands
    in batch t). Chua et al.'s zero-out pair (D′: gradient 0, MoG(1) vs MoG(1/2) here) is weaker:
    at σ = 0.5, T = 100 one epoch its bound is 4.06, this pair's 5.40.
    Reporting only M = maxₜ yₜ is a post-processing; its laws have the distribution functions
    F_m(c) = Φ((c − m)/σ)·Φ(c/σ)^{T−1}, m ∈ {1, 0}, whatever the πₜ. Binning M is a further post-processing, so the binned pair
    is dominated by the true one and its E-fold composition (epochs are independent given fresh
    permutations) lower-bounds the shuffled run's δ(ε) for these neighbours, hence its ε.
    Computed with P-masses rounded down and Q-masses up (relative margin 1e-9 over the float64
    evaluation of log Φ), composed by dpcore's PLD and read off with its *optimistic* (lower)
    bound (:meth:`~dpcore.pld.pmf.GridPld.epsilon_bounds`), which accounts for every float and
    discretisation error.
``poisson``
    The ε of Poisson sampling at the same expected batch and the same noise (rate 1/T, T·E steps,
    add_remove with multiplier 2σ relative to C). It is *not* a guarantee for a shuffling loader
    (nor for the same relation); it is printed for comparison only, labelled as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Tuple

import numpy as np
from scipy.special import log_ndtr

from ._validation import check_delta, check_positive, check_positive_int
from .events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent, ShuffledBatchesEvent
from .result import round_down

__all__ = ["ShuffleBounds", "shuffle_bounds", "shuffle_lower_bound_epsilon", "shuffle_lower_bound_delta",
           "max_statistic_pair"]

_U = 2.0**-53
#: relative margin on the float64 bin masses of the lower-bound pair (log Φ is accurate to a few
#: ulps; 1e-9 is ten million times that)
_MASS_MARGIN = 1e-9
#: bins of the maximum statistic of width σ²·h/(shift difference): the loss of the binned pair moves by about h per bin
_BIN_LOSS = 2e-3
#: each tail of M beyond the binned range holds at most this much mass (under either law)
_TAIL = 1e-14
#: shifts of the differing batch under D and D′ (units of the replace-one sensitivity 2C; module docstring)
_P_SHIFT, _Q_SHIFT = 1.0, 0.0


def _log_cdf(c: np.ndarray, shift: float, sigma: float, steps: int) -> np.ndarray:
    """log F_shift(c) = log Φ((c − shift)/σ) + (T − 1)·log Φ(c/σ)."""
    return log_ndtr((c - shift) / sigma) + (steps - 1) * log_ndtr(c / sigma)


@lru_cache(maxsize=16)
def max_statistic_pair(sigma: float, steps: int) -> Tuple[np.ndarray, np.ndarray]:
    """Binned laws of M = maxₜ yₜ under MoG(1) (P) and MoG(0) (Q), P-masses rounded down,
    Q-masses up: the dominated pair of the shuffle lower bound (module docstring). Returns (p, q)."""
    gap = _BIN_LOSS * sigma * sigma / (_P_SHIFT - _Q_SHIFT)
    # range: F_P(c_lo) ≤ _TAIL and 1 − F_Q(c_hi) ≤ _TAIL (Q has the heavier left tail, P the right)
    lo = -sigma * 2.0
    while _log_cdf(np.array([lo]), _Q_SHIFT, sigma, steps)[0] > math.log(_TAIL):
        lo -= sigma
    hi = _P_SHIFT + sigma
    while -math.expm1(_log_cdf(np.array([hi]), _P_SHIFT, sigma, steps)[0]) > _TAIL:
        hi += sigma
    edges = np.arange(lo, hi + gap, gap)
    masses = []
    for shift in (_P_SHIFT, _Q_SHIFT):
        log_f = _log_cdf(edges, shift, sigma, steps)
        inner = np.exp(log_f[1:]) * -np.expm1(log_f[:-1] - log_f[1:])
        below = math.exp(log_f[0])
        above = -math.expm1(log_f[-1])
        masses.append(np.concatenate([[below], inner, [above]]))
    p = np.maximum(masses[0] * (1.0 - _MASS_MARGIN), 0.0)
    q = masses[1] * (1.0 + _MASS_MARGIN)
    return p, q


def _composed_lower_pld(sigma: float, steps: int, epochs: int, order: int):
    """GridPld of the E-fold composition of the binned pair (order 0: (P, Q); 1: (Q, P))."""
    from .pld.discretize import discretize
    from .pld.losses import Atoms, LossModel

    p, q = max_statistic_pair(sigma, steps)
    if order:
        p, q = q, p
    keep = (p > 0) & (q > 0)
    atoms = Atoms(np.log(p[keep] / q[keep]), p[keep], q[keep])
    model = LossModel((), atoms)
    losses = atoms.loss
    weights = atoms.p / max(float(np.sum(atoms.p)), 1e-300)
    mean = float(np.sum(weights * losses))
    sd = math.sqrt(max(float(np.sum(weights * (losses - mean) ** 2)), 1e-18))
    h = sd / 128.0
    tail = 1e-15 / epochs
    leaf = discretize(model, h, tail)
    return leaf.self_compose(epochs, 1e-13)


def shuffle_lower_bound_epsilon(noise_multiplier: float, steps_per_epoch: int, epochs: int, delta: float) -> float:
    """A certified lower bound on the ε(δ) of shuffled DP-SGD (module docstring; replace_one).

    Parameters
    ----------
    noise_multiplier : float
        σ relative to the replace-one sensitivity (twice the clip norm), > 0.
    steps_per_epoch : int
        T, batches per epoch, ≥ 1.
    epochs : int
        E ≥ 1 (a fresh permutation each epoch).
    delta : float
        δ in (0, 1).
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    steps = check_positive_int("steps_per_epoch", steps_per_epoch)
    epochs = check_positive_int("epochs", epochs)
    delta = check_delta("delta", delta)
    if epochs == 1:  # the largest ε whose certified δ lower bound still exceeds δ (bisection)
        if _one_epoch_delta_lower(sigma, steps, 0.0) <= delta:
            return 0.0
        lo, hi = 0.0, 1.0
        while _one_epoch_delta_lower(sigma, steps, hi) > delta:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if _one_epoch_delta_lower(sigma, steps, mid) > delta:
                lo = mid
            else:
                hi = mid
        return round_down(lo)
    best = max(_composed_lower_pld(sigma, steps, epochs, order).epsilon_bounds(delta)[0] for order in (0, 1))
    return round_down(best)


def _one_epoch_delta_lower(sigma: float, steps: int, epsilon: float) -> float:
    """Σ (p − e^ε q)₊ of the binned pair (both orders, the larger), each term less its float
    error bound 4u(p + e^ε q): a certified lower bound of the binned pair's δ(ε)."""
    p, q = max_statistic_pair(sigma, steps)
    a = math.exp(epsilon)
    best = 0.0
    for x, y in ((p, q), (q, p)):
        terms = x - a * y - 4.0 * _U * (x + a * y)
        best = max(best, float(np.sum(terms[terms > 0])) * (1.0 - 2.0 * terms.size * _U))
    return best


def shuffle_lower_bound_delta(noise_multiplier: float, steps_per_epoch: int, epochs: int, epsilon: float) -> float:
    """A certified lower bound on the δ(ε) of shuffled DP-SGD (see :func:`shuffle_lower_bound_epsilon`)."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    steps = check_positive_int("steps_per_epoch", steps_per_epoch)
    epochs = check_positive_int("epochs", epochs)
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    if epochs == 1:
        return round_down(_one_epoch_delta_lower(sigma, steps, float(epsilon)))
    best = max(_composed_lower_pld(sigma, steps, epochs, order).delta_bounds(float(epsilon))[0] for order in (0, 1))
    return round_down(max(best, 0.0))


@dataclass(frozen=True)
class ShuffleBounds:
    """ε of shuffled DP-SGD at one setting, three numbers with different meanings.

    Attributes
    ----------
    lower : float
        Certified lower bound on the true ε of the shuffled run (Chua et al. 2024 construction).
    upper : float
        Valid upper bound (no amplification): the guarantee dpcore reports for shuffling.
    poisson : float
        ε if the batches were Poisson-sampled at rate 1/T — NOT a guarantee for shuffling.
    """

    noise_multiplier: float
    steps_per_epoch: int
    epochs: int
    delta: float
    lower: float
    upper: float
    poisson: float
    relation: str = "replace_one"

    def to_dict(self) -> Dict[str, object]:
        return {
            "sampler": "shuffle",
            "noise_multiplier": self.noise_multiplier,
            "steps_per_epoch": self.steps_per_epoch,
            "epochs": self.epochs,
            "delta": self.delta,
            "relation": self.relation,
            "epsilon_upper_valid": self.upper,
            "epsilon_lower_bound": self.lower,
            "epsilon_if_poisson_not_a_guarantee": self.poisson,
        }


def shuffle_bounds(noise_multiplier: float, steps_per_epoch: int, epochs: int, delta: float) -> ShuffleBounds:
    """The three labelled numbers of :class:`ShuffleBounds` (module docstring)."""
    from .accounting import get_epsilon

    sigma = check_positive("noise_multiplier", noise_multiplier)
    steps = check_positive_int("steps_per_epoch", steps_per_epoch)
    epochs = check_positive_int("epochs", epochs)
    delta = check_delta("delta", delta)
    upper = get_epsilon(SelfComposedEvent(ShuffledBatchesEvent(GaussianEvent(sigma, "replace_one"), steps), epochs),
                        delta).epsilon
    same_noise = GaussianEvent(2.0 * sigma)  # add_remove: the same noise std over sensitivity C
    poisson = get_epsilon(SelfComposedEvent(PoissonSampledEvent(same_noise, 1.0 / steps), steps * epochs),
                          delta).epsilon
    lower = shuffle_lower_bound_epsilon(sigma, steps, epochs, delta)
    return ShuffleBounds(sigma, steps, epochs, delta, lower, upper, poisson)
