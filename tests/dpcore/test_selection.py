"""Private selection (dpcore.selection): repeat-and-select events, their RDP / pure-DP accounting,
certification, the sampler of the number of runs, and calibration with the selection's cost.

Independent checks: exact Rényi / max divergences of the released maximum on a discrete toy
mechanism (computed from the distributions' generating functions, not from the accountant's formulas),
dp_accounting's RepeatAndSelect RDP (reference values pinned, live comparison when installed), and
the mpmath certification route with a planted bug it must refuse.
"""

import math

import numpy as np
import pytest

import dpcore
from dpcore.events import MechanismEvent, UnsupportedEventError
from dpcore.orders import DP_ACCOUNTING_ORDERS
from dpcore.result import CertificationError
from dpcore.selection import (
    RepeatAndSelectEvent,
    calibrate_selected_noise_multiplier,
    liu_talwar_selection,
    selection_event,
)

GAUSS = dpcore.GaussianEvent(3.0)
CASES = [(10.0, 1.0), (10.0, 0.0), (10.0, 0.5), (10.0, math.inf), (100.0, 2.0), (3.0, math.inf)]

# dp_accounting 0.6.0 RdpAccountant(DP_ACCOUNTING_ORDERS) with RepeatAndSelectDpEvent(GaussianDpEvent(3), mean,
# shape): get_epsilon(1e-5). Pinned so the comparison runs without the package.
DP_ACCOUNTING_EPSILON = {(10.0, 1.0): 2.8772883288971682, (10.0, 0.0): 2.3984651080181822,
                         (10.0, 0.5): 2.651822001503449, (10.0, math.inf): 3.191311804020693}


# ------------------------------------------------------------------ exact divergences of a toy selection


def pgf(event: RepeatAndSelectEvent, z: np.ndarray) -> np.ndarray:
    """E[z^K] of the number of runs (K = 0 contributes 1: nothing released counts as the lowest score)."""
    if math.isinf(event.shape):
        return np.exp(event.mean * (z - 1.0))
    g, eta = event.gamma, event.shape
    if eta == 0.0:
        return np.log1p(-(1.0 - g) * z) / math.log(g)
    return ((1.0 - (1.0 - g) * z) ** (-eta) - 1.0) / (g ** (-eta) - 1.0)


def released_max_pmf(event: RepeatAndSelectEvent, pmf: np.ndarray) -> np.ndarray:
    """pmf of the best score over K runs, scores 0 < 1 < … (index 0 also absorbs K = 0)."""
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0
    out = pgf(event, cdf)
    return np.diff(np.concatenate([[0.0], out]))


def renyi(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    from scipy.special import logsumexp

    return float(logsumexp(alpha * np.log(p) + (1.0 - alpha) * np.log(q)) / (alpha - 1.0))


def both_ways(p, q, alpha):
    return max(renyi(p, q, alpha), renyi(q, p, alpha))


# A run of the candidate on D and on D': its private score (0 < 1 < …), all the selection looks at (its model is
# post-processing). Each pair is ε-DP with ε = log 2 between the rows. RARE: a good score is rare (the regime where
# many runs amplify the difference most); EVEN: scores 0 / 1 equally likely on D.
EPS_TOY = math.log(2.0)
TOYS = {"four": (np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.2, 0.3, 0.3, 0.2])),
        "rare": (np.array([0.98, 0.02]), np.array([0.99, 0.01])),
        "even": (np.array([0.5, 0.5]), np.array([0.25, 0.75]))}
for _p, _q in TOYS.values():
    assert np.max(np.abs(np.log(_p / _q))) <= EPS_TOY + 1e-12
TOY_ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0])


def toy_event(name):
    p, q = TOYS[name]
    return MechanismEvent(f"toy score {name}", rdp=lambda a: np.array([both_ways(p, q, x) for x in a]),
                          pure_epsilon=EPS_TOY)


def exact_selection_rdp(event, name):
    p, q = TOYS[name]
    a, b = released_max_pmf(event, p), released_max_pmf(event, q)
    return np.array([both_ways(a, b, x) for x in TOY_ORDERS]), float(np.max(np.abs(np.log(a / b))))


