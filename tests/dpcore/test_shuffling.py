"""Amplification by shuffling (Feldman, McMillan, Talwar 2021): rigorous numerical bound and closed form."""

import math
from collections import defaultdict

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

import dpcore
from dpcore.events import ShuffledEvent, UnsupportedEventError
from dpcore.shuffling import (
    local_delta_term,
    shuffle_closed_form_epsilon,
    shuffle_delta,
    shuffle_epsilon,
    shuffle_numeric_epsilon,
)


def exact_clone_delta(eps0, n, eps):
    """FMT21 Thm 3.2 pair built literally — P = (A + Δ1, C − A + Δ2), Q = (A + Δ2, C − A + Δ1),
    C ~ Bin(n−1, e^{−ε0}), A ~ Bin(C, ½), Δ1 ~ Bern(e^{ε0}/(e^{ε0}+1)), Δ2 = 1 − Δ1 — as two
    explicit distributions over pairs, and max of both hockey-stick divergences, at 40 digits."""
    with mpmath.workdps(40):
        e0 = mpmath.mpf(eps0)
        p = mpmath.exp(-e0)
        alpha = mpmath.exp(e0) / (mpmath.exp(e0) + 1)
        dist_p, dist_q = defaultdict(mpmath.mpf), defaultdict(mpmath.mpf)
        for c in range(n):
            wc = mpmath.binomial(n - 1, c) * p**c * (1 - p) ** (n - 1 - c)
            for a in range(c + 1):
                wa = wc * mpmath.binomial(c, a) / mpmath.mpf(2) ** c
                for d1, pd in ((1, alpha), (0, 1 - alpha)):
                    dist_p[(a + d1, c - a + 1 - d1)] += wa * pd
                    dist_q[(a + 1 - d1, c - a + d1)] += wa * pd
        scale = mpmath.exp(mpmath.mpf(eps))
        keys = set(dist_p) | set(dist_q)
        zero = mpmath.mpf(0)
        forward = mpmath.fsum(max(zero, dist_p[k] - scale * dist_q[k]) for k in keys)
        backward = mpmath.fsum(max(zero, dist_q[k] - scale * dist_p[k]) for k in keys)
        return max(forward, backward)


def support_sum_delta(eps0, n, eps):
    """Float64 δ by summing [P_c(x) − e^ε Q_c(x)]_+ over the whole support x = 0..c+1 of every c
    with weight > 1e-40 (no binomial tails / closed form involved), max of both directions."""
    trials, p = n - 1, math.exp(-eps0)
    alpha = math.exp(eps0) / (1 + math.exp(eps0))
    scale = math.exp(eps)
    cs = np.arange(trials + 1)
    weights = binom.pmf(cs, trials, p)
    forward = backward = 0.0
    for c in cs[weights > 1e-40]:
        b = binom.pmf(np.arange(c + 1), c, 0.5)
        shifted = np.concatenate([[0.0], b])  # b(x − 1), x = 0..c+1
        plain = np.concatenate([b, [0.0]])  # b(x)
        pc = alpha * plain + (1 - alpha) * shifted
        qc = (1 - alpha) * plain + alpha * shifted
        forward += weights[c] * np.maximum(pc - scale * qc, 0).sum()
        backward += weights[c] * np.maximum(qc - scale * pc, 0).sum()
    return max(forward, backward)


# ------------------------------------------------------------------------------ exactness / rigour


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 12, 0.3), (2.0, 60, 0.5), (0.5, 60, 0.05), (3.0, 150, 0.8),
                                        (1.0, 150, 0.0)])
def test_delta_is_an_upper_bound_of_the_exact_clone_pair(eps0, n, eps):
    exact = exact_clone_delta(eps0, n, eps)
    got = shuffle_delta(eps0, n, eps)
    assert mpmath.mpf(got) >= exact
    assert (mpmath.mpf(got) - exact) / exact < 1e-7


@pytest.mark.parametrize("eps0,n,eps", [(2.0, 2000, 0.3), (6.0, 5000, 1.2), (0.3, 3000, 0.01)])
def test_delta_matches_the_support_sum(eps0, n, eps):
    reference = support_sum_delta(eps0, n, eps)
    got = shuffle_delta(eps0, n, eps)
    assert got >= reference * (1 - 1e-12)  # the float reference itself carries ~1e-13 error
    assert got == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 1000, 0.05), (3.0, 500, 0.4), (0.2, 200, 0.01)])
