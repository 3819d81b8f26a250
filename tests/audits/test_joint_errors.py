"""The exact joint test behind the threshold estimators (audits.joint_errors).

Validity is checked exactly, not by simulation: for small n every outcome (x, y) is enumerated and
the probability of rejecting a true null is summed under the least favourable alternative c = c_θ(a).
"""

import math

import numpy as np
import pytest
from scipy import stats

from audits.joint_errors import NUISANCE_SHARE, JointTest, dp_tpr_bound, gdp_tpr_bound
from audits.statistics import clopper_pearson_upper, epsilon_from_error_rates, gdp_mu_from_error_rates

ALPHA = 0.05
GAMMA = NUISANCE_SHARE * ALPHA


def _exact_rejection_probability(n0, n1, a, c, kind, delta, bound):
    px = stats.binom.pmf(np.arange(n0 + 1), n0, a)
    py = stats.binom.pmf(np.arange(n1 + 1), n1, c)
    total = 0.0
    for x in range(n0 + 1):
        if px[x] < 1e-12:
            continue
        for y in range(n1 + 1):
            if py[y] >= 1e-12 and JointTest(x, n0, y, n1, kind, delta, GAMMA).rejects(bound, ALPHA):
                total += px[x] * py[y]
    return total


@pytest.mark.parametrize("kind,theta,a", [("gdp", 1.0, 0.3), ("gdp", 0.5, 0.1), ("dp", 1.0, 0.15), ("dp", 0.5, 0.4)])
def test_size_is_at_most_alpha_exactly(kind, theta, a):
    # Least favourable point of H0(θ): TPR = c_θ(FPR). Neglected outcomes have mass < 1e-9.
    n = 24
    bound = gdp_tpr_bound(theta) if kind == "gdp" else dp_tpr_bound(theta, 1e-5)
    c = float(bound(np.array([a]))[0])
    assert _exact_rejection_probability(n, n, a, c, kind, 1e-5, bound) <= ALPHA


def test_power_against_a_false_null_and_monotone_p_values():
    # Under μ = 2 the null μ ≤ 0.5 is rejected often at n = 24 (exact rejection probability).
    n, a = 24, 0.2
    c_true = float(gdp_tpr_bound(2.0)(np.array([a]))[0])
    assert _exact_rejection_probability(n, n, a, c_true, "gdp", 1e-5, gdp_tpr_bound(0.5)) > 0.5
    test = JointTest(200, 10_000, 500, 10_000, "dp", 1e-5, GAMMA)
    ps = [test.p_value(dp_tpr_bound(e, 1e-5)) for e in (0.0, 0.5, 0.8, 1.2)]
    assert ps == sorted(ps) and ps[0] < ALPHA < ps[-1]


@pytest.mark.parametrize("x,y,n", [(111, 246, 80_000), (2000, 4000, 80_000), (40, 120, 20_000)])
def test_joint_bound_is_tighter_than_the_union_bound(x, y, n):
    # Union bound: Clopper–Pearson on FPR and on FNR at α/2 each (the rectangle region).
    test = JointTest(x, n, y, n, "dp", 1e-5, GAMMA)
    joint = test.lower_bound(lambda e: dp_tpr_bound(e, 1e-5), ALPHA)
    fpr, fnr = clopper_pearson_upper(x, n, ALPHA / 2), clopper_pearson_upper(n - y, n, ALPHA / 2)
    union = float(epsilon_from_error_rates(fpr, fnr, 1e-5))
    assert joint > union and joint < math.log(y / x)
    gtest = JointTest(x, n, y, n, "gdp", 1e-5, GAMMA)
    assert gtest.lower_bound(gdp_tpr_bound, ALPHA) > float(gdp_mu_from_error_rates(fpr, fnr))


def test_no_evidence_gives_zero():
    test = JointTest(500, 1000, 480, 1000, "dp", 1e-5, GAMMA)
    assert test.lower_bound(lambda e: dp_tpr_bound(e, 1e-5), ALPHA) == 0.0
    assert JointTest(0, 1000, 0, 1000, "dp", 1e-5, GAMMA).lower_bound(lambda e: dp_tpr_bound(e, 1e-5), ALPHA) == 0.0