@pytest.mark.parametrize("name", list(TOYS))
@pytest.mark.parametrize("mean,shape", [(10.0, 1.0), (10.0, 0.0), (4.0, 0.5), (10.0, math.inf), (3.0, -0.5)])
def test_rdp_bound_dominates_the_exact_divergence_of_the_released_maximum(mean, shape, name):
    event = RepeatAndSelectEvent(toy_event(name), mean, shape)
    exact, _ = exact_selection_rdp(event, name)
    assert np.all(dpcore.compute_rdp(event, TOY_ORDERS) >= exact)


@pytest.mark.parametrize("shape", [1.0, 0.0, math.inf])
def test_a_free_selection_is_caught_by_the_exact_divergence(shape):
    """The planted bug 'tuning is free' (charging one run) is far below the exact divergence: a rare good score
    is ~10x likelier to be released after ~10 runs, on D (2 %) and on D' (1 %) alike, but its ratio stays 2."""
    exact, _ = exact_selection_rdp(RepeatAndSelectEvent(toy_event("rare"), 10.0, shape), "rare")
    assert np.any(exact > 4.0 * dpcore.compute_rdp(toy_event("rare"), TOY_ORDERS))


@pytest.mark.parametrize("shape,factor", [(1.0, 3.0), (0.0, 2.0), (0.5, 2.5)])
def test_pure_dp_bound_liu_talwar(shape, factor):
    """(2 + η)·ε; for the geometric distribution Liu & Talwar's 3ε. It dominates the exact max-divergence
    of the toy selection, which exceeds one run's ε (so charging one run would be caught)."""
    event = RepeatAndSelectEvent(toy_event("even"), 10.0, shape)
    res = dpcore.get_epsilon(event, 1e-6, accountant="composition")
    assert res.epsilon == pytest.approx(factor * EPS_TOY, rel=1e-11) and res.epsilon >= factor * EPS_TOY
    _, exact_max = exact_selection_rdp(event, "even")
    assert EPS_TOY < exact_max <= res.epsilon


def test_pure_bound_refused_for_poisson_and_approximate_inner():
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(RepeatAndSelectEvent(dpcore.PureDpEvent(1.0), 5.0, math.inf), 1e-5, accountant="composition")
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(RepeatAndSelectEvent(dpcore.ApproxDpEvent(1.0, 1e-6), 5.0, 1.0), 1e-5)


def test_liu_talwar_selection_is_geometric():
    ev = liu_talwar_selection(dpcore.LaplaceEvent(2.0), 0.1)
    assert ev.distribution == "geometric" and ev.gamma == pytest.approx(0.1, rel=1e-12)
    assert dpcore.get_epsilon(ev, 1e-6).epsilon == pytest.approx(1.5, rel=1e-11)
    assert liu_talwar_selection(dpcore.LaplaceEvent(2.0), 1.0).gamma == 1.0  # K ≡ 1: one run, ε unchanged
    assert dpcore.get_epsilon(liu_talwar_selection(dpcore.LaplaceEvent(2.0), 1.0), 1e-6).epsilon == pytest.approx(0.5)


# ------------------------------------------------------------------------------- closed forms, dp_accounting


def test_theorem2_closed_form_for_a_gaussian_run():
    """Gaussian run (RDP α/(2σ²)): ε′(λ) = λ/(2σ²) + (1 + η)·min_λ̂[(λ̂ − 1)/(2σ²) + log(1/γ)/λ̂] + log E[K]/(λ − 1);
    the min over all λ̂ ≥ 1 is at λ̂* = σ·√(2 log(1/γ)) (a lower bound of dpcore's grid minimum), and dpcore's value
    lies between the formula with that continuous minimum and with the nearest grid orders."""
    s2 = 9.0
    for mean, shape in [(10.0, 1.0), (10.0, 0.0), (50.0, 2.0)]:
        ev = RepeatAndSelectEvent(GAUSS, mean, shape)
        lg = -math.log(ev.gamma)
        star = math.sqrt(2 * s2 * lg)
        cont = (1 + shape) * ((star - 1) / (2 * s2) + lg / star)
        grid_best = min((1 + shape) * ((x - 1) / (2 * s2) + lg / x) for x in (math.floor(star), math.ceil(star)))
        lam = np.array([2.0, 8.0, 32.0])
        ours = dpcore.compute_rdp(ev, lam)
        repaired = lambda v: np.minimum.accumulate(v[::-1])[::-1]  # noqa: E731 (monotone in the order)
        low = repaired(lam / (2 * s2) + cont + math.log(ev.expected_count) / (lam - 1))
        high = repaired(lam / (2 * s2) + grid_best + math.log(ev.expected_count) / (lam - 1))
        assert np.all(ours >= low) and np.all(ours <= high * (1 + 1e-9))