def test_delta_dominates_shuffled_randomized_response(eps0, n, eps):
    # Binary randomized response, datasets (0, 0, …, 0) vs (1, 0, …, 0): the shuffled output is the
    # number of ones, Bin(n−1, q) + Bern(q) vs Bin(n−1, q) + Bern(1−q), q = 1/(1+e^{ε0}). Its exact δ
    # is a lower bound on the true shuffled δ, which FMT21 bounds from above.
    q = 1 / (1 + math.exp(eps0))
    others = binom.pmf(np.arange(n), n - 1, q)
    y0 = np.concatenate([others * (1 - q), [0.0]]) + np.concatenate([[0.0], others * q])
    y1 = np.concatenate([others * q, [0.0]]) + np.concatenate([[0.0], others * (1 - q)])
    scale = math.exp(eps)
    true_delta = max(np.maximum(y0 - scale * y1, 0).sum(), np.maximum(y1 - scale * y0, 0).sum())
    assert 0 < true_delta <= shuffle_delta(eps0, n, eps)


def test_no_amplification_needed_beyond_epsilon0():
    assert shuffle_delta(2.0, 100, 2.0) == 0.0
    assert shuffle_delta(2.0, 100, 5.0) == 0.0
    assert shuffle_numeric_epsilon(2.0, 2, 1e-6) <= 2.0


# ------------------------------------------------------------------------------------ pinned values


@pytest.mark.slow
def test_pinned_n1e5_eps0_4_delta1e6_against_the_reference_code():
    # Provenance: this implementation (term-by-term sum, Boost binomials, 1e-10 safety margin);
    # confirmed here by the independent support sum. The public reference code
    # (apple/ml-shuffling-amplification, notes §4) reports 0.172791, and 0.175417 once its
    # max(deltaq_upperc, deltaq_upperc) typo is fixed: both are looser, because it charges each block
    # of 100 consecutive c with the larger endpoint value and stops a 10-step bisection at the
    # right end. At ε = 0.175417 the exact δ is ≈ 5.9e-7, well below 1e-6.
    eps = shuffle_numeric_epsilon(4.0, 100_000, 1e-6)
    assert eps == pytest.approx(0.16976974750, rel=1e-8)
    assert support_sum_delta(4.0, 100_000, eps) <= 1e-6
    assert support_sum_delta(4.0, 100_000, eps - 1e-6) > 1e-6
    assert support_sum_delta(4.0, 100_000, 0.175417) == pytest.approx(5.9008542e-07, rel=1e-6)
    assert eps < 0.172791 < 0.175417


@pytest.mark.slow
def test_one_million_users_runs():
    eps = shuffle_numeric_epsilon(0.5, 1_000_000, 1e-8)
    assert 0 < eps < shuffle_closed_form_epsilon(0.5, 1_000_000, 1e-8)
    assert shuffle_delta(0.5, 1_000_000, eps) <= 1e-8


def test_numeric_epsilon_is_least_up_to_tol():
    eps0, n, delta = 1.0, 10_000, 1e-6
    eps = shuffle_numeric_epsilon(eps0, n, delta, tol=1e-9)
    assert shuffle_delta(eps0, n, eps) <= delta
    assert shuffle_delta(eps0, n, eps - 2e-9) > delta


# ------------------------------------------------------------------------------------- closed form


def test_closed_form_value():
    eps0, n, delta = 2.0, 50_000, 1e-6
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n)
    c = 8 * math.exp(eps0) / n
    e = math.log(1 + a + c)
    expected = math.log(1 + (1 - math.exp(-eps0)) / (1 + math.exp(-eps0 - e)) * (a + c))
    assert shuffle_closed_form_epsilon(eps0, n, delta) == pytest.approx(expected, rel=1e-14)
    assert shuffle_epsilon(eps0, n, delta, method="closed_form") == shuffle_closed_form_epsilon(eps0, n, delta)


@pytest.mark.parametrize("eps0,n,delta", [(1.0, 10_000, 1e-6), (4.0, 100_000, 1e-6), (0.5, 100_000, 1e-8),
                                          (2.0, 5_000, 1e-5)])
