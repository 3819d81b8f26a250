"""Numba kernels: same distribution as the NumPy path (the same draws where the algorithm is the same),
reproducible from the caller's ``numpy.random.Generator``.

Two-sample Kolmogorov–Smirnov tests at level ALPHA = 1e-3 (false-alarm rate per assertion over
random seeds); fixed seeds make them deterministic.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpcore._jit import jit
from mechanisms import Gaussian, GeneralizedGaussian, L2Laplace, Laplace, RandomizedResponse, kernels

ALPHA = 1e-3
REPS = 4_000


@jit
def _draw_many(rng, reps, d, p, sigma):
    """Calls the GG kernel with the caller's Generator from inside compiled code, as a solver does."""
    out = np.empty((reps, d))
    for i in range(reps):
        out[i] = kernels.generalized_gaussian_noise_kernel(rng, d, p, sigma)
    return out


def _kernel_draws(mech, reps, d, seed):
    rng = np.random.default_rng(seed)
    return np.stack([mech.kernel(rng, d, *mech.kernel_args()) for _ in range(reps)])


def _lp_norm(z, p):
    return np.max(np.abs(z), axis=-1) if math.isinf(p) else np.sum(np.abs(z) ** p, axis=-1) ** (1 / p)


CASES = [
    (Gaussian(sigma=1.3), 3, 2.0),
    (Laplace(scale=0.7), 3, 1.0),
    (L2Laplace(scale=1.1), 4, 2.0),
    (GeneralizedGaussian(p=3.0, sigma=0.9, dimension=6), 6, 3.0),
    (GeneralizedGaussian(p=1.0, sigma=0.9, dimension=6), 6, 1.0),
    (GeneralizedGaussian(p=math.inf, sigma=0.9, dimension=6), 6, math.inf),
]


@pytest.mark.parametrize("mech, d, p", CASES, ids=["gaussian", "laplace", "l2laplace", "gg3", "gg1", "gginf"])
def test_kernel_and_numpy_path_have_same_law(mech, d, p):
    compiled = _kernel_draws(mech, REPS, d, seed=2024)
    numpy_path = mech.randomize(np.zeros((REPS, d)), rng=2024)
    assert stats.ks_2samp(compiled[:, 0], numpy_path[:, 0]).pvalue > ALPHA
    assert stats.ks_2samp(_lp_norm(compiled, p), _lp_norm(numpy_path, p)).pvalue > ALPHA


@pytest.mark.parametrize("mech, d, p", CASES[:4], ids=["gaussian", "laplace", "l2laplace", "gg3"])
def test_kernels_are_reproducible_from_a_seed(mech, d, p):
    seed = int(np.random.default_rng(7).integers(2**63))
    a = _kernel_draws(mech, 5, d, seed)
    b = _kernel_draws(mech, 5, d, seed)
    c = _kernel_draws(mech, 5, d, seed + 1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(mech.randomize(np.zeros(d), rng=11), mech.randomize(np.zeros(d), rng=11))


def test_kernels_reproduce_numpy_streams():
    """Where a kernel uses NumPy's algorithm it returns exactly NumPy's draws from the same Generator,
    and it advances the caller's Generator (the next draw continues the same stream)."""
    rng, ref = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(kernels.gaussian_noise_kernel(rng, 7, 1.7), ref.normal(0.0, 1.7, 7))
    np.testing.assert_array_equal(kernels.laplace_noise_kernel(rng, 7, 0.4), ref.laplace(0.0, 0.4, 7))
    assert rng.random() == ref.random()


def test_kernel_callable_inside_compiled_loop():
    mech = GeneralizedGaussian(p=3.0, sigma=0.5, dimension=8)
    inside = _draw_many(np.random.default_rng(99), 50, 8, 3.0, 0.5)
    outside = _kernel_draws(mech, 50, 8, 99)
    np.testing.assert_array_equal(inside, outside)


def test_generalized_gaussian_kernel_high_dimension_norm():
    # d = 10 000: ‖z‖_p² / (2σ²) ~ Gamma(d/2) (radius law), checked by KS on 300 draws.
    d, sigma, p = 10_000, 2.0, 3.0
    rng = np.random.default_rng(5)
    r = np.array([_lp_norm(kernels.generalized_gaussian_noise_kernel(rng, d, p, sigma), p) for _ in range(300)])
    assert stats.kstest(r**2 / (2 * sigma**2), stats.gamma(a=d / 2).cdf).pvalue > ALPHA


def test_randomized_response_kernel_matches_numpy_path():
    # Chi-square homogeneity test of the two output histograms, level ALPHA.
    rr = RandomizedResponse(0.8, k=4)
    x = np.repeat(np.arange(4), 2_500).astype(np.int64)
    compiled = rr.kernel(np.random.default_rng(31), x, *rr.kernel_args())
    numpy_path = rr.randomize(x, rng=31)
    table = np.array([[np.sum((compiled == y) & (x == v)) for y in range(4) for v in range(4)],
                      [np.sum((numpy_path == y) & (x == v)) for y in range(4) for v in range(4)]])
    assert stats.chi2_contingency(table).pvalue > ALPHA
    np.testing.assert_array_equal(compiled, rr.kernel(np.random.default_rng(31), x, *rr.kernel_args()))

