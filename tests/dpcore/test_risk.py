"""Certified attack risk (dpcore.risk, dpcore.pld.tradeoff): bounds checked against exact curves."""

import json
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

import dpcore
from dpcore.cli import main
from dpcore.pld import tradeoff
from dpcore.pld.tradeoff import TradeoffCurve, tradeoff_curve
from dpcore.risk import calibrate_risk, dp_tpr_bound, exact_gdp_mu, gdp_tpr_bound, risk

ALPHAS = np.array([1e-4, 1e-3, 1e-2, 0.1])
GRID = np.concatenate([np.geomspace(1e-6, 0.5, 60), 1.0 - np.geomspace(1e-6, 0.5, 60)])


def _gdp(alpha, mu):
    return special.ndtr(special.ndtri(alpha) + mu)


@pytest.mark.parametrize("event, mu", [(dpcore.GaussianEvent(2.0), 0.5),
                                       (dpcore.SelfComposedEvent(dpcore.GaussianEvent(2.0), 4), 1.0)])
def test_gaussian_upper_bound_is_above_and_within_1e_4_of_the_exact_curve(event, mu):
    report = risk(event, ALPHAS)
    exact = _gdp(ALPHAS, mu)
    assert np.all(report.tpr_upper >= exact)
    assert np.all(report.tpr_upper - exact <= 1e-4)
    assert np.all(report.tpr_lower <= exact)
    assert report.gdp_exact is True and report.gdp_mu[0] == report.gdp_mu[1] >= mu
    assert report.advantage[0] <= 2 * special.ndtr(mu / 2) - 1 <= report.advantage[1]  # TV of N(0,1), N(μ,1)


def _subsampled_exact(alpha, q, sigma):
    """Exact ROC of both orders of one Poisson-subsampled Gaussian step, by its threshold test
    (the likelihood ratio of (qN(1, σ²) + (1−q)N(0, σ²), N(0, σ²)) increases in x)."""
    def mixture_sf(t):
        return q * stats.norm.sf((t - 1) / sigma) + (1 - q) * stats.norm.sf(t / sigma)

    out = []
    for a in alpha:
        t = sigma * stats.norm.isf(a)  # remove order: reject N(0, σ²) when x > t
        remove = mixture_sf(t)
        # add order: reject the mixture when x < s with mixture(x < s) = a; TPR = Φ(s/σ)
        s = optimize.brentq(lambda s: (1 - mixture_sf(s)) - a, -60 * sigma, 60 * sigma + 1, xtol=1e-14)
        out.append(max(remove, stats.norm.cdf(s / sigma)))
    return np.array(out)


def test_one_subsampled_step_is_bracketed_by_the_exact_curve_of_both_orders():
    event = dpcore.PoissonSampledEvent(dpcore.GaussianEvent(0.8), 0.2)
    curve = tradeoff_curve(event)
    exact = _subsampled_exact(GRID, 0.2, 0.8)
    assert np.all(curve.tpr_upper(GRID) >= exact)
    assert np.all(curve.tpr_lower(GRID) <= exact)
    assert np.max(curve.tpr_upper(GRID) - exact) < 1e-6


def test_a_curve_without_the_reflected_order_misses_the_other_direction():
    """Planted bug: forgetting the add order of Poisson sampling under-reports attacks on D against D′."""
    event = dpcore.PoissonSampledEvent(dpcore.GaussianEvent(0.8), 0.2)
    curve = tradeoff_curve(event)
    exact = _subsampled_exact(GRID, 0.2, 0.8)
    one_order = TradeoffCurve(curve.curves[:1], curve.relation, curve.discretization)
    assert np.any(one_order.tpr_upper(GRID) < exact - 1e-3)


def test_the_lower_bound_needs_the_scarf_deficit(monkeypatch):
    """Planted bug: a lower bound read off the pessimistic grid without its Scarf deficit (the split
    moves' Jensen gap, made uniform over each interval of ε) lies above the exact curve."""
    event = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.0), 0.1), 50)
    sound = tradeoff_curve(event, settings=(1e-2, 1 << 16))
    a = np.geomspace(1e-3, 0.5, 40)
    lower, upper = sound.tpr_lower(a), sound.tpr_upper(a)
    broken = tradeoff_curve(event, settings=(1e-2, 1 << 16))
    monkeypatch.setattr(tradeoff, "interval_deficits", lambda pld, first, step, count, allowed: np.zeros(count))
    monkeypatch.setattr(tradeoff, "interval_deficit", lambda pld, center, half, allowed: 0.0)
    unsound = broken.tpr_lower(a)
    # the exact curve lies between the sound bounds; the broken "lower" bound reaches the upper one
    assert np.all(unsound > lower)
    assert np.max(unsound - upper) > -1e-7


