"""scikit-learn style estimators: baselines, pipelines, parameters, privacy attributes, no-sklearn mode."""

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import dpcore
from algorithms import SOLVERS, DPHuberRegressor, DPLinearRegression, DPLogisticRegression, get_loss
from algorithms.estimators import default_lp_exponent
from algorithms.objective import reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification, make_regression

X, Y, _ = make_classification(300, 4, seed=1)
Y01 = (Y > 0).astype(int)
N = X.shape[0]


@pytest.mark.parametrize("solver", ["objective_perturbation", "approximate_minima_perturbation",
                                    "approx_objective_perturbation"])
def test_epsilon_inf_matches_sklearn_logistic_regression(solver):
    """ε = inf equals sklearn's LogisticRegression with C = 1/(n·alpha): lbfgs without intercept,
    liblinear (penalised intercept, same intercept_scaling) with it. Tolerance 1e-5."""
    alpha = 0.01
    ours = DPLogisticRegression(solver=solver, epsilon=math.inf, alpha=alpha, fit_intercept=False).fit(X, Y01)
    sk = LogisticRegression(C=1 / (N * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, Y01)
    assert np.max(np.abs(ours.coef_ - sk.coef_[0])) < 1e-5
    ours = DPLogisticRegression(solver=solver, epsilon=math.inf, alpha=alpha, intercept_scaling=0.5).fit(X, Y01)
    sk = LogisticRegression(C=1 / (N * alpha), solver="liblinear", intercept_scaling=0.5, tol=1e-12,
                            max_iter=10_000).fit(X, Y01)
    assert np.max(np.abs(ours.coef_ - sk.coef_[0])) < 1e-5
    assert ours.intercept_ == pytest.approx(sk.intercept_[0], abs=1e-5)
    assert ours.privacy_.epsilon == math.inf
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-5)


