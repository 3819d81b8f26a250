"""The vectorisable power t^a of the mirror step (algorithms._mirror_pow) against NumPy's pow."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms._mirror_pow import POW_FLAGS, unit_pow, unit_pows
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


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 67), a=st.floats(min_value=0.01, max_value=40.0),
       frac=st.floats(min_value=0.0, max_value=0.999))
def test_unit_pows_equals_unit_pow_elementwise(seed, k, a, frac):
    """The two-loop array form gives unit_pow's result bit for bit at tᵢ = (vᵢ − ν)/m, and 0 where vᵢ ≤ ν
    (including values equal to ν and below it); entries from k on are left untouched."""
    rng = np.random.default_rng(seed)
    top = float(rng.uniform(0.5, 100.0))
    v = np.concatenate([[top], rng.uniform(0.0, top, 70), 10.0 ** rng.uniform(-300, 0, 5)])[:k]
    nu = frac * top
    if k > 2:
        v[1] = nu  # exactly at ν: 0
    m = top - nu
    out = np.full(v.size + 3, -7.0)
    unit_pows(v, k, nu, m, a, out)
    ref = np.empty(k)
    _pow_array((v - nu) / m, a, ref)
    ref[v <= nu] = 0.0
    np.testing.assert_array_equal(out[:k], ref)
    assert np.all(out[k:] == -7.0)
