"""tune={"method": "retrain"} (algorithms.tune_retrain): selection on a subsample, then one final run, accounted.

The privacy tests spy on what runs — the rows each tuning run sees, its noise, the final run's own event — and
recompute the whole guarantee from that (dpcore on the observed quantities), so a planted accounting bug that
drops the selection or charges a smaller subsample than the one trained on is caught."""

import math
import warnings

import numpy as np
import pytest

import dpcore
from algorithms import DPLogisticRegression
from algorithms import tune_retrain
from algorithms.model_selection import NoTuningRunWarning
from algorithms.synthetic import make_classification
from dpcore.events import ComposedEvent, GaussianEvent, SampledWithoutReplacementEvent
from dpcore.selection import RepeatAndSelectEvent

pytestmark = pytest.mark.filterwarnings("ignore::algorithms.DeterministicSeedWarning")  # seeds: tests only

TUNE = {"method": "retrain", "subsample": 0.25, "selection_share": 0.2}


@pytest.fixture(autouse=True)
def always_select(monkeypatch):
    """These small test sets are below the score-noise limit at which the selection runs; the accounting tests make
    it run anyway (the limit itself: test_too_little_data_skips_the_selection_and_fits_the_default)."""
    monkeypatch.setattr(tune_retrain, "SCORE_NOISE_LIMIT", math.inf)


@pytest.fixture
def spy(monkeypatch):
    """Record every weight fit of the estimator class: rows seen, ε / noise multiplier asked for, event that ran."""
    calls = []
    original = DPLogisticRegression._fit_weights

    def recording(self, D, y, loss_params, extra):
        out = original(self, D, y, loss_params, extra)
        calls.append({"rows": D.n, "epsilon": self.epsilon, "delta": self.delta,
                      "params": dict(self.solver_params or {}), "event": self._privacy_event,
                      "privacy": self.privacy_})
        return out

    monkeypatch.setattr(DPLogisticRegression, "_fit_weights", recording)
    return calls


def _recomputed_epsilon(model, calls, n, delta=1e-5):
    """The whole guarantee from what ran: the tuning runs' observed rows and noise, the final run's own event."""
    t = model.tuning_
    tuning, final = calls[:-1], calls[-1]
    assert final["epsilon"] is not None and final["rows"] == n and all(c["epsilon"] is None for c in tuning)
    assert "runs" not in t  # K is not released (Papernot–Steinke's bound covers the best run only)
    rows = {c["rows"] for c in tuning} or {t["subsample_rows"]}
    assert len(rows) == 1
    m = rows.pop()
    z0 = {c["params"]["noise_multiplier"] / math.sqrt(c["params"]["steps"]) for c in tuning} or {t["noise_multiplier"]}
    assert max(z0) == pytest.approx(min(z0), rel=1e-12)
    run = ComposedEvent([GaussianEvent(min(z0), "replace_one"), GaussianEvent(t["score_noise_multiplier"], "replace_one")])
    selection = RepeatAndSelectEvent(run, t["candidates"], t["shape"])
    if m < n:
        selection = SampledWithoutReplacementEvent(selection, m, n)
    sel = dpcore.get_epsilon(selection, delta / 2, accountant="rdp").epsilon
    fin = dpcore.get_epsilon(final["event"], final["delta"]).epsilon
    return sel + fin, sel, fin


def test_retrain_privacy_includes_the_selection_recomputed_from_what_ran(spy):
    X, y, _ = make_classification(4000, 5, seed=3)
    m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=TUNE, random_state=7).fit(X, y)
    total, sel, fin = _recomputed_epsilon(m, spy, 4000)
    t = m.tuning_
    assert t["subsample_rows"] == 1000 and len(spy) >= 2
    assert m.privacy_.epsilon == pytest.approx(total, rel=1e-9) and m.privacy_.epsilon <= 1.0
    assert m.privacy_.relation == "replace_one" and m.privacy_.delta == 1e-5
    assert sel > 0.1 and fin <= 0.8 and t["selection_epsilon"] == pytest.approx(sel, rel=1e-9)
    assert t["selection_certified"]
    assert t["chosen"] in tune_retrain.retrain_grid(4000, t["final_epsilon"]) and m.score(X, y) > 0.6