def test_output_perturbation_inf_matches_sklearn():
    alpha = 0.05
    ours = DPLogisticRegression(solver="output_perturbation_gd", epsilon=math.inf, alpha=alpha, fit_intercept=False,
                                solver_params={"steps": 2000}).fit(X, Y01)
    sk = LogisticRegression(C=1 / (N * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, Y01)
    assert np.max(np.abs(ours.coef_ - sk.coef_[0])) < 1e-5


def test_huber_and_linear_regression_noise_off():
    Xr, Yr, _ = make_regression(300, 4, seed=2)
    alpha = 0.02
    hub = DPHuberRegressor(solver="objective_perturbation", epsilon=math.inf, alpha=alpha, huber_delta=0.5,
                           fit_intercept=False).fit(Xr, Yr)
    ref = reference_minimizer(Xr, Yr, get_loss("huber", huber_delta=0.5), Regularizer(alpha))
    assert np.max(np.abs(hub.coef_ - ref)) < 1e-6
    lin = DPLinearRegression(solver="dp_gd", epsilon=math.inf, alpha=alpha, clip_norm=100.0, fit_intercept=False,
                             solver_params={"steps": 3000}).fit(Xr, Yr)
    ridge = Ridge(alpha=N * alpha, fit_intercept=False, tol=1e-12).fit(Xr, Yr)  # 2n·F = ‖Xw − y‖² + nα‖w‖²
    assert np.max(np.abs(lin.coef_ - ridge.coef_)) < 1e-4
    assert lin.score(Xr, Yr) > 0.9


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_solver_reports_its_privacy(solver):
    """Every solver runs from the estimator with its defaults (the l_p solvers' p by the public rule
    default_lp_exponent; shuffled truncated mirror descent at ε = 1 on 300 rows: ε₀ = 1, a smaller ε reported)."""
    m = DPLogisticRegression(solver=solver, epsilon=1.0, delta=1e-5, alpha=0.01, random_state=3,
                             keep_diagnostics=True).fit(X, Y01)
    if "p" in m.result_.details and solver != "phased_dp_sgd":
        assert m.result_.details["p"] == default_lp_exponent(5)
    assert m.privacy_.epsilon <= 1.0
    assert m.privacy_.delta == 1e-5 and m.privacy_.relation == m.result_.event.relation
    # one relation for every solver: the estimators run DP-SGD without replacement (replace-one)
    assert m.privacy_.relation == "replace_one"
    assert m.privacy_ == m.result_.privacy
    assert m.n_gradient_evaluations_ == m.result_.n_gradient_evaluations > 0
    assert m.coef_.shape == (4,) and np.isfinite(m.intercept_)


def test_pipeline_and_cross_val_score():
    normalise = FunctionTransformer(lambda Z: Z / np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None])
    pipe = make_pipeline(normalise, DPLogisticRegression(solver="objective_perturbation", epsilon=2.0, alpha=0.01,
                                                         random_state=0))
    scores = cross_val_score(pipe, 3.0 * X, Y01, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.7


def test_params_clone_and_set_params():
    m = DPLogisticRegression(solver="objective_perturbation", epsilon=0.5, alpha=0.1, random_state=7)
    params = m.get_params()
    assert params["epsilon"] == 0.5 and params["solver"] == "objective_perturbation"
    c = clone(m)
    assert c.get_params() == params and c is not m
    c.set_params(epsilon=2.0)
    assert c.epsilon == 2.0 and m.epsilon == 0.5
    with pytest.raises(ValueError):
        c.set_params(not_a_parameter=1)


def test_string_labels_probabilities_and_reproducibility():
    ys = np.where(Y > 0, "spam", "ham")
    a = DPLogisticRegression(solver="objective_perturbation", epsilon=1.0, random_state=4).fit(X, ys)
    b = DPLogisticRegression(solver="objective_perturbation", epsilon=1.0, random_state=4).fit(X, ys)
    assert list(a.classes_) == ["ham", "spam"]
    assert set(a.predict(X)) <= {"ham", "spam"}
    np.testing.assert_allclose(a.predict_proba(X).sum(axis=1), 1.0)
    assert np.array_equal(a.coef_, b.coef_)
    assert 0.0 <= a.score(X, ys) <= 1.0


def test_data_norm_bound_is_enforced_or_clipped_explicitly():
    big = 3.0 * X
    with pytest.raises(ValueError, match="data_norm_bound"):
        DPLogisticRegression(solver="objective_perturbation").fit(big, Y01)
    m = DPLogisticRegression(solver="objective_perturbation", clip_data=True).fit(big, Y01)
    assert m.privacy_.epsilon <= 1.0
    m2 = DPLogisticRegression(solver="objective_perturbation", data_norm_bound=3.0, keep_diagnostics=True).fit(big, Y01)
    assert m2.result_.details["L"] == pytest.approx(math.sqrt(9.0 + 1.0))  # intercept column in the bound


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DPLogisticRegression(solver="sgd").fit(X, Y01), "solver"),
        (lambda: DPLogisticRegression(epsilon=0.0).fit(X, Y01), "epsilon"),
        (lambda: DPLogisticRegression().fit(X, np.zeros(N)), "two distinct"),
        (lambda: DPLogisticRegression(classes=[0, 1, 2]).fit(X, np.arange(N) % 4), "labels"),
        (lambda: DPLogisticRegression(solver="objective_perturbation", multi_class="multinomial").fit(
            X, np.arange(N) % 3), "softmax"),
        (lambda: DPLogisticRegression().fit(X + 1j, Y01), "complex"),
        (lambda: DPLogisticRegression(classes=[0, 2]).fit(X, Y01), "labels"),
        (lambda: DPLogisticRegression(classes=[[0, 1]]).fit(X, Y01), "classes must be a 1-D"),  # was fitted
        (lambda: DPLogisticRegression(multi_class="bogus").fit(X, Y01), "multi_class must be one of"),  # was fitted
        (lambda: DPLogisticRegression(clip_data="no").fit(X * 2, Y01), "clip_data must be True or False"),  # clipped
        (lambda: DPLinearRegression(target_bound=1.0, fit_intercept="no").fit(X, Y), "fit_intercept must be True"),
        (lambda: DPLogisticRegression(solver="dp_gd", solver_params={"bogus": 1}).fit(X, Y01),  # were TypeErrors
         r"solver_params has keys .*\['bogus'\]"),
        (lambda: DPLogisticRegression(solver="dp_gd", solver_params={"epsilon": 100.0}).fit(X, Y01),
         r"solver_params has keys .*\['epsilon'\]"),
        (lambda: DPLogisticRegression(classes=[0.0, np.nan]).fit(X, np.zeros(N)), "classes must contain only finite"),
        (lambda: DPLogisticRegression(solver="objective_perturbation").fit(np.full_like(X, np.nan), Y01), "finite"),
        (lambda: DPLinearRegression(solver="objective_perturbation", target_bound=1e6).fit(X, Y), "Lipschitz"),
        (lambda: DPLinearRegression().fit(X, Y), "target_bound"),
        (lambda: DPLogisticRegression().predict(X), "not fitted"),
    ],
)
def test_bad_input_raises(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_estimators_work_without_sklearn():
    """Block ``sklearn`` imports in a fresh interpreter: fit / predict / score / get_params still work."""
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None
        import math, numpy as np
        from algorithms import DPLogisticRegression, DPHuberRegressor
        from algorithms.synthetic import make_classification, make_regression
        X, y, _ = make_classification(200, 3, seed=0)
        m = DPLogisticRegression(solver="objective_perturbation", epsilon=math.inf, alpha=0.01).fit(X, y)
        assert type(m).__mro__[-2].__name__ == "_FallbackBase", type(m).__mro__
        assert m.score(X, y) > 0.7 and m.get_params()["alpha"] == 0.01
        m.set_params(epsilon=1.0)
        assert m.fit(X, y).privacy_.epsilon <= 1.0
        Xr, yr, _ = make_regression(200, 3, seed=0)
        r = DPHuberRegressor(solver="objective_perturbation", epsilon=math.inf).fit(Xr, yr)
        assert r.score(Xr, yr) > 0.5
        try:
            m.set_params(bogus=1)
        except ValueError:
            print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_privacy_attribute_is_a_dpcore_result():
    m = DPLogisticRegression(solver="output_perturbation_gd", epsilon=1.0, delta=0.0, alpha=0.05).fit(X, Y01)
    assert isinstance(m.privacy_, dpcore.PrivacyResult)
    assert m.privacy_.delta == 0.0 and m.privacy_.epsilon == pytest.approx(1.0)


CORE = ("dp_gd", "dp_sgd", "dp_svrg", "dp_svrg_pp", "dp_accmd", "output_perturbation_gd", "objective_perturbation",
        "approximate_minima_perturbation", "approx_objective_perturbation")


@pytest.mark.parametrize("solver", CORE)
def test_sparse_input_equals_dense_and_one_relation(solver):
    """CSR input (what load_svmlight_file returns), kept sparse, gives the model of the dense array (same
    seed) to rounding, and every solver reports replace_one by default (DP-SGD run without replacement) —
    issue 15.2, 15.4, 26.1."""
    import scipy.sparse as sp

    dense = DPLogisticRegression(solver=solver, random_state=3).fit(X, Y01)
    sparse = DPLogisticRegression(solver=solver, random_state=3).fit(sp.csr_matrix(X), Y01)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))
    assert dense.privacy_.relation == "replace_one" and dense.privacy_.epsilon <= 1.0