@pytest.mark.parametrize("mean,shape", list(DP_ACCOUNTING_EPSILON))
def test_epsilon_matches_dp_accounting_pinned(mean, shape):
    ours = dpcore.get_epsilon(RepeatAndSelectEvent(GAUSS, mean, shape), 1e-5, orders=DP_ACCOUNTING_ORDERS,
                              optimize_order=False, accountant="rdp").epsilon
    ref = DP_ACCOUNTING_EPSILON[(mean, shape)]
    # same theorems; dpcore adds orders near 1 to the λ̂ grid, the Balle et al. conversion and the monotone repair
    assert ref * (1 - 1e-3) <= ours <= ref * (1 + 1e-9)


@pytest.mark.parametrize("mean,shape", CASES)
def test_rdp_matches_dp_accounting_live(mean, shape):
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    acc = rdp_acc.RdpAccountant(list(DP_ACCOUNTING_ORDERS))
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(3.0), mean, shape))
    ours = dpcore.compute_rdp(RepeatAndSelectEvent(GAUSS, mean, shape), DP_ACCOUNTING_ORDERS)
    if math.isinf(shape):  # Thm 6: δ̂ from dpcore's tighter conversion, then the monotone repair
        assert np.all(ours <= acc._rdp * (1 + 1e-9))
    else:  # Thm 2: the same formula; γ solved to full precision here (dp_accounting returns its bracket's end)
        np.testing.assert_allclose(ours, acc._rdp, rtol=1e-9)


def test_certified_and_a_planted_fast_path_bug_is_refused(monkeypatch):
    run = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.1), 0.01), 500)
    for shape in (0.0, math.inf):
        ev = RepeatAndSelectEvent(run, 8.0, shape)
        res = dpcore.get_epsilon(ev, 1e-5, accountant="rdp", certify=True)
        assert res.certified and res.details["certification"]["recomputed_by_the_fast_code"] == []
    import dpcore.rdp_accountant as ra

    real = ra.repeat_and_select_rdp
    monkeypatch.setattr(ra, "repeat_and_select_rdp", lambda e, a, inner: inner(a) + 0.9 * (real(e, a, inner) - inner(a)))
    with pytest.raises(CertificationError):
        dpcore.get_epsilon(RepeatAndSelectEvent(run, 8.0, 0.0), 1e-5, accountant="rdp", certify=True)


def test_selection_costs_more_than_one_run_and_grows_with_the_mean():
    one = dpcore.get_epsilon(GAUSS, 1e-5, accountant="rdp").epsilon
    eps = [dpcore.get_epsilon(RepeatAndSelectEvent(GAUSS, m, 1.0), 1e-5).epsilon for m in (1.0, 2.0, 10.0, 100.0)]
    assert eps[0] == pytest.approx(one) and one < eps[1] < eps[2] < eps[3]


def test_relation_composition_and_pld_refusal():
    run = dpcore.SampledWithoutReplacementEvent(dpcore.GaussianEvent(2.0, "replace_one"), 100, 1000)
    ev = RepeatAndSelectEvent(dpcore.SelfComposedEvent(run, 50), 5.0, 1.0)
    assert ev.relation == "replace_one"
    res = dpcore.get_epsilon(ev, 1e-5)
    assert res.relation == "replace_one" and res.accountant == "rdp"
    assert "pld" in res.details["auto"]["unsupported"]
    both = dpcore.ComposedEvent([ev, dpcore.GaussianEvent(5.0, "replace_one")])
    assert dpcore.get_epsilon(both, 1e-5).epsilon > res.epsilon


