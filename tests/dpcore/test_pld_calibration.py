"""σ calibration through the PLD (and "auto"): proxy-guided log secant, certified re-check.

The returned value must meet the target by an independent ``get_epsilon`` call with the same
accountant (default discretisation for ``"pld"``), whatever the proxy says.
"""

import math

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
import dpcore.calibration as calibration
from dpcore.calibration import LOG_TOLERANCE, _log_secant, calibrate_noise_multiplier, subsampled_gaussian_event
from dpcore.events import GaussianEvent, UnsupportedEventError
from dpcore.pld.discretize import MAX_QUADRATURE_PANELS

DELTA = 1e-5


def _pld_eps(sigma, q, steps, **kw):
    return dpcore.get_epsilon(subsampled_gaussian_event(sigma, q, steps, **kw), DELTA, accountant="pld").epsilon


@settings(max_examples=6, deadline=None)
@given(eps=st.floats(0.3, 4.0), q=st.floats(0.005, 0.1), steps=st.integers(1, 200))
def test_pld_calibration_meets_target_by_an_independent_evaluation_and_is_tight(eps, q, steps):
    cal = calibrate_noise_multiplier(eps, DELTA, sampling_rate=q, steps=steps, accountant="pld")
    assert cal.privacy.accountant == "pld"
    assert cal.privacy.epsilon <= eps
    assert _pld_eps(cal.value, q, steps) <= eps
    # tight: 1e-4 less noise breaks the target (tolerance 4e-6 in log σ; ε's slope in log σ is ≥ ~1)
    assert _pld_eps(cal.value * (1 - 1e-4), q, steps) > eps


def test_without_replacement_through_auto_meets_target_and_matches_pld():
    kw = dict(sampling="without_replacement", dataset_size=2000)
    auto = calibrate_noise_multiplier(0.5, DELTA, sampling_rate=50 / 2000, steps=40, accountant="auto", **kw)
    pld = calibrate_noise_multiplier(0.5, DELTA, sampling_rate=50 / 2000, steps=40, accountant="pld", **kw)
    assert dpcore.get_epsilon(subsampled_gaussian_event(auto.value, 50 / 2000, 40, **kw), DELTA).epsilon <= 0.5
    assert _pld_eps(pld.value, 50 / 2000, 40, **kw) <= 0.5
    # the fast PLD in "auto" is slightly looser than the default grid: σ within 0.1 %
    assert pld.value <= auto.value <= pld.value * 1.001


@pytest.mark.parametrize("factor", [0.3, 3.0])
def test_a_misleading_proxy_never_changes_the_guarantee(monkeypatch, factor):
    """A proxy that under- or over-states ε only moves where the target accountant is evaluated."""
    real = calibration._pld_proxy

    def lying(event_fn, delta, counts):
        proxy = real(event_fn, delta, counts)
        return lambda v: factor * proxy(v)

    monkeypatch.setattr(calibration, "_pld_proxy", lying)
    cal = calibrate_noise_multiplier(1.0, DELTA, sampling_rate=0.02, steps=100, accountant="pld")
    monkeypatch.undo()
    assert _pld_eps(cal.value, 0.02, 100) <= 1.0 < _pld_eps(cal.value * (1 - 1e-4), 0.02, 100)


def test_a_refusing_proxy_falls_back_to_the_accountant(monkeypatch):
    def refusing(event_fn, delta, counts):
        def proxy(v):
            raise UnsupportedEventError("no dominating pair")
        return proxy

    monkeypatch.setattr(calibration, "_pld_proxy", refusing)
    cal = calibrate_noise_multiplier(1.0, DELTA, sampling_rate=0.02, steps=100, accountant="pld")
    monkeypatch.undo()
    assert _pld_eps(cal.value, 0.02, 100) <= 1.0 < _pld_eps(cal.value * (1 - 1e-4), 0.02, 100)


@settings(max_examples=60, deadline=None)
@given(root=st.floats(-5.0, 5.0), slope=st.floats(0.05, 20.0), guess=st.floats(0.1, 10.0),
       start=st.floats(-6.0, 6.0), jitter=st.floats(0.0, 1e-6))
