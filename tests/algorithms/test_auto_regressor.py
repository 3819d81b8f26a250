"""The regressors' solver="auto" (algorithms.auto_regressor), issue 24 item 2."""

import functools
import inspect
import math
import warnings
import mpmath
import numpy as np
import pytest
from scipy import stats

import dpcore
import mechanisms
from algorithms import DPHuberRegressor, DPLinearRegression
from algorithms import auto_regressor, estimators
from algorithms.auto_solver import LowSignalWarning
from algorithms.auto_regressor import (ADASSP_FROM_NE, CONSTANT_BELOW, OBJECTIVE_FROM_NE, SHRINK_BELOW,
                                       choose_regression_solver, private_mean, regression_steps)
from algorithms.synthetic import make_regression

pytestmark = pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")  # seeds: tests only

N, D = 200, 3
X0, Y0, _ = make_regression(N, D, seed=5)
Y0 = np.clip(Y0, -1.0, 1.0)
#: ε of each regime at n = 200, d = 4 (with the intercept): signal n·ε/2 = 0.9 (Huber: the private mean; least
#: squares: AdaSSP, low signal), 1.2 (Huber: DP-GD; least squares: AdaSSP), then n·ε = 200, 60 000, 300 000
REGIME_EPS = {"constant": 0.009, "low_signal": 0.012, "dp_gd": 1.0, "objective_perturbation": 300.0,
              "adassp": 1500.0}


def test_rule_regimes_and_steps():
    assert choose_regression_solver(n=309, d=11, epsilon=0.01, loss="huber").solver == "constant"  # 0.93 < 1
    low = choose_regression_solver(n=309, d=11, epsilon=0.015, loss="squared")  # 1.4 < 1.5
    assert low.solver == "adassp" and low.regime == "low_signal"
    assert choose_regression_solver(n=309, d=11, epsilon=0.015, loss="huber").solver == "dp_gd"
    few = choose_regression_solver(n=309, d=11, epsilon=0.1, loss="huber")
    assert few.solver == "dp_gd" and few.solver_params == {"steps": 3}  # ⌈30.9/15⌉, no floor of 10
    assert choose_regression_solver(n=32561, d=109, epsilon=1.0, loss="squared").solver_params == {"steps": 300}
    assert choose_regression_solver(n=32561, d=109, epsilon=2.0, loss="huber").solver == "objective_perturbation"
    assert choose_regression_solver(n=32561, d=109, epsilon=2.0, loss="squared").solver == "dp_gd"
    assert choose_regression_solver(n=32561, d=109, epsilon=10.0, loss="squared").solver == "adassp"
    assert choose_regression_solver(n=10, d=3, epsilon=math.inf, loss="huber").solver == "objective_perturbation"
    assert choose_regression_solver(n=10, d=3, epsilon=math.inf, loss="squared").solver == "dp_gd"
    assert choose_regression_solver(n=10, d=3, epsilon=1e308, loss="squared").solver == "adassp"  # n·ε = inf
    assert [regression_steps(1000, e) for e in (1e-3, 0.1, 1.0, 3.0, 10.0, 20.0, 1e308)] == [1, 7, 67, 100, 167, 300, 300]
    assert all(regression_steps(n, 1.0) <= regression_steps(n + 1, 1.0) for n in range(1, 20_000, 97))
    assert OBJECTIVE_FROM_NE < ADASSP_FROM_NE
    for bad in (dict(n=0, d=3, epsilon=1.0, loss="huber"), dict(n=10, d=3, epsilon=0.0, loss="huber"),
                dict(n=10, d=3, epsilon=float("nan"), loss="huber"), dict(n=10, d=3, epsilon=1.0, loss="logistic")):
        with pytest.raises(ValueError, match="n|epsilon|loss"):
            choose_regression_solver(**bad)


def test_rule_signature_has_public_quantities_only():
    assert set(inspect.signature(choose_regression_solver).parameters) == {"n", "d", "epsilon", "loss"}