# ---------------------------------------------------------------------------------------------- sampler


@pytest.mark.parametrize("mean,shape", [(10.0, 1.0), (10.0, 0.0), (5.0, 0.5), (5.0, -0.5), (10.0, math.inf)])
def test_sampler_matches_its_distribution(mean, shape):
    """20 000 draws: the sample mean within 4.5 standard errors of E[K] (false alarm < 1e-5 per case), K ≥ 1
    for the truncated negative binomial, and the frequency of K = 1 within 4.5 s.e. of its pmf."""
    ev = RepeatAndSelectEvent(dpcore.PureDpEvent(1.0), mean, shape)
    rng = np.random.default_rng(12345)
    ks = np.array([ev.sample_count(rng) for _ in range(20_000)])
    if math.isinf(shape):
        p1 = mean * math.exp(-mean)
    else:
        assert ks.min() >= 1
        g = ev.gamma
        p1 = (1 - g) / -math.log(g) if shape == 0.0 else shape * (1 - g) / (g ** (-shape) - 1)
    se = ks.std() / math.sqrt(ks.size)
    assert abs(ks.mean() - ev.expected_count) < 4.5 * se
    f1 = np.mean(ks == 1)
    assert abs(f1 - p1) < 4.5 * math.sqrt(p1 * (1 - p1) / ks.size)


def test_sampler_is_reproducible_and_needs_a_generator():
    ev = RepeatAndSelectEvent(GAUSS, 10.0, 0.0)
    a = [ev.sample_count(np.random.default_rng(3)) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    with pytest.raises(ValueError, match="rng"):
        ev.sample_count(3)


# ------------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize("kwargs,name", [
    (dict(mean=0.5), "mean"), (dict(mean=math.nan), "mean"), (dict(mean=math.inf), "mean"),
    (dict(mean=2.0, shape=-1.0), "shape"), (dict(mean=2.0, shape=math.nan), "shape"), (dict(mean="3"), "mean"),
])
def test_bad_parameters_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        RepeatAndSelectEvent(GAUSS, **kwargs)


# The truncated negative binomial's E[K] in mpmath (60 digits), 1 − γ^η as −expm1(η log γ): (γ, η, E[K]).
_TNB_REFERENCE = [(g, eta) for g in (1e-300, 1e-10, 0.3, 0.999999) for eta in (-0.999999, -0.5, 1e-320, 0.0, 1.0, 1e6)]


def test_tnb_mean_is_stable_near_the_ends_of_its_range():
    """E[K] against mpmath at γ from 1e-300 to 1 − 1e-6 and η from −0.999999 (γ^η overflows) through 1e-320
    (1 − γ^η underflows: the logarithmic limit) to 1e6; before, η = 1e-320 divided by zero."""
    import mpmath

    from dpcore.selection import _tnb_mean

    with mpmath.workdps(60):
        for g, eta in _TNB_REFERENCE:
            G, E = mpmath.mpf(g), mpmath.mpf(eta)
            ref = (1 / G - 1) / mpmath.log(1 / G) if eta == 0 else E * (1 - G) / (G * -mpmath.expm1(E * mpmath.log(G)))
            assert _tnb_mean(g, eta) == pytest.approx(float(ref), rel=1e-12), (g, eta)


@pytest.mark.parametrize("mean,shape,match", [
    (10.0, -0.999, "shape must be farther from -1"),  # γ ≈ 10^-1000: was "math domain error"
    (5.0, -0.99999, "shape must be farther from -1"),
    (3.0, 1e300, "shape must be smaller"),  # γ rounds to 1: K ≡ 1, not a mean of 3 (was accepted silently)
])
def test_shapes_beyond_float64_are_refused_naming_shape(mean, shape, match):
    with pytest.raises(ValueError, match=match):
        RepeatAndSelectEvent(GAUSS, mean, shape)


