"""Error bookkeeping of the tilted characteristic-function composition (issue 22): FFT powers, aliasing,
direct convolution, levels with coarsening, the tilt itself, wide tail bins and the screened add order.

Oracles: exact rational / extended-precision convolutions, the leaf pair's closed-form profile, and the
analytic Gaussian for compositions of un-merged Gaussian leaves. Each bound test also shows that the term
under test is needed (the planted omission would make the check fail).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import ndtr

from dpcore import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.pld import accountant as acc
from dpcore.pld import charfn, lower
from dpcore.pld import pld_delta, pld_epsilon
from dpcore.pld.discretize import discretize
from dpcore.pld.losses import gaussian_model
from dpcore.pld.pmf import GridPld


def _leaf(pmf, h=0.01, start=-3, theta=0.0) -> GridPld:
    leaf = GridPld(h, start, np.asarray(pmf, dtype=float), 0.0, 0.0, 0.0, 0.0, 1, h * h)
    return leaf.with_tilt(theta) if theta else leaf


def _exact_power(pmf, k):
    """k-fold convolution in rationals (the exact composition of the float leaf)."""
    base = [Fraction(float(x)) for x in pmf]
    out = [Fraction(1)]
    for _ in range(k):
        nxt = [Fraction(0)] * (len(out) + len(base) - 1)
        for i, x in enumerate(out):
            if x:
                for j, y in enumerate(base):
                    nxt[i + j] += x * y
        out = nxt
    return out


def _tilted_l1(result: GridPld, exact, start: int, scale: float, theta: float) -> float:
    """Σ_j |m̃_j − exact tilted mass| over every loss of either (the exact masses, untilted, from ``start``)."""
    got = {result.start + j: float(v) for j, v in enumerate(result.pmf)}
    total = 0.0
    keys = set(got) | {start + i for i in range(len(exact))}
    for key in keys:
        e = exact[key - start] if 0 <= key - start < len(exact) else Fraction(0)
        want = float(e) * math.exp(theta * key * result.h - result.log_scale) / scale
        total += abs(got.get(key, 0.0) - want)
    return total


@pytest.mark.parametrize("theta", [0.0, 3.0])
def test_fft_power_bound_covers_the_exact_power_and_its_alias_term_is_needed(monkeypatch, theta):
    monkeypatch.setattr(charfn, "DIRECT_LENGTH", 0)  # the FFT path
    rng = np.random.default_rng(7)
    pmf = rng.random(12) ** 3
    pmf[-1] = 0.05  # a heavy right end: aliasing of the 6-fold sum's tail
    pmf /= pmf.sum()
    leaf = _leaf(pmf, theta=theta)
    k = 6
    out = charfn.compose_powers([(leaf, k)], alias=1e-4)  # a loose budget: the window wraps visible mass
    wide = charfn.compose_powers([(leaf, k)], alias=1e-30)  # no visible aliasing: FFT rounding only
    # the dominating PLD of the tilted leaf (its roundings included), composed exactly
    base = leaf.pmf * np.exp(leaf.log_scale - theta * leaf.losses())
    exact = _exact_power(base, k)
    deviation = _tilted_l1(out, exact, k * leaf.start, 1.0, theta)
    assert out.pmf.size < len(exact)  # the window is shorter than the linear support: mass was aliased
    assert deviation <= out.err + out.bias
    # a bound of rounding size only — without the 2·P̃(above window) term — would miss it
    assert deviation > 100.0 * (wide.err + wide.bias)
    assert _tilted_l1(wide, exact, k * leaf.start, 1.0, theta) <= wide.err + wide.bias


def test_direct_path_has_no_absolute_error_floor():
    """Pure DP at the top of its range: δ(ε) just below 15 = P(L = 15)·(1 − e^{ε−15}); the direct
    convolution's relative rounding keeps δ ≈ 1e-13 exact where an FFT's absolute error is ~1e-12."""
    from dpcore import PureDpEvent
    from dpcore.composition import optimal_composition_delta

    event = SelfComposedEvent(PureDpEvent(5.0), 3)
    res = pld_delta(event, 14.9)
    exact = optimal_composition_delta(5.0, 0.0, 3, 14.9)
    lo, up = res.details["bounds"]
    assert lo <= exact <= up <= exact * (1 + 1e-9)


def test_levels_bracket_the_analytic_gaussian(monkeypatch, call_counter):
    """PoissonSampledEvent at q = 1 is the bare Gaussian pair but is not merged: 20 000 leaf instances
    composed through several characteristic-function levels (short windows force them)."""
    levels = call_counter(charfn, "_next_level")
    monkeypatch.setattr(charfn, "DIRECT_POINTS", 1 << 10)
    steps, sigma, delta = 20_000, 140.0, 1e-6
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), 1.0), steps)
    lo, up = pld_epsilon(event, delta, max_points=1 << 12).details["bounds"]
    assert levels["n"] >= 2
    mu = math.sqrt(steps) / sigma
    gauss = lambda e: ndtr(-e / mu + mu / 2) - math.exp(e) * ndtr(-e / mu - mu / 2)  # noqa: E731
    assert gauss(up) <= delta <= gauss(lo)
    assert up - lo < 0.02 * up


def test_lower_bound_needs_its_scarf_term(monkeypatch):
    """On a coarse grid the split composition is visibly above the exact one: the optimistic bound stays
    below the exact δ, and without its second-order (Scarf) term it would not."""
    steps, sigma, eps = 400, 10.0, 1.0
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), 1.0), steps)
    mu = math.sqrt(steps) / sigma
    exact = ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)
    res = pld_delta(event, eps, discretization=0.02)
    lo, up = res.details["bounds"]
    assert lo <= exact <= up
    monkeypatch.setattr(lower, "_g_bound", lambda *a, **k: (0.0, 0.0))
    planted = pld_delta(event, eps, discretization=0.02).details["bounds"][0]
    assert planted > exact


def test_the_tilt_changes_only_the_error_terms():
    """The same composition stored at θ = 0 and at the saddle-point tilt: equal δ_upper at a moderate ε."""
    leaf = discretize(gaussian_model(2.0).subsample(0.05), 0.002, 1e-16)
    plain = charfn.compose_counts([(leaf.with_tilt(0.0), 200)])
    tilted = charfn.compose_counts([(leaf.with_tilt(4.0), 200)])
    for eps in (0.2, 0.5, 1.0):
        a, b = plain.delta_upper(eps), tilted.delta_upper(eps)
        slack = sum(p.error_scale(eps) * (p.err + p.bias) + p.delta_grid(eps)[1] for p in (plain, tilted))
        assert abs(a - b) <= slack and slack < 1e-6 * a


@pytest.mark.parametrize("tau,factor", [(1e-3, 4), (1e-5, 16)])
def test_wide_leaf_bins_dominate_and_count_their_mass(tau, factor):
    sigma, h = 1.5, 0.002
    model = gaussian_model(sigma)
    fine = discretize(model, h, 1e-16)
    wide = discretize(model, h, 1e-16, wide=(tau, factor))
    assert np.count_nonzero(wide.pmf) < 0.8 * np.count_nonzero(fine.pmf)
    assert wide.wide_extra == pytest.approx((factor * factor - 1) * h * h, rel=1e-12)
    # the fine part is the longest run of adjacent grid points; under P the loss is N(1/(2σ²), 1/σ²)
    nz = np.flatnonzero(wide.pmf)
    breaks = np.concatenate(([0], np.flatnonzero(np.diff(nz) != 1) + 1, [nz.size]))
    run = int(np.argmax(np.diff(breaks)))
    f0, f1 = (wide.start + nz[breaks[run]]) * h, (wide.start + nz[breaks[run + 1] - 1]) * h
    mean = 0.5 / sigma**2
    exact = ndtr((f0 - mean) * sigma) + ndtr(-(f1 - mean) * sigma)
    # (the mass beyond the leaf's cuts is in ``edge``, charged in full by the optimistic bound)
    assert exact * (1 - 1e-10) <= wide.wide + wide.edge and wide.wide <= exact * (1 + 1e-6)
    assert 0.2 * tau < exact <= 2.0 * tau  # beyond the τ-cuts, widened to multiples of K·h
    # connect-the-dots on any grid: δ at every grid point ≥ the pair's exact δ
    ell = wide.losses()
    for eps in ell[:: max(1, ell.size // 200)]:
        exact = ndtr(-eps * sigma + 0.5 / sigma) - math.exp(eps) * ndtr(-eps * sigma - 0.5 / sigma)
        assert wide.delta_upper(float(eps)) >= exact - 1e-15


@pytest.mark.parametrize("stress", [False, True])
def test_wide_bins_keep_the_gaussian_composition_bracketed(monkeypatch, stress):
    steps, sigma, delta = 10_000, 100.0, 1e-5
    assert acc.wide_bins(steps) == (acc.WIDE_LAMBDA / (4.0 * steps), 16)
    if stress:  # λ ≈ 0.5 and bins 64 h wide: many wide splits, each far wider than the default
        monkeypatch.setattr(acc, "wide_bins", lambda n: (0.25 / n, 64))
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), 1.0), steps)
    lo, up = pld_epsilon(event, delta).details["bounds"]
    mu = math.sqrt(steps) / sigma
    gauss = lambda e: ndtr(-e / mu + mu / 2) - math.exp(e) * ndtr(-e / mu - mu / 2)  # noqa: E731
    assert gauss(up) <= delta <= gauss(lo)
    assert up - lo < (0.2 if stress else 0.01)


def test_wide_count_enters_the_split_terms():
    base = GridPld(0.01, 0, np.ones(1), 0.0, 0.0, 0.0, 0.0, 1, 1e-4, log_var=2e-5)
    with_wide = GridPld(0.01, 0, np.ones(1), 0.0, 0.0, 0.0, 0.0, 1, 1e-4, 0.0, 0.5, 0.0255, log_var=2e-5,
                        wide_extra_var=0.006)
    v, w, fail = lower.split_terms(base, 1e-7)
    assert (w, fail) == (pytest.approx(1e-4), 0.0) and v == pytest.approx(math.expm1(2e-5))
    # λ = 0.5: the least k with λ^{k+1}/(k+1)! ≤ 1e-7 is 7 (0.5⁸/8! ≈ 9.7e-8)
    v, w, fail = lower.split_terms(with_wide, 1e-7)
    assert w == pytest.approx(1e-4 + 7 * 0.0255, rel=1e-9)
    assert v == pytest.approx(math.expm1(2e-5 + 7 * 0.006), rel=1e-9)
    assert fail == pytest.approx(0.5**8 / math.factorial(8), rel=1e-9)


def test_add_order_is_refined_when_its_screen_is_not_below(monkeypatch):
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(2.0), 0.5), 2)
    default = pld_delta(event, 0.2)
    # a screen so coarse that the add order's bound exceeds the remove order's refined one
    monkeypatch.setattr(acc, "SCREEN_SETTINGS", (1e3, 1 << 12))
    coarse, _ = acc.composed_plds(event, settings=acc.SCREEN_SETTINGS, orders=[1], epsilon=0.2)
    assert coarse[0].delta_upper(0.2) > default.details["bounds"][1]
    res = pld_delta(event, 0.2)
    assert res.details["grid_points"][1] > coarse[0].pmf.size  # recomputed with the default grid
    assert res.details["bounds"] == default.details["bounds"]