def test_planted_bug_dropping_the_selection_is_caught(spy, monkeypatch):
    """A version that reports only the final run (the selection's cost dropped) fails the recomputation."""
    monkeypatch.setattr(tune_retrain, "whole_privacy", lambda sel, fin, delta: fin)
    X, y, _ = make_classification(4000, 5, seed=3)
    m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=TUNE, random_state=7).fit(X, y)
    total, _, _ = _recomputed_epsilon(m, spy, 4000)
    assert m.privacy_.epsilon < total - 0.1  # the check of the test above would fail on it


def test_planted_bug_charging_a_smaller_subsample_is_caught(spy, monkeypatch):
    """A version that accounts the amplification of a subsample 10x smaller than the one the runs train on:
    the accounted noise is then too small for the rows that ran, and the recomputed total exceeds epsilon."""
    original = tune_retrain.subsample_selection_event

    def wrong_rate(z0, zs, candidates, distribution, shape, batch, n):
        return original(z0, zs, candidates, distribution, shape, max(2, batch // 10), n)

    monkeypatch.setattr(tune_retrain, "subsample_selection_event", wrong_rate)
    tune_retrain._calibrated.cache_clear()
    try:
        X, y, _ = make_classification(4000, 5, seed=3)
        m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=TUNE, random_state=7).fit(X, y)
    finally:
        tune_retrain._calibrated.cache_clear()
    total, _, _ = _recomputed_epsilon(m, spy, 4000)
    assert total > 1.0 and m.privacy_.epsilon <= 1.0  # reported within budget, but what ran is not


def test_tuning_runs_see_the_subsample_and_the_final_run_all_rows(spy):
    """Replay: the rows of the tuning runs are one uniform subsample of public size m = floor(q n), drawn from the
    seeded generator; the final run is on all n rows with the chosen rule instantiated for (n, final epsilon)."""
    X, y, _ = make_classification(3000, 4, seed=5)
    m = DPLogisticRegression(epsilon=2.0, classes=[-1, 1], tune={**TUNE, "subsample": 0.1}, random_state=11).fit(X, y)
    assert {c["rows"] for c in spy[:-1]} <= {300} and spy[-1]["rows"] == 3000
    t = m.tuning_
    cfg = tune_retrain.retrain_config(t["chosen"], 3000, spy[-1]["epsilon"], 1.0)
    assert t["chosen_params"] == cfg and spy[-1]["params"]["steps"] == cfg["steps"]
    assert spy[-1]["epsilon"] + t["selection_epsilon"] <= 2.0


def test_retrain_is_reproducible_from_its_seed():
    X, y, _ = make_classification(2000, 4, seed=1)
    fits = [DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=TUNE, random_state=s).fit(X, y) for s in (3, 3, 4)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_) and fits[0].tuning_ == fits[1].tuning_
    assert not np.array_equal(fits[0].coef_, fits[2].coef_)


def test_poisson_with_no_run_trains_the_public_fallback_and_is_still_accounted(spy):
    """K = 0 (Poisson, mean 1: P = e^-1): no tuning run, the final run trains DP-GD's defaults; the selection's
    cost (its Theorem 6 bound covers the K = 0 outcome) is still part of privacy_."""
    X, y, _ = make_classification(1000, 3, seed=2)
    tune = {**TUNE, "distribution": "poisson", "candidates": 1.0}
    with warnings.catch_warnings(record=True) as caught:  # seed 2 draws K = 0 (after its subsample draw)
        warnings.simplefilter("always")
        m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=tune, random_state=2).fit(X, y)
    assert m.tuning_["noisy_accuracy"] is None
    assert any(issubclass(w.category, NoTuningRunWarning) for w in caught)
    assert len(spy) == 1 and m.tuning_["chosen"] == tune_retrain.RETRAIN_GRID[0]
    total, sel, _ = _recomputed_epsilon(m, spy, 1000)
    assert sel > 0.0 and m.privacy_.epsilon == pytest.approx(total, rel=1e-9) and total <= 1.0