def test_tiny_shape_is_the_logarithmic_limit():
    """η = 1e-320 with mean 1e9 (was ZeroDivisionError): the γ, E[K] and draws of the logarithmic distribution."""
    tiny, log = RepeatAndSelectEvent(GAUSS, 1e9, 1e-320), RepeatAndSelectEvent(GAUSS, 1e9, 0.0)
    assert tiny.gamma == pytest.approx(log.gamma, rel=1e-12) and tiny.expected_count == pytest.approx(1e9, rel=1e-12)
    draws = [ev.sample_count(np.random.default_rng(5)) for ev in (tiny, log)]  # compiled inversion: ~0.2 s each
    assert draws[0] == draws[1] >= 1
    near = RepeatAndSelectEvent(GAUSS, 10.0, -0.9)  # η near −1 within range: γ ≈ 3.5e-11, E[K] exact
    assert near.expected_count == pytest.approx(10.0, rel=1e-12)


def test_cli_tune_shape_out_of_float_range_is_one_line_naming_the_flag(capsys):
    from dpcore.cli import main

    argv = ["calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "100",
            "--tune-candidates", "10", "--tune-distribution", "truncated-negative-binomial", "--tune-shape", "-0.99999"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpcore: error: --tune-shape must be farther from -1") and "\n" not in err


def test_selection_event_helper():
    assert selection_event(GAUSS, 5, "poisson").shape == math.inf
    assert selection_event(GAUSS, 5, "logarithmic").shape == 0.0
    assert selection_event(GAUSS, 5, "truncated_negative_binomial", shape=0.3).distribution == "truncated_negative_binomial"
    with pytest.raises(ValueError, match="shape"):
        selection_event(GAUSS, 5, "truncated_negative_binomial")
    with pytest.raises(ValueError, match="contradicts"):
        selection_event(GAUSS, 5, "geometric", shape=0.5)
    with pytest.raises(ValueError, match="distribution"):
        selection_event(GAUSS, 5, "uniform")
    with pytest.raises(ValueError, match="event"):
        RepeatAndSelectEvent("not an event", 5.0)


# ------------------------------------------------------------------------------------------ calibration


def test_calibration_splits_the_budget_and_is_rechecked():
    cal, one = calibrate_selected_noise_multiplier(2.0, 1e-5, candidates=10, distribution="logarithmic",
                                                   sampling_rate=0.01, steps=200)
    run = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(cal.value), 0.01), 200)
    total = dpcore.get_epsilon(RepeatAndSelectEvent(run, 10, 0.0), 1e-5, accountant="rdp").epsilon
    assert total <= 2.0 and total == pytest.approx(2.0, rel=1e-4)
    assert 0 < one.epsilon < total
    # a run at the tuned sigma alone is noisier than a run calibrated to the whole budget
    assert cal.value > dpcore.calibrate_noise_multiplier(2.0, 1e-5, sampling_rate=0.01, steps=200).value


@pytest.mark.parametrize("delta", [0.25, 0.1])
def test_certify_follows_the_monotone_repair_at_large_delta(delta):
    """At large δ the RDP accountant's best order sits where Papernot–Steinke's bound is not monotone
    in λ, and its value comes from a higher order (Rényi divergence is non-decreasing in λ); the
    certifier recomputed the formula at the reported order only and refused a valid result (z = 5,
    δ = 0.25: 0.378 against 0.615). It now repeats the repair in mpmath — and still refuses a value
    planted 5 % below the certified one."""
    import dataclasses

    from dpcore.certify import certify_rdp_epsilon
    from dpcore.result import CertificationError

    event = RepeatAndSelectEvent(dpcore.GaussianEvent(5.0), 5, -0.5)
    result = dpcore.get_epsilon(event, delta, accountant="rdp", certify=True)
    assert result.certified and abs(result.details["certification"]["relative_gap"]) < 1e-9
    with pytest.raises(CertificationError, match="not an upper bound"):
        certify_rdp_epsilon(event, delta, dataclasses.replace(result, epsilon=0.95 * result.epsilon))