def _choices(cls, eps):
    """{(solver_, rule parameters)} of fits at n = 200, d = 3, ``eps`` on informative or zero features and constant
    or near-edge targets."""
    gen = np.random.default_rng(0)
    Xs = [X0, np.zeros((N, D))]
    ys = [np.ones(N), gen.uniform(-1.0, -0.9, size=N)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowSignalWarning)
        fits = [cls(epsilon=eps, target_range=(-1.0, 1.0), random_state=1).fit(X, y) for X in Xs for y in ys]
    return {(f.solver_, tuple(sorted(f.auto_choice_.solver_params.items()))) for f in fits}


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
@pytest.mark.parametrize("regime", list(REGIME_EPS))
def test_auto_choice_cannot_depend_on_the_private_data(cls, regime):
    """n, d, ε fixed: other private features / targets never change the solver run or its parameters."""
    expected = choose_regression_solver(n=N, d=D + 1, epsilon=REGIME_EPS[regime], loss=cls._loss)
    assert _choices(cls, REGIME_EPS[regime]) == {(expected.solver, tuple(sorted(expected.solver_params.items())))}


def test_planted_data_dependent_rule_is_caught(monkeypatch):
    """Planted bug: the rule is fed the number of non-constant feature columns instead of the public d — the
    invariance check above sees two different choices."""
    def leaky(self, D):
        Xd = np.asarray(D.rows)  # dense test data: the kernels' plain array
        live = int(np.count_nonzero(np.ptp(Xd, axis=0) > 0))
        choice = choose_regression_solver(n=D.n, d=live + 1, epsilon=self.epsilon, loss=self._loss)
        self.auto_choice_, self.solver_ = choice, choice.solver
        return dict(choice.solver_params)

    monkeypatch.setattr(estimators._DPRegressor, "_auto_params", leaky)
    assert len(_choices(DPHuberRegressor, 0.009)) > 1  # n·ε/√d = 0.9 with d = 4 (constant), 1.8 with zero X (DP-GD)


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_dp_gd_branch_is_the_named_solver_with_the_rule_steps(cls):
    """What ran is DP-GD with the rule's T: the same seed by name with solver_params={"steps": T} gives the same
    weights; a user's steps take precedence over the rule's."""
    auto = cls(epsilon=0.3, target_range=(-1.0, 1.0), random_state=3).fit(X0, Y0)
    T = regression_steps(N, 0.3)
    assert auto.solver_ == "dp_gd" and auto.auto_choice_.solver_params == {"steps": T}
    named = cls(solver="dp_gd", epsilon=0.3, target_range=(-1.0, 1.0), random_state=3,
                solver_params={"steps": T}).fit(X0, Y0)
    np.testing.assert_array_equal(auto.coef_, named.coef_)
    assert auto.intercept_ == named.intercept_ and auto.privacy_ == named.privacy_
    user = cls(epsilon=0.3, target_range=(-1.0, 1.0), random_state=3, solver_params={"steps": 2}).fit(X0, Y0)
    assert user._privacy_event.count == 2


class _Releases:
    """Records every release an estimator fit makes: solver calls (through estimators.SOLVERS / adassp) and
    Laplace releases (mechanisms.Laplace.randomize)."""

    def __init__(self, monkeypatch):
        self.solver_events, self.laplace = [], []
        for name, fn in list(estimators.SOLVERS.items()):
            monkeypatch.setitem(estimators.SOLVERS, name, self._spy(fn))
        monkeypatch.setattr(estimators, "adassp", self._spy(estimators.adassp))
        real = mechanisms.Laplace.randomize

        def randomize(mech, value, rng=None):
            self.laplace.append(mech)
            return real(mech, value, rng=rng)

        monkeypatch.setattr(mechanisms.Laplace, "randomize", randomize)

    def _spy(self, fn):
        @functools.wraps(fn)  # the estimators read the solver's signature
        def run(*args, **kwargs):
            res = fn(*args, **kwargs)
            self.solver_events.append(res.event)
            return res
        return run

    def independent_epsilon(self, delta: float) -> float:
        """ε at δ of the one release that ran, computed here. A Laplace release on the sum of targets in [−1, 1] is
        ε₀-DP with ε₀ = 2·(1 + 2⁻²⁰)/b whatever sensitivity the mechanism was given (replace-one moves the sum by
        2), and an ε₀-DP release is (ε, δ)-DP for e^ε = e^ε₀ − δ(1 + e^ε₀) (the randomized-response profile,
        Kairouz, Oh, Viswanath 2015, Thm 2.2; mpmath, 50 digits). A solver release: its event's ε at δ (dpcore)."""
        runs = len(self.laplace) + len(self.solver_events)
        assert runs == 1, f"privacy_ is not the composition of what ran: {runs} releases, one reported"
        if self.solver_events:
            return dpcore.get_epsilon(self.solver_events[0], delta).epsilon
        with mpmath.workdps(50):
            eps0 = mpmath.mpf(2) * (1 + mpmath.mpf(2) ** -20) / mpmath.mpf(self.laplace[0].scale)
            return float(mpmath.log(mpmath.exp(eps0) - mpmath.mpf(delta) * (1 + mpmath.exp(eps0))))