def test_log_secant_returns_a_safe_point_within_tolerance(root, slope, guess, start, jitter):
    """Linear excess plus a ±``jitter`` sawtooth (like PLD's grid): the result is safe and near the root."""
    def excess(y):
        return slope * (y - root) + jitter * ((math.floor(y * 1e7) % 3) - 1)

    y, _ = _log_secant(excess, start, guess, -20.0, 20.0, LOG_TOLERANCE, "x")
    assert excess(y) <= 0.0
    assert root - y <= 2 * LOG_TOLERANCE + 2 * jitter / slope + 1e-12


def test_log_secant_domain_limits():
    # the whole domain meets the target: its upper end; none of it does: ValueError
    assert _log_secant(lambda y: y - 100.0, 0.0, 1.0, -10.0, 10.0, LOG_TOLERANCE, "x")[0] == 10.0
    with pytest.raises(ValueError, match="cannot be met"):
        _log_secant(lambda y: y + 100.0, 0.0, 1.0, -10.0, 10.0, LOG_TOLERANCE, "x")


@pytest.mark.parametrize("kw, name", [
    (dict(target_epsilon=0.0, delta=DELTA), "target_epsilon"),
    (dict(target_epsilon=-1.0, delta=DELTA), "target_epsilon"),
    (dict(target_epsilon=math.nan, delta=DELTA), "target_epsilon"),
    (dict(target_epsilon=1.0, delta=0.0), "delta"),
    (dict(target_epsilon=1.0, delta=1.5), "delta"),
])
@pytest.mark.parametrize("accountant", ["pld", "auto"])
def test_bad_targets_raise(kw, name, accountant):
    with pytest.raises(ValueError, match=name):
        calibrate_noise_multiplier(sampling_rate=0.01, steps=10, accountant=accountant, **kw)


def test_unreachable_target_raises():
    event = subsampled_gaussian_event(0.05, 1.0, 1, sampling="none")
    with pytest.raises(ValueError, match="cannot be met"):
        dpcore.calibrate(lambda v: event, "noise_multiplier", 0.1, DELTA, lower=0.5, upper=2.0,
                         increasing=False, bounds=(0.25, 4.0), accountant="pld")


def test_pld_memo_is_scoped_to_its_block_and_keyed_by_every_option():
    from dpcore.pld.accountant import _MEMO, memoised, pld_epsilon

    event = subsampled_gaussian_event(2.0, 0.05, 20)
    with memoised():
        first = pld_epsilon(event, DELTA, fast=True)
        hit = pld_epsilon(subsampled_gaussian_event(2.0, 0.05, 20), DELTA, fast=True)
        assert hit == first  # the stored result (dataclass equality: every field, details included) …
        hit.details["grid_points"].append(-1)  # … whose details a caller may edit without touching the memo
        hit.details["bounds"] = None
        assert pld_epsilon(event, DELTA, fast=True) == first and first.details["bounds"] is not None
        default = pld_epsilon(event, DELTA)
        assert default is not first and default.details["discretization"] < first.details["discretization"]
        assert pld_epsilon(event, 2 * DELTA, fast=True).epsilon < first.epsilon
    assert _MEMO.get() is None
    assert pld_epsilon(event, DELTA, fast=True) is not first  # nothing stored outside a block
    assert pld_epsilon(event, DELTA, fast=True).epsilon == first.epsilon


def test_parameters_that_can_be_zero_or_negative_take_the_bracketing_path():
    """The log-secant path is for positive parameters only; a signed parameter under 'auto' is calibrated like
    under 'rdp' (review finding: math domain error / an unsafe-side 3e-234 before)."""
    for increasing, fn in ((True, lambda m: GaussianEvent(math.exp(-m))), (False, lambda m: GaussianEvent(math.exp(m)))):
        res = dpcore.calibrate(fn, "p", 1.0, 1e-5, lower=-3.0, upper=2.0, increasing=increasing, bounds=(-10.0, 10.0),
                               accountant="auto")
        assert res.privacy.epsilon <= 1.0
        assert dpcore.get_epsilon(fn(res.value), 1e-5, accountant="auto").epsilon <= 1.0