def test_budget_split_never_exceeds_the_total():
    for eps in (0.1, 0.3, 1.0, 7.0, 1e-3):
        for share in (0.05, 0.2, 1.0 / 3.0, 0.9):
            es, ds, ef, df = tune_retrain.selection_budget(eps, 1e-5, share)
            assert es + ef <= eps and ds + df <= 1e-5 and min(es, ef, ds, df) > 0


def test_grid_rules_are_functions_of_public_quantities():
    from algorithms.dp_gd import default_steps

    base = tune_retrain.retrain_config(tune_retrain.RETRAIN_GRID[0], 10_000, 0.5, 1.0)
    assert base["steps"] == default_steps(10_000, 0.5) and base["momentum"] == 0.9 and base["intercept_scaling"] == 1.0
    long = tune_retrain.retrain_config(tune_retrain.RETRAIN_GRID[1], 10_000, 0.5, 1.0)
    assert long["steps"] == 2 * base["steps"]
    few = tune_retrain.retrain_config(tune_retrain.FEW_STEPS_GRID[0], 398, 0.5, 1.0)
    assert few["steps"] == math.ceil(398 * 0.5 / 130) and few["momentum"] == 0.0 and few["intercept_scaling"] == 0.5
    # the few-step rule joins the grid only when the final run is in its regime (n * epsilon_final < 1000)
    assert tune_retrain.retrain_grid(398, 0.8) == tune_retrain.RETRAIN_GRID + tune_retrain.FEW_STEPS_GRID
    assert tune_retrain.retrain_grid(49_990, 0.4) == tune_retrain.RETRAIN_GRID


@pytest.mark.parametrize("tune,match", [
    ({**TUNE, "subsample": 0.0}, "^tune subsample must be in"),
    ({**TUNE, "subsample": 1.5}, "^tune subsample must be in"),
    ({**TUNE, "subsample": math.nan}, "^tune subsample must not be NaN"),
    ({**TUNE, "subsample": "half"}, "^tune subsample must be a real number"),
    ({**TUNE, "subsample": True}, "^tune subsample must be a real number"),
    ({**TUNE, "selection_share": 1.0}, "^tune selection_share must be in"),
    ({**TUNE, "selection_share": -0.1}, "^tune selection_share must be in"),
    ({"method": "bogus"}, "tune method"),
    ({"method": "release_best", "subsample": 0.5}, "apply to method='retrain' only"),
    ({**TUNE, "candidates": 1e10}, "^tune candidates must be in"),
    ({**TUNE, "distribution": "truncated_negative_binomial", "shape": -0.999999}, "^tune shape must be farther"),
    ({**TUNE, "score_share": 1.0}, "^tune score_share must be in"),
    ({**TUNE, "candidates": "five"}, "^tune candidates must be a real number"),
])
def test_bad_retrain_options_are_value_errors(tune, match):
    X, y, _ = make_classification(300, 3, seed=0)
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=tune, random_state=0).fit(X, y)


def test_retrain_is_the_default_of_tune_true():
    from algorithms.model_selection import TUNE_DEFAULTS

    assert TUNE_DEFAULTS["method"] == "retrain" and TUNE_DEFAULTS["subsample"] == 1.0


def test_retrain_needs_positive_delta():
    X, y, _ = make_classification(300, 3, seed=0)
    with pytest.raises(ValueError, match="tune needs delta"):
        DPLogisticRegression(epsilon=1.0, delta=0.0, classes=[-1, 1], tune=TUNE, random_state=0).fit(X, y)