def test_closed_form_is_above_the_numeric_bound(eps0, n, delta):
    numeric = shuffle_epsilon(eps0, n, delta)
    assert numeric <= shuffle_closed_form_epsilon(eps0, n, delta)
    assert shuffle_delta(eps0, n, numeric) <= delta


def test_closed_form_refuses_outside_its_validity_condition():
    n, delta = 100_000, 1e-6
    limit = math.log(n / (16 * math.log(4 / delta)))
    shuffle_closed_form_epsilon(limit * (1 - 1e-9), n, delta)
    with pytest.raises(ValueError, match="epsilon0"):
        shuffle_closed_form_epsilon(limit * (1 + 1e-9), n, delta)
    with pytest.raises(ValueError, match="epsilon0"):
        shuffle_closed_form_epsilon(0.1, 100, 1e-6)  # n < 16 ln(4/δ): no ε0 is valid


# --------------------------------------------------------------------------------- property tests


@settings(max_examples=15, deadline=None, derandomize=True)
@given(eps0=st.floats(0.1, 6.0), n=st.integers(2, 3000), f1=st.floats(0.0, 1.0), f2=st.floats(0.0, 1.0))
def test_delta_non_increasing_in_epsilon(eps0, n, f1, f2):
    lo, hi = sorted((f1 * eps0, f2 * eps0))
    assert shuffle_delta(eps0, n, hi) <= shuffle_delta(eps0, n, lo)


# -------------------------------------------------------------------------------------- bad input