def _check_privacy_of_what_ran(est, releases) -> None:
    expected = releases.independent_epsilon(est.delta)
    assert est.privacy_.relation == "replace_one"
    assert est.privacy_.epsilon <= est.epsilon * (1 + 1e-9)
    assert est.privacy_.epsilon == pytest.approx(expected, rel=1e-6), "privacy_ is not the composition of what ran"


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
@pytest.mark.parametrize("regime", list(REGIME_EPS))
def test_privacy_is_the_composition_of_what_ran(cls, regime, monkeypatch):
    releases = _Releases(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowSignalWarning)
        est = cls(epsilon=REGIME_EPS[regime], target_range=(-1.0, 1.0), random_state=2).fit(X0, Y0)
    assert (len(releases.laplace) == 1) == (est.solver_ == "constant")
    _check_privacy_of_what_ran(est, releases)


def test_planted_uncomposed_constant_release_is_caught(monkeypatch):
    """Planted bug: the constant branch releases the noisy sum twice (averaging the two to halve the noise)
    but reports one release's ε — the independent composition catches it."""
    real = auto_regressor.private_mean

    def twice(t, epsilon, rng):
        gen = np.random.default_rng(rng)
        (a, event), (b, _) = real(t, epsilon, gen), real(t, epsilon, gen)
        return 0.5 * (a + b), event

    monkeypatch.setattr(auto_regressor, "private_mean", twice)
    releases = _Releases(monkeypatch)
    with pytest.warns(LowSignalWarning):
        est = DPHuberRegressor(epsilon=REGIME_EPS["constant"], target_range=(-1.0, 1.0), random_state=2).fit(X0, Y0)
    assert est.solver_ == "constant"
    with pytest.raises(AssertionError, match="composition of what ran"):
        _check_privacy_of_what_ran(est, releases)


def test_planted_half_sensitivity_is_caught(monkeypatch):
    """Planted bug: the private mean calibrated for sensitivity 1 (the half-width instead of the width of [−1, 1])
    — the composition check (which uses the true sensitivity 2) catches it."""
    real = mechanisms.Laplace.calibrate
    monkeypatch.setattr(mechanisms.Laplace, "calibrate",
                        classmethod(lambda cls, epsilon, delta=None, sensitivity=1.0, **kw:
                                    real.__func__(cls, epsilon, delta, sensitivity=sensitivity / 2, **kw)))
    releases = _Releases(monkeypatch)
    with pytest.warns(LowSignalWarning):
        est = DPHuberRegressor(epsilon=REGIME_EPS["constant"], target_range=(-1.0, 1.0), random_state=2).fit(X0, Y0)
    with pytest.raises(AssertionError, match="composition of what ran"):
        _check_privacy_of_what_ran(est, releases)


