"""solver="auto" (algorithms.auto_solver) and tune= (algorithms.model_selection), issue 24."""

import math
import warnings

import numpy as np
import pytest

import dpcore
from algorithms import DPLogisticRegression, dp_gd
from algorithms.auto_solver import CONSTANT_BELOW, LowSignalWarning, choose_solver, private_constant
from algorithms.model_selection import NoTuningRunWarning, _check_curve, candidate_grid, tuning_event
from algorithms.synthetic import make_classification
from dpcore.events import ComposedEvent, GaussianEvent, SelfComposedEvent
from dpcore.selection import RepeatAndSelectEvent

pytestmark = pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")  # seeds: tests only


def test_rule_regimes_are_functions_of_public_quantities():
    assert choose_solver(n=398, d=31, epsilon=0.1).solver == "constant"  # 7.1 < 10
    few = choose_solver(n=398, d=31, epsilon=0.5)
    assert few.regime == "few_steps" and few.solver_params["steps"] == 2 and few.intercept_scaling == 0.5
    assert few.solver_params["learning_rate"] == pytest.approx(1.9 / (0.25 * 1.25))
    low = choose_solver(n=32561, d=124, epsilon=0.1)
    assert low.regime == "low_epsilon" and low.solver == "dp_sgd"  # wide (a9a, Adult): DP-SGD
    assert choose_solver(n=49990, d=23, epsilon=0.1).solver == "dp_gd"  # narrow (ijcnn1): DP-GD
    assert choose_solver(n=49990, d=49, epsilon=0.1).solver == "dp_gd"
    assert choose_solver(n=49990, d=50, epsilon=0.1).solver == "dp_sgd"
    assert choose_solver(n=32561, d=124, epsilon=1.0).solver == "objective_perturbation"
    for eps in (1.0, 2.0):  # digits-sized: DP-GD's own defaults (n*eps in [1000, 5000))
        mid = choose_solver(n=1257, d=65, epsilon=eps)
        assert mid.regime == "moderate" and mid.solver == "dp_gd" and mid.solver_params == {}
    assert choose_solver(n=999, d=65, epsilon=1.0).regime == "few_steps"
    assert choose_solver(n=14000, d=21, epsilon=0.5).solver == "objective_perturbation"  # n*eps = 7000
    assert choose_solver(n=32561, d=124, epsilon=math.inf).solver == "objective_perturbation"
    # k classes split the signal: a binary problem with a model is a constant one at k = 11
    assert choose_solver(n=1000, d=65, epsilon=0.5).solver == "dp_gd"
    assert choose_solver(n=1000, d=65, epsilon=0.5, n_classes=11).solver == "constant"
    for bad in (dict(n=0, d=3, epsilon=1.0), dict(n=10, d=3, epsilon=0.0), dict(n=10, d=3, epsilon=1.0, n_classes=1)):
        with pytest.raises(ValueError):
            choose_solver(**bad)


def test_auto_reads_only_public_quantities():
    """Two data sets of the same shape get the same choice (the rule never looks at the values)."""
    X, y, _ = make_classification(500, 6, seed=0)
    X2, y2, _ = make_classification(500, 6, seed=9)
    a = DPLogisticRegression(epsilon=0.5, classes=[-1, 1], random_state=0).fit(X, y)
    b = DPLogisticRegression(epsilon=0.5, classes=[-1, 1], random_state=0).fit(X2, -y2)
    assert a.auto_choice_ == b.auto_choice_ and a.solver_ == "dp_gd" and a.auto_choice_.regime == "few_steps"


def test_few_step_branch_is_dp_gd_with_the_rule_parameters():
    """The estimator's fit equals a direct dp_gd run with the rule's parameters (same seed → same noise)."""
    X, y, _ = make_classification(500, 6, seed=1)
    m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=3).fit(X, y)
    ch = m.auto_choice_
    c = ch.intercept_scaling
    Xc = np.hstack([X, np.full((X.shape[0], 1), c)])
    res = dp_gd(Xc, y, epsilon=1.0, delta=1e-5, alpha=m.alpha_, data_norm_bound=math.nextafter(math.sqrt(1 + c * c), 2),
                rng=3, accountant="auto", **ch.solver_params)
    np.testing.assert_allclose(m.coef_, res.weights[:-1], rtol=1e-12)
    assert m.intercept_ == pytest.approx(res.weights[-1] * c, rel=1e-12)
    assert m.privacy_.epsilon <= 1.0 and m.privacy_.relation == "replace_one"


def test_wide_low_epsilon_branch_is_the_dp_sgd_estimator():
    """Wide data at ε < 0.5 with n·ε ≥ 1300: the fit is DPLogisticRegression(solver="dp_sgd") with the same seed
    (same noise), a DP-GD fit would differ."""
    X, y, _ = make_classification(13_000, 49, seed=2)
    m = DPLogisticRegression(epsilon=0.1, classes=[-1, 1], random_state=4).fit(X, y)
    assert m.solver_ == "dp_sgd" and m.auto_choice_.regime == "low_epsilon"
    ref = DPLogisticRegression(epsilon=0.1, classes=[-1, 1], random_state=4, solver="dp_sgd",
                               intercept_scaling=1.0).fit(X, y)
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    assert m.intercept_ == ref.intercept_ and m.privacy_ == ref.privacy_
    assert m.privacy_.epsilon <= 0.1 and m.privacy_.relation == "replace_one"


