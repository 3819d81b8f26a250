"""The PLD at small δ and on long, heterogeneous runs (issue 22): finite, tight two-sided bounds at
δ = 1e-9 and 1e-12, against pinned values of the peers and exact values where one is computable.

Pinned references (computed once, ``benchmarks/bench_pld.py --tables small_delta``): dp_accounting 0.6.0's
PLD accountant (value_discretization_interval 1e-4; a pessimistic estimate) and prv_accountant 0.2.0
(eps_error 0.01, delta_error δ/1000: its lower bound, estimate and upper bound). dp_accounting's 10.18 at
q = 1e-3, T = 1e5, δ = 1e-12 is its truncation failing, not a reference.

Schedules: the issue's two-phase 1000 × (q 0.01, σ 1) + 500 × (q 0.02, σ 2); a five-phase schedule made up
for this test, (σ, q, T) = (0.8, 0.02, 200), (1.0, 0.01, 1000), (1.2, 0.005, 2000), (1.5, 0.02, 500),
(2.0, 0.05, 300) — noise and rate varying per phase; and 10⁵ steps of (q 1e-3, σ 0.8).
"""

import math

import pytest

from dpcore import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.gaussian_mechanism import analytic_gaussian_epsilon
from dpcore.pld import pld_epsilon

SCHEDULES = {
    "two-phase": [(1.0, 0.01, 1000), (2.0, 0.02, 500)],
    "five-phase": [(0.8, 0.02, 200), (1.0, 0.01, 1000), (1.2, 0.005, 2000), (1.5, 0.02, 500), (2.0, 0.05, 300)],
    "q1e-3-T1e5": [(0.8, 1e-3, 100_000)],
}

#: (schedule, δ) → (dp_accounting, (prv lower, prv estimate, prv upper))
PEERS = {
    ("two-phase", 1e-9): (3.2552054646618993, (3.245069308114855, 3.2551955298009703, 3.265321878394339)),
    ("two-phase", 1e-12): (4.163253323353298, (4.151172110431192, 4.161307720512554, 4.171443464985628)),
    ("five-phase", 1e-9): (7.167089306150218, (7.15679337929964, 7.167072862310517, 7.17735262314672)),
    ("five-phase", 1e-12): (9.065413143838162, (9.054429044001788, 9.064699431900111, 9.074970088473293)),
    ("q1e-3-T1e5", 1e-9): (3.797435956527526, (3.7863549991549545, 3.796473987197836, 3.806593093132001)),
    ("q1e-3-T1e5", 1e-12): (None, (4.635875236876597, 4.646011506087718, 4.65614791757775)),
}


def _event(parts):
    blocks = [SelfComposedEvent(PoissonSampledEvent(GaussianEvent(s), q), t) for s, q, t in parts]
    return blocks[0] if len(blocks) == 1 else ComposedEvent(blocks)


@pytest.mark.parametrize("name, delta", sorted(PEERS))
def test_finite_tight_bounds_agree_with_the_peers(name, delta):
    lo, up = pld_epsilon(_event(SCHEDULES[name]), delta).details["bounds"]
    dpa, (prv_lo, prv_est, prv_up) = PEERS[(name, delta)]
    assert math.isfinite(up) and lo <= up
    assert (up - lo) <= 5e-3 * up  # the [lower, upper] gap ≤ 0.5 %
    assert abs(up - prv_est) <= 5e-3 * prv_est  # within 0.5 % of the peers
    if dpa is not None:
        assert abs(up - dpa) <= 5e-3 * dpa
    assert up >= prv_lo and lo <= prv_up  # never below a rigorous lower bound; the brackets overlap