def test_unhashable_options_are_validated_not_a_memo_type_error():
    from dpcore.pld.accountant import memoised, pld_epsilon

    with memoised(), pytest.raises((ValueError, TypeError)) as info:
        pld_epsilon(GaussianEvent(1.0), 1e-5, discretization=np.array([1e-3, 2e-3]))
    assert "unhashable" not in str(info.value)


# --- absurd targets: bounded work (review finding: DPLogisticRegression(epsilon=1e308) never returned) ---


def _counting(monkeypatch):
    """Count the PLD evaluations (fast or not), the bin quadratures they run and those quadratures' panels
    beyond one per bin (the work that took minutes at σ ~ 1e-7)."""
    import dpcore.pld.accountant as accountant
    import dpcore.pld.discretize as discretize

    calls = {"pld": 0, "quadrature": 0, "panels": 0.0}
    pld, bin_piece = accountant._pld_epsilon, discretize._bin_piece

    def counted_pld(*args, **kwargs):
        calls["pld"] += 1
        return pld(*args, **kwargs)

    def counted_bins(piece, x_left, x_right, *args):  # panels of length ≤ scale/4 across [x_left, x_right]
        calls["quadrature"] += 1
        calls["panels"] += (x_right - x_left) / (0.25 * piece.scale)
        return bin_piece(piece, x_left, x_right, *args)

    monkeypatch.setattr(accountant, "_pld_epsilon", counted_pld)
    monkeypatch.setattr(discretize, "_bin_piece", counted_bins)
    return calls


def test_pld_refuses_a_leaf_beyond_its_quadrature_budget_before_any_quadrature(monkeypatch):
    from dpcore.pld import pld_epsilon

    calls = _counting(monkeypatch)
    for event in (subsampled_gaussian_event(1e-6, 0.01, 1000),
                  subsampled_gaussian_event(1e-6, 256 / 300, 12, sampling="without_replacement", dataset_size=300)):
        for fast in (True, False):
            with pytest.raises(UnsupportedEventError,
                               match=f"MAX_QUADRATURE_PANELS={MAX_QUADRATURE_PANELS}|beyond the range of the 'pld'"):
                pld_epsilon(event, DELTA, fast=fast)
    assert calls["quadrature"] == 0


def test_quadrature_budget_is_the_stated_panel_count(monkeypatch):
    """An ordinary leaf needs (cut x-range)/(scale/4) panels: a budget just above that gives the same ε, just
    below it the leaf is refused."""
    import dpcore.pld.discretize as discretize
    from dpcore.pld import pld_epsilon
    from dpcore.pld.accountant import TAIL_FRACTION
    from dpcore.pld.leaves import leaf_models

    sigma, steps = 0.5, 10
    event = subsampled_gaussian_event(sigma, 0.01, steps)
    piece = leaf_models(event.event)[0].pieces[0]  # the remove order: the wider of the two
    tail = TAIL_FRACTION * DELTA / (4.0 * steps)  # pld_epsilon's leaf tail
    panels = (discretize.cut(piece, +1, tail) - discretize.cut(piece, -1, tail)) / (0.25 * sigma)
    assert 10 < panels < 1000
    reference = pld_epsilon(event, DELTA).epsilon
    monkeypatch.setattr(discretize, "MAX_QUADRATURE_PANELS", math.ceil(panels * 1.001))
    assert pld_epsilon(event, DELTA).epsilon == reference
    monkeypatch.setattr(discretize, "MAX_QUADRATURE_PANELS", math.floor(panels * 0.999))
    with pytest.raises(UnsupportedEventError, match="quadrature panels"):
        pld_epsilon(event, DELTA)


def test_auto_falls_back_to_other_accountants_when_the_pld_refuses():
    event = subsampled_gaussian_event(1e-6, 0.01, 1000)
    res = dpcore.get_epsilon(event, DELTA, accountant="auto")
    assert res.accountant == "rdp" and 0.0 < res.epsilon < math.inf
    reason = res.details["auto"]["unsupported"]["pld"]
    assert "MAX_QUADRATURE_PANELS" in reason or "beyond the range of the 'pld'" in reason