def test_constant_branch_warns_once_from_public_quantities_and_is_private():
    X = np.zeros((300, 20))
    X[:, 0] = 0.5
    msgs = []
    for labels in (np.ones(300), -np.ones(300)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m = DPLogisticRegression(epsilon=0.1, classes=[-1, 1], random_state=0).fit(X, labels)
        low = [str(w.message) for w in rec if issubclass(w.category, LowSignalWarning)]
        assert len(low) == 1
        msgs.append(low[0])
        assert m.solver_ == "constant" and np.all(m.coef_ == 0) and m.privacy_.epsilon <= 0.1
        assert m.privacy_.relation == "replace_one" and np.all(m.predict(X) == labels[0])  # margin 300 vs noise 10
    assert msgs[0] == msgs[1]  # the text depends on n, d, ε only
    assert f"below {CONSTANT_BELOW:g}" in msgs[0]


def test_private_constant_adds_discrete_laplace_noise():
    """The released count is noisy (a planted 'no noise' constant is caught: all 400 intercepts would be equal) with
    the spread of a discrete Laplace of scale 1/ε (mean |noise| ≈ 2e^{-1/b}/(1 − e^{-2/b}) ≈ b for b = 10; 400 draws:
    within 25 % of it, false-alarm rate below 1e-6)."""
    y = np.r_[np.ones(600), -np.ones(400)]
    counts = []
    for s in range(400):
        intercept, frac, event = private_constant(y, 0.1, np.random.default_rng(s))
        counts.append(frac * 1000.0)
        assert event == dpcore.PureDpEvent(event.epsilon, "replace_one") and event.epsilon <= 0.1 * (1 + 1e-12)
    dev = np.abs(np.array(counts) - 600.0)
    assert len(set(np.round(counts, 9))) > 50
    assert 0.75 * 10.0 < dev.mean() < 1.25 * 10.0


def test_candidates_share_one_curve_and_a_planted_mismatch_is_refused():
    z0 = 3.0
    run = GaussianEvent(z0, "replace_one")
    for steps in (1, 4, 25):
        _check_curve(SelfComposedEvent(GaussianEvent(z0 * math.sqrt(steps), "replace_one"), steps), run)
    with pytest.raises(ArithmeticError):  # noise not scaled by √T: T times the planned curve
        _check_curve(SelfComposedEvent(GaussianEvent(z0, "replace_one"), 4), run)


def test_tune_is_accounted_and_states_its_shares():
    X, y, _ = make_classification(2000, 5, seed=2)
    m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune={"method": "release_best"}, random_state=4).fit(X, y)
    t = m.tuning_
    assert m.privacy_.epsilon <= 1.0 and m.privacy_.relation == "replace_one" and m.privacy_.accountant == "rdp"
    # the guarantee, recomputed from the event of the algorithm that ran (independent of the estimator's arithmetic)
    event = RepeatAndSelectEvent(ComposedEvent([GaussianEvent(t["noise_multiplier"], "replace_one"),
                                                GaussianEvent(t["score_noise_multiplier"], "replace_one")]),
                                 t["candidates"], t["shape"])
    assert dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon == pytest.approx(m.privacy_.epsilon, rel=1e-12)
    assert t["one_run_epsilon"] + t["selection_epsilon"] == pytest.approx(m.privacy_.epsilon)
    assert 0 < t["one_run_epsilon"] < m.privacy_.epsilon
    assert "runs" not in t and t["noisy_accuracy"] is not None and t["chosen"] in candidate_grid(2000, 6, 1.0, 1.0, t["run_training_epsilon"])
    assert m.score(X, y) > 0.6


def test_tuning_grid_is_centred_on_the_default_of_public_quantities():
    """Few-step regime: the rule's plain DP-GD steps at one run's epsilon (1x, 2x, 3x), the constant only where the
    rule returns it; otherwise DP-GD's defaults at one run's epsilon with double steps / half the step."""
    from algorithms.auto_solver import choose_solver
    from algorithms.dp_gd import default_step_factor, default_steps

    few = candidate_grid(398, 31, 0.5, 1.0, 0.3)  # t0 = ceil(398 * 0.3 / 130) = 1
    rule = choose_solver(n=398, d=31, epsilon=0.3)
    assert [g["steps"] for g in few] == [1, 2, 3] and rule.solver_params["steps"] == 1
    assert all(g["learning_rate"] == rule.solver_params["learning_rate"] and g["momentum"] == 0.0
               and g["intercept_scaling"] == rule.intercept_scaling for g in few)
    assert {"constant": True} not in few  # the rule fits a model at epsilon = 0.5
    assert {"constant": True} in candidate_grid(398, 31, 0.1, 1.0, 0.06)  # ... and the constant at 0.1
    wide = candidate_grid(49990, 23, 0.5, 1.0, 0.29)
    t0 = default_steps(49990, 0.29)
    assert {"steps": t0, "learning_rate": default_step_factor(49990, 0.29, t0) / 0.5, "momentum": 0.9, "alpha": 0.0,
            "intercept_scaling": 1.0} in wide
    assert len(wide) == 4 and all(not g.get("constant") for g in wide)
    assert sorted({g["steps"] for g in wide}) == [t0, 2 * t0]