def test_clip_data_is_applied_in_predict_too():
    """clip_data=True rescales rows above R to norm R in decision_function as in fit (issue 15.3)."""
    big = 3.0 * X
    m = DPLogisticRegression(solver="objective_perturbation", clip_data=True, random_state=0).fit(big, Y01)
    clipped = big / np.maximum(1.0, np.linalg.norm(big, axis=1))[:, None]
    np.testing.assert_allclose(m.decision_function(big), clipped @ m.coef_ + m.intercept_, rtol=1e-9)
    assert not np.allclose(m.decision_function(big), big @ m.coef_ + m.intercept_)


def test_auto_alpha_is_the_public_rule():
    """alpha='auto' = min(0.01, 10/(n·min(ε, 10))), output perturbation min(0.01, 0.08(d/(nε′))^(2/3)),
    the logistic gradient-perturbation solvers min(0.01, 1/(nε′)); stored in alpha_ (issue 15.5, 11)."""
    for eps, expect in ((5.0, 10.0 / (5 * N)), (0.1, 0.01), (math.inf, 1.0 / N)):
        m = DPLogisticRegression(solver="objective_perturbation", epsilon=eps, random_state=0).fit(X, Y01)
        assert m.alpha_ == pytest.approx(expect, rel=1e-12)
    m = DPLogisticRegression(solver="output_perturbation_gd", random_state=0).fit(X, Y01)
    assert m.alpha_ == pytest.approx(min(0.01, 0.08 * (5 / N) ** (2 / 3)), rel=1e-12)  # d = 4 + intercept
    for eps, expect in ((5.0, 1.0 / (5 * N)), (0.01, 0.01)):  # gradient perturbation (logistic): 1/(n·ε′)
        m = DPLogisticRegression(solver="dp_gd", epsilon=eps, random_state=0).fit(X, Y01)
        assert m.alpha_ == pytest.approx(expect, rel=1e-12)
    assert DPLogisticRegression(alpha=0.5, solver="objective_perturbation", random_state=0).fit(X, Y01).alpha_ == 0.5
    with pytest.raises(ValueError, match="alpha"):
        DPLogisticRegression(alpha="big").fit(X, Y01)


@pytest.mark.parametrize("cls, solver", [(DPHuberRegressor, "objective_perturbation"), (DPLinearRegression, "dp_gd")])
def test_target_bound_scales_and_is_enforced(cls, solver):
    """target_bound B: the fit on y equals B × the fit on y/B (same seed); |y| > B raises (issue 15.1)."""
    XR, YR, _ = make_regression(300, 4, seed=5)
    B = 2.0 * float(np.max(np.abs(YR)))
    a = cls(solver=solver, target_bound=B, alpha=1e-3, random_state=1).fit(XR, YR)
    b = cls(solver=solver, target_bound=1.0, alpha=1e-3, random_state=1).fit(XR, YR / B)  # same auto rules
    np.testing.assert_allclose(a.coef_, B * b.coef_, rtol=1e-9)
    np.testing.assert_allclose(a.predict(XR), B * b.predict(XR), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="target_bound"):
        cls(solver=solver, target_bound=0.4 * B, random_state=1).fit(XR, YR)