NAN = float("nan")


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: shuffle_epsilon(0.0, 100, 1e-6), "epsilon0"),
        (lambda: shuffle_epsilon(NAN, 100, 1e-6), "epsilon0"),
        (lambda: shuffle_epsilon(1.0, 1, 1e-6), "n"),
        (lambda: shuffle_epsilon(1.0, 10.5, 1e-6), "n"),
        (lambda: shuffle_epsilon(1.0, 100, 0.0), "delta"),
        (lambda: shuffle_epsilon(1.0, 100, 1.0), "delta"),
        (lambda: shuffle_epsilon(1.0, 100, 1e-6, method="exact"), "method"),
        (lambda: shuffle_numeric_epsilon(1.0, 100, 1e-6, tol=0.0), "tol"),
        (lambda: shuffle_delta(1.0, 100, -0.5), "epsilon"),
        (lambda: shuffle_delta(-1.0, 100, 0.5), "epsilon0"),
        (lambda: shuffle_closed_form_epsilon(1.0, 0, 1e-6), "n"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------- (ε0, δ0)-DP local randomizers (FMT21 Thm 3.8) in dpcore


def test_local_delta_term_pinned_against_mpmath():
    """(e^0.5 + 1)(1 + e^{−1}/2)·1000·1e-9 = 3.13592632114216602e-6 (mpmath, 30 digits); rounded up."""
    with mpmath.workdps(30):
        exact = (mpmath.exp(0.5) + 1) * (1 + mpmath.exp(-1) / 2) * 1000 * mpmath.mpf("1e-9")
    got = local_delta_term(0.5, 1.0, 1000, 1e-9)
    assert mpmath.mpf(got) >= exact and got == pytest.approx(3.1359263211421660e-6, rel=1e-15)
    assert local_delta_term(0.5, 1.0, 1000, 0.0) == 0.0


def test_shuffled_event_delta0_defaults_to_zero_and_is_validated():
    assert ShuffledEvent(1.0, 100).delta0 == 0.0 == ShuffledEvent(1.0, 100, "replace_one").delta0
    for bad in (-1e-9, 1.0, NAN, math.inf, "x"):
        with pytest.raises(ValueError, match="delta0"):
            ShuffledEvent(1.0, 100, delta0=bad)


def test_pure_event_unchanged_by_the_delta0_field():
    res = dpcore.get_epsilon(ShuffledEvent(1.0, 1000, delta0=0.0), 1e-6, accountant="shuffle")
    assert res.epsilon == shuffle_epsilon(1.0, 1000, 1e-6) and "delta0" not in res.details


def test_delta0_event_pinned_and_between_the_pure_and_the_crude_split():
    """ε for n = 1000 (1, 1e-10)-DP reports at δ = 1e-6: 0.185887975 (pinned, Brent tol 1e-10). It lies
    between the pure-report ε at δ (0.182412) and the ε of the crude split δ − term(ε0) (0.189029), and
    the verified pair (δ_upper(ε) + term(ε) ≤ δ) is what the result reports."""
    ev = ShuffledEvent(1.0, 1000, delta0=1e-10)
    res = dpcore.get_epsilon(ev, 1e-6, accountant="shuffle")
    assert res.epsilon == pytest.approx(0.18588797496713713, rel=1e-8)
    assert shuffle_epsilon(1.0, 1000, 1e-6) < res.epsilon
    assert res.epsilon <= shuffle_epsilon(1.0, 1000, 1e-6 - local_delta_term(1.0, 1.0, 1000, 1e-10))
    d = res.details
    assert d["local_delta_term"] == local_delta_term(res.epsilon, 1.0, 1000, 1e-10)
    assert shuffle_delta(1.0, 1000, res.epsilon) <= d["delta_shuffle"]
    assert d["delta_shuffle"] + d["local_delta_term"] <= 1e-6 and res.delta == 1e-6
    assert shuffle_delta(1.0, 1000, res.epsilon, 1e-10) <= 1e-6  # the δ(ε) direction agrees
    assert dpcore.get_delta(ev, res.epsilon, accountant="shuffle").delta == shuffle_delta(1.0, 1000, res.epsilon,
                                                                                         1e-10)
    assert dpcore.get_epsilon(ev, 1e-6).epsilon == res.epsilon  # auto picks the shuffle accountant


@pytest.mark.parametrize("eps0,n,delta0,delta", [(1.0, 12, 1e-4, 0.05), (2.0, 60, 1e-6, 1e-3)])
def test_delta0_epsilon_is_valid_against_the_exact_clone_pair(eps0, n, delta0, delta):
    """Independent route: the exact clone-pair δ (mpmath, 40 digits) plus the term at 40 digits is ≤ δ at
    the reported ε."""
    eps = dpcore.get_epsilon(ShuffledEvent(eps0, n, delta0=delta0), delta, accountant="shuffle").epsilon
    with mpmath.workdps(40):
        term = (mpmath.exp(mpmath.mpf(eps)) + 1) * (1 + mpmath.exp(-mpmath.mpf(eps0)) / 2) * n * mpmath.mpf(delta0)
        assert exact_clone_delta(eps0, n, eps) + term <= delta


def test_delta0_beyond_the_amplification_bound():
    """Term(ε0) ≥ δ: no amplification certified, but one changed report is (ε0, δ0)-DP (post-processing),
    so δ0 ≤ δ gives ε = ε0; δ0 > δ is refused. Same for δ(ε ≥ ε0) = δ0, and no overflow at ε0 > 700."""
    res = dpcore.get_epsilon(ShuffledEvent(1.0, 1000, delta0=1e-8), 1e-6, accountant="shuffle")
    assert res.epsilon == 1.0 and res.details["local_delta_term"] == 1e-8 and res.details["delta_shuffle"] == 0.0
    assert shuffle_delta(1.0, 1000, 1.0, 1e-8) == 1e-8 and shuffle_delta(1.0, 1000, 1.0) == 0.0
    assert dpcore.get_epsilon(ShuffledEvent(800.0, 100, delta0=1e-9), 1e-6, accountant="shuffle").epsilon == 800.0
    assert local_delta_term(800.0, 1.0, 10, 1e-9) == math.inf and shuffle_delta(801.0, 100, 800.0, 1e-9) == 1.0
    with pytest.raises(UnsupportedEventError, match="delta0"):
        dpcore.get_epsilon(ShuffledEvent(1.0, 1000, delta0=1e-5), 1e-6, accountant="shuffle")


@pytest.mark.parametrize("call", [
    lambda: shuffle_epsilon(1.0, 10**400, 1e-5, method="closed_form"),  # were OverflowError
    lambda: shuffle_epsilon(1.0, 10**400, 1e-5),
    lambda: ShuffledEvent(1.0, 10**400),
])
def test_shuffle_population_beyond_range_names_n(call):
    with pytest.raises(ValueError, match=r"^n must be an integer in \[2, 1e\+30\]; got an integer of 401 digits"):
        call()
