"""Privacy events: an immutable tree describing *what a private algorithm did*.

Accountants turn an event into (ε, δ); solvers build the event of exactly what they ran and never
compute ε by hand. The tree follows the DpEvent design of Google's ``dp_accounting`` (leaf
mechanisms, sampling wrappers, composition nodes), with the neighbouring relation carried
explicitly by every node:

* ``"add_remove"`` — D′ = D ∪ {x} or D ∖ {x};
* ``"replace_one"`` — D′ replaces one record of D.

Noise parameters of leaf events are *relative to the sensitivity under the event's relation*:
``GaussianEvent(noise_multiplier=σ/Δ₂)``. A sum of gradients clipped to norm C has Δ₂ = C under
``add_remove`` and Δ₂ = 2C under ``replace_one``; the caller states which.

Accountants refuse events whose analysis does not hold for the stated relation: Poisson subsampling
is analysed for ``add_remove`` (Mironov, Talwar, Zhang 2019), sampling without replacement for
``replace_one`` (Wang, Balle, Kasiviswanathan 2019), shuffling for ``replace_one`` (Feldman,
McMillan, Talwar 2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from ._validation import (
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_relation,
    check_sampling_rate,
)

__all__ = [
    "PrivacyEvent",
    "NoOpEvent",
    "NonPrivateEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "PureDpEvent",
    "ApproxDpEvent",
    "MechanismEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "ComposedEvent",
    "SelfComposedEvent",
    "ShuffledEvent",
    "DpSrmEvent",
    "RandomAllocationEvent",
    "ShuffledBatchesEvent",
    "TruncatedPoissonSampledEvent",
    "SampledWithReplacementEvent",
    "UnsupportedEventError",
]


class UnsupportedEventError(ValueError):
    """An accountant cannot analyse this event (type or neighbouring relation)."""


class PrivacyEvent:
    """Base class of every node. Subclasses are frozen dataclasses and hashable."""

    relation: str  # declared by leaves as a field, derived by wrappers

    def children(self) -> Tuple["PrivacyEvent", ...]:
        """Direct sub-events (empty for leaves)."""
        return ()


# --------------------------------------------------------------------------------------------- leaves


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class NoOpEvent(PrivacyEvent):
    """Nothing data-dependent was released (ε = 0)."""

    relation: str = "add_remove"

    def __post_init__(self) -> None:
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class NonPrivateEvent(PrivacyEvent):
    """Data were released without noise (ε = ∞); used for ``epsilon=inf`` baselines."""

    relation: str = "add_remove"

    def __post_init__(self) -> None:
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian mechanism: noise N(0, σ²I) added to a query of ℓ2 sensitivity Δ₂.

    Parameters
    ----------
    noise_multiplier : float
        σ / Δ₂ (dimensionless), in (0, ∞).
    relation : {"add_remove", "replace_one"}
        Relation under which Δ₂ is the sensitivity.
    """

    noise_multiplier: float
    relation: str = "add_remove"

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace mechanism: i.i.d. Laplace(b) noise on a query of ℓ1 sensitivity Δ₁.

    Parameters
    ----------
    noise_multiplier : float
        b / Δ₁ (dimensionless), in (0, ∞). The mechanism is (1/noise_multiplier)-DP.
    relation : {"add_remove", "replace_one"}
    """

    noise_multiplier: float
    relation: str = "add_remove"

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class PureDpEvent(PrivacyEvent):
    """Any ε-DP mechanism (e.g. ℓ2-Laplace, exponential mechanism, randomized response).

    Its RDP curve is the tight worst case over ε-DP mechanisms (Bun & Steinke 2016, Prop. 3.3).

    Parameters
    ----------
    epsilon : float
        ε in (0, ∞), nats.
    relation : {"add_remove", "replace_one"}
    """

    epsilon: float
    relation: str = "add_remove"

    def __post_init__(self) -> None:
        _set(self, "epsilon", check_positive("epsilon", self.epsilon))
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class ApproxDpEvent(PrivacyEvent):
    """A mechanism known only to be (ε, δ)-DP; only composition theorems can account for it."""

    epsilon: float
    delta: float
    relation: str = "add_remove"

    def __post_init__(self) -> None:
        _set(self, "epsilon", check_positive("epsilon", self.epsilon))
        _set(self, "delta", check_open_unit("delta", self.delta))
        check_relation("relation", self.relation)


@dataclass(frozen=True, eq=False)
class MechanismEvent(PrivacyEvent):
    """A user-supplied mechanism described by its privacy curves.

    This is the plug that lets a mechanism written outside dpcore compose and be subsampled
    without touching dpcore.

    Parameters
    ----------
    name : str
        Human-readable name (used in reports).
    rdp : callable, optional
        ``rdp(orders: ndarray) -> ndarray`` of Rényi divergences (nats) at orders α > 1; must be an
        upper bound of the worst case over neighbours under ``relation``.
    privacy_profile : callable, optional
        ``privacy_profile(epsilon: float) -> float``, the exact (or upper-bounding) δ(ε).
    pure_epsilon : float, optional
        ε if the mechanism is pure ε-DP (also bounds its RDP at every order).
    relation : {"add_remove", "replace_one"}
    """

    name: str
    rdp: Optional[Callable[[np.ndarray], np.ndarray]] = None
    privacy_profile: Optional[Callable[[float], float]] = None
    pure_epsilon: Optional[float] = None
    relation: str = "add_remove"

    def __post_init__(self) -> None:
        if self.rdp is None and self.privacy_profile is None and self.pure_epsilon is None:
            raise ValueError("MechanismEvent needs at least one of rdp, privacy_profile, pure_epsilon")
        if self.rdp is not None and not callable(self.rdp):
            raise ValueError("rdp must be callable(orders) -> ndarray")
        if self.privacy_profile is not None and not callable(self.privacy_profile):
            raise ValueError("privacy_profile must be callable(epsilon) -> delta")
        if self.pure_epsilon is not None:
            _set(self, "pure_epsilon", check_positive("pure_epsilon", self.pure_epsilon))
        check_relation("relation", self.relation)


@dataclass(frozen=True)
class ShuffledEvent(PrivacyEvent):
    """n users each apply an (ε0, δ0)-DP local randomizer; the reports are shuffled.

    Analysed by amplification by shuffling (Feldman, McMillan, Talwar 2021) under ``replace_one``;
    for δ0 > 0 the accountant adds their Theorem 3.8 term (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0 to δ
    (:func:`dpcore.shuffling.shuffle_epsilon_local_delta`).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 of each report, in (0, ∞).
    n : int
        Number of users, ≥ 2.
    delta0 : float
        Local δ0 of each report, in [0, 1); 0 (default) for pure ε0-DP randomizers.
    """

    epsilon0: float
    n: int
    relation: str = "replace_one"
    delta0: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "epsilon0", check_positive("epsilon0", self.epsilon0))
        _set(self, "n", check_positive_int("n", self.n, minimum=2, maximum=MAX_COUNT))
        check_relation("relation", self.relation)
        d0 = check_nonnegative("delta0", self.delta0)
        if not d0 < 1.0:
            raise ValueError(f"delta0 must be in [0, 1); got {self.delta0!r}")
        _set(self, "delta0", d0)


@dataclass(frozen=True)
class DpSrmEvent(PrivacyEvent):
    """T iterations of DP-SRM (Wang, Jayaraman, Evans, Gu), accounted by the closed-form RDP bound
    of Lemma 3.7 of that paper (``calibration="paper"``); the accountant checks its validity
    conditions.

    Parameters
    ----------
    noise_multiplier : float
        σ relative to the clipping-based sensitivity as defined in Lemma 3.7.
    sampling_rate : float
        b / n, in (0, 1].
    steps : int
        T, the number of iterations.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    relation: str = "replace_one"

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        _set(self, "sampling_rate", check_sampling_rate("sampling_rate", self.sampling_rate))
        _set(self, "steps", check_positive_int("steps", self.steps))
        check_relation("relation", self.relation)


# ------------------------------------------------------------------------------------------- wrappers


def _checked_event(event: object) -> "PrivacyEvent":
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a PrivacyEvent; got {event!r}")
    return event


class _WrapperEvent(PrivacyEvent):
    """A node around one sub-event (its ``event`` field), whose neighbouring relation it inherits."""

    event: PrivacyEvent

    @property
    def relation(self) -> str:  # type: ignore[override]
        return self.event.relation

    def children(self) -> Tuple[PrivacyEvent, ...]:
        return (self.event,)


@dataclass(frozen=True)
class PoissonSampledEvent(_WrapperEvent):
    """Each record enters the batch independently with probability ``sampling_rate``."""

    event: PrivacyEvent
    sampling_rate: float

    def __init__(self, event: PrivacyEvent, sampling_rate: float) -> None:
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "sampling_rate", check_sampling_rate("sampling_rate", sampling_rate))


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(_WrapperEvent):
    """A batch of ``batch_size`` distinct records drawn uniformly from ``dataset_size``."""

    event: PrivacyEvent
    batch_size: int
    dataset_size: int

    def __init__(self, event: PrivacyEvent, batch_size: int, dataset_size: int) -> None:
        n = check_positive_int("dataset_size", dataset_size)
        m = check_positive_int("batch_size", batch_size)
        if m > n:
            raise ValueError(f"batch_size must be in [1, dataset_size={n}]; got {m}")
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "batch_size", m)
        object.__setattr__(self, "dataset_size", n)

    @property
    def sampling_rate(self) -> float:
        return self.batch_size / self.dataset_size