def test_privacy_repr_is_summarised():
    """repr(privacy_) states the guarantee and relation in one short line, not the RDP curve (issue 15.5)."""
    m = DPLogisticRegression(solver="dp_gd", random_state=0).fit(X, Y01)
    text = repr(m.privacy_)
    assert len(text) < 400 and "relation='replace_one'" in text and "epsilon=" in text


# ----------------------------------------------------------------------------- friendlier errors (issue 12.5)


def _float32_unit_rows(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z /= np.linalg.norm(Z, axis=1)[:, None]
    return Z.astype(np.float32), (Z[:, 0] > 0).astype(int)


@pytest.mark.parametrize("solver", ["objective_perturbation", "dp_svrg", "dp_sgd", "dp_gd"])
def test_float32_unit_norm_rows_are_accepted(solver):
    Z, yz = _float32_unit_rows()
    assert np.max(np.linalg.norm(Z.astype(np.float64), axis=1)) > 1.0  # float32 rounding lifts some rows above R
    m = DPLogisticRegression(solver=solver, epsilon=1.0).fit(Z, yz)
    assert np.all(np.isfinite(m.coef_)) and m.privacy_.epsilon <= 1.0


def test_rows_beyond_rounding_are_refused_naming_the_bound_and_clip_data():
    Z, yz = _float32_unit_rows()
    with pytest.raises(ValueError, match=r"data_norm_bound=1\.0 is violated.*clip_data=True"):
        DPLogisticRegression().fit(1.001 * Z, yz)
    m = DPLogisticRegression(clip_data=True).fit(1.001 * Z, yz)  # the public rescaling
    assert np.all(np.isfinite(m.coef_))


def test_row_norms_neither_underflow_nor_overflow():
    Z, yz = _float32_unit_rows()
    tiny, huge = np.full((1, 5), 1e-170), np.full((1, 5), 1e300)
    with pytest.raises(ValueError, match="data_norm_bound"):
        DPLogisticRegression().fit(np.vstack([Z, huge]), np.r_[yz, 1])
    m = DPLogisticRegression(clip_data=True).fit(np.vstack([Z, tiny, huge]), np.r_[yz, 0, 1])
    assert np.all(np.isfinite(m.coef_)) and np.isfinite(m.decision_function(huge)).all()


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_random_state_is_named(bad):
    Z, yz = _float32_unit_rows()
    with pytest.raises(ValueError, match="random_state must be None"):
        DPLogisticRegression(random_state=bad).fit(Z, yz)


def test_default_batch_larger_than_the_data_is_the_full_batch():
    Z, yz = _float32_unit_rows(n=2)
    m = DPLogisticRegression(solver="dp_sgd").fit(Z, [0, 1])  # dp_sgd's default batch 256 > n = 2
    assert np.all(np.isfinite(m.coef_))


def test_label_set_from_the_data_warns_and_a_public_one_does_not():
    from algorithms import PrivacyLeakWarning
    Z, yz = _float32_unit_rows()
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        DPLogisticRegression().fit(Z, yz)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        m = DPLogisticRegression(classes=[0, 1]).fit(Z, yz)
    assert m.classes_.tolist() == [0, 1]


def test_estimators_refuse_poisson_sampling():
    # under add/remove n is private, and alpha='auto' / the batch rules read n (review finding)
    with pytest.raises(ValueError, match="without_replacement"):
        DPLogisticRegression(solver="dp_sgd", solver_params={"sampling": "poisson", "dataset_size": 5000,
                                                             "batch_size": 50, "steps": 5}).fit(X, Y01)


def test_classifier_gradient_solvers_calibrate_with_the_auto_accountant():
    """DPLogisticRegression's gradient solvers default to accountant='auto' (dpcore's tightest valid bound:
    for the without-replacement Gaussian it needs a smaller σ than RDP at the same ε); solver_params wins."""
    kw = dict(solver="dp_sgd", epsilon=0.5, alpha=1e-3, random_state=0, keep_diagnostics=True, classes=[0, 1])
    auto = DPLogisticRegression(**kw).fit(X, Y01)
    rdp = DPLogisticRegression(solver_params={"accountant": "rdp"}, **kw).fit(X, Y01)
    assert auto.privacy_.epsilon <= 0.5 and rdp.privacy_.epsilon <= 0.5
    assert auto.result_.noise_multiplier < rdp.result_.noise_multiplier