def test_a_downward_shifted_leaf_is_caught(monkeypatch):
    """Planted bug: every leaf loss one grid step too small. The upper bound then falls below prv_accountant's
    rigorous lower bound — the check above would fail."""
    import dataclasses

    import dpcore.pld.accountant as accountant

    real = accountant.discretize

    def shifted(model, h, tail, extended=True, wide=None):
        leaf = real(model, h, tail, extended, wide)
        return dataclasses.replace(leaf, start=leaf.start - 1)

    monkeypatch.setattr(accountant, "discretize", shifted)
    up = pld_epsilon(_event(SCHEDULES["two-phase"]), 1e-9).epsilon
    assert up < PEERS[("two-phase", 1e-9)][1][0]


@pytest.mark.parametrize("delta", [1e-9, 1e-12])
def test_never_below_the_exact_value_where_it_is_computable(delta):
    """Un-sampled Gaussians composed (not merged: q = 1 keeps each step a separate leaf) over a heterogeneous
    schedule — the exact ε is the analytic Gaussian's with μ² = Σ T/σ²."""
    parts = [(60.0, 1.0, 2000), (90.0, 1.0, 3000), (45.0, 1.0, 500)]
    mu = math.sqrt(sum(t / s**2 for s, _, t in parts))
    exact = analytic_gaussian_epsilon(1.0 / mu, delta)
    lo, up = pld_epsilon(_event(parts), delta).details["bounds"]
    assert lo <= exact <= up <= exact * (1 + 5e-3)


@pytest.mark.parametrize("sigma, steps", [(2.0, 1000), (0.05, 1), (0.5, 10)])
@pytest.mark.parametrize("delta", [1e-9, 1e-12])
def test_a_far_tail_leaf_keeps_its_lower_bound(sigma, steps, delta):
    """A merged Gaussian with μ = √T/σ up to 20: at δ = 1e-12 the tilted bulk lies ~25 Q-standard
    deviations out, where the quadrature bound of e^{a}·q on panels of the density's scale was
    ~10x the bin mass — the optimistic bound fell to 0 (panels now shrink where a density grows
    fast). Both bounds within 1e-3 of the exact ε."""
    exact = analytic_gaussian_epsilon(sigma / math.sqrt(steps), delta)
    lo, up = pld_epsilon(SelfComposedEvent(GaussianEvent(sigma), steps), delta).details["bounds"]
    assert exact * (1 - 1e-3) <= lo <= exact <= up <= exact * (1 + 1e-3)


def test_subnormal_delta_pld_refused_and_auto_falls_back():
    # δ = 1e-320: the PLD's tail mass 1e-4·δ underflowed to 0 and calibrate / get_epsilon raised
    # "tail_mass must be in (0, inf); got 0.0", naming an argument the caller never gave. A subnormal δ is now
    # refused on every route naming delta (dpcore._validation.check_delta); the PLD's own limit (its tail mass a
    # normal float) still binds for the normal δ below 2.225e-304, where auto falls back to RDP.
    from dpcore import calibrate_noise_multiplier, get_epsilon
    from dpcore.events import UnsupportedEventError
    run = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.01), 100)
    for call in (lambda: pld_epsilon(run, 1e-320), lambda: get_epsilon(run, 1e-320),
                 lambda: calibrate_noise_multiplier(1.0, 1e-320, sampling_rate=0.01, steps=100)):
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1\) and at least 2\.2250738585072014e-308"):
            call()
    with pytest.raises(UnsupportedEventError, match=r"needs delta >= 2\.225e-304 .*got delta=1e-306"):
        pld_epsilon(run, 1e-306)
    auto = get_epsilon(run, 1e-306)
    assert auto.accountant == "rdp" and auto.epsilon == get_epsilon(run, 1e-306, accountant="rdp").epsilon
    cal = calibrate_noise_multiplier(1.0, 1e-306, sampling_rate=0.01, steps=100)
    assert cal.privacy.epsilon <= 1.0 and get_epsilon(
        SelfComposedEvent(PoissonSampledEvent(GaussianEvent(cal.value), 0.01), 100), 1e-306, accountant="rdp").epsilon <= 1.0
