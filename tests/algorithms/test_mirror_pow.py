"""The vectorisable power t^a of the mirror step (algorithms._mirror_pow) against NumPy's pow."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms._mirror_pow import POW_FLAGS, unit_pow
from dpcore._jit import jit


@jit(**POW_FLAGS)
def _pow_array(t, a, out):
    for i in range(t.shape[0]):
        out[i] = unit_pow(t[i], a)


def _bound(t, a):
    """The documented error bound 2^-50·(1 + |a ln t|)·t^a."""
    return 2.0**-50 * (1.0 + np.abs(a * np.log(t))) * t**a


@pytest.mark.parametrize("a", [0.05, 0.386, 1.0, 2.5, 8.99, 9.999999999999998, 17.42, 21.0])
def test_unit_pow_meets_its_error_bound_across_the_range(a):
    rng = np.random.default_rng(int(a * 1000))
    t = np.concatenate([rng.random(20_000), 10.0 ** rng.uniform(-300, 0, 20_000),
                        [1.0, 0.5, np.sqrt(0.5), np.nextafter(1.0, 0.0), 2.0**-1022]])
    out = np.empty_like(t)
    _pow_array(t, a, out)
    ref = t**a
    big = ref >= 1e-300
    assert np.all(np.abs(out[big] - ref[big]) <= _bound(t[big], a))
    # below e^-708 the result is of that size (documented absolute error < 4e-308)
    assert np.all(np.abs(out[~big] - ref[~big]) < 4e-308)
    assert out[t == 1.0][0] == 1.0


@settings(max_examples=200, deadline=None)
@given(t=st.floats(min_value=2.0**-1022, max_value=1.0), a=st.floats(min_value=0.01, max_value=40.0))
def test_unit_pow_property(t, a):
    out = np.empty(1)
    _pow_array(np.array([t]), a, out)
    ref = t**a
    if ref >= 1e-300:
        assert abs(out[0] - ref) <= _bound(t, a)
    else:
        assert abs(out[0] - ref) < 4e-308


def test_unit_pow_of_tiny_and_nonpositive_t_is_the_clamped_value():
    """t below the smallest normal float is raised to it first (the caller masks t ≤ 0)."""
    out = np.empty(3)
    _pow_array(np.array([0.0, -1.0, 1e-320]), 2.0, out)
    assert np.all(out < 4e-308) and np.all(out >= 0.0)
