"""An accountant Opacus's ``PrivacyEngine`` can use in place of its own (duck-typed, no torch).

Opacus calls ``accountant.step(noise_multiplier=σ, sample_rate=q)`` after every optimizer step,
with q = 1/len(data_loader), and ``accountant.get_epsilon(delta)`` for the budget spent; it saves
``state_dict()`` in checkpoints. Opacus's own accountants assume Poisson sampling whatever the
loader does. :class:`DpcoreAccountant` is told the sampler the loader really uses and accounts
that one with dpcore's certified accountants::

    engine = opacus.PrivacyEngine()
    engine.accountant = DpcoreAccountant("shuffle")      # before make_private
    model, optimizer, loader = engine.make_private(..., poisson_sampling=False)
    ...
    engine.get_epsilon(1e-5)                             # valid for shuffled batches

``sampling``: ``"poisson"`` (Opacus's DPDataLoader), ``"shuffle"`` (a shuffling DataLoader; no
amplification, replace_one — :mod:`dpcore.shuffle_bounds`), ``"random-allocation"`` (balls-in-bins),
``"truncated-poisson"`` (needs ``dataset_size`` and ``max_batch_size``), ``"without-replacement"``
and ``"with-replacement"`` (fixed batches of the declared ``batch_size``; replace_one: Opacus's
q = 1/len(data_loader) is not b/N — batches of 300 over N = 1000 give q = 0.25 — so the batch is
never rebuilt from q, and a rate no such loader has is refused). Under replace_one (these
two and shuffle, whose add_remove bound does not hold: :class:`~dpcore.events.ShuffledBatchesEvent`)
Opacus's noise multiplier, relative to the clip norm C, is halved against the 2C sensitivity. Epoch samplers take
T = round(1/q) batches per epoch; a started epoch is accounted in full and with the smallest noise
multiplier used in it. :meth:`DpcoreAccountant.for_sampler` binds the accountant to a
:class:`dpcore.sampling.BatchSampler` and refuses steps whose rate does not match it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from copy import deepcopy
from typing import Any, Callable, List, Optional, Tuple

from .._validation import check_choice, check_positive, check_positive_int, check_sampling_rate
from ..events import (
    ComposedEvent,
    GaussianEvent,
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

__all__ = ["DpcoreAccountant", "ACCOUNTED_SAMPLERS"]

ACCOUNTED_SAMPLERS = ("poisson", "shuffle", "random-allocation", "truncated-poisson", "without-replacement",
                      "with-replacement")
_EPOCH = ("shuffle", "random-allocation")
_REPLACE_ONE = ("without-replacement", "with-replacement")


class DpcoreAccountant:
    """Opacus-compatible accountant (module docstring).

    Parameters
    ----------
    sampling : str
        The sampler the data loader uses, one of :data:`ACCOUNTED_SAMPLERS`.
    accountant : str
        dpcore accountant for :meth:`get_epsilon` (default ``"auto"``: the tightest valid).
    dataset_size : int, optional
        N, records (required by truncated-poisson and the fixed-batch samplers).
    max_batch_size : int, optional
        B, the truncated-poisson cap.
    batch_size : int, optional
        b, the loader's batch size (records; required by the fixed-batch samplers).
    """

    def __init__(self, sampling: str = "poisson", *, accountant: str = "auto", dataset_size: Optional[int] = None,
                 max_batch_size: Optional[int] = None, batch_size: Optional[int] = None) -> None:
        self.sampling = check_choice("sampling", sampling, ACCOUNTED_SAMPLERS)
        self.accountant = accountant
        self.dataset_size = None if dataset_size is None else check_positive_int("dataset_size", dataset_size)
        self.max_batch_size = None if max_batch_size is None else check_positive_int("max_batch_size",
                                                                                      max_batch_size)
        if self.sampling == "truncated-poisson" and (self.dataset_size is None or self.max_batch_size is None):
            raise ValueError("sampling='truncated-poisson' needs dataset_size and max_batch_size")
        self.batch_size = None if batch_size is None else check_positive_int("batch_size", batch_size)
        if self.sampling in _REPLACE_ONE and (self.dataset_size is None or self.batch_size is None):
            raise ValueError(f"sampling={self.sampling!r} needs dataset_size and batch_size (the loader's fixed "
                             "batches; Opacus's sample rate 1/len(loader) does not give the batch size)")
        if self.batch_size is not None and self.sampling not in _REPLACE_ONE:
            raise ValueError(f"batch_size applies to the fixed-batch samplers {_REPLACE_ONE}; got "
                             f"sampling={self.sampling!r}")
        if self.sampling == "without-replacement" and self.batch_size > self.dataset_size:
            raise ValueError(f"batch_size must be in [1, dataset_size={self.dataset_size}]; got {batch_size}")
        self.history: List[Tuple[float, float, int]] = []  # (noise multiplier, sample rate, steps), as Opacus
        self._expected_rate: Optional[float] = None

    # ------------------------------------------------------------------ Opacus interface
    @classmethod
    def mechanism(cls) -> str:
        return "dpcore"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step (Opacus's hook calls this)."""
        sigma = check_positive("noise_multiplier", noise_multiplier)
        q = check_sampling_rate("sample_rate", sample_rate)
        if self._expected_rate is not None and not math.isclose(q, self._expected_rate, rel_tol=1e-9):
            raise ValueError(f"sample_rate={q!r} does not match the bound sampler's rate {self._expected_rate!r}: "
                             "this accountant would account another sampler than the one that runs")
        if self.sampling in _REPLACE_ONE:
            n, b = self.dataset_size, self.batch_size
            rates = (b / n, 1.0 / math.ceil(n / b), 1.0 / max(1, n // b))  # b/N, 1/len(loader) (drop_last or not)
            if not any(math.isclose(q, r, rel_tol=1e-9) for r in rates):
                raise ValueError(f"sample_rate={q!r} is neither batch_size/dataset_size = {b}/{n} nor 1/len(loader) "
                                 f"of a loader with batches of {b}: this accountant would account another loader")
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + 1)
        else:
            self.history.append((sigma, q, 1))

    def __len__(self) -> int:
        return sum(steps for _, _, steps in self.history)

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The hook Opacus attaches to its DPOptimizer (same contract as Opacus's IAccountant)."""
        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * getattr(optim, "accumulated_iterations", 1))

        return hook_fn

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """The certified ε (upper bound) of the steps recorded so far at δ."""
        from ..accounting import get_epsilon

        return get_epsilon(self.event(), delta, accountant=kwargs.get("accountant", self.accountant)).epsilon

    def get_privacy_spent(self, *, delta: float) -> Tuple[float, None]:
        return self.get_epsilon(delta), None

    def state_dict(self, destination: Optional[dict] = None) -> dict:
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["sampling"] = self.sampling
        destination["dataset_size"] = self.dataset_size
        destination["max_batch_size"] = self.max_batch_size
        destination["batch_size"] = self.batch_size
        return destination

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a checkpoint; a state of another sampler (or another accountant) is refused."""
        if not state_dict or "history" not in state_dict:
            raise ValueError("state_dict must be a non-empty mapping with a 'history'")
        if state_dict.get("mechanism") != self.mechanism():
            raise ValueError(f"state_dict is of accountant {state_dict.get('mechanism')!r}, not 'dpcore'")
        for key in ("sampling", "dataset_size", "max_batch_size", "batch_size"):
            if state_dict.get(key) != getattr(self, key):
                raise ValueError(f"state_dict has {key}={state_dict.get(key)!r}, this accountant {getattr(self, key)!r}:"
                                 " a checkpoint of another sampler cannot be loaded")
        history = []
        for entry in state_dict["history"]:
            sigma, q, steps = entry
            history.append((check_positive("noise_multiplier", sigma), check_sampling_rate("sample_rate", q),
                            check_positive_int("steps", steps)))
        self.history = history

    # ------------------------------------------------------------------ dpcore side
    @classmethod
    def for_sampler(cls, sampler: Any, *, accountant: str = "auto") -> "DpcoreAccountant":
        """An accountant bound to a :class:`dpcore.sampling.BatchSampler`: its name and public
        parameters, and steps must come at the sampler's rate."""
        name = sampler.name
        kw = {}
        if name in ("truncated-poisson",) + _REPLACE_ONE:
            kw["dataset_size"] = sampler.dataset_size
        if name == "truncated-poisson":
            kw["max_batch_size"] = sampler.max_batch_size
        if name in _REPLACE_ONE:
            kw["batch_size"] = sampler.batch_size
        acc = cls(name, accountant=accountant, **kw)
        acc._expected_rate = (sampler.sampling_rate if name in ("poisson", "truncated-poisson")
                              else 1.0 / sampler.steps_per_epoch if name in _EPOCH
                              else sampler.batch_size / sampler.dataset_size)
        return acc

    def event(self) -> PrivacyEvent:
        """The dpcore event of the recorded steps under this accountant's sampler."""
        if not self.history:
            return NoOpEvent()
        if self.sampling in _EPOCH:
            return self._epoch_event()
        parts = [SelfComposedEvent(self._step_event(sigma, q), steps) for sigma, q, steps in self.history]
        return parts[0] if len(parts) == 1 else ComposedEvent(parts)

    def _step_event(self, sigma: float, q: float) -> PrivacyEvent:
        if self.sampling == "poisson":
            return PoissonSampledEvent(GaussianEvent(sigma), q)
        if self.sampling == "truncated-poisson":
            return TruncatedPoissonSampledEvent(GaussianEvent(sigma), q, self.max_batch_size, self.dataset_size)
        inner = GaussianEvent(sigma / 2.0, relation="replace_one")  # sensitivity 2C under replace_one
        if self.sampling == "without-replacement":
            return SampledWithoutReplacementEvent(inner, self.batch_size, self.dataset_size)
        return SampledWithReplacementEvent(inner, self.batch_size, self.dataset_size)

    def _epoch_event(self) -> PrivacyEvent:
        """Whole epochs of round(1/q) batches; each started epoch at its smallest σ."""
        epochs: List[Tuple[float, int]] = []  # (least σ, batches per epoch)
        used = 0
        for sigma, q, steps in self.history:
            per = max(1, round(1.0 / q))
            for _ in range(steps):
                if not epochs or used == epochs[-1][1] or epochs[-1][1] != per:
                    epochs.append((sigma, per))
                    used = 0
                epochs[-1] = (min(epochs[-1][0], sigma), per)
                used += 1
        parts: List[Tuple[PrivacyEvent, int]] = []
        for sigma, per in epochs:
            if self.sampling == "shuffle":  # replace_one: sensitivity 2C
                unit = ShuffledBatchesEvent(GaussianEvent(sigma / 2.0, relation="replace_one"), per)
            else:
                unit = RandomAllocationEvent(GaussianEvent(sigma), per)
            if parts and parts[-1][0] == unit:
                parts[-1] = (unit, parts[-1][1] + 1)
            else:
                parts.append((unit, 1))
        events = [SelfComposedEvent(u, c) for u, c in parts]
        return events[0] if len(events) == 1 else ComposedEvent(events)
