"""Clipping kernels and the sensitivity of a clipped sum, checked on worst-case neighbours."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms._data import prepare_data
from algorithms.clipping import (
    clip_vector_kernel,
    clipped_batch_difference_sum_kernel,
    clipped_batch_gradient_sum_kernel,
    clipped_gradient_sum_kernel,
    clipped_sum_sensitivity,
    row_norms_kernel,
    snapshot_gradient_sum_kernel,
)
from algorithms.losses import get_loss


def _reference_sum(loss, X, y, w, C, idx):
    G = loss.deriv(X[idx] @ w, y[idx])[:, None] * X[idx]
    norms = np.linalg.norm(G, axis=1)
    return (G * np.minimum(1.0, C / np.maximum(norms, 1e-300))[:, None]).sum(axis=0), int((norms > C).sum())


@pytest.mark.parametrize("name", ["logistic", "huber", "squared", "smoothed_hinge"])
def test_clipped_sums_match_numpy(name):
    loss = get_loss(name)
    gen = np.random.default_rng(3)
    X = gen.normal(size=(40, 6)) * 2
    y = np.sign(gen.normal(size=40)) if loss.task == "classification" else gen.normal(size=40)
    w = gen.normal(size=6)
    rn = row_norms_kernel(X)
    out = np.empty(6)
    n_clip = clipped_gradient_sum_kernel(loss.kind, loss.param, X, y, rn, w, 0.8, out)
    ref, ref_clip = _reference_sum(loss, X, y, w, 0.8, np.arange(40))
    np.testing.assert_allclose(out, ref, atol=1e-12)
    assert n_clip == ref_clip
    idx = np.array([5, 3, 3, 17])
    clipped_batch_gradient_sum_kernel(loss.kind, loss.param, X, y, rn, w, idx, 3, 0.8, out)
    np.testing.assert_allclose(out, _reference_sum(loss, X, y, w, 0.8, idx[:3])[0], atol=1e-12)
    w2 = gen.normal(size=6)
    ref = np.full(40, np.nan)
    snapshot_gradient_sum_kernel(loss.kind, loss.param, X, y, rn, w2, 0.8, out, ref)
    np.testing.assert_allclose(ref, loss.deriv(X @ w2, y), atol=1e-12)
    np.testing.assert_allclose(out, _reference_sum(loss, X, y, w2, 0.8, np.arange(40))[0], atol=1e-12)
    clipped_batch_difference_sum_kernel(loss.kind, loss.param, X, y, rn, w, ref, idx, 4, 0.5, out)
    D = (loss.deriv(X[idx] @ w, y[idx]) - loss.deriv(X[idx] @ w2, y[idx]))[:, None] * X[idx]
    nd = np.linalg.norm(D, axis=1)
    np.testing.assert_allclose(out, (D * np.minimum(1, 0.5 / np.maximum(nd, 1e-300))[:, None]).sum(0), atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.1, 3.0), st.sampled_from(["add_remove", "replace_one"]))
def test_sensitivity_bounds_neighbouring_sums(seed, C, relation):
    """‖S(D) − S(D′)‖ ≤ clipped_sum_sensitivity for a random neighbour with an adversarial record."""
    loss = get_loss("logistic")
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(20, 3)) * 5
    y = np.sign(gen.normal(size=20))
    w = gen.normal(size=3) * 3
    worst = -np.sign(w) * 100.0  # huge-gradient record
    if relation == "add_remove":
        X2, y2 = np.vstack([X, worst]), np.append(y, 1.0)
    else:
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = worst, -y[0]
    s1, s2 = np.empty(3), np.empty(3)
    clipped_gradient_sum_kernel(0, 0.0, X, y, row_norms_kernel(X), w, C, s1)
    clipped_gradient_sum_kernel(0, 0.0, X2, y2, row_norms_kernel(X2), w, C, s2)
    assert np.linalg.norm(s1 - s2) <= clipped_sum_sensitivity(C, relation) * (1 + 1e-12)


def test_clip_vector_and_sensitivity_values():
    g = np.array([3.0, 4.0])
    assert clip_vector_kernel(g, 1.0) == 5.0
    np.testing.assert_allclose(g, [0.6, 0.8])
    assert clipped_sum_sensitivity(1.5, "add_remove") == 1.5
    assert clipped_sum_sensitivity(1.5, "replace_one") == 3.0
    with pytest.raises(ValueError, match="clip_norm"):
        clipped_sum_sensitivity(0.0, "add_remove")
    with pytest.raises(ValueError, match="relation"):
        clipped_sum_sensitivity(1.0, "swap")


def test_data_validation():
    X = np.array([[0.6, 0.8], [0.0, 0.5]])
    d = prepare_data(X, [0, 1], "classification", data_norm_bound=1.0)
    np.testing.assert_array_equal(d.y, [-1.0, 1.0])
    assert "{0, 1} mapped" in d.label_mapping
    assert prepare_data(X, [-1, 1], "classification").label_mapping is None
    with pytest.raises(ValueError, match="labels in"):
        prepare_data(X, [0, 2], "classification")
    with pytest.raises(ValueError, match="finite"):
        prepare_data(np.array([[np.nan, 0.0], [0.0, 0.0]]), [1, 1], "classification")
    with pytest.raises(ValueError, match="data_norm_bound"):
        prepare_data(X, [1, 1], "classification", data_norm_bound=0.9)
    with pytest.raises(ValueError, match="one label per row"):
        prepare_data(X, [1, 1, 1], "classification")


# ------------------------------------------------------------ floating-point safety (issue 13)

from algorithms.clipping import clip_margin, clipped_coefficient, vector_norm  # noqa: E402

FINITE = st.floats(allow_nan=False, allow_infinity=False)


def _hypot(row):
    import math
    return math.hypot(*row)


@settings(max_examples=300, deadline=None)
@given(st.lists(FINITE, min_size=1, max_size=6))
def test_row_norms_neither_underflow_nor_overflow(row):
    """The norm of any finite row within a few ulps of math.hypot (exact-rounded reference): rows of
    1e-170 entries no longer have norm 0, rows of 1e308 entries are finite while ‖x‖ fits."""
    x = np.array(row)
    ref = _hypot(row)
    got = row_norms_kernel(x[None, :])[0]
    assert got == vector_norm(x)
    if ref == np.inf:
        assert got == np.inf
    else:
        assert abs(got - ref) <= 8 * len(row) * 2.0 ** -53 * ref + 5e-324


def test_norm_attack_rows():
    assert row_norms_kernel(np.full((1, 4), 1e-170))[0] == pytest.approx(2e-170, rel=1e-15)
    assert row_norms_kernel(np.array([[1e308, 1e307]]))[0] == pytest.approx(_hypot([1e308, 1e307]), rel=1e-15)
    assert row_norms_kernel(np.array([[1e308, 1e308]]))[0] == pytest.approx(np.sqrt(2) * 1e308, rel=1e-15)


LOSSES = [("logistic", True), ("huber", False), ("squared", False), ("smoothed_hinge", True)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LOSSES), st.lists(st.tuples(FINITE, FINITE), min_size=1, max_size=4), FINITE,
       st.floats(1e-6, 1e6), st.booleans())
def test_clipped_per_example_gradient_is_finite_and_bounded(loss_cls, pairs, label, C, negative):
    """For every loss and every finite (x, w, y) — margins that overflow to ±inf or NaN included —
    the clipped per-example gradient actually added is finite with norm ≤ C."""
    name, classification = loss_cls
    loss = get_loss(name)
    x = np.array([[p[0] for p in pairs]])
    w = np.array([p[1] for p in pairs])
    y = np.array([(-1.0 if negative else 1.0) if classification else label])
    out = np.empty(x.shape[1])
    clipped_gradient_sum_kernel(loss.kind, loss.param, x, y, row_norms_kernel(x), w, C, out)
    assert np.all(np.isfinite(out))
    assert vector_norm(out) <= C
    # the difference kernel (DP-SVRG / DP-SRM) too, against a snapshot at another point
    ref = np.empty(1)
    snapshot_gradient_sum_kernel(loss.kind, loss.param, x, y, row_norms_kernel(x), -w, C, out, ref)
    assert np.all(np.isfinite(out)) and vector_norm(out) <= C
    clipped_batch_difference_sum_kernel(loss.kind, loss.param, x, y, row_norms_kernel(x), w, ref,
                                        np.zeros(1, np.int64), 1, C, out)
    assert np.all(np.isfinite(out)) and vector_norm(out) <= C


def test_clipped_coefficient_cases():
    cs = clip_margin(1.0, 2)
    assert cs < 1.0
    assert clipped_coefficient(0.5, 1.0, cs) == 0.5
    assert clipped_coefficient(1e200, 1e-170, cs) * 1e-170 <= 1.0  # the underflow attack's gradient
    assert clipped_coefficient(np.inf, 2.0, cs) == cs / 2.0
    assert clipped_coefficient(-np.inf, 5e-324, cs) * 5e-324 >= -1.0
    assert clipped_coefficient(np.nan, 1.0, cs) == 0.0
    assert clipped_coefficient(3.0, np.inf, cs) == 0.0
    assert clipped_coefficient(np.inf, 0.0, cs) == 0.0
    q = clipped_coefficient(1e300, 1e308, 1e-3)  # subnormal quotient: rounded towards zero
    assert 0 < q <= 1e-3 / 1e308 and q * 1e308 <= 1e-3


def test_clip_vector_kernel_extremes():
    g = np.full(3, 1e-170)
    assert clip_vector_kernel(g, 1e-171) > 0 and vector_norm(g) <= 1e-171
    g = np.array([1e308, 1e308])
    assert clip_vector_kernel(g, 1.0) == pytest.approx(np.sqrt(2) * 1e308) and vector_norm(g) <= 1.0
    g = np.array([1.5e308, 1.5e308])  # ‖g‖ beyond the float range: zeroed
    assert clip_vector_kernel(g, 1.0) == np.inf and np.all(g == 0.0)