def test_pure_dp_and_laplace_curves_are_bracketed():
    eps = 1.0
    report = risk(dpcore.PureDpEvent(eps), GRID)
    exact = np.minimum(math.exp(eps) * GRID, 1 - math.exp(-eps) * (1 - GRID))  # randomized response
    assert np.all(report.tpr_lower <= exact + 1e-12) and np.all(report.tpr_upper >= exact)
    assert np.max(report.tpr_upper - exact) < 1e-6
    # Laplace: the Neyman–Pearson tests of Lap(0, b) vs Lap(1, b) give
    # f(α) = 1 − e^{1/b}α, e^{−1/b}/(4α), e^{−1/b}(1 − α) on the three ranges of α
    b = 1.5
    m = 1 / b
    # TPR = 1 − f written without the cancellation of 1 − (1 − e^{1/b}α) (its float error, ~1e-16, is above
    # the upper bound's margin at α ≈ 1e-6)
    tpr = np.where(GRID < math.exp(-m) / 2, math.exp(m) * GRID,
                   np.where(GRID <= 0.5, 1 - math.exp(-m) / (4 * GRID), 1 - math.exp(-m) * (1 - GRID)))
    report = risk(dpcore.LaplaceEvent(b), GRID)
    assert np.all(report.tpr_lower <= tpr + 1e-12) and np.all(report.tpr_upper >= tpr)
    assert np.max(report.tpr_upper - tpr) < 1e-5


def test_dp_sgd_gap_is_at_most_1e_3_at_every_fpr_from_1e_6():
    event = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.1), 0.01), 10_000)
    curve = tradeoff_curve(event)
    a = np.concatenate([np.geomspace(1e-6, 0.5, 300), 1.0 - np.geomspace(1e-9, 0.5, 100)])
    gap = curve.tpr_upper(a) - curve.tpr_lower(a)
    assert np.all(gap >= 0) and np.max(gap) <= 1e-3
    # consistent with the accountant: TPR ≤ e^ε FPR + δ at the PLD's (ε, δ)
    eps = dpcore.get_epsilon(event, 1e-5, accountant="pld").epsilon
    assert np.all(curve.tpr_upper(a) <= dp_tpr_bound(a, eps, 1e-5) + 1e-9)


def test_gdp_bounds_of_a_subsampled_run():
    event = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.0), 0.05), 200)
    report = risk(event, ALPHAS)
    lo, up = report.gdp_mu
    assert 0 < lo <= up < math.inf and report.gdp_exact is False
    a = np.geomspace(report.fpr_floor, 0.5, 200)
    assert np.all(report.curve.tpr_upper(a) <= gdp_tpr_bound(a, up) + 1e-12)
    assert np.any(report.curve.tpr_lower(a) >= gdp_tpr_bound(a, lo) - 1e-9)
    # the central-limit μ of Dong, Roth, Su 2022 (Cor. 5.4; Opacus's GDP accountant) is below the certified one
    clt = 0.05 * math.sqrt(200 * (math.exp(1.0) - 1.0))
    assert clt < lo
    assert exact_gdp_mu(event) is None
    assert exact_gdp_mu(dpcore.ComposedEvent([dpcore.GaussianEvent(1.0), dpcore.GaussianEvent(2.0)])) == \
        pytest.approx(math.sqrt(1.25), rel=1e-14)


def test_calibrate_risk_returns_the_least_sigma_and_the_most_steps():
    cal = calibrate_risk(0.2, 0.05, sampling_rate=0.05, steps=100)
    assert cal.parameter == "noise_multiplier" and cal.tpr_upper <= 0.2
    assert float(tradeoff_curve(cal.event, settings=tradeoff.UPPER_SETTINGS).tpr_upper([0.05])[0]) <= 0.2
    unsafe = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(cal.bracket[1]), 0.05), 100)
    assert float(tradeoff_curve(unsafe, settings=tradeoff.UPPER_SETTINGS).tpr_upper([0.05])[0]) > 0.2
    steps = calibrate_risk(0.2, 0.05, sampling_rate=0.05, noise_multiplier=cal.value)
    assert steps.parameter == "steps" and steps.value >= 100 and steps.tpr_upper <= 0.2
    assert steps.bracket == (steps.value, steps.value + 1)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(max_tpr=0.01, at_fpr=0.05, sampling_rate=0.1, steps=10), "max_tpr must be in (at_fpr, 1)"),
    (dict(max_tpr=0.2, at_fpr=0.05, sampling_rate=0.1, steps=10, noise_multiplier=1.0), "exactly one"),
    (dict(max_tpr=0.2, at_fpr=0.0, sampling_rate=0.1, steps=10), "at_fpr must be in (0, 1)"),
    (dict(max_tpr=0.2, at_fpr=0.05, sampling_rate=1.5, steps=10), "sampling_rate must be in (0, 1]"),
])
def test_calibrate_risk_refuses_bad_input(kwargs, needle):
    with pytest.raises(ValueError, match=None) as exc:
        calibrate_risk(**kwargs)
    assert needle in str(exc.value)


@pytest.mark.parametrize("fpr", [[1.5], [float("nan")], [], [[0.1, 0.2]], ["0.1"], [True], [0.1, False], "0.1"])
def test_risk_refuses_bad_fprs(fpr):
    with pytest.raises(ValueError, match="fpr"):
        risk(dpcore.GaussianEvent(1.0), fpr)


