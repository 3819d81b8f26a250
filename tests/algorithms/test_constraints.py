"""Constraint sets: projections are exact (variational inequality), gauges and diameters are right."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from algorithms.constraints import CONSTRAINT_NAMES, get_constraint

SETS = [get_constraint(n, 1.5) for n in CONSTRAINT_NAMES if n != "none"]
vec = arrays(np.float64, st.integers(1, 8), elements=st.floats(-10, 10))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SETS), vec, st.integers(0, 2**31))
def test_projection_satisfies_the_variational_inequality(C, v, seed):
    """p = Proj_C(v) iff p ∈ C and ⟨v − p, w − p⟩ ≤ 0 for all w ∈ C; checked on C's extreme points
    (vertices of ℓ1 ball / box / simplex) and random points of C."""
    p = C.project(v)
    assert C.contains(p, rtol=1e-9)
    np.testing.assert_allclose(C.project(p), p, atol=1e-12)
    gen = np.random.default_rng(seed)
    for w in _points(C, v.size, gen):
        assert float((v - p) @ (w - p)) <= 1e-9 * (1 + np.abs(v).max() ** 2)


def _points(C, d, gen):
    r = C.radius
    pts = [C.project(gen.normal(size=d) * 3) for _ in range(20)]
    if C.name == "l1":
        pts += [s * r * e for e in np.eye(d) for s in (1, -1)]
    if C.name == "simplex":
        pts += [r * e for e in np.eye(d)]
    if C.name == "linf":
        pts += [r * np.sign(gen.normal(size=d)) for _ in range(20)]
    return pts


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SETS), vec, st.floats(0.1, 5))
def test_gauge_is_homogeneous_and_matches_membership(C, v, t):
    g = C.gauge(v)
    if math.isfinite(g):
        assert C.gauge(t * v) == pytest.approx(t * g, rel=1e-12, abs=1e-300)
        # v / g lies on C's boundary only while g is a normal float: a subnormal g (v ~ 5e-324) carries as little
        # as one significant bit, so v / g can miss the boundary by any factor up to 2 (hypothesis found
        # v = [5e-324]·3 on the ℓ2 ball of radius 1.5: g rounds to 5e-324 and v / g = (1, 1, 1) has norm √3)
        if g >= np.finfo(np.float64).tiny and C.name != "simplex":
            assert C.contains(v / g, rtol=1e-9)
    # dual gauge is the support function: ⟨w, v⟩ ≤ ‖v‖_{C*} for w ∈ C, attained at some point
    pts = _points(C, v.size, np.random.default_rng(0))
    assert max(float(w @ v) for w in pts) <= C.dual_gauge(v) + 1e-9


def test_l1_projection_known_value():
    C = get_constraint("l1", 1.0)
    np.testing.assert_allclose(C.project(np.array([2.0, 1.0, -0.1])), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(C.project(np.array([0.6, -0.6])), [0.5, -0.5])


def _sorted_threshold(u, r):
    """Reference θ: Duchi et al. (2008) Fig. 1, the sort-based route (independent of Michelot's)."""
    s = np.sort(u)[::-1]
    cums = np.cumsum(s) - r
    k = np.nonzero(s - cums / np.arange(1, s.size + 1) > 0)[0][-1]
    return cums[k] / (k + 1)


@settings(max_examples=300, deadline=None)
@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(-10, 10) | st.sampled_from([0.0, 1.0, -1.0])),
       st.floats(0.01, 20))
def test_l1_and_simplex_projections_match_the_sort_based_threshold(v, r):
    """Michelot's sort-free θ equals the sorted-prefix θ of Duchi et al. (ties and zeros included)."""
    expect = np.maximum(v - _sorted_threshold(v, r), 0.0)
    np.testing.assert_allclose(get_constraint("simplex", r).project(v), expect, atol=1e-12 * (1 + np.abs(v).max()))
    u = np.abs(v)
    if u.sum() > r:
        expect = np.sign(v) * np.maximum(u - _sorted_threshold(u, r), 0.0)
    else:
        expect = v
    np.testing.assert_allclose(get_constraint("l1", r).project(v), expect, atol=1e-12 * (1 + u.max()))


def test_diameters_and_norms():
    d = 4
    assert get_constraint("l2", 2.0).diameter(d) == 4.0
    assert get_constraint("l1", 2.0).diameter(d) == 4.0
    assert get_constraint("linf", 2.0).diameter(d) == pytest.approx(8.0)
    assert get_constraint("simplex", 2.0).diameter(d) == pytest.approx(2 * math.sqrt(2))
    assert get_constraint("linf", 1.0).max_norm(d) == 2.0
    assert math.isinf(get_constraint("none").diameter(d))


def test_bad_constraint_arguments():
    with pytest.raises(ValueError, match="constraint must be one of"):
        get_constraint("l3", 1.0)
    with pytest.raises(ValueError, match="radius"):
        get_constraint("l1")
    with pytest.raises(ValueError, match="radius"):
        get_constraint("l2", -1.0)
