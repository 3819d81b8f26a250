"""The privacy-event tree: validation, relations, immutability."""

import math

import pytest

import dpcore
from dpcore.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    MechanismEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ShuffledEvent,
)


def test_events_are_immutable_and_hashable():
    e = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.1), 0.01), 100)
    assert e == SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.1), 0.01), 100)
    assert hash(e) == hash(SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.1), 0.01), 100))
    with pytest.raises(Exception):
        e.count = 3  # type: ignore[misc]


def test_wrappers_inherit_relation():
    e = SampledWithoutReplacementEvent(GaussianEvent(2.0, "replace_one"), 10, 100)
    assert e.relation == "replace_one" and e.sampling_rate == pytest.approx(0.1)
    assert SelfComposedEvent(e, 3).relation == "replace_one"


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: GaussianEvent(0.0), "noise_multiplier"),
        (lambda: GaussianEvent(math.nan), "noise_multiplier"),
        (lambda: GaussianEvent(1.0, "swap"), "relation"),
        (lambda: PoissonSampledEvent(GaussianEvent(1.0), 0.0), "sampling_rate"),
        (lambda: PoissonSampledEvent(GaussianEvent(1.0), 1.5), "sampling_rate"),
        (lambda: SelfComposedEvent(GaussianEvent(1.0), 0), "count"),
        (lambda: SampledWithoutReplacementEvent(GaussianEvent(1.0), 11, 10), "batch_size"),
        (lambda: ApproxDpEvent(1.0, 1.0), "delta"),
        (lambda: ShuffledEvent(1.0, 1), "n"),
        (lambda: ComposedEvent([]), "events"),
        (lambda: ComposedEvent(None), "events"),  # were TypeError: not iterable
        (lambda: ComposedEvent(GaussianEvent(1.0)), "events"),
        (lambda: ComposedEvent([GaussianEvent(1.0), GaussianEvent(1.0, "replace_one")]), "relation"),
        (lambda: MechanismEvent("m"), "rdp"),
    ],
)
def test_bad_input_names_the_argument(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_lazy_public_names_resolve():
    for name in dpcore.__all__:
        assert getattr(dpcore, name) is not None
