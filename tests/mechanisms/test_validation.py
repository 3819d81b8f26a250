"""Bad input raises ValueError naming the argument."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    GeneralizedGaussian,
    L2Laplace,
    Laplace,
    RandomizedResponse,
)
from mechanisms.base import convert_sensitivity

BAD_NUMBERS = [0.0, -1.0, math.nan, math.inf, "1", None]

CONSTRUCTORS = [
    ("sigma", lambda v: Gaussian(v)),
    ("sensitivity", lambda v: Gaussian(1.0, v)),
    ("scale", lambda v: Laplace(v)),
    ("scale", lambda v: L2Laplace(v)),
    ("sigma", lambda v: GeneralizedGaussian(p=3, sigma=v, dimension=2)),
    ("sigma", lambda v: DiscreteGaussian(v)),
    ("scale", lambda v: DiscreteLaplace(v)),
    ("epsilon", lambda v: RandomizedResponse(v)),
    ("epsilon", lambda v: ExponentialMechanism(v)),
    ("sensitivity", lambda v: ExponentialMechanism(1.0, v)),
]


@pytest.mark.parametrize("name, make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_constructors_reject_bad_parameters(name, make, bad):
    with pytest.raises(ValueError, match=name):
        make(bad)


CALIBRATIONS = [
    lambda e, d: Gaussian.calibrate(e, d),
    lambda e, d: GeneralizedGaussian.calibrate(e, d, p=3, dimension=4),
    lambda e, d: DiscreteGaussian.calibrate(e, d),
]


@pytest.mark.parametrize("calibrate", CALIBRATIONS)
@pytest.mark.parametrize("bad_eps", [0.0, -0.5, math.nan])
def test_calibrate_rejects_bad_epsilon(calibrate, bad_eps):
    with pytest.raises(ValueError, match="epsilon"):
        calibrate(bad_eps, 1e-5)


@pytest.mark.parametrize("calibrate", CALIBRATIONS)
@pytest.mark.parametrize("bad_delta", [0.0, 1.0, 1.5, -1e-3, math.nan, None])
def test_calibrate_rejects_bad_delta(calibrate, bad_delta):
    with pytest.raises(ValueError, match="delta"):
        calibrate(0.5, bad_delta)


@pytest.mark.parametrize("cls", [Laplace, L2Laplace, DiscreteLaplace, ExponentialMechanism, RandomizedResponse])
def test_pure_mechanisms_reject_delta(cls):
    with pytest.raises(ValueError, match="delta"):
        cls.calibrate(1.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        cls.calibrate(-1.0)


def test_gaussian_method_must_be_known():
    with pytest.raises(ValueError, match="method"):
        Gaussian.calibrate(1.0, 1e-5, method="paper")


@pytest.mark.parametrize("p", [0.5, 0.0, -2.0, math.nan])
def test_lp_norm_order_below_one_is_not_a_norm(p):
    with pytest.raises(ValueError, match="p"):
        GeneralizedGaussian(p=p, sigma=1.0, dimension=3)


@pytest.mark.parametrize("p", [1.0, 1.5, math.inf])
def test_generalized_gaussian_privacy_refused_without_a_guarantee(p):
    mech = GeneralizedGaussian(p=p, sigma=1.0, dimension=3)  # sampling is fine
    assert mech.randomize(np.zeros(3), rng=0).shape == (3,)
    with pytest.raises(ValueError, match="p must be in"):
        mech.privacy_event()
    with pytest.raises(ValueError, match="p must be in"):
        GeneralizedGaussian.calibrate(0.5, 1e-5, p=p, dimension=3)


def test_generalized_gaussian_lemma_range_enforced():
    with pytest.raises(ValueError, match="epsilon"):
        GeneralizedGaussian.calibrate(2.0, 1e-5, p=3, dimension=3)
    with pytest.raises(ValueError, match="delta"):
        GeneralizedGaussian.calibrate(0.5, 0.7, p=3, dimension=3)


@pytest.mark.parametrize("bad_value", [[1.0, math.nan], [math.inf], "abc", [[1.0], [2.0, 3.0]]])
@pytest.mark.parametrize("mech", [Gaussian(1.0), Laplace(1.0), L2Laplace(1.0), ExponentialMechanism(1.0)])
def test_randomize_rejects_non_finite_or_ragged_values(mech, bad_value):
    with pytest.raises(ValueError, match="value"):
        mech.randomize(bad_value, rng=0)


def test_randomize_rejects_wrong_shape():
    with pytest.raises(ValueError, match="dimension"):
        GeneralizedGaussian(p=3, sigma=1.0, dimension=4).randomize(np.zeros(3), rng=0)
    with pytest.raises(ValueError, match="dimension"):
        L2Laplace(1.0, dimension=4).randomize(np.zeros((2, 5)), rng=0)
    with pytest.raises(ValueError, match="value"):
        ExponentialMechanism(1.0).randomize(np.zeros(0), rng=0)


def test_discrete_mechanisms_need_integers():
    with pytest.raises(ValueError, match="value"):
        DiscreteGaussian(1.0).randomize([0.5], rng=0)
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplace(1.0, sensitivity=1.5)
    with pytest.raises(ValueError, match="value"):
        RandomizedResponse(1.0, k=3).randomize([3], rng=0)


@pytest.mark.parametrize("bad_rng", [-1, 1.5, "seed"])
def test_bad_rng(bad_rng):
    with pytest.raises(ValueError, match="rng"):
        Gaussian(1.0).randomize(0.0, rng=bad_rng)


@pytest.mark.parametrize("mech", [Gaussian(1.0), Laplace(1.0), DiscreteLaplace(1.0)])
def test_bad_relation(mech):
    with pytest.raises(ValueError, match="relation"):
        mech.privacy_event("neighbours")


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    seed=st.integers(0, 2**32),
)
def test_randomize_preserves_shape(shape, seed):
    value = np.zeros(shape)
    for mech in (Gaussian(1.0), Laplace(2.0), L2Laplace(1.0)):
        out = mech.randomize(value, rng=seed)
        assert out.shape == value.shape and np.all(np.isfinite(out))


def test_generalized_gaussian_event_outside_lemma_range():
    mech = GeneralizedGaussian(p=3, sigma=0.1, dimension=3)
    with pytest.raises(ValueError, match="too small for Lemma 3"):
        mech.privacy_event(delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        mech.privacy_event(delta=0.9)


def test_norm_conversion_needs_a_norm_and_a_dimension():
    with pytest.raises(ValueError, match="norm"):
        Gaussian.calibrate(1.0, 1e-5, norm=0.5)
    with pytest.raises(ValueError, match="dimension"):
        Laplace.calibrate(1.0, norm=2)


@settings(max_examples=60, deadline=None)
@given(
    x=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=8),
    q=st.sampled_from([1.0, 1.5, 2.0, 3.0, math.inf]),
    t=st.sampled_from([1.0, 2.0, 4.0]),
)
def test_converted_sensitivity_bounds_the_target_norm(x, q, t):
    v = np.array(x)
    norm = lambda y, r: np.max(np.abs(y)) if math.isinf(r) else np.sum(np.abs(y) ** r) ** (1 / r)  # noqa: E731
    if norm(v, q) > 0:
        assert norm(v, t) <= convert_sensitivity(norm(v, q), q, t, len(v)) * (1 + 1e-12)


# ----------------------------------------------------------------------------- issue 22 item 5
RANDOMIZERS = [
    ("gaussian", lambda v: Gaussian(1.0).randomize(v, rng=0)),
    ("laplace", lambda v: Laplace(1.0).randomize(v, rng=0)),
    ("float laplace", lambda v: Laplace(1.0, secure=False).randomize(v, rng=0)),
    ("l2-laplace", lambda v: L2Laplace(1.0).randomize(v, rng=0)),
    ("generalized gaussian", lambda v: GeneralizedGaussian(p=3, sigma=1.0, dimension=2).randomize(v, rng=0)),
    ("discrete gaussian", lambda v: DiscreteGaussian(1.0).randomize(v, rng=0)),
    ("discrete laplace", lambda v: DiscreteLaplace(1.0).randomize(v, rng=0)),
    ("randomized response", lambda v: RandomizedResponse(1.0).randomize(v, rng=0)),
    ("exponential", lambda v: ExponentialMechanism(1.0).randomize(v, rng=0)),
]


@pytest.mark.parametrize("name, randomize", RANDOMIZERS, ids=[r[0] for r in RANDOMIZERS])
@pytest.mark.parametrize("value, what", [
    (np.array([1 + 2j, 1.0]), "complex"),  # used to release the real part only
    (np.array([1 + 0j, 1.0]), "complex"),  # even with a zero imaginary part: the dtype is the error
    (["1", "0"], "strings"),  # used to be parsed as numbers
    ("1.5", "strings"),
    ([[1.0, 2.0], [3.0]], "ragged"),
])
def test_randomize_refuses_complex_strings_and_ragged_values(name, randomize, value, what):
    with pytest.raises(ValueError, match=f"value must .*{what}"):
        randomize(value)


def test_calibration_beyond_the_float_range_names_the_arguments():
    for calibrate in (lambda: Laplace.calibrate(1e-320, sensitivity=1.0),
                      lambda: DiscreteLaplace.calibrate(1e-320, sensitivity=1),
                      lambda: L2Laplace.calibrate(1.0, sensitivity=1e308),
                      lambda: DiscreteGaussian.calibrate(1e-320, 1e-5),
                      lambda: GeneralizedGaussian.calibrate(1.0, 1e-5, p=1e308, dimension=2)):
        with pytest.raises(ValueError, match=r"^the least (scale|sigma) for epsilon=.* beyond 2\*\*984"):
            calibrate()
    # a target looser than any noise needs: the floor sigma/sensitivity = 1e-6, as dpcore's calibration
    assert DiscreteGaussian.calibrate(1e308, 1e-5, accountant="rdp").sigma == 1e-6


def test_mechanism_flags_must_be_bools():
    from mechanisms.exponential import ExponentialMechanism
    from mechanisms.laplace import Laplace

    with pytest.raises(ValueError, match="secure must be True or False"):
        Laplace(1.0, secure="no")
    with pytest.raises(ValueError, match="monotone must be True or False"):
        ExponentialMechanism(1.0, monotone=1)


@pytest.mark.parametrize("make", [
    lambda d: __import__("mechanisms.laplace", fromlist=["L2Laplace"]).L2Laplace(1.0, 1.0, d),
    lambda d: __import__("mechanisms.laplace", fromlist=["L2Laplace"]).L2Laplace.calibrate(epsilon=1.0, sensitivity=1.0, dimension=d),
    lambda d: __import__("mechanisms.base", fromlist=["convert_sensitivity"]).convert_sensitivity(1.0, math.inf, 2.0, d),
])
def test_dimension_beyond_any_array_is_refused(make):
    """A dimension no array can have (10**400) was stored as given or overflowed later."""
    with pytest.raises(ValueError, match="dimension must be an integer in"):
        make(10**400)
