"""Numba sampling kernels that solvers call from inside compiled loops.

Every kernel takes the caller's ``numpy.random.Generator`` as its first argument ``rng`` and draws
from it (Numba compiles ``Generator`` methods to the same bit-generator calls as NumPy, so a kernel
advances the caller's stream and, where it uses the same algorithm as the NumPy path, returns exactly
NumPy's draws, e.g. ``gaussian_noise_kernel(rng, d, sigma)`` equals ``rng.normal(0, sigma, d)``).
A solver passes its Generator straight in, so its compiled run is reproducible from the seed.
The kernels perform no validation (they sit in hot loops); the validating Python API is the
mechanism classes, whose NumPy path draws from the same distributions (tested by two-sample
Kolmogorov–Smirnov tests in ``tests/mechanisms``).

The noise kernels return a new float64 array of length ``d``; the randomized-response kernel takes
the reports instead of ``d``. The exponential mechanism has no kernel: its exact sampler
(:class:`mechanisms.ExponentialMechanism`) resolves rare close calls in exact arithmetic.
"""

from __future__ import annotations

import numpy as np

from dpcore._jit import jit

__all__ = [
    "gaussian_noise_kernel",
    "laplace_noise_kernel",
    "l2_laplace_noise_kernel",
    "generalized_gaussian_noise_kernel",
    "lp_direction_kernel",
    "randomized_response_kernel",
]


@jit
def gaussian_noise_kernel(rng: np.random.Generator, d: int, sigma: float) -> np.ndarray:
    """d i.i.d. N(0, σ²) draws (σ in the units of the query)."""
    return rng.normal(0.0, sigma, d)


@jit
def laplace_noise_kernel(rng: np.random.Generator, d: int, scale: float) -> np.ndarray:
    """d i.i.d. Laplace(0, b) draws, density exp(−|x|/b)/(2b)."""
    return rng.laplace(0.0, scale, d)


@jit
def l2_laplace_noise_kernel(rng: np.random.Generator, d: int, scale: float) -> np.ndarray:
    """One draw of density ∝ exp(−‖b‖₂/scale) in ℝ^d (Gamma-norm / "ℓ2-Laplace" noise).

    Exact: a uniform direction on the Euclidean sphere (a normalised standard normal vector) times
    an independent radius ~ Gamma(shape=d, scale) (Zhang et al. 2017, Alg. 1 line 5; Chaudhuri,
    Monteleoni, Sarwate 2011).
    """
    z = rng.normal(0.0, 1.0, d)
    norm = np.sqrt(np.sum(z * z))
    while norm == 0.0:  # probability zero event; redraw rather than divide by zero
        z = rng.normal(0.0, 1.0, d)
        norm = np.sqrt(np.sum(z * z))
    return z * (rng.gamma(float(d), scale) / norm)


@jit
def lp_direction_kernel(rng: np.random.Generator, d: int, p: float) -> np.ndarray:
    """One direction θ with ‖θ‖_p = 1, distributed by the cone measure of the unit ℓp sphere.

    θ = g / ‖g‖_p with g_i i.i.d. of density ∝ exp(−|t|^p) (Schechtman & Zinn 1990; Barthe,
    Guédon, Mendelson, Naor 2005). |g_i| = G^{1/p} U with G ~ Gamma(1 + 1/p), U ~ Uniform(0, 1),
    which equals Gamma(1/p)^{1/p} in law and does not underflow for large p; p = ∞ gives uniform
    coordinates (the cube).
    """
    g = np.empty(d)
    inf_p = np.isinf(p)
    for i in range(d):
        mag = rng.random()
        if not inf_p:
            mag *= rng.gamma(1.0 + 1.0 / p, 1.0) ** (1.0 / p)
        g[i] = mag if rng.random() < 0.5 else -mag
    m = np.max(np.abs(g))
    if m == 0.0:  # probability zero; fall back to a random vertex direction
        g[0] = 1.0
        m = 1.0
    if inf_p:
        return g / m
    s = 0.0
    for i in range(d):
        s += (abs(g[i]) / m) ** p
    return g / (m * s ** (1.0 / p))


@jit
def generalized_gaussian_noise_kernel(rng: np.random.Generator, d: int, p: float, sigma: float) -> np.ndarray:
    """One draw of density ∝ exp(−‖z‖_p² / (2σ²)) in ℝ^d, p ∈ [1, ∞].

    Exact radius × direction decomposition: the direction is :func:`lp_direction_kernel` and the
    radius R = ‖z‖_p has density ∝ r^{d−1} exp(−r²/(2σ²)), i.e. R = σ·sqrt(2·Gamma(d/2))
    (the GG distribution of Bassily, Guzmán, Nandi 2021, Def. 4 in Su, Zhao, Wang). O(d) work.
    """
    radius = sigma * np.sqrt(2.0 * rng.gamma(0.5 * d, 1.0))
    return radius * lp_direction_kernel(rng, d, p)


@jit
def randomized_response_kernel(rng: np.random.Generator, x: np.ndarray, k: int, q_high: int, q_low: int) -> np.ndarray:
    """k-ary randomized response of int64 reports ``x`` in {0, …, k−1}.

    With probability Q/2¹⁰⁶, Q = ``q_high``·2⁵³ + ``q_low``, a report is replaced by a uniform draw
    from all k values, else kept (the exact mixture of :class:`mechanisms.RandomizedResponse`; the
    106-bit uniform is two 53-bit draws compared lexicographically).
    """
    out = np.empty_like(x)
    for i in range(x.size):
        high = rng.integers(0, 2**53)
        low = rng.integers(0, 2**53)
        if high < q_high or (high == q_high and low < q_low):
            out[i] = rng.integers(0, k)
        else:
            out[i] = x[i]
    return out
