"""Hostile inputs to the public solvers: extreme ε / δ, huge iteration counts, overflowing scales.

Every case must either run and return a finite model, or raise ValueError / TypeError naming the
argument — never OverflowError, ZeroDivisionError, a Numba TypingError or a NaN model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import algorithms as A
from algorithms._solver_common import MAX_ITERATIONS, check_iterations, iteration_count
from algorithms.dp_gd import default_steps
from algorithms.dp_srm import default_srm_steps


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0)
    return X, y


def _fit(name, data, **kw):
    X, y = data
    args = dict(epsilon=1.0, delta=1e-5, data_norm_bound=1.0, rng=0)
    args.update(kw)
    return getattr(A, name)(X, y, **args)


def _finite_or_refused(fn, names):
    """Run ``fn``: a finite model, or a ValueError whose message names one of ``names``."""
    try:
        res = fn()
    except ValueError as exc:
        assert any(nm in str(exc) for nm in names), str(exc)
        return None
    assert np.all(np.isfinite(res.weights))
    return res


@pytest.mark.parametrize("n", [1, 40, 10**6])
@pytest.mark.parametrize("eps", [1e308, 1e300, 1e-320, 5e-324, 1.0])
def test_default_step_rules_never_overflow(n, eps):
    for rule in (default_steps, default_srm_steps):
        T = rule(n, eps)
        assert isinstance(T, int) and 10 <= T <= 100
    assert default_steps(n, 1e308) == 100 and default_srm_steps(n, 1e308) == 100


def test_default_steps_unchanged_below_cap():
    assert default_steps(150, 1.0) == 10
    assert default_steps(1500, 0.5) == 50
    assert default_steps(1501, 1.0) == 100


def test_linear_regression_huge_epsilon_fits():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(50, 2))
    X /= np.linalg.norm(X, axis=1).max() / 10.0
    y = X @ np.array([1.0, 2.0])
    # was OverflowError("cannot convert float infinity to integer") from dp_gd.default_steps
    est = A.DPLinearRegression(epsilon=1e308, data_norm_bound=10.0, target_bound=30.0, random_state=0,
                               solver_params={"accountant": "rdp"})
    est.fit(X, y)  # the least noise multiplier (MIN_NOISE_MULTIPLIER) meets the target
    assert np.all(np.isfinite(est.coef_)) and est.privacy_.epsilon <= 1e308


@pytest.mark.parametrize("name", ["dp_gd", "dp_srm"])
def test_huge_epsilon_default_steps_in_solvers(name, data):
    _finite_or_refused(lambda: _fit(name, data, epsilon=1e308), ["epsilon", "noise_multiplier"])


OBJ = ["objective_perturbation", "approximate_minima_perturbation", "approx_objective_perturbation"]


@pytest.mark.parametrize("name", OBJ)
@pytest.mark.parametrize("eps", [1e308, 1e300, 1e7])
def test_objective_perturbation_huge_epsilon_refused(name, eps, data):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 524288\]"):
        _fit(name, data, epsilon=eps, alpha=0.1)


@pytest.mark.parametrize("name", OBJ)
@pytest.mark.parametrize("eps", [1e-320, 5e-324])
def test_objective_perturbation_tiny_epsilon_refused(name, eps, data):
    with pytest.raises(ValueError, match="epsilon is too small"):
        _fit(name, data, epsilon=eps, alpha=0.1)


@pytest.mark.parametrize("name", OBJ)
def test_objective_perturbation_extreme_but_valid(name, data):
    res = _fit(name, data, epsilon=1e-300, alpha=0.1)
    assert np.all(np.isfinite(res.weights)) and res.epsilon <= 1e-300
    res = _fit(name, data, epsilon=2.0**19, alpha=0.1)
    assert np.all(np.isfinite(res.weights)) and res.epsilon <= 2.0**19


@pytest.mark.parametrize("name", OBJ)
def test_objective_perturbation_tiny_delta(name, data):
    # the least delta accepted (the smallest normal float; was OverflowError from an unbounded root bracket at 1e-320)
    res = _fit(name, data, delta=2.2250738585072014e-308, alpha=0.1)
    assert np.all(np.isfinite(res.weights)) and res.epsilon <= 1.0 and res.delta == 2.2250738585072014e-308
    with pytest.raises(ValueError, match="delta must be in .* at least 2.2250738585072014e-308"):
        _fit(name, data, delta=1e-320, alpha=0.1)  # subnormal: refused as by the CLI (dpcore._validation.check_delta)


@pytest.mark.parametrize("name", OBJ)
def test_objective_perturbation_large_jacobian_share_has_positive_ridge(name, data):
    # ε_J > 690 with alpha = 0: the ridge would underflow to 0 (ε_J = inf); it is taken at ε_J = 690
    from algorithms._perturbation import jacobian_epsilon, ridge_for_jacobian

    at_690 = ridge_for_jacobian(0.25, 40, 0.0, 690.0)
    assert at_690 > 0.0 and jacobian_epsilon(0.25, at_690) <= 690.0
    for eps_j in (700.0, 1e300, 1e308):
        assert ridge_for_jacobian(0.25, 40, 0.0, eps_j) == pytest.approx(at_690, rel=1e-12)
    assert ridge_for_jacobian(0.25, 40, 0.0, math.inf) == 0.0
    with pytest.raises(ValueError, match="epsilon is too small"):
        ridge_for_jacobian(0.25, 40, 0.0, 0.0)


COUNTS = [
    ("dp_gd", "steps"), ("dp_sgd", "steps"), ("dp_sgd", "epochs"), ("dp_svrg", "epochs"), ("dp_svrg", "inner_steps"),
    ("dp_svrg_pp", "epochs"), ("dp_accmd", "steps"), ("output_perturbation_gd", "steps"), ("rrpsgd", "max_rounds"),
    ("rrpsgd", "max_epochs"), ("dp_srm", "steps"), ("dp_srm", "epochs"), ("noisy_mirror_descent", "steps"),
]
EXTRA = {"dp_sgd": {"dataset_size": 40, "batch_size": 10}, "output_perturbation_gd": {"alpha": 0.1},
         "noisy_mirror_descent": {"p": 1.5}}


@pytest.mark.parametrize("name,arg", COUNTS)
@pytest.mark.parametrize("value", [10**30, 2**63, 1e308])
def test_huge_iteration_counts_refused(name, arg, value, data):
    # was a Numba TypingError (int beyond int64), an OverflowError in ceil, or a wrapped release count
    with pytest.raises(ValueError, match=arg):
        _fit(name, data, **EXTRA.get(name, {}), **{arg: value})


PASSES = {("dp_sgd", "epochs"), ("rrpsgd", "max_epochs"), ("dp_srm", "epochs")}  # real-valued passes


@pytest.mark.parametrize("name,arg,value", [
    (name, arg, value) for name, arg in COUNTS
    for value in [0, -1, True, "3", float("nan"), float("inf")] + ([] if (name, arg) in PASSES else [1.5])
])
def test_bad_iteration_counts_refused(name, arg, value, data):
    with pytest.raises((ValueError, TypeError), match=arg):
        _fit(name, data, **EXTRA.get(name, {}), **{arg: value})


def test_check_iterations():
    assert check_iterations("steps", 7) == 7 and check_iterations("steps", 7.0) == 7
    assert check_iterations("steps", MAX_ITERATIONS) == MAX_ITERATIONS
    with pytest.raises(ValueError, match=r"steps must be an integer in \[1, MAX_ITERATIONS"):
        check_iterations("steps", MAX_ITERATIONS + 1)
    assert iteration_count("epochs", 2.5, 2.5) == 3 and iteration_count("epochs", 1e-9, 1e-9) == 1
    with pytest.raises(ValueError, match="epochs must give at most"):
        iteration_count("epochs", 1e308, math.inf)


SCALES = [("dp_gd", "clip_norm"), ("dp_gd", "learning_rate"), ("dp_sgd", "clip_norm"), ("dp_svrg", "clip_norm"),
          ("dp_svrg", "learning_rate")]


@pytest.mark.parametrize("name,arg", SCALES)
def test_overflowing_scale_never_returns_nan(name, arg, data):
    # the noise / iterates overflow float64: a NaN model is refused, naming the scale arguments
    with pytest.raises(ValueError, match=arg):
        _fit(name, data, **EXTRA.get(name, {}), **{arg: 1e308})


@pytest.mark.parametrize("name", ["dp_gd", "dp_svrg"])
def test_overflowing_noise_multiplier_never_returns_nan(name, data):
    with pytest.raises(ValueError, match="noise_multiplier"):
        _fit(name, data, epsilon=None, noise_multiplier=1e308)


@pytest.mark.parametrize("name", ["dp_gd", "dp_sgd", "dp_svrg", "dp_accmd", "dp_srm", "rrpsgd"])
@pytest.mark.parametrize("eps,exc", [(0, ValueError), (-1, ValueError), (float("nan"), ValueError),
                                     (True, ValueError), ("1", ValueError)])
def test_bad_epsilon_refused(name, eps, exc, data):
    with pytest.raises(exc, match="epsilon"):
        _fit(name, data, epsilon=eps, **EXTRA.get(name, {}))


@pytest.mark.parametrize("name", ["dp_gd", "dp_sgd", "dp_svrg", "dp_accmd", "dp_srm", "rrpsgd"])
@pytest.mark.parametrize("delta", [0, 1, float("nan"), -1e-5])
def test_bad_delta_refused(name, delta, data):
    with pytest.raises(ValueError, match="delta"):
        _fit(name, data, delta=delta, **EXTRA.get(name, {}))


@pytest.mark.parametrize("X,y,match", [
    ([[0.1, 0.2], [0.3]], [1.0, -1.0], "X"),
    (np.empty((0, 3)), np.empty(0), "X"),
    (np.zeros((4, 0)), np.ones(4), "X"),
    ([[0.1, 0.2]], ["a"], "y"),
    ([[0.1, 0.2], [0.2, 0.1]], [2.0, 3.0], "y"),
    ([[np.nan, 0.2]], [1.0], "X"),
    ([[1e308, 0.2]], [1.0], "data_norm_bound"),
])
def test_bad_data_refused(X, y, match):
    with pytest.raises(ValueError, match=match):
        A.dp_gd(X, y, epsilon=1.0, data_norm_bound=1.0, rng=0)


@pytest.mark.parametrize("rng", [-1, True, 1.5, "seed"])
def test_bad_rng_refused(rng, data):
    with pytest.raises(ValueError, match="rng"):
        _fit("dp_gd", data, rng=rng)


def test_huge_seed_accepted(data):
    assert np.all(np.isfinite(_fit("dp_gd", data, rng=10**30).weights))


def test_svrg_pp_doubling_epochs_capped(data):
    # epoch k runs 2^k inner steps: epochs=41 ran 2^42 steps (a hang), 10**30 formed 2^(10**30)
    for epochs in (31, 41, 10**6):
        with pytest.raises(ValueError, match=r"epochs must be an integer in \[1, 30\]"):
            _fit("dp_svrg_pp", data, epochs=epochs)
    with pytest.raises(ValueError, match="epochs and inner_steps"):
        _fit("dp_svrg_pp", data, epochs=20, inner_steps=10**4)  # 10^4·(2^21 − 2) steps
    assert np.all(np.isfinite(_fit("dp_svrg_pp", data, epochs=3).weights))


@pytest.mark.parametrize("name", ["dp_gd", "dp_accmd", "phased_dp_sgd", "dp_srm"])
def test_underflowing_norm_bound_refused(name, data):
    # β = R²/4 underflowed to 0: a ZeroDivisionError (dp_accmd, phased_dp_sgd) or a message about learning_rate
    X, y = data
    kw = {"p": 2.0} if name == "phased_dp_sgd" else {}
    with pytest.raises(ValueError, match="data_norm_bound=1e-320"):
        getattr(A, name)(X * 0.0, y, epsilon=1.0, data_norm_bound=1e-320, rng=0, **kw)


@pytest.mark.parametrize("name", OBJ)
@pytest.mark.parametrize("max_iter", [0, -1, True, 1.5])
def test_objective_perturbation_bad_max_iter(name, max_iter, data):
    # was a RuntimeError "not minimised ... after 0 Newton steps"
    with pytest.raises(ValueError, match="max_iter"):
        _fit(name, data, alpha=0.1, max_iter=max_iter)


@pytest.mark.parametrize("name", OBJ)
def test_objective_perturbation_overflowing_alpha(name, data):
    with pytest.raises(ValueError, match="alpha"):  # was a NaN Newton solve (RuntimeError)
        _fit(name, data, alpha=1e308)


@pytest.mark.parametrize("eps", [1e308, 1e-320, 5e-324])
def test_output_perturbation_extreme_epsilon_names_epsilon(eps, data):
    # 1e308: was "sigma must be in (0, inf); got 0.0" (an internal name)
    with pytest.raises(ValueError, match="epsilon"):
        res = _fit("output_perturbation_gd", data, epsilon=eps, alpha=0.1, delta=0.0)
    if eps == 1e308:
        with pytest.raises(ValueError, match="epsilon=1e\\+308"):
            _fit("output_perturbation_gd", data, epsilon=eps, alpha=0.1)
    else:  # δ > 0: huge noise is a valid (if useless) release
        res = _fit("output_perturbation_gd", data, epsilon=eps, alpha=0.1)
        assert np.all(np.isfinite(res.weights)) and res.epsilon <= eps


def test_phased_dp_sgd_extreme_epsilon_names_epsilon(data):
    # was "learning_rate must be in (0, inf); got None" although no learning_rate was given
    with pytest.raises(ValueError, match="epsilon=5e-324"):
        _fit("phased_dp_sgd", data, epsilon=5e-324, p=2.0)
    with pytest.raises(ValueError, match="learning_rate"):
        _fit("phased_dp_sgd", data, p=2.0, learning_rate=True)  # a bool was taken as 1.0


@pytest.mark.parametrize("name", ["batched_truncated_mirror_descent", "shuffled_truncated_mirror_descent"])
@pytest.mark.parametrize("eps", [1e308, 1e300, 1e-320])
def test_truncated_mirror_extreme_epsilon(name, eps, data):
    # was "lam must be in [0, inf); got None", "sigma ... got inf", or OverflowError in (M·n·ε)²
    _finite_or_refused(lambda: _fit(name, data, epsilon=eps, p=1.5, steps=4), ["epsilon"])


@pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")
@pytest.mark.parametrize("solver", ["dp_sgd", "dp_gd", "dp_srm", "rrpsgd"])
@pytest.mark.parametrize("kw,match", [
    ({"epochs": 1e308}, "epochs"),  # was OverflowError in ceil
    ({"epochs": 10**30}, "epochs"),  # was a Numba TypingError / "high is out of bounds for int64"
    ({"hidden_units": 10**30}, "hidden_units"),  # was a Numba TypingError
    ({"hidden_units": 10**9}, "hidden_units=1000000000 gives"),  # was a MemoryError (37 GiB of parameters)
    ({"clip_norm": 1e308}, "clip_norm"),  # returned a NaN network
])
def test_mlp_hostile(solver, kw, match, data):
    X, y = data
    est = A.DPMLPClassifier(solver=solver, classes=[-1.0, 1.0], random_state=0, **{"epochs": 2, **kw})
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_linear_regression_output_perturbation_tiny_epsilon_auto_alpha():
    # alpha="auto" computed d/(n·ε)² with (n·ε)² underflowed to 0: ZeroDivisionError
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(40, 2))
    X /= np.linalg.norm(X, axis=1).max()
    y = X @ np.array([1.0, -1.0])
    est = A.DPLinearRegression(solver="output_perturbation_gd", epsilon=1e-320, target_bound=3.0)
    from algorithms.estimators import AUTO_ALPHA_REGRESSION_MAX

    assert est._alpha((40, 3), "l2") == AUTO_ALPHA_REGRESSION_MAX  # the cap, not a crash
    with pytest.raises(ValueError, match="Lipschitz"):  # squared loss: refused by the solver, as at any ε
        est.fit(X, y)


@pytest.mark.parametrize("kw,match", [({"radius": 1e308}, "radius"), ({"radius": 1e-320}, "radius"),
                                      ({"smoothness": 1e308}, "smoothness"), ({"smoothness": 1e-320}, "smoothness")])
def test_dp_accmd_extreme_radius_smoothness(kw, match, data):
    # radius: was OverflowError in r**2 / ZeroDivisionError in kappa; smoothness: a NaN model
    with pytest.raises(ValueError, match=match):
        _fit("dp_accmd", data, **kw)


@pytest.mark.parametrize("name", ["batched_truncated_mirror_descent", "shuffled_truncated_mirror_descent"])
@pytest.mark.parametrize("kw", [{"gamma": 1e-320}, {"alpha": 1e308}, {"smoothness": 1e-320}, {"lam": 1e308},
                                {"lam": 1e-320}, {"truncation": 1e308}, {"truncation": 1e-320}])
def test_truncated_mirror_extreme_parameters(name, kw, data):
    # were ZeroDivisionError from the kernel's Bregman step, or OverflowError / ZeroDivisionError in the
    # shuffled default T = (M n ε)² / (λ² d log(1/δ))
    eps = 0.05 if name.startswith("shuffled") else 1.0
    _finite_or_refused(lambda: _fit(name, data, epsilon=eps, p=1.5, **kw),
                       ["gamma", "alpha", "steps", "epsilon", "sigma", "truncation"])


def test_approx_objective_perturbation_overflowing_lam(data):
    with pytest.raises(ValueError, match="lam"):  # was a NaN Newton solve (RuntimeError)
        _fit("approx_objective_perturbation", data, alpha=0.1, lam=1e308)


@pytest.mark.parametrize("bound", [1e-200, 1e-160, 1e308])
@pytest.mark.parametrize("make", [
    lambda: A.DPLogisticRegression(classes=[-1, 1], random_state=0, clip_data=True),  # solver="auto"
    lambda: A.DPLinearRegression(target_bound=1.0, solver="dp_sgd", random_state=0, clip_data=True),
])
def test_estimator_extreme_norm_bound_names_it(bound, make, data):
    # were: ZeroDivisionError (auto rule's step 1/β and DP-SGD's default step at R = 1e-200); at R = 1e-160
    # √(R² + c²) lost digits below the rows' own norm ("data_norm_bound=1.11802e-160 is violated"); at
    # R = 1e308 it overflowed ("data_norm_bound must be in (0, inf); got inf")
    X, y = data
    with pytest.raises(ValueError, match=r"data_norm_bound=1(\.1\d*)?e[-+]\d+ gives the loss smoothness"):
        make().set_params(data_norm_bound=bound).fit(X * bound, y)


def test_augmented_norm_bound_is_an_upper_bound():
    from fractions import Fraction
    from algorithms.clipping import augmented_norm_bound
    for R, c in [(1e-160, 5e-161), (1e308, 5e307), (1.0, 0.5), (3e-200, 1.0), (5e-324, 5e-324)]:
        b = augmented_norm_bound(R, c)
        assert math.isfinite(b) and Fraction(b) ** 2 >= Fraction(R) ** 2 + Fraction(c) ** 2


@pytest.mark.parametrize("tune", [True, {"method": "release_best"}])
def test_tuning_grid_refuses_a_bound_whose_smoothness_underflows(tune):
    """The tuning grids' step rules divide by the logistic smoothness ¼(R² + c²): at R = 1e-200 it underflowed to 0
    and tune= raised ZeroDivisionError; it is the estimators' one smoothness check now."""
    from algorithms import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30000, 4)) * 1e-201  # enough rows for the retrain selection to run (not skipped)
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match="data_norm_bound"):
        DPLogisticRegression(tune=tune, epsilon=1.0, data_norm_bound=1e-200, classes=[-1, 1], random_state=0).fit(X, y)