def test_subsampled_selection_rdp_matches_wbk_theorem_9_in_mpmath():
    """The accounted selection at integer orders against Wang-Balle-Kasiviswanathan 2019 Thm 9 recomputed in mpmath
    (50 digits) from the selection's own RDP curve: the fast value is an upper bound within 1e-9 of it (or the
    unsampled curve, never above); and the reported selection epsilon is certified by dpcore (certify=True)."""
    import mpmath

    n, m = 1000, 250
    event = tune_retrain.subsample_selection_event(10.0, 20.0, 5.0, "truncated_negative_binomial", -0.5, m, n)
    inner = event.event
    orders = np.array([2.0, 3.0, 8.0, 20.0])
    fast = dpcore.compute_rdp(event, orders)
    base = dpcore.compute_rdp(inner, np.arange(2.0, 21.0))
    with mpmath.workdps(50):
        g = mpmath.mpf(m) / n
        for a, value in zip(orders.astype(int), fast):
            eps = {j: mpmath.mpf(float(base[j - 2])) for j in range(2, a + 1)}
            total = 1 + g**2 * mpmath.binomial(a, 2) * min(4 * (mpmath.exp(eps[2]) - 1), 2 * mpmath.exp(eps[2]))
            total += sum(2 * g**j * mpmath.binomial(a, j) * mpmath.exp((j - 1) * eps[j]) for j in range(3, a + 1))
            exact = min(mpmath.log(total) / (a - 1), eps[a])
            assert value >= exact * (1 - 1e-15) and value == pytest.approx(float(exact), rel=1e-9)
    assert dpcore.compute_rdp(event, orders).max() < dpcore.compute_rdp(inner, orders).max()  # amplified at q = 1/4
    assert dpcore.get_epsilon(event, 5e-6, accountant="rdp", certify=True).certified


def test_too_little_data_skips_the_selection_and_fits_the_default(monkeypatch):
    """Public rule: score noise z_s/m above SCORE_NOISE_LIMIT (here n = 500, epsilon = 1: about 0.12) -> no selection,
    one warning from public quantities, and exactly the default fit at the whole epsilon (same seed, same model)."""
    monkeypatch.setattr(tune_retrain, "SCORE_NOISE_LIMIT", 0.01)
    X, y, _ = make_classification(500, 4, seed=4)
    with pytest.warns(tune_retrain.TuningSkippedWarning, match=r"n = 500 rows and epsilon = 1 .* standard deviation"):
        m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune={"method": "retrain"}, random_state=5).fit(X, y)
    default = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=5).fit(X, y)
    assert m.tuning_["skipped"] and m.tuning_["score_noise"] > 0.01 and "runs" not in m.tuning_
    assert np.array_equal(m.coef_, default.coef_) and m.privacy_ == default.privacy_ and m.solver_ == default.solver_


def test_epsilon_below_the_selections_floor_skips_it_too():
    """epsilon = 0.1: the selection's share 0.02 is below its floor (no noise meets it) -> the untuned fit, warned."""
    X, y, _ = make_classification(500, 4, seed=4)
    with pytest.warns(tune_retrain.TuningSkippedWarning, match="below the floor"):
        m = DPLogisticRegression(epsilon=0.1, classes=[-1, 1], tune={"method": "retrain"}, random_state=5).fit(X, y)
    assert m.tuning_["skipped"] and m.tuning_["score_noise"] == math.inf and m.privacy_.epsilon <= 0.1


def test_each_tuning_score_is_a_count_on_the_subsample(spy, monkeypatch):
    """What the score release reads (reviewer's test gap: the privacy test took the score noise from tuning_ and
    never looked at the score): every noiseless score is a count of correctly classified rows of the m-row
    subsample the tuning runs trained on — an integer in [0, m], so its replace-one sensitivity is 1, as the
    score noise z_s assumes. A score scaled ×10 or computed on all n rows (no subsampling amplification) fails."""
    scored = []
    original = tune_retrain._score

    def recording(model, X, y):
        value = original(model, X, y)
        scored.append((getattr(X, "n", None) or X.shape[0], len(y), value))
        return value

    monkeypatch.setattr(tune_retrain, "_score", recording)
    X, y, _ = make_classification(4000, 5, seed=3)
    m = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], tune=TUNE, random_state=7).fit(X, y)
    rows = m.tuning_["subsample_rows"]
    tuning_rows = {c["rows"] for c in spy[:-1]}
    assert scored and len(scored) == len(spy) - 1 and tuning_rows == {rows} == {1000}
    for n_scored, n_labels, value in scored:
        assert n_scored == n_labels == rows
        assert value == int(value) and 0 <= value <= rows
