"""The sensitivity room (algorithms.clipping): ℓq norms at any q, truncation, and the fused network clip.

Every check measures the *computed* vectors with an independent route — mpmath at 200 bits with an
unbounded exponent range — never with the room's own norm code, and uses extreme magnitudes (entries
from 2⁻¹⁰⁷⁴ to 2¹⁰²³, clip norms from 1e-300 to 1e300) where a plain Σx^q under- or overflows.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms.clipping import (
    clip_margin, clipped_gradient_sum_kernel, lq_norm, lq_row_norms_kernel, truncated_coefficient, vector_norm,
)
from algorithms.losses import get_loss
from algorithms.mlp_kernels import mlp_clipped_sum_kernel, mlp_srm_query_kernel, n_parameters
from algorithms.truncated_mirror_descent import truncated_gradient_sum_kernel

U = 2.0 ** -53
mp.mp.prec = 200


def mp_norm(v, q=2.0):
    """‖v‖_q of a float vector, exactly converted and summed at 200 bits (mpmath has no exponent limit)."""
    v = [mp.mpf(float(x)) for x in np.ravel(v)]
    if q == math.inf:
        return max(abs(x) for x in v)
    return mp.fsum(abs(x) ** q for x in v) ** (mp.mpf(1) / q)


def extreme(sign=True):
    """Floats of any magnitude, subnormals included: m·2^e with m in [0.5, 1) and e in [-1073, 1023]."""
    mant = st.floats(0.5, 1.0, exclude_max=True)
    base = st.builds(lambda m, e: math.ldexp(m, e), mant, st.integers(-1073, 1023))
    if not sign:
        return base
    return st.builds(lambda x, s: -x if s else x, base, st.booleans())


def vectors(min_size=1, max_size=12):
    return st.lists(st.one_of(extreme(), st.just(0.0)), min_size=min_size, max_size=max_size).map(np.array)


QS = [1.0, 1.5, 2.0, 3.0, 11.0, 1001.0, 1e6, 1e15, math.inf]


@settings(max_examples=300, deadline=None)
@given(v=vectors(), q=st.sampled_from(QS))
def test_lq_norm_matches_mpmath_to_its_stated_error(v, q):
    got = lq_norm(v, q)
    exact = mp_norm(v, q)
    if exact > mp.mpf(np.finfo(float).max):
        assert got == math.inf
        return
    assert abs(mp.mpf(got) - exact) <= (v.shape[0] + 6) * U * exact + mp.mpf(2.0 ** -1074)
    if np.any(v != 0):
        assert got > 0.0  # a non-zero vector never gets norm 0


def test_lq_norm_of_the_issue_row_at_p_near_one():
    # issue 21: np.linalg.norm(ord=1001) of 0.4·1 (d = 20) underflows to 0; the true value is 0.4·20^(1/1001)
    row = np.full(20, 0.4)
    assert np.linalg.norm(row, ord=1001.0) == 0.0  # the defect this module exists to avoid
    for p in (1.001, 1.01, 1.5, 2.0):
        q = p / (p - 1.0)
        assert lq_norm(row, q) == pytest.approx(0.4 * 20.0 ** (1.0 / q), rel=1e-14)
    assert lq_row_norms_kernel(np.vstack([row, np.zeros(20)]), 1001.0)[1] == 0.0
    assert math.isnan(lq_norm(np.array([1.0, math.nan]), 3.0))
    assert lq_norm(np.array([1e308, 1e308, 1e308]), 1.5) == math.inf


@settings(max_examples=300, deadline=None)
@given(x=vectors(min_size=2), c=st.one_of(extreme(), st.just(math.inf), st.just(-math.inf), st.just(math.nan)),
       tau=extreme(sign=False), q=st.sampled_from(QS))
def test_truncation_keeps_only_vectors_within_tau(x, c, tau, q):
    kept = truncated_coefficient(c, lq_norm(x, q), clip_margin(tau, x.shape[0]))
    assert kept == 0.0 or kept == c
    with np.errstate(all="ignore"):
        g = kept * x  # the vector the kernel adds (row_axpy: one product per entry)
    assert np.all(np.isfinite(g))
    assert mp_norm(g, q) <= tau


@settings(max_examples=150, deadline=None)
@given(x=vectors(min_size=2, max_size=8), w_scale=extreme(sign=False), clip=extreme(sign=False),
       q=st.sampled_from(QS), label=st.sampled_from([-1.0, 1.0]))
def test_mirror_clip_and_truncation_kernels_bound_every_record(x, w_scale, clip, q, label):
    d = x.shape[0]
    X = x[None, :].copy()
    y = np.array([label])
    w = np.full(d, w_scale) * np.where(np.arange(d) % 2, -1.0, 1.0)
    loss = get_loss("logistic")
    norms = lq_row_norms_kernel(X, q)
    out = np.empty(d)
    with np.errstate(all="ignore"):
        clipped_gradient_sum_kernel(loss.kind, loss.param, X, y, norms, w, clip, out)
    assert np.all(np.isfinite(out)) and mp_norm(out, q) <= clip
    truncated_gradient_sum_kernel(loss.kind, loss.param, X, y, norms, w, np.array([0]), 0, 1, clip, out)
    assert np.all(np.isfinite(out)) and mp_norm(out, q) <= clip


def _network(theta_scale, x_scale, h, K, seed):
    rng = np.random.default_rng(seed)
    d = 3
    theta = theta_scale * rng.normal(size=n_parameters(d, h, K))
    X = x_scale * rng.normal(size=(1, d))
    y = np.array([1.0 if K == 1 else float(seed % K)])
    return theta, X, y, d


scales = st.sampled_from([1e-300, 1e-200, 1e-160, 1e-100, 1e-20, 1.0, 1e20, 1e100, 1e160, 1e300])


@settings(max_examples=200, deadline=None)
@given(theta_scale=scales, x_scale=scales, clip=st.sampled_from([5e-324, 1e-310, 1e-300, 1e-250, 1e-129, 1e-50, 1.0, 1e50, 1e300]),
       K=st.sampled_from([1, 3]), h=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_network_clipped_gradient_never_exceeds_the_clip(theta_scale, x_scale, clip, K, h, seed):
    theta, X, y, d = _network(theta_scale, x_scale, h, K, seed)
    out = np.empty(theta.shape[0])
    with np.errstate(all="ignore"):
        mlp_clipped_sum_kernel(theta, X, y, np.array([0]), 1, clip, d, h, K, out)
    assert np.all(np.isfinite(out))
    assert mp_norm(out) <= clip * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(theta_scale=scales, x_scale=scales, c1=st.sampled_from([1e-310, 1e-300, 1e-129, 1e-20, 1.0, 1e300]),
       c2=st.sampled_from([1e-300, 1e-129, 1e-20, 1.0, 1e300]), gamma=st.sampled_from([0.0, 0.3, 1.0]),
       K=st.sampled_from([1, 3]), h=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_dp_srm_network_query_never_exceeds_its_bound(theta_scale, x_scale, c1, c2, gamma, K, h, seed):
    theta, X, y, d = _network(theta_scale, x_scale, h, K, seed)
    theta_prev = theta * (1.0 + 1e-3 * np.random.default_rng(seed + 1).normal(size=theta.shape[0]))
    out = np.empty(theta.shape[0])
    with np.errstate(all="ignore"):
        mlp_srm_query_kernel(theta, theta_prev, X, y, np.array([0]), 1, gamma, c1, c2, d, h, K, out)
    assert np.all(np.isfinite(out))
    assert mp_norm(out) <= (gamma * c1 + (1.0 - gamma) * c2) * (1 + 1e-12)


def test_network_clip_catches_the_issue_underflow():
    # issue 21's fuzzing: weights ~1e-170 make every square underflow; the plain Σx² gave norm 0, clip factor 1
    h, K = 3, 1
    theta, X, y, d = _network(1e-170, 1.0, h, K, 7)
    out = np.empty(theta.shape[0])
    mlp_clipped_sum_kernel(theta, X, y, np.array([0]), 1, 1e-200, d, h, K, out)
    assert 0.0 < float(mp_norm(out)) <= 1e-200 * (1 + 1e-12)
    assert vector_norm(out) > 0.0


@pytest.mark.parametrize("p", [1.001, 1.01])
def test_mirror_solvers_clip_and_truncate_the_issue_record(p):
    # issue 21's one-record attack: D′ has one row 0.4·1 (ℓ2 norm 1.79 ≤ 2), clip / truncation 1e-3. With the
    # underflowing np.linalg.norm(ord=q) its dual norm was 0: the record was neither clipped nor truncated
    # (counts 0 at p = 1.001) and contributed ~200x the accounted sensitivity.
    import warnings

    from algorithms import batched_truncated_mirror_descent, noisy_mirror_descent, shuffled_truncated_mirror_descent

    X = np.zeros((20, 20))
    X[0] = 0.4
    y = np.ones(20)
    common = dict(p=p, delta=1e-5, steps=1, data_norm_bound=2.0, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = noisy_mirror_descent(X, y, epsilon=1.0, clip_norm=1e-3, noise="generalized_gaussian", **common)
        assert res.details["clipped"] == 1
        for solver, eps in ((batched_truncated_mirror_descent, 1.0), (shuffled_truncated_mirror_descent, 0.9)):
            assert solver(X, y, epsilon=eps, truncation=1e-3, **common).details["truncated"] == 1
