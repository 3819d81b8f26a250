"""Error bookkeeping of the PLD accountant's speed-ups (issue 8): wrapped FFTs, wide tail bins of
the leaves, and the add order screened after the remove order.

Oracles: exact linear convolutions (``np.convolve`` of non-negative arrays, whose float error is
far below the masses compared), the leaf pair's closed-form profile, and the analytic Gaussian
for compositions of un-merged Gaussian leaves.
"""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from dpcore import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.pld import accountant as acc
from dpcore.pld import pmf
from dpcore.pld import pld_delta, pld_epsilon
from dpcore.pld.discretize import discretize
from dpcore.pld.losses import gaussian_model
from dpcore.pld.pmf import GridPld, _convolve, _wrap_window, hoeffding_shift


def _light_right_tail(n: int, rng) -> np.ndarray:
    """A bulk on the first 40 points and a long right tail decaying like a Gaussian in the index."""
    p = np.zeros(n)
    p[:40] = rng.random(40)
    i = np.arange(40, n)
    p[40:] = 1e-3 * np.exp(-0.5 * ((i - 40) / (n / 7.0)) ** 2)
    return p / p.sum()


@pytest.fixture
def short_wraps(monkeypatch):
    """Wrapped FFTs from length 2 on (the default starts at 8192), so small cases exercise them."""
    monkeypatch.setattr(pmf, "_WRAP_MIN", 2)


@pytest.mark.parametrize("n", [300, 1000, 1500])
def test_wrap_window_bounds_both_wrapped_masses(n, short_wraps):
    rng = np.random.default_rng(n)
    x, y = _light_right_tail(n, rng), _light_right_tail(n, rng)
    x = np.roll(x, 5)  # something below the window start too
    linear = np.convolve(x, y)
    wrap = _wrap_window(x, y, 1.0)
    assert wrap is not None
    s, size, w_low, w_high = wrap
    assert size < linear.size and size & (size - 1) == 0
    exact_low, exact_high = math.fsum(linear[:s]), math.fsum(linear[s + size:])
    assert exact_low <= w_low <= exact_low * (1 + 1e-9)
    assert exact_high <= w_high <= exact_high * (1 + 1e-9)
    # neither side is vacuous: the window starts inside both bulks (at their budget/4 quantiles), so
    # about a tenth of the mass lies below it; the light right tails put a little beyond its end
    assert exact_low > 0.05 and exact_high > 0.0
    # the cyclic result is the window of the linear one with both ends folded in
    cyclic, e2, _ = _convolve(x, y, False, False, (s, size))
    expected = np.zeros(size)
    inside = linear[s:s + size]
    expected[:inside.size] = inside
    expected[size - s:] += linear[:s]  # below s: moved up by L
    high = linear[s + size:]
    expected[:high.size] += high  # from s + L on: moved down by L
    assert np.max(np.abs(cyclic - expected)) <= e2 + 1e-15 * np.max(linear)
    # too small a budget refuses the window instead of wrapping more than it may
    assert _wrap_window(x, y, 0.5 * exact_high) is None


def _pld(pmf: np.ndarray, h: float) -> GridPld:
    return GridPld(h, 0, pmf, 0.0, 0.0, 0.0, 0.0, 1, h * h)


def _exact_delta(pmf: np.ndarray, h: float, eps: float) -> float:
    ell = np.arange(pmf.size) * h
    m = ell > eps
    return math.fsum((pmf[m] * -np.expm1(eps - ell[m])).tolist())


def test_wrapped_mass_is_charged_to_delta(short_wraps):
    # an atom of mass m = 1e-4 at the far right: the square's m² at twice its loss lies beyond the
    # short FFT and is wrapped down to a small loss; uncharged, δ(ε) for ε between the kept end
    # (≈ 12 nats) and its true loss (≈ 24) would be ~m² too small. m² ≤ the budget 1e-7 < 2m, so
    # the truncation cannot hide it by sending the far end to +∞ instead
    h, n, m = 0.01, 1200, 1e-4
    p = np.zeros(n)
    p[:20] = (1.0 - m) / 20
    p[n - 1] = m
    pld = _pld(p, h)
    out = pld.compose(pld, 1e-7)
    assert out.pmf.size < 2 * n - 1 and out.inf_mass < m * m  # wrapped, not truncated
    exact = np.convolve(p, p)
    for eps in np.linspace(0.0, (2 * n - 2) * h, 40):
        assert out.delta_upper(eps) >= _exact_delta(exact, h, eps) * (1 - 1e-12)
    # and the lower bound stays below the exact value as well
    for eps in (1.0, 12.0, 20.0):
        assert out.delta_bounds(eps)[0] <= _exact_delta(exact, h, eps) * (1 + 1e-12)


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
    # PoissonSampledEvent at q = 1 is the bare Gaussian pair but is not merged, so this composes
    # 10 000 leaf instances with wide tail bins; the exact ε is the analytic Gaussian's (μ = 1)
    steps, sigma, delta = 10_000, 100.0, 1e-5
    # the default rule gives these steps 16 h wide tail bins beyond P-mass λ/(4·steps) (K = 16: 3(K² − 1) ≤ steps/10)
    assert acc.wide_bins(steps) == (acc.WIDE_LAMBDA / (4.0 * steps), 16)
    if stress:  # λ ≈ 0.5 and bins 64 h wide: many wide splits, each far wider than the default
        monkeypatch.setattr(acc, "wide_bins", lambda n: (0.25 / n, 64))
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), 1.0), steps)
    res = pld_epsilon(event, delta)
    lo, up = res.details["bounds"]
    mu = math.sqrt(steps) / sigma
    gauss = lambda e: ndtr(-e / mu + mu / 2) - math.exp(e) * ndtr(-e / mu - mu / 2)  # noqa: E731
    assert gauss(up) <= delta <= gauss(lo)
    assert up - lo < (0.2 if stress else 0.05)


def test_wide_count_enters_the_optimistic_shift():
    base = GridPld(0.01, 0, np.ones(1), 0.0, 0.0, 0.0, 0.0, 1, 1e-4)
    with_wide = GridPld(0.01, 0, np.ones(1), 0.0, 0.0, 0.0, 0.0, 1, 1e-4, 0.0, 0.5, 0.0255)
    assert base._shift(1e-6) == (hoeffding_shift(1e-4, 1e-6), 0.0)
    # λ = 0.5, η = 1e-6: the least k with λ^{k+1}/(k+1)! ≤ η/10 is 7 (0.5⁸/8! ≈ 9.7e-8)
    c, fail = with_wide._shift(1e-6)
    assert c == pytest.approx(hoeffding_shift(1e-4 + 7 * 0.0255, 1e-6), rel=1e-12)
    assert fail == pytest.approx(0.5**8 / math.factorial(8), rel=1e-9)


def test_add_order_is_refined_when_its_screen_is_not_below(monkeypatch):
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(2.0), 0.5), 2)
    default = pld_delta(event, 0.2)
    # a screen so coarse that the add order's bound exceeds the remove order's refined one
    monkeypatch.setattr(acc, "SCREEN_SETTINGS", (1, 16, 1 << 30))
    coarse, _ = acc.composed_plds(event, settings=acc.SCREEN_SETTINGS, orders=[1])
    assert coarse[0].delta_upper(0.2) > default.details["bounds"][1]
    res = pld_delta(event, 0.2)
    assert res.details["grid_points"][1] > coarse[0].pmf.size  # recomputed with the default grid
    assert res.details["bounds"] == default.details["bounds"]
