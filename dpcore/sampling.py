"""Batch samplers that emit their own privacy event (NumPy only; usable from any training loop).

A sampler yields index arrays (``numpy.int64``, into ``range(dataset_size)``) and builds the event
of exactly what it yielded: :meth:`BatchSampler.privacy_event` covers every batch this sampler
object has emitted (a started epoch counts in full), :meth:`BatchSampler.event` the event of a
planned run of ``steps`` batches. A solver that takes ``sampling=<sampler>`` draws its batches
from the sampler and asks the same object for the event, so the accounted sampler is the one that
ran. All schedule parameters (rate, batch size, batches per epoch) are public; ``dataset_size`` is
the number of records indexed. The batches themselves must stay secret: an integer ``rng`` seed
makes them public (no amplification is left) and emits
:class:`~dpcore.seeding.DeterministicSeedWarning` — for tests only.

Relations. Shuffling is accounted under replace_one only: adding a record moves the boundaries of
the split (:class:`~dpcore.events.ShuffledBatchesEvent`). Random allocation holds under add_remove
because each record's steps are drawn independently of the others from a public number of steps
per epoch T: an added record changes no other record's allocation. T must not be derived from the
private record count — :func:`make_sampler` derives it from the *declared* ``dataset_size``, a
public constant (as the truncated-Poisson bound N is), not from len(data).

===========================  ============================================  =====================================
sampler                      event per unit                                relation (noise relative to)
===========================  ============================================  =====================================
:class:`PoissonSampler`      ``PoissonSampledEvent(step, q)`` per step      add_remove (one clip norm)
:class:`FixedSizeSampler`    ``SampledWithoutReplacementEvent`` per step    replace_one (twice the clip norm)
:class:`ShuffleSampler`      ``ShuffledBatchesEvent(step, T)`` per epoch    replace_one (no amplification claimed)
:class:`BallsInBinsSampler`  ``RandomAllocationEvent(step, T, k)`` / epoch  add_remove, T public and fixed
:class:`TruncatedPoissonSampler`  ``TruncatedPoissonSampledEvent`` per step add_remove
:class:`WithReplacementSampler`   ``SampledWithReplacementEvent`` per step  replace_one
===========================  ============================================  =====================================
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Iterator, List, Optional, Tuple

import numpy as np

from ._validation import check_positive_int, check_sampling_rate
from .seeding import is_fixed_seed, warn_if_fixed_seed
from .events import (
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    SelfComposedEvent,
    ShuffledBatchesEvent,
    TruncatedPoissonSampledEvent,
)

__all__ = [
    "BatchSampler",
    "PoissonSampler",
    "FixedSizeSampler",
    "ShuffleSampler",
    "BallsInBinsSampler",
    "TruncatedPoissonSampler",
    "WithReplacementSampler",
    "SAMPLERS",
    "make_sampler",
    "planned_steps",
    "sampler_event",
    "calibrate_sampler_noise",
]


def _generator(rng: object) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy.random.Generator, an int seed or None; got {rng!r}")


class BatchSampler(ABC):
    """Base class: subclasses draw one *unit* (a step, or an epoch of steps) at a time.

    Attributes
    ----------
    name : str
        The sampler's name in reports and JSON (``"poisson"``, ``"shuffle"``, …).
    relation : str
        The neighbouring relation its event is analysed under.
    dataset_size : int
        Records indexed, ``range(dataset_size)``.
    steps_per_unit : int
        Batches per unit (1 for per-step samplers, the batches of an epoch otherwise).
    """

    name = ""
    relation = "add_remove"
    steps_per_unit = 1

    def __init__(self, dataset_size: int, rng: object = None) -> None:
        self.dataset_size = check_positive_int("dataset_size", dataset_size)
        self._rng = _generator(rng)
        #: an integer seed fixed the batches (public: the accounted amplification does not exist)
        self.fixed_seed = is_fixed_seed(rng)
        warn_if_fixed_seed(rng, type(self).__name__, "rng", "the batches public (reproducible from the seed: the "
                           "amplification by sampling its event accounts does not exist)", stacklevel=4)
        self._steps = 0  # batches emitted
        self._pending: List[np.ndarray] = []  # rest of the current epoch

    # ---------------------------------------------------------------- drawing
    @abstractmethod
    def _draw_unit(self, rng: np.random.Generator) -> List[np.ndarray]:
        """The batches of one unit."""

    @abstractmethod
    def _unit_event(self, step_event: PrivacyEvent) -> PrivacyEvent:
        """The event of one unit with ``step_event`` run on each batch."""

    @property
    @abstractmethod
    def nominal_batch_size(self) -> float:
        """The public (expected) batch size: the normaliser of an averaged gradient."""

    def batches(self, steps: int) -> Iterator[np.ndarray]:
        """Yield ``steps`` batches (continuing the current epoch, then new ones)."""
        steps = check_positive_int("steps", steps)
        for _ in range(steps):
            if not self._pending:
                self._pending = list(self._draw_unit(self._rng))[::-1]
            self._steps += 1
            yield self._pending.pop()

    def epoch(self) -> List[np.ndarray]:
        """The batches of one epoch (``steps_per_unit`` of them for the epoch samplers; for the
        per-step samplers ⌈1/rate⌉, one expected pass)."""
        return list(self.batches(self.steps_per_epoch))

    @property
    def steps_per_epoch(self) -> int:
        return self.steps_per_unit

    @property
    def steps_emitted(self) -> int:
        return self._steps

    # --------------------------------------------------------------- accounting
    def units(self, steps: int) -> int:
        """Units that ``steps`` batches touch (a started epoch counts in full)."""
        return -(-int(steps) // self.steps_per_unit)

    def event(self, step_event: PrivacyEvent, steps: int) -> PrivacyEvent:
        """The event of a run of ``steps`` batches from this sampler, ``step_event`` on each."""
        if step_event.relation != self.relation:
            raise ValueError(f"step_event must have relation={self.relation!r} for the {self.name} sampler "
                             f"(the analysis dpcore uses); got {step_event.relation!r}")
        steps = check_positive_int("steps", steps)
        return SelfComposedEvent(self._unit_event(step_event), self.units(steps))

    def privacy_event(self, step_event: PrivacyEvent) -> PrivacyEvent:
        """The event of every batch this sampler has emitted so far (NoOpEvent before the first)."""
        if self._steps == 0:
            return NoOpEvent(self.relation)
        return self.event(step_event, self._steps)

    def describe(self) -> dict:
        """Public parameters (for JSON reports)."""
        return {"sampler": self.name, "relation": self.relation, "dataset_size": self.dataset_size,
                "nominal_batch_size": self.nominal_batch_size, "steps_per_epoch": self.steps_per_epoch}


class PoissonSampler(BatchSampler):
    """Every record joins each batch independently with probability ``sampling_rate``."""

    name = "poisson"

    def __init__(self, dataset_size: int, sampling_rate: float, rng: object = None) -> None:
        super().__init__(dataset_size, rng)
        self.sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)

    def _draw_unit(self, rng):
        # each record independently w.p. q ⇔ a Bin(n, q) count of records, uniform among the n: O(batch)
        size = int(rng.binomial(self.dataset_size, self.sampling_rate))
        return [np.sort(rng.choice(self.dataset_size, size, replace=False))]

    def _unit_event(self, step_event):
        return PoissonSampledEvent(step_event, self.sampling_rate)

    @property
    def nominal_batch_size(self) -> float:
        return self.sampling_rate * self.dataset_size

    @property
    def steps_per_epoch(self) -> int:
        """⌈1/q⌉, the steps of one expected pass (refused when 1/q overflows float64)."""
        per = 1.0 / self.sampling_rate
        if not math.isfinite(per):
            raise ValueError(f"sampling_rate={self.sampling_rate!r} is so small that one expected pass, 1/sampling_rate "
                             "steps, overflows float64")
        return math.ceil(per)


class TruncatedPoissonSampler(PoissonSampler):
    """Poisson sampling with the batch cut to a uniformly random subset of ``max_batch_size``
    records when larger. ``dataset_size`` must be a public upper bound on the records (the
    truncation probability is computed from it)."""

    name = "truncated-poisson"

    def __init__(self, dataset_size: int, sampling_rate: float, max_batch_size: int, rng: object = None) -> None:
        super().__init__(dataset_size, sampling_rate, rng)
        self.max_batch_size = check_positive_int("max_batch_size", max_batch_size)

    def _draw_unit(self, rng):
        (batch,) = super()._draw_unit(rng)
        if batch.size > self.max_batch_size:
            batch = np.sort(rng.choice(batch, self.max_batch_size, replace=False))
        return [batch]

    def _unit_event(self, step_event):
        return TruncatedPoissonSampledEvent(step_event, self.sampling_rate, self.max_batch_size, self.dataset_size)

    @property
    def nominal_batch_size(self) -> float:
        return min(self.sampling_rate * self.dataset_size, float(self.max_batch_size))


class FixedSizeSampler(BatchSampler):
    """``batch_size`` distinct records drawn uniformly, afresh each step (replace_one)."""

    name = "without-replacement"
    relation = "replace_one"

    def __init__(self, dataset_size: int, batch_size: int, rng: object = None) -> None:
        super().__init__(dataset_size, rng)
        self.batch_size = check_positive_int("batch_size", batch_size)
        if self.batch_size > self.dataset_size:
            raise ValueError(f"batch_size must be in [1, dataset_size={self.dataset_size}]; got {batch_size}")

    def _draw_unit(self, rng):
        return [np.sort(rng.choice(self.dataset_size, self.batch_size, replace=False))]

    def _unit_event(self, step_event):
        return SampledWithoutReplacementEvent(step_event, self.batch_size, self.dataset_size)

    @property
    def nominal_batch_size(self) -> float:
        return float(self.batch_size)

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(self.dataset_size / self.batch_size)


class WithReplacementSampler(FixedSizeSampler):
    """``batch_size`` independent uniform draws (a record may appear more than once; replace_one)."""

    name = "with-replacement"

    def __init__(self, dataset_size: int, batch_size: int, rng: object = None) -> None:
        BatchSampler.__init__(self, check_positive_int("dataset_size", dataset_size, minimum=2), rng)
        self.batch_size = check_positive_int("batch_size", batch_size)

    def _draw_unit(self, rng):
        return [np.sort(rng.integers(0, self.dataset_size, self.batch_size))]

    def _unit_event(self, step_event):
        return SampledWithReplacementEvent(step_event, self.batch_size, self.dataset_size)


class ShuffleSampler(BatchSampler):
    """Each epoch a uniformly random permutation cut into ``num_batches`` batches of sizes
    ⌊n/T⌋ or ⌈n/T⌉ (what a shuffling data loader does). Accounted with no amplification under
    replace_one (noise relative to twice the clip norm; :class:`~dpcore.events.ShuffledBatchesEvent`
    says why add_remove is not valid); :func:`dpcore.shuffle_bounds.shuffle_bounds` shows the lower
    bound and the Poisson number beside it."""

    name = "shuffle"
    relation = "replace_one"

    def __init__(self, dataset_size: int, num_batches: int, rng: object = None) -> None:
        super().__init__(dataset_size, rng)
        self.num_batches = check_positive_int("num_batches", num_batches)
        self.steps_per_unit = self.num_batches

    def _draw_unit(self, rng):
        return [np.asarray(b, dtype=np.int64) for b in np.array_split(rng.permutation(self.dataset_size), self.num_batches)]

    def _unit_event(self, step_event):
        return ShuffledBatchesEvent(step_event, self.num_batches)

    @property
    def nominal_batch_size(self) -> float:
        return self.dataset_size / self.num_batches


#: k ≤ this: Floyd's algorithm (O(n·k²) time); above, random keys in row blocks (O(n·t) time)
_FLOYD_MAX_K = 32
#: random keys held at once by the row-block path
_BLOCK_KEYS = 2**22


def _uniform_subsets(rng: np.random.Generator, n: int, t: int, k: int) -> np.ndarray:
    """n independent uniform k-subsets of range(t) as an (n, k) int64 array, memory O(n·k + block).

    k ≤ :data:`_FLOYD_MAX_K`: Floyd's algorithm vectorised over the rows (for j = t − k … t − 1 draw
    r uniform in [0, j]; take r unless the row has it, then j — every k-subset equally likely;
    Bentley & Floyd 1987). Larger k: the k smallest of t uniform keys per row, rows in blocks of
    :data:`_BLOCK_KEYS` keys."""
    chosen = np.empty((n, k), dtype=np.int64)
    if k <= _FLOYD_MAX_K:
        for j, top in enumerate(range(t - k, t)):
            r = rng.integers(0, top + 1, n)
            taken = (chosen[:, :j] == r[:, None]).any(axis=1)
            chosen[:, j] = np.where(taken, top, r)
        return chosen
    rows = max(1, _BLOCK_KEYS // t)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        chosen[start:stop] = np.argpartition(rng.random((stop - start, t)), k - 1, axis=1)[:, :k]
    return chosen


class BallsInBinsSampler(BatchSampler):
    """Random allocation: each epoch every record is put in ``num_selected`` of ``steps_per_epoch``
    batches chosen uniformly at random, independently of the others (balls-in-bins for
    ``num_selected=1``; Chua et al. 2025, Feldman & Shenfeld 2025). Batch sizes vary."""

    name = "random-allocation"

    def __init__(self, dataset_size: int, steps_per_epoch: int, num_selected: int = 1, rng: object = None) -> None:
        super().__init__(dataset_size, rng)
        t = check_positive_int("steps_per_epoch", steps_per_epoch)
        k = check_positive_int("num_selected", num_selected)
        if k > t:
            raise ValueError(f"num_selected must be in [1, steps_per_epoch={t}]; got {k}")
        self.steps_per_unit, self.num_selected = t, k

    def _draw_unit(self, rng):
        n, t, k = self.dataset_size, self.steps_per_unit, self.num_selected
        if k == 1:
            steps = rng.integers(0, t, n)
            owners = np.arange(n)
        else:  # k distinct steps per record, a uniform k-subset of the t steps
            steps = _uniform_subsets(rng, n, t, k).ravel()
            owners = np.repeat(np.arange(n), k)
        order = np.argsort(steps, kind="stable")
        bounds = np.searchsorted(steps[order], np.arange(t + 1))
        return [owners[order[bounds[s]:bounds[s + 1]]] for s in range(t)]

    def _unit_event(self, step_event):
        return RandomAllocationEvent(step_event, self.steps_per_unit, self.num_selected)

    @property
    def nominal_batch_size(self) -> float:
        return self.dataset_size * self.num_selected / self.steps_per_unit


#: most steps per epoch of a random-allocation loader description (:func:`make_sampler`): the
#: certified PLD of one epoch (:mod:`dpcore.pld.random_allocation`) builds within seconds up to
#: about this many at σ ≈ 0.3–1 (its partial sums outgrow their grid beyond, at any σ)
MAX_ALLOCATION_STEPS = 10**7
#: CLI / integration names of the samplers
SAMPLERS = ("poisson", "without-replacement", "shuffle", "random-allocation", "truncated-poisson", "with-replacement")


def make_sampler(name: str, *, dataset_size: int, batch_size: Optional[int] = None, rng: object = None,
                 max_batch_size: Optional[int] = None, num_selected: int = 1) -> BatchSampler:
    """A sampler from a data loader's public description: ``dataset_size`` records and a (nominal)
    ``batch_size`` b. Poisson-type samplers use rate b/N; epoch samplers ⌈N/b⌉ batches per epoch;
    ``max_batch_size`` (truncated Poisson) defaults to ⌈1.2·b⌉. Under add_remove (random
    allocation, Poisson, truncated Poisson) ``dataset_size`` is a declared public constant, not the
    private record count: the schedule derived from it must not change when a record is added."""
    from ._validation import check_choice

    name = check_choice("sampling", name, SAMPLERS)
    n = check_positive_int("dataset_size", dataset_size)
    b = check_positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, dataset_size={n}]; got {b}")
    if name == "poisson":
        return PoissonSampler(n, b / n, rng)
    if name == "truncated-poisson":
        cap = math.ceil(1.2 * b) if max_batch_size is None else max_batch_size
        return TruncatedPoissonSampler(n, b / n, cap, rng)
    if name == "without-replacement":
        return FixedSizeSampler(n, b, rng)
    if name == "with-replacement":
        return WithReplacementSampler(n, b, rng)
    steps = math.ceil(n / b)
    if name == "shuffle":
        return ShuffleSampler(n, steps, rng)
    if steps > MAX_ALLOCATION_STEPS:
        raise ValueError(f"dataset_size={n} / batch_size={b} gives {steps} steps per epoch; random allocation is "
                         f"accounted for at most {MAX_ALLOCATION_STEPS:.0e} steps per epoch (beyond, the partial sums "
                         "of its certified PLD outgrow their grid)")
    return BallsInBinsSampler(n, steps, num_selected, rng)


def planned_steps(sampler: BatchSampler, *, epochs: Optional[float] = None, steps: Optional[int] = None) -> int:
    """T from ``steps`` or ``epochs`` (exactly one): epoch samplers take whole epochs
    (epochs × batches per epoch); per-step samplers ⌈epochs·N/b⌉ (one expected pass is N/b steps)."""
    from .calibration import MAX_STEPS

    if (epochs is None) == (steps is None):
        raise ValueError("give exactly one of epochs and steps")
    if steps is not None:
        t = check_positive_int("steps", steps)
        if t > MAX_STEPS:
            raise ValueError(f"steps must be an integer in [1, {MAX_STEPS:.0e}] (the accountants' float64 range); "
                             f"got {t}")
        return t
    if sampler.steps_per_unit > 1:
        t = check_positive_int("epochs", epochs) * sampler.steps_per_unit
    else:
        from ._validation import check_positive

        e = check_positive("epochs", epochs)
        if not math.isfinite(e):
            raise ValueError(f"epochs must be finite; got {epochs!r}")
        passes = e * sampler.dataset_size / sampler.nominal_batch_size
        if not passes <= MAX_STEPS:  # also inf / NaN: refuse before the integer conversion
            raise ValueError(f"epochs={epochs} over dataset_size={sampler.dataset_size} records in batches of "
                             f"batch_size ~ {sampler.nominal_batch_size:g} give {passes:.3g} steps; at most "
                             f"{MAX_STEPS:.0e} steps can be accounted (the accountants' float64 range)")
        t = max(1, math.ceil(passes - 1e-9))
    if t > MAX_STEPS:
        raise ValueError(f"epochs={epochs} over dataset_size={sampler.dataset_size} records in batches of batch_size "
                         f"~ {sampler.nominal_batch_size:g} give {t} steps; at most {MAX_STEPS:.0e} steps can be "
                         "accounted (the accountants' float64 range)")
    return t


def sampler_event(sampling: str, noise_multiplier: float, *, dataset_size: int, batch_size: int,
                  epochs: Optional[float] = None, steps: Optional[int] = None, max_batch_size: Optional[int] = None,
                  num_selected: int = 1) -> Tuple[PrivacyEvent, dict]:
    """The event of DP-SGD with noise multiplier σ (relative to the clip norm for add_remove
    samplers, to twice it for replace_one ones) run on batches of the named sampler, and the
    schedule derived from the loader's public description (:func:`make_sampler`)."""
    from .events import GaussianEvent

    sampler = make_sampler(sampling, dataset_size=dataset_size, batch_size=batch_size,
                           max_batch_size=max_batch_size, num_selected=num_selected)
    t = planned_steps(sampler, epochs=epochs, steps=steps)
    event = sampler.event(GaussianEvent(noise_multiplier, sampler.relation), t)
    schedule = dict(sampler.describe(), steps=t, units=sampler.units(t))
    for name in ("sampling_rate", "max_batch_size", "num_batches", "num_selected"):
        if hasattr(sampler, name):
            schedule[name] = getattr(sampler, name)
    return event, schedule


def calibrate_sampler_noise(sampling: str, target_epsilon: float, delta: float, *, dataset_size: int,
                            batch_size: int, epochs: Optional[float] = None, steps: Optional[int] = None,
                            accountant: str = "auto", max_batch_size: Optional[int] = None, num_selected: int = 1):
    """Least noise multiplier with ε ≤ ``target_epsilon`` at δ for DP-SGD on the named sampler's
    batches (:func:`dpcore.calibrate`, safe side re-checked)."""
    from .calibration import MIN_NOISE_MULTIPLIER, calibrate

    def event_fn(z: float) -> PrivacyEvent:
        return sampler_event(sampling, z, dataset_size=dataset_size, batch_size=batch_size, epochs=epochs,
                             steps=steps, max_batch_size=max_batch_size, num_selected=num_selected)[0]

    event_fn(1.0)  # validates the description before any search
    return calibrate(event_fn, "noise_multiplier", target_epsilon, delta, lower=0.5, upper=4.0, increasing=False,
                     bounds=(MIN_NOISE_MULTIPLIER, math.inf), accountant=accountant)