def test_cli_risk_json_and_plot(tmp_path, capsys):
    assert main(["risk", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps", "1", "--json",
                 "--fpr", "1e-3", "0.1"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["fpr"] == [1e-3, 0.1] and len(record["tpr_lower"]) == len(record["tpr_upper"]) == 2
    assert all(up >= e for up, e in zip(record["tpr_upper"], _gdp(np.array([1e-3, 0.1]), 0.5)))
    pytest.importorskip("matplotlib")
    path = tmp_path / "curve.png"
    assert main(["risk", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "20", "--plot",
                 str(path)]) == 0
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert main(["risk", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "20", "--plot",
                 str(path)]) == 2  # an existing file is never overwritten
    assert "refusing to overwrite" in capsys.readouterr().err


@pytest.mark.parametrize("argv, needle", [
    (["calibrate", "--max-tpr", "0.1", "--at-fpr", "0.01", "--sampling-rate", "0.01", "--steps", "10",
      "--epsilon", "1"], "--epsilon contradicts --max-tpr"),
    (["calibrate", "--max-tpr", "0.1", "--sampling-rate", "0.01", "--steps", "10"], "--at-fpr is required"),
    (["calibrate", "--epsilon", "1", "--sampling-rate", "0.01", "--steps", "10"], "--delta is required"),
    (["calibrate", "--max-tpr", "0.001", "--at-fpr", "0.01", "--sampling-rate", "0.01", "--steps", "10"],
     "--max-tpr must be in (--at-fpr, 1)"),
    (["risk", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "2", "--fpr", "2"], "--fpr must"),
])
def test_cli_refusals_name_the_flags(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_cli_calibrate_to_a_risk_target(capsys):
    assert main(["calibrate", "--max-tpr", "0.2", "--at-fpr", "0.05", "--sampling-rate", "0.05", "--steps", "100",
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["tpr_upper"] <= 0.2 and record["noise_multiplier"] > 0 and record["relation"] == "add_remove"


def test_the_lower_bound_covers_every_epsilon():
    """The cover of the lower bound spans the grid and reaches far beyond it on both sides, and its
    deficits are never below the pointwise optimistic bound's at the interval centres."""
    from dpcore.pld.lower import FAIL_FRACTION, delta_lower

    event = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.0), 0.1), 50)
    grid = tradeoff_curve(event, settings=(1e-2, 1 << 16)).curves[0]
    edges, first, count, step = grid._edges()
    loss = (grid.pld.start + edges) * grid.pld.h
    assert loss[0] <= grid.ell[0] - tradeoff.LEFT_REACH and loss[-1] >= grid.ell[-1] + tradeoff.RIGHT_REACH
    assert np.all(np.diff(edges) > 0)
    _, _, deficits, _, _ = grid._lower_terms()
    for k in range(first, first + count, max(1, count // 25)):
        centre = 0.5 * (loss[k] + loss[k + 1])
        value, rounding = grid.pld.delta_grid(centre)
        assert value - rounding - deficits[k] <= delta_lower(grid.pld, centre, FAIL_FRACTION ** -1 * 1e-15) + 1e-15


def test_cli_risk_review_items(capsys):
    """Issue 25 review, item 10: the steps calibration runs from the CLI (as documented); the risk
    command's refusals suggest no accountant (it has none); --sampling none needs no --sampling-rate."""
    assert main(["calibrate", "--max-tpr", "0.05", "--at-fpr", "0.01", "--sampling-rate", "0.01",
                 "--noise-multiplier", "1", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["steps"] == calibrate_risk(0.05, 0.01, sampling_rate=0.01, noise_multiplier=1.0).value
    assert main(["risk", "--noise-multiplier", "1e-320", "--sampling-rate", "0.01", "--steps", "10"]) == 2
    err = capsys.readouterr().err
    assert "--noise-multiplier" in err and "use accountant" not in err and "--accountant" not in err
    assert err.count("\n") == 1
    assert main(["risk", "--noise-multiplier", "2", "--sampling", "none", "--steps", "3", "--json"]) == 0
    none = json.loads(capsys.readouterr().out)
    assert main(["risk", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tpr_upper"] == none["tpr_upper"]
    assert main(["risk", "--noise-multiplier", "2", "--sampling", "none", "--sampling-rate", "0.5", "--steps",
                 "3"]) == 2


def test_dp_tpr_bound_when_exp_epsilon_overflows():
    # math.exp(1e308) was an OverflowError; e^710·FPR is finite for a subnormal FPR (checked in mpmath)
    fpr = np.array([0.0, 5e-324, 1e-300, 0.5])
    assert dp_tpr_bound(fpr, 1e308, 1e-5).tolist() == [1e-5, 1.0, 1.0, 1.0]
    got = dp_tpr_bound(fpr, 710.0, 1e-5)
    import mpmath
    want = float(mpmath.exp(710) * mpmath.mpf(5e-324) + mpmath.mpf(1e-5))
    assert got[0] == 1e-5 and got[1] == pytest.approx(want, rel=1e-12) and got[2:].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="^delta must be a real number"):  # was a TypeError from '0.5' + float
        dp_tpr_bound(fpr, 1.0, "0.5")