def _mean_epsilon_lower_bound(calibrate_sensitivity: float, epsilon: float, trials: int, alpha: float) -> float:
    """A Clopper–Pearson lower bound on ε of the private mean of one target (n = 1), from neighbours t = −1 and
    t = +1 and the event {released mean = 1} (the clip), each side with its own generator."""
    real = mechanisms.Laplace.calibrate

    def calibrate(cls, eps, delta=None, sensitivity=1.0, **kw):
        return real.__func__(cls, eps, delta, sensitivity=calibrate_sensitivity, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(mechanisms.Laplace, "calibrate", classmethod(calibrate))
    try:
        hits = []
        for t, seed in ((-1.0, 11), (1.0, 12)):
            gen = np.random.default_rng(seed)
            hits.append(sum(private_mean(np.array([t]), epsilon, gen)[0] >= 1.0 for _ in range(trials)))
    finally:
        mp.undo()
    p_low = stats.beta.ppf(alpha / 2, hits[1], trials - hits[1] + 1)  # P[out = 1 | t = +1], lower
    q_high = stats.beta.ppf(1 - alpha / 2, hits[0] + 1, trials - hits[0])  # P[out = 1 | t = −1], upper
    return math.log(p_low / q_high)


def test_private_mean_attack_stays_below_epsilon_and_catches_half_sensitivity():
    """Replay on neighbouring data (false-alarm rate 1e-3): the released mean's ε lower bound stays ≤ ε with the
    true sensitivity 2; calibrated for 1 (a planted bug) the attack measures ≈ 2ε and exceeds ε."""
    eps = 1.0
    assert _mean_epsilon_lower_bound(2.0, eps, 1000, 1e-3) <= eps
    assert _mean_epsilon_lower_bound(1.0, eps, 1000, 1e-3) > eps


@pytest.mark.parametrize("cls, solver", [(DPHuberRegressor, "constant"), (DPLinearRegression, "adassp")])
def test_low_signal_fit_warns_once_from_public_quantities(cls, solver):
    texts = []
    for y in (Y0, -np.ones(N)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = cls(epsilon=REGIME_EPS["constant"], target_range=(0.0, 10.0), random_state=4).fit(X0, 5 + 5 * y)
        low = [w for w in caught if issubclass(w.category, LowSignalWarning)]
        assert len(low) == 1 and low[0].filename == __file__  # attributed to the caller's fit
        texts.append(str(low[0].message))
        assert est.solver_ == solver
    threshold = CONSTANT_BELOW if solver == "constant" else SHRINK_BELOW
    assert texts[0] == texts[1] and f"n*epsilon/sqrt(d) = 0.9 is below {threshold:g}" in texts[0]
    if solver == "constant":
        assert np.all(est.coef_ == 0.0) and 0.0 <= est.intercept_ <= 10.0
        assert est.predict(X0).tolist() == [est.intercept_] * N
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowSignalWarning)  # no warning outside the low-signal regimes
        cls(epsilon=1.0, target_range=(0.0, 10.0), random_state=4).fit(X0, 5 + 5 * Y0)
        cls(solver="dp_gd", epsilon=REGIME_EPS["constant"], target_range=(0.0, 10.0), random_state=4).fit(X0, 5 + 5 * Y0)


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
@pytest.mark.parametrize("eps", [REGIME_EPS["constant"], 1.0, 1500.0])
def test_auto_still_refuses_without_a_target_bound(cls, eps):
    with pytest.raises(ValueError, match="target_bound .* or target_range"):
        cls(epsilon=eps, random_state=0).fit(X0, 100 * Y0)
    with pytest.raises(ValueError, match="target_range=.* is violated"):
        cls(epsilon=eps, target_range=(0.0, 1.0), random_state=0).fit(X0, Y0)


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_constant_branch_still_checks_the_row_bound(cls):
    with pytest.raises(ValueError, match="data_norm_bound"):
        cls(epsilon=REGIME_EPS["constant"], target_range=(-1.0, 1.0), random_state=0).fit(3 * X0 + 1, Y0)


def test_private_mean_refuses_unscaled_targets_and_bad_epsilon():
    with pytest.raises(ValueError, match="scaled to"):
        private_mean(np.array([0.5, 1.5]), 1.0, 0)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            private_mean(np.zeros(3), bad, 0)


def test_hostile_epsilons_fit_or_refuse_by_name():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowSignalWarning)
        tiny = DPHuberRegressor(epsilon=1e-250, target_range=(-1.0, 1.0), random_state=0).fit(X0, Y0)
        assert tiny.solver_ == "constant" and -1.0 <= tiny.intercept_ <= 1.0
        assert tiny.privacy_.epsilon <= 1e-250 * (1 + 1e-9)
        with pytest.raises(ValueError, match="epsilon"):  # the noise scale 2/ε is beyond a float sampler
            DPHuberRegressor(epsilon=1e-320, target_range=(-1.0, 1.0), random_state=0).fit(X0, Y0)
    with pytest.raises(ValueError, match="epsilon"):
        DPHuberRegressor(epsilon=float("nan"), target_range=(-1.0, 1.0), random_state=0).fit(X0, Y0)