#: Largest count of a :class:`SelfComposedEvent` (and of the product of nested counts, checked by the
#: accountants): 10³⁰ repetitions, far beyond any training run, keep every accountant's arithmetic
#: in float64 range; a larger count is refused naming ``count``.
MAX_COUNT = 10**30


def check_count(name: str, value: object) -> int:
    """``value`` as an int in [1, :data:`MAX_COUNT`], else ``ValueError`` naming ``name`` and the range."""
    count = check_positive_int(name, value)
    if count > MAX_COUNT:
        raise ValueError(f"{name} must be an integer in [1, 1e30] (compositions beyond that are outside every "
                         f"accountant's float range); got {count}")
    return count


@dataclass(frozen=True)
class SelfComposedEvent(_WrapperEvent):
    """``count`` adaptive repetitions of ``event`` (1 ≤ count ≤ :data:`MAX_COUNT`)."""

    event: PrivacyEvent
    count: int

    def __init__(self, event: PrivacyEvent, count: int) -> None:
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "count", check_count("count", count))


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Adaptive composition of a list of events, all under the same neighbouring relation."""

    events: Tuple[PrivacyEvent, ...]

    def __init__(self, events: Sequence[PrivacyEvent]) -> None:
        if isinstance(events, (PrivacyEvent, str, bytes)) or not hasattr(events, "__iter__"):  # was a TypeError
            raise ValueError(f"events must be a non-empty sequence of PrivacyEvent; got {events!r}")
        events = tuple(events)
        if not events:
            raise ValueError("events must be a non-empty sequence of PrivacyEvent")
        for e in events:
            if not isinstance(e, PrivacyEvent):
                raise ValueError(f"events must contain only PrivacyEvent; got {e!r}")
        relations = {e.relation for e in events}
        if len(relations) > 1:
            raise ValueError(f"events must share one neighbouring relation; got {sorted(relations)}")
        object.__setattr__(self, "events", events)

    @property
    def relation(self) -> str:
        return self.events[0].relation

    def children(self) -> Tuple[PrivacyEvent, ...]:
        return self.events


# ------------------------------------------------------------- samplers of DP-SGD-type training loops


@dataclass(frozen=True)
class RandomAllocationEvent(_WrapperEvent):
    """Random allocation (balls-in-bins for ``num_selected=1``): each record takes part in exactly
    ``num_selected`` of ``num_steps`` runs of ``event``, the steps chosen uniformly at random,
    independently of the other records. One instance is one pass (an epoch); compose epochs with
    :class:`SelfComposedEvent`.

    Accounted for ``relation="add_remove"`` (Chua et al. 2025, "Balls-and-bins sampling for
    DP-SGD"; Feldman & Shenfeld 2025, "Privacy amplification by random allocation"; PLD of
    Feldman & Shenfeld 2026, :mod:`dpcore.pld.random_allocation`). A replace-one neighbour is a
    removal followed by an addition, so an add_remove (ε, δ) gives (2ε, (1 + e^ε)δ) for
    replace_one (group privacy of size 2); accountants refuse ``relation="replace_one"``.

    Parameters
    ----------
    event : PrivacyEvent
        The mechanism run at each step (a :class:`GaussianEvent` for the PLD accountant).
    num_steps : int
        t, the steps of one pass, ≥ 1.
    num_selected : int
        k, the steps each record is used in, 1 ≤ k ≤ t.
    """

    event: PrivacyEvent
    num_steps: int
    num_selected: int

    def __init__(self, event: PrivacyEvent, num_steps: int, num_selected: int = 1) -> None:
        t = check_positive_int("num_steps", num_steps)
        k = check_positive_int("num_selected", num_selected)
        if k > t:
            raise ValueError(f"num_selected must be in [1, num_steps={t}]; got {k}")
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "num_steps", t)
        object.__setattr__(self, "num_selected", k)

    def decomposed(self) -> PrivacyEvent:
        """For k > 1: the composition of k one-out-of-⌊t/k⌋ / ⌈t/k⌉ allocations (r = t mod k of
        size ⌈t/k⌉) that dominates this event (Feldman & Shenfeld 2025; a uniform k-subset of the
        steps is a uniformly permuted allocation of one step per block, and the hockey-stick
        divergence is jointly convex). For k = 1: the event itself."""
        t, k = self.num_steps, self.num_selected
        if k == 1:
            return self
        size, extra = divmod(t, k)
        parts = []
        if k - extra:
            parts.append(SelfComposedEvent(RandomAllocationEvent(self.event, size), k - extra))
        if extra:
            parts.append(SelfComposedEvent(RandomAllocationEvent(self.event, size + 1), extra))
        return parts[0] if len(parts) == 1 else ComposedEvent(parts)


@dataclass(frozen=True)
class ShuffledBatchesEvent(_WrapperEvent):
    """One epoch of a shuffling data loader: a uniformly random permutation of the n records cut
    into ``num_batches`` batches (sizes ⌊n/T⌋ / ⌈n/T⌉), ``event`` run once per batch.

    Accounted for ``relation="replace_one"`` only, with ``event``'s noise relative to the
    replace-one sensitivity (twice the clip norm for DP-SGD). Under replace_one n, hence every
    batch boundary, is the same on both neighbours; coupling the permutations so that the replaced
    record keeps its position changes exactly one batch, by one record: whatever the batch queries
    are (adaptive or not), the epoch is dominated by one run of ``event`` — *no amplification* is
    claimed, because none is proven for adaptive batch queries (Chua et al. 2024, "How private are
    DP-SGD implementations?", show the true ε can be far above the Poisson number). The same
    argument holds for zero-out neighbours (Chua et al.'s relation, a replace-one special case)
    with half the sensitivity.

    **Not for add_remove** (refused by every accountant, :meth:`dominating_event`): adding a record
    moves the boundaries of the split, so other records change batches too. Two records of
    gradient +1 against the same plus one of −1, T = 2, noise std C: the claimed add_remove
    ε = 4.3772 at δ = 1e-5 has exact δ = 1.6e-2 (``tests/dpcore/test_sampler_relations.py``).

    Accountants treat one instance as ``event``; :mod:`dpcore.shuffle_bounds` gives a lower bound.

    Parameters
    ----------
    event : PrivacyEvent
        The mechanism run on each batch (noise relative to the replace-one sensitivity).
    num_batches : int
        Batches per epoch, ≥ 1.
    """

    event: PrivacyEvent
    num_batches: int

    def __init__(self, event: PrivacyEvent, num_batches: int) -> None:
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "num_batches", check_positive_int("num_batches", num_batches))

    def dominating_event(self) -> PrivacyEvent:
        """``event`` (one run dominates the epoch, class docstring); refuses add_remove with
        :class:`UnsupportedEventError`."""
        if self.relation != "replace_one":
            raise UnsupportedEventError(
                "ShuffledBatchesEvent is accounted for relation='replace_one' only (noise relative to the "
                f"replace-one sensitivity, 2x the clip norm); got relation={self.relation!r}: under add_remove an "
                "added record moves the batch boundaries, so the one-batch bound does not hold")
        return self.event


@dataclass(frozen=True)
class TruncatedPoissonSampledEvent(_WrapperEvent):
    """Truncated Poisson sampling: each record enters the batch independently with probability
    ``sampling_rate``; a batch of more than ``max_batch_size`` records is cut to a uniformly
    random subset of ``max_batch_size``. Accounted for ``add_remove`` with ``dataset_size`` a
    public upper bound on the number of records (:mod:`dpcore.pld.truncated_poisson`).

    Parameters
    ----------
    event : PrivacyEvent
        A :class:`GaussianEvent` whose noise multiplier is relative to the add/remove sensitivity
        (one record's clipped contribution).
    sampling_rate : float
        q in (0, 1].
    max_batch_size : int
        B ≥ 1, the cap.
    dataset_size : int
        N ≥ 1, a public upper bound on the dataset size (the truncation probability grows with it).
    """

    event: PrivacyEvent
    sampling_rate: float
    max_batch_size: int
    dataset_size: int

    def __init__(self, event: PrivacyEvent, sampling_rate: float, max_batch_size: int, dataset_size: int) -> None:
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "sampling_rate", check_sampling_rate("sampling_rate", sampling_rate))
        object.__setattr__(self, "max_batch_size", check_positive_int("max_batch_size", max_batch_size))
        object.__setattr__(self, "dataset_size", check_positive_int("dataset_size", dataset_size))


@dataclass(frozen=True)
class SampledWithReplacementEvent(_WrapperEvent):
    """A batch of ``batch_size`` independent uniform draws (with replacement) from
    ``dataset_size`` records; a record drawn K times counts K times in the batch. Accounted for
    ``replace_one`` only (:mod:`dpcore.pld.truncated_poisson`): under add/remove the draws of every
    other record change with the dataset size."""

    event: PrivacyEvent
    batch_size: int
    dataset_size: int

    def __init__(self, event: PrivacyEvent, batch_size: int, dataset_size: int) -> None:
        object.__setattr__(self, "event", _checked_event(event))
        object.__setattr__(self, "batch_size", check_positive_int("batch_size", batch_size))
        object.__setattr__(self, "dataset_size", check_positive_int("dataset_size", dataset_size, minimum=2))