#: bound on the quadrature panels of a whole calibration at an absurd target (before the fix: > 1e7)
_PANEL_WORK = 3 * MAX_QUADRATURE_PANELS


@pytest.mark.parametrize("target, q", [(1e308, 0.01), (1e300, 0.01), (1e30, 0.01), (1e308, 1.0)])
def test_absurd_target_auto_returns_the_floor_with_bounded_work(monkeypatch, target, q):
    calls = _counting(monkeypatch)
    cal = calibrate_noise_multiplier(target, DELTA, sampling_rate=q, steps=1000, accountant="auto")
    assert cal.value == calibration.MIN_NOISE_MULTIPLIER
    assert cal.privacy.epsilon <= target
    assert dpcore.get_epsilon(subsampled_gaussian_event(cal.value, q, 1000), DELTA).epsilon <= target
    assert cal.iterations <= 20 and calls["pld"] <= 20 and calls["panels"] <= _PANEL_WORK


def test_pld_answers_an_unsampled_gaussian_at_a_tiny_sigma_with_bounded_work(monkeypatch):
    """Unsampled, the pair's P-mass sits within a few σ of x = 1, and the leaf is cut there (the cut
    search used to stop at x = 0, so σ = 1e-6 needed 1e6σ of panels and was refused): the PLD answers
    with an upper bound on the exact (analytic) ε, and a calibration to an absurd target returns the
    floor, both with bounded quadrature work."""
    from dpcore.pld import pld_epsilon

    calls = _counting(monkeypatch)
    event = subsampled_gaussian_event(1e-6, 1.0, 1, sampling="none")
    exact = dpcore.get_epsilon(event, DELTA, accountant="analytic_gaussian").epsilon
    for fast in (True, False):
        assert exact <= pld_epsilon(event, DELTA, fast=fast).epsilon <= exact * (1.0 + 1e-5)
    cal = calibrate_noise_multiplier(1e30, DELTA, sampling_rate=1.0, steps=1000, accountant="pld")
    assert cal.value == calibration.MIN_NOISE_MULTIPLIER and cal.privacy.epsilon <= 1e30
    assert calls["pld"] <= 22 and calls["panels"] <= _PANEL_WORK


@pytest.mark.parametrize("target, q", [(1e308, 0.01)])
def test_absurd_target_pld_is_refused_naming_the_target_with_bounded_work(monkeypatch, target, q):
    """The least σ meeting the target is the floor, which the PLD cannot analyse (its quadrature budget, or
    losses too wide for its grid on the way there): a ValueError naming target_epsilon (an
    UnsupportedEventError), not minutes of quadrature."""
    calls = _counting(monkeypatch)
    with pytest.raises(UnsupportedEventError,
                       match="target_epsilon.*(MAX_QUADRATURE_PANELS|too large for the 'pld'|beyond the range of the 'pld')"):
        calibrate_noise_multiplier(target, DELTA, sampling_rate=q, steps=1000, accountant="pld")
    assert calls["pld"] <= 20 and calls["panels"] <= _PANEL_WORK


@pytest.mark.parametrize("target", [1e308, 1e300, 1e30])
def test_absurd_target_with_the_solvers_floor_returns_the_floor(monkeypatch, target):
    """``algorithms._solver_common.calibrated_privacy``'s call for DP-SGD without replacement (n = 300, b = 256,
    12 steps); with the default bounds (0, inf) the search used to drive σ toward 1e-154 through the PLD."""
    calls = _counting(monkeypatch)

    def event_fn(z):
        return subsampled_gaussian_event(z, 256 / 300, 12, sampling="without_replacement", dataset_size=300)

    cal = dpcore.calibrate(event_fn, "noise_multiplier", target, DELTA, lower=0.5, upper=4.0, increasing=False,
                           bounds=(calibration.MIN_NOISE_MULTIPLIER, math.inf), accountant="auto")
    assert cal.value == calibration.MIN_NOISE_MULTIPLIER and cal.privacy.epsilon <= target
    assert cal.iterations <= 20 and calls["pld"] <= 20 and calls["panels"] <= _PANEL_WORK