def test_poisson_tuning_with_no_run_returns_the_accounted_constant_and_warns():
    """Papernot–Steinke's Poisson variant draws K = 0 (here seed 34, P = e^-3): before, the fit silently returned
    an all-zero model (solver_ 'none', accuracy 0.464 here); now the accounted fallback — the Gaussian class
    count — is the model, one warning says so, and the fallback's cost is part of privacy_ (<= epsilon)."""
    X, y, _ = make_classification(500, 4, seed=1)
    with pytest.warns(NoTuningRunWarning, match=r"Poisson\(mean 3\) came out 0 \(probability exp\(-3\) = 0\.0498"):
        m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=34,
                                 tune={"distribution": "poisson", "candidates": 3, "method": "release_best"}).fit(X, y)
    t = m.tuning_
    assert t["noisy_accuracy"] is None and m.solver_ == "constant" and t["chosen"] == {"constant": True, "fallback": True}
    majority = 1.0 if np.mean(y > 0) > 0.5 else -1.0
    assert np.all(m.coef_ == 0) and np.sign(m.intercept_) == majority
    assert np.all(m.predict(X) == majority) and m.score(X, y) == pytest.approx(max(np.mean(y > 0), np.mean(y < 0)))
    # the fallback count (multiplier z0) is accounted on top of the selection, and the whole stays within epsilon
    z0, zs = t["noise_multiplier"], t["score_noise_multiplier"]
    assert t["fallback_noise_multiplier"] == z0
    selection = RepeatAndSelectEvent(ComposedEvent([GaussianEvent(z0, "replace_one"), GaussianEvent(zs, "replace_one")]),
                                     3.0, math.inf)
    whole = ComposedEvent([selection, GaussianEvent(z0, "replace_one")])
    assert dpcore.get_epsilon(whole, 1e-5, accountant="rdp").epsilon == pytest.approx(m.privacy_.epsilon, rel=1e-12)
    assert dpcore.get_epsilon(selection, 1e-5, accountant="rdp").epsilon < m.privacy_.epsilon <= 1.0
    orders = np.array([2.0, 8.0, 32.0])  # RDP of the fallback: exactly alpha / (2 z0^2) on top of the selection's
    extra = dpcore.compute_rdp(whole, orders) - dpcore.compute_rdp(selection, orders)
    assert np.allclose(extra, orders / (2 * z0**2), rtol=1e-9)


def test_tuning_without_k_zero_has_no_fallback():
    """Distributions with K >= 1 release no fallback and account none (tuning_event is the selection itself)."""
    ev = tuning_event(2.0, 4.0, 3.0, "geometric", None)
    assert isinstance(ev, RepeatAndSelectEvent)
    poisson = tuning_event(2.0, 4.0, 3.0, "poisson", None)
    assert isinstance(poisson, ComposedEvent) and poisson.events[1].noise_multiplier == 2.0


@pytest.mark.parametrize("tune", ["yes", -1, 0.5, {"candidates": 3, "bogus": 1}, {"score_share": 1.5}])
def test_bad_tune_is_a_value_error(tune):
    X, y, _ = make_classification(200, 3, seed=0)
    with pytest.raises(ValueError, match="tune|mean|candidates|score_share"):
        DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=tune, random_state=0).fit(X, y)


@pytest.mark.parametrize("kw,match", [
    (dict(tune=math.nan), "^tune must be"),  # was "mean must not be NaN"
    (dict(tune=math.inf), "^tune must be"),
    (dict(tune={"method": "release_best"}, epsilon=1e-300), "^epsilon=1e-300 .* too small for tune"),  # was "target_epsilon ... noise_multiplier"
    (dict(tune={"distribution": "truncated_negative_binomial", "shape": -0.999999}), "^tune shape must be farther"),
    (dict(tune={"candidates": 1e10}), "^tune candidates must be in"),
])
def test_tune_errors_name_the_estimators_parameters(kw, match):
    X, y, _ = make_classification(200, 3, seed=0)
    kw = {"epsilon": 1.0, **kw}
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(classes=[-1, 1], random_state=0, **kw).fit(X, y)


def test_tuning_event_matches_the_selection_module():
    ev = tuning_event(2.0, 4.0, 5.0, "logarithmic", None)
    assert ev.shape == 0.0 and ev.relation == "replace_one" and ev.event.events[1].noise_multiplier == 4.0
