"""Privacy at extreme parameters and values (issue 12 item 2, issue 13 item 6).

For every mechanism whose sampler has exactly known probabilities (randomized response, the
exponential mechanism, the secure Laplace lattice, the discrete Laplace) the realised ε is computed
independently — in mpmath or exact rationals, from the integers the sampler actually uses — and
checked against the claim over the whole parameter range (hypothesis). Every release must succeed
for every value of the documented domain: no exception, NaN or saturation depends on the data.
Statistical tests use fixed seeds; each has false-alarm rate ALPHA = 1e-3 under a correct sampler.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    GeneralizedGaussian,
    L2Laplace,
    Laplace,
    RandomizedResponse,
)
from mechanisms.exact_sampling import uniform_below_exp

ALPHA = 1e-3
_R = 2**106  # randomized response mixes with probability Q / 2¹⁰⁶

positive_epsilon = st.floats(1e-300, 1e300, allow_nan=False, allow_infinity=False)


def _rr_realised(rr: RandomizedResponse) -> mpmath.mpf:
    """max_y log P[y | x]/P[y | x′] from the integers the sampler uses (kernel_args), in mpmath."""
    k, q_high, q_low = rr.kernel_args()
    q = q_high * 2**53 + q_low
    assert 1 <= q <= _R
    with mpmath.workprec(400):
        other = mpmath.mpf(q) / (k * _R)  # P[y = y′ ≠ x]
        keep = mpmath.mpf(_R - q) / _R + other  # P[y = x]
        return mpmath.log(keep / other)


# ------------------------------------------------------------------------ randomized response
@settings(max_examples=300, deadline=None)
@given(epsilon=positive_epsilon, k=st.integers(2, 2**62))
def test_randomized_response_realised_epsilon_never_exceeds_the_claim(epsilon, k):
    rr = RandomizedResponse(epsilon, k)
    realised = _rr_realised(rr)
    assert 0 <= realised <= mpmath.mpf(epsilon)
    assert realised <= rr.realised_epsilon <= epsilon


@settings(max_examples=200, deadline=None)
@given(epsilon=st.floats(1e-6, 30.0), k=st.integers(2, 2**40))
def test_randomized_response_realised_epsilon_is_close_to_the_claim(epsilon, k):
    # 106 bits of resolution: no utility is given away in the practical range.
    assert _rr_realised(RandomizedResponse(epsilon, k)) >= epsilon * (1 - 1e-9)


@pytest.mark.parametrize("epsilon, k", [(1.0, 2**55), (1.0, 2**50), (1e-17, 3), (1.0, 2**62), (800.0, 2)])
def test_randomized_response_issue_cases(epsilon, k):
    rr = RandomizedResponse(epsilon, k)
    realised = _rr_realised(rr)
    assert realised <= epsilon
    if epsilon <= 1.0:  # the reported value is favoured and the claim is met to ~1e-13
        assert rr.mixing_probability < 1  # P[y = x] > P[y = y′]: exact rationals
        assert realised >= epsilon * (1 - 1e-12)


def test_randomized_response_huge_k_keeps_the_true_report():
    # k = 2⁵⁵ used to have keep probability 0: the output never equalled the input (ε = ∞).
    rr = RandomizedResponse(1.0, k=2**55)
    x = np.full(4_000, 2**54 + 12345, dtype=np.int64)
    y = rr.randomize(x, rng=3)
    p = rr.keep_probability  # ≈ e/(e + 2⁵⁵) ≈ 7.5e-17: the true report practically never survives
    assert p > 0 and np.all((y >= 0) & (y < 2**55)) and len(np.unique(y)) == y.size
    assert rr.randomize(np.int64(2**55 - 1), rng=1).shape == ()


def test_randomized_response_large_integer_reports_are_exact():
    # Reports above 2⁵³ must not be rounded through float64 (2⁶⁰ + 1 is not a float).
    rr = RandomizedResponse(60.0, k=2**61)  # keep probability ≈ 1 − 2e-8
    x = np.full(50, 2**60 + 1, dtype=np.int64)
    assert np.sum(rr.randomize(x, rng=0) == 2**60 + 1) >= 49
    assert np.sum(rr.kernel(np.random.default_rng(0), x, *rr.kernel_args()) == 2**60 + 1) >= 49


def test_randomized_response_refuses_k_beyond_its_domain():
    with pytest.raises(ValueError, match="k"):
        RandomizedResponse(1.0, k=2**62 + 1)


# ------------------------------------------------------------------------ exponential mechanism
@settings(max_examples=200, deadline=None)
@given(epsilon=st.floats(1e-150, 1e150), sensitivity=st.floats(1e-150, 1e150), monotone=st.booleans())
def test_exponential_mechanism_realised_epsilon_never_exceeds_the_claim(epsilon, sensitivity, monotone):
    em = ExponentialMechanism(epsilon, sensitivity, monotone)
    # The sampler's law is ∝ exp(f·u) exactly, f = em._factor; neighbours move every u by ≤ Δu, so
    # log-probabilities move by ≤ 2fΔu (fΔu when monotone).
    realised = Fraction(em._factor) * Fraction(sensitivity) * (1 if monotone else 2)
    assert realised == em.realised_epsilon <= Fraction(epsilon)
    assert realised >= Fraction(epsilon) * (1 - Fraction(1, 2**51))  # f is the float just below


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(a=finite, b=finite, epsilon=st.floats(1e-200, 1e200), sensitivity=st.floats(1e-200, 1e200))
def test_exponential_acceptance_bounds_are_rigorous(a, b, epsilon, sensitivity):
    try:
        em = ExponentialMechanism(epsilon, sensitivity)
    except ValueError:  # f outside [2⁻¹⁰⁷³, 2¹⁰²¹]: refused on public parameters
        return
    top, u = max(a, b), min(a, b)
    p_low, p_high = em.acceptance_bounds(np.array([top]), np.array([u]))
    gamma = (Fraction(top) - Fraction(u)) * Fraction(em._factor)
    with mpmath.workprec(64 + max(0, gamma.numerator.bit_length() - gamma.denominator.bit_length())):
        exact = mpmath.exp(-mpmath.mpf(gamma.numerator) / gamma.denominator)
        assert p_low[0] <= exact <= p_high[0]


@pytest.mark.parametrize("gamma", [Fraction(3, 10), Fraction(75, 2), Fraction(1000)])
def test_uniform_below_exp_is_exact_in_the_far_tail(gamma):
    # Given U's first b bits are all 0, P[U < e^{−γ}] = e^{−γ}·2^b; b = ⌊γ/ln 2⌋ puts it in (1/2, 1],
    # so the far tail (γ = 1000: e^{−γ} ≈ 1e-434) is tested at a measurable rate. Binomial, ALPHA.
    b = math.floor(gamma / math.log(2))
    p = float(mpmath.exp(-mpmath.mpf(gamma.numerator) / gamma.denominator + b * mpmath.log(2)))
    gen = np.random.default_rng(int(gamma * 10))
    n = 1_000
    hits = sum(uniform_below_exp(gen, gamma, 0, b) for _ in range(n))
    assert stats.binomtest(hits, n, p).pvalue > ALPHA
    assert uniform_below_exp(gen, Fraction(0), 2**53 - 1, 53)  # e^0 = 1 > U always


class _ZeroGenerator(np.random.Generator):
    """A Generator whose integers and bytes are all zero: the proposal is candidate 0, U = 0."""

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return np.zeros(size, dtype=np.int64) if size is not None else 0

    def bytes(self, length):
        return bytes(length)


@pytest.mark.parametrize("gap", [45.0, 1000.0])
def test_exponential_mechanism_can_select_a_candidate_far_below_the_best(gap):
    # Gumbel-max with 53-bit uniforms never picks a candidate > ~40 nats below the best
    # (probability 0 on one dataset, positive on a neighbour: ε = ∞). The exact sampler accepts
    # candidate 0 on the all-zero random stream (U = 0 < e^{−γ} for every finite γ).
    em = ExponentialMechanism(2.0, sensitivity=1.0)  # f = 1: the gap is in nats
    assert em.randomize(np.array([-gap, 0.0]), rng=_ZeroGenerator(np.random.PCG64(0))) == 0


@pytest.mark.parametrize("monotone", [False, True])
def test_exponential_mechanism_matches_softmax_with_a_far_candidate(monotone):
    # Chi-square over [best, mid, rest]; the far candidate (60 nats below) has probability ~1e-26.
    u = np.array([0.0, -1.0, -60.0, -0.5]) * (1.0 if monotone else 2.0)
    em = ExponentialMechanism(1.0, 1.0, monotone)
    n = 40_000
    picks = em.randomize(np.broadcast_to(u, (n, 4)), rng=17)
    p = em.probabilities(u)
    assert p[2] < 1e-25
    counts = np.bincount(picks, minlength=4)
    assert stats.chisquare(counts[[0, 1, 3]], p[[0, 1, 3]] / p[[0, 1, 3]].sum() * n).pvalue > ALPHA


def test_exponential_mechanism_extreme_utilities():
    em = ExponentialMechanism(1.0)
    u = np.array([1.7e308, -1.7e308, 5.0, 1.7e308])
    picks = em.randomize(np.broadcast_to(u, (2_000, 4)), rng=5)
    assert set(np.unique(picks)) == {0, 3}
    assert np.all(np.isfinite(em.probabilities(u)))


def test_exponential_mechanism_refuses_factors_beyond_float_range():
    with pytest.raises(ValueError, match="epsilon"):
        ExponentialMechanism(1e300, sensitivity=1e-300)
    with pytest.raises(ValueError, match="sensitivity"):
        ExponentialMechanism(5e-324, sensitivity=1e300)


# ------------------------------------------------------------------------ secure Laplace
@settings(max_examples=80, deadline=None)
@given(value=finite, sensitivity=st.floats(1e-300, 1e300), scale=st.floats(1e-300, 2.0**983))
def test_secure_laplace_succeeds_for_every_finite_value(value, sensitivity, scale):
    mech = Laplace(scale, sensitivity)
    try:
        g = mech.granularity(2)
    except ValueError:  # sensitivity·2⁻²⁰/d below 2⁻¹⁰⁷⁴: refused on public parameters
        return
    out = mech.randomize(np.array([value, -value]), rng=0)
    assert out.shape == (2,) and not np.any(np.isnan(out))
    on_lattice = [(Fraction(float(y)) / Fraction(g)).denominator == 1 for y in out[np.isfinite(out)]]
    assert all(on_lattice)


def test_secure_laplace_across_the_old_2_53_threshold():
    # Neighbours on both sides of 2⁵³·g (the old data-dependent ValueError) are both released, and
    # their lattice indices differ by the exact shift.
    mech = Laplace(1.0, sensitivity=1.0)
    g = mech.granularity(1)
    below, above = 2.0**53 * g - 0.5, 2.0**53 * g + 0.5
    for v in (below, above, 1e300, -1.7976931348623157e308):
        out = mech.randomize(v, rng=1)
        assert out.shape == () and not np.isnan(out)
    a, b = mech.randomize(np.full(4, below), rng=2), mech.randomize(np.full(4, above), rng=2)
    idx_a = np.array([int(Fraction(float(y)) / Fraction(g)) for y in a], dtype=object)
    idx_b = np.array([int(Fraction(float(y)) / Fraction(g)) for y in b], dtype=object)
    assert np.all(idx_b - idx_a == round(Fraction(above) / Fraction(g)) - round(Fraction(below) / Fraction(g)))


def test_discrete_mechanisms_add_exactly_at_the_int64_limit():
    # np.abs(int64(-2**63)) wraps negative: the exact (Python-integer) path must still be taken
    for mech in (DiscreteLaplace(1.0), DiscreteGaussian(1.0)):
        out = mech.randomize(np.array([-(2**63)] * 20), rng=1)
        assert out.dtype == object and all(abs(int(v) + 2**63) < 100 for v in out)


def test_secure_laplace_overflow_is_post_processing_to_inf():
    mech = Laplace(1e295, sensitivity=1e295)
    out = mech.randomize(np.full(2_000, 1.7976931348623157e308), rng=3)
    assert not np.isnan(out).any() and np.any(np.isinf(out)) and np.any(np.isfinite(out))


# ------------------------------------------------------------------------ discrete mechanisms
@settings(max_examples=100, deadline=None)
@given(epsilon=st.floats(1e-6, 1e6), sensitivity=st.integers(1, 2**80))
@example(epsilon=1.0, sensitivity=10**16 + 1)  # float(Δ) rounded down: the calibrated ε was 1 + 2⁻⁵²
def test_discrete_laplace_realised_epsilon_never_exceeds_the_claim(epsilon, sensitivity):
    mech = DiscreteLaplace.calibrate(epsilon, sensitivity=sensitivity)
    realised = Fraction(sensitivity) / Fraction(mech.scale)  # the sampler uses Fraction(scale) exactly
    assert realised <= Fraction(mech.pure_epsilon) and mech.pure_epsilon <= epsilon


@pytest.mark.parametrize("value", [2**52 + 1, 2**62, -(2**62) - 7, 2**70 + 3, 1e300, np.uint64(2**63 + 5)])
@pytest.mark.parametrize("mech", [DiscreteLaplace(2.0), DiscreteGaussian(2.0)], ids=["laplace", "gaussian"])
def test_discrete_mechanisms_release_integers_of_any_magnitude(mech, value):
    # |value| > 2⁵² used to raise (a data-dependent ValueError); the sum is now exact.
    out = mech.randomize(np.array([value, value]), rng=4)
    exact = int(value) if not isinstance(value, float) else int(value)
    noise = [int(y) - exact for y in out]
    assert all(abs(z) < 100 for z in noise)


# ------------------------------------------------------------------------ float samplers
FLOAT_SAMPLERS = [
    Gaussian(1.0),
    Laplace(1.0, secure=False),
    L2Laplace(1.0),
    GeneralizedGaussian(p=3.0, sigma=1.0, dimension=1),
]


@pytest.mark.parametrize("mech", FLOAT_SAMPLERS, ids=["gaussian", "laplace-float", "l2-laplace", "gg"])
def test_float_samplers_never_release_the_value_unchanged(mech):
    # Gaussian.randomize([1e308]) used to return exactly 1e308 (the noise rounded away). Values are
    # clamped to the public ±value_bound, so neighbours beyond it get the same output law.
    for v in (1e308, -1e308, 2.0**60):
        out = mech.randomize(np.full(50, v)[:, None] if mech.__class__ is GeneralizedGaussian else np.full(50, v),
                             rng=9).ravel()
        assert np.all(np.isfinite(out)) and np.all(out != v) and len(np.unique(out)) == 50
        assert np.all(np.abs(np.abs(out) - mech.value_bound) < 100.0)
    a = mech.randomize(np.full((5, 1), 1e308), rng=2)
    b = mech.randomize(np.full((5, 1), math.nextafter(1e308, 0.0)), rng=2)
    assert np.array_equal(a, b)


@settings(max_examples=100, deadline=None)
@given(scale=st.floats(1e-300, 2.0**983))
def test_float_sampler_value_bound_leaves_the_noise_resolvable(scale):
    for mech in (Gaussian(scale), Laplace(scale, secure=False), L2Laplace(scale)):
        assert math.ulp(mech.value_bound) <= 2.0**-12 * scale


@pytest.mark.parametrize("make, name", [(lambda: Gaussian(2.0**984), "sigma"), (lambda: L2Laplace(1e300), "scale"),
                                        (lambda: Laplace(1e300), "scale")])
def test_noise_scales_beyond_the_float_range_are_refused(make, name):
    with pytest.raises(ValueError, match=name):
        make()
