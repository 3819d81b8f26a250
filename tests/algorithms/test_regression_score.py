"""R² without intermediate overflow, and regressors whose public target bound is near the float64 limit.

``DPLinearRegression(target_bound=1e155).score`` was −inf (Σ(y − p)² overflowed although the exact R² is ≈ −6.8e306)
and a model fitted at target_bound=1.7e308 stored inf coefficients (predict returned inf). The reference values are
exact R² of the float inputs in mpmath (an independent route), and scikit-learn's r2_score where its sums are finite.
"""

import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

from algorithms import DPHuberRegressor, DPLinearRegression
from algorithms.regression_score import r2_score

FLOAT_MAX = np.finfo(np.float64).max


def exact_r2(y, p, w=None) -> mpmath.mpf:
    """1 − Σw(y − p)²/Σw(y − ȳ)² of the float inputs, at 60 digits (no overflow in mpmath)."""
    w = np.ones(len(y)) if w is None else w
    with mpmath.workdps(60):
        y, p, w = ([mpmath.mpf(float(v)) for v in a] for a in (y, p, w))
        mean = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
        res = sum(wi * (yi - pi) ** 2 for wi, yi, pi in zip(w, y, p))
        tot = sum(wi * (yi - mean) ** 2 for wi, yi in zip(w, y))
        return 1 - res / tot


def assert_matches_exact(got: float, y, p, w=None) -> None:
    ref = exact_r2(y, p, w)
    if ref < -FLOAT_MAX:
        assert got == -np.inf, (got, ref)  # the exact R² is below the float range: its IEEE rounding
    else:
        assert np.isfinite(got) and abs(mpmath.mpf(got) - ref) <= 1e-12 * max(1, abs(ref)), (got, ref)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, X @ np.array([0.6, -0.3, 0.1]) + 0.05 * rng.normal(size=n)


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e150, 1e300, 1e307])
def test_r2_is_scale_invariant_and_exact(scale):
    """R²(s·y, s·p) = R²(y, p): at s = 1e150 … 1e307 the plain formula overflowed (−inf or NaN)."""
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    p = y + 0.3 * rng.normal(size=50)
    w = rng.uniform(0.1, 2.0, size=50)
    ys, ps = y * scale / 4, p * scale / 4
    for weights in (None, w):
        got = r2_score(ys, ps, weights)
        assert_matches_exact(got, ys, ps, weights)
        assert got == pytest.approx(r2_score(y, p, weights), rel=1e-12)


def test_r2_agrees_with_scikit_learn_where_its_sums_are_finite():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(2)
    y, p, w = rng.normal(size=40), rng.normal(size=40), rng.uniform(0, 1, size=40)
    for weights in (None, w):
        assert r2_score(y, p, weights) == pytest.approx(sklearn_metrics.r2_score(y, p, sample_weight=weights),
                                                        rel=1e-12)
    assert r2_score(np.ones(3), np.ones(3)) == 1.0 and r2_score(np.ones(3), np.zeros(3)) == 0.0  # its convention
    assert r2_score(y[:, None], p) == r2_score(y, p)  # a column of targets, as scikit-learn reads it


@given(st.lists(st.tuples(st.floats(-1e300, 1e300), st.floats(-1e300, 1e300)), min_size=2, max_size=8))
def test_r2_is_the_exact_value_correctly_rounded(pairs):
    """Targets and predictions anywhere in ±1e300 (squares far beyond the float range)."""
    y, p = (np.array(v) for v in zip(*pairs))
    if np.all(y == y[0]):
        return  # constant targets: the convention above
    assert_matches_exact(r2_score(y, p), y, p)


@pytest.mark.parametrize("bad, match", [
    (dict(y_pred=[1.0, np.inf]), "y_pred must contain only finite"),
    (dict(y_pred=[1.0]), "y and y_pred must have the same length"),
    (dict(sample_weight=[1.0, -1.0]), "sample_weight must be >= 0"),
    (dict(sample_weight=[0.0, 0.0]), "positive sum"),
])
def test_r2_refuses_bad_input(bad, match):
    args = dict(y_true=[1.0, 2.0], y_pred=[1.0, 2.5], sample_weight=None) | bad
    with pytest.raises(ValueError, match=match):
        r2_score(**args)


@pytest.mark.parametrize("estimator", [DPLinearRegression, DPHuberRegressor])
@pytest.mark.parametrize("bound, target_scale", [(1e155, 1.0), (1e308, 1e307), (1e308, 1.0)])
def test_regressor_score_at_a_huge_target_bound_is_its_exact_r2(estimator, bound, target_scale):
    """target_bound=1e155 scored −inf (exact R² ≈ −6.8e306) and targets of order 1e307 under target_bound=1e308
    (a model within an order of magnitude of its targets) −inf too; now the exact R², or −inf only where the
    exact value is below −1.8e308 (O(1) targets under a bound of 1e308: the noise, scaled to the bound, gives
    predictions of order 1e306 and R² ≈ −7e612)."""
    X, y = _data()
    y = y * target_scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = estimator(solver="dp_gd", epsilon=1.0, target_bound=bound, random_state=0).fit(X, y)
    pred = model.predict(X)
    assert np.all(np.isfinite(pred))
    got = model.score(X, y)
    assert_matches_exact(got, y, pred)
    if target_scale > 1 or bound < 1e200:
        assert np.isfinite(got)


def test_a_model_that_overflows_in_target_units_is_refused_not_stored_as_inf():
    """At target_bound=1.7e308 and ε = 0.03 the scaled weights exceed 1.06: coef_ was inf (predict gave inf/NaN)."""
    X, y = _data(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLinearRegression(solver="dp_gd", epsilon=0.03, target_bound=1.7e308, random_state=0)
        with pytest.raises(ValueError, match="model in target units overflows float64.*target_bound"):
            est.fit(X, y)
        model = DPLinearRegression(solver="dp_gd", epsilon=0.1, target_bound=1.7e308, random_state=1).fit(X, y)
    assert np.all(np.isfinite(model.coef_))
    with pytest.raises(ValueError, match="prediction of DPLinearRegression overflows float64"):
        model.predict(np.vstack([X, np.sign(model.coef_) / np.sqrt(3)]))  # a row aligned with coef_
