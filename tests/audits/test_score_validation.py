"""Attack scores at the edges (issue 22 item 5): ±inf scores give the verdict of their ±1 twin;
complex and string scores are refused, never made real."""

from functools import partial

import numpy as np
import pytest

import audits.statistics as statistics
from audits import FunctionTarget, run_audit
from audits.statistics import clopper_pearson_estimate, gdp_estimate, one_run_estimate


def _non_private(which, n, rng, *, big):
    """A broken mechanism: D scores -big and D' scores +big, except for 1 run in 1000 either way."""
    flip = rng.random(n) < 0.001
    sign = (1.0 if which else -1.0) * np.where(flip, -1.0, 1.0)
    return sign * big


@pytest.mark.parametrize("estimator", ["clopper-pearson", "gdp", "one-run"])
def test_infinite_scores_give_the_verdict_of_their_unit_twin(estimator):
    # issue 22: with scores ±inf the audit passed with eps_lb = 0; the ±1 twin is "violated", eps_lb 6.26
    results = {}
    for big in (1.0, np.inf):
        target = FunctionTarget(f"scores ±{big}", 1.0, 1e-5, partial(_non_private, big=big), noise_family="gaussian")
        results[big] = run_audit(target, 4000, estimator=estimator, seed=3)
    twin, infinite = results[1.0], results[np.inf]
    assert twin.verdict == infinite.verdict == "violated"
    assert infinite.eps_lower == twin.eps_lower > 4.0
    assert infinite.p_value == twin.p_value


def test_infinite_scores_among_finite_ones_stay_in_order():
    rng = np.random.default_rng(0)
    s0, s1 = rng.normal(0.0, 1.0, 4000), rng.normal(3.0, 1.0, 4000)
    s1_inf = s1.copy()
    s1_inf[s1 > 5.0] = np.inf  # the far tail of D' as +inf: same order, hence the same test
    s0_inf = s0.copy()
    s0_inf[s0 < -2.0] = -np.inf
    for estimate in (clopper_pearson_estimate, gdp_estimate):
        finite = estimate(s0, s1, 1e-5)
        mixed = estimate(s0_inf, s1_inf, 1e-5)
        assert np.isfinite(mixed.eps_lower) and np.isfinite(mixed.details["threshold"])
        assert mixed.eps_lower == pytest.approx(finite.eps_lower, rel=0.05)
        assert set(mixed.details["infinite_scores_as"]) == {"inf", "-inf"}
    # the stand-ins lie beyond the finite range of the selection trials (GDP: the first 5 %)
    selection = np.concatenate([s0_inf[:200], s1_inf[:200]])
    finite = selection[np.isfinite(selection)]
    stand_ins = mixed.details["infinite_scores_as"]
    assert stand_ins["-inf"] < finite.min() and finite.max() < stand_ins["inf"]


def test_the_twin_test_catches_dropping_the_stand_ins(monkeypatch):
    # planted bug: infinite scores passed to the quantile thresholds as they are
    monkeypatch.setattr(statistics, "_finite_stand_ins", lambda s0, s1, fraction: (s0, s1, {}))
    target = FunctionTarget("scores ±inf", 1.0, 1e-5, partial(_non_private, big=np.inf))
    with np.errstate(invalid="ignore"):
        broken = run_audit(target, 4000, estimator="clopper-pearson", seed=3)
    assert not broken.violated  # what the issue saw: the violation goes unnoticed


@pytest.mark.parametrize("bad, what", [
    (np.array([1 + 1j, 2, 3, 4, 5]), "complex"),
    (["1", "2", "3", "4", "5"], "strings"),
])
def test_complex_or_string_scores_are_refused(bad, what):
    good = np.arange(5.0)
    with pytest.raises(ValueError, match=f"scores0 must contain only real numbers; got {what}"):
        clopper_pearson_estimate(bad, good, 1e-5)
    with pytest.raises(ValueError, match=f"scores must contain only real numbers; got {what}"):
        one_run_estimate(np.ones(5, bool), bad, 1e-5)
    target = FunctionTarget("complex", 1.0, 1e-5, lambda which, n, rng: np.full(n, 1 + 1j))
    with pytest.raises(ValueError, match="must contain only real numbers; got complex"):
        run_audit(target, 100)
