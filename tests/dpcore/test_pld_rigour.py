"""The two numerical error bounds of the PLD accountant hold where the errors are observable.

* Quadrature of the bin masses (dpcore.pld.discretize._quadrature_error, Trefethen 2008 Thm 4.5):
  on panels wide enough for Gauss–Legendre to make a visible error, the bound is at least the
  actual error, computed against exact mpmath distribution-function differences.
* FFT convolution (dpcore.pld.pmf._convolve, Higham Thm 24.2 for radix-2 FFTs): the FFT length is
  a power of two and every entry of the float64 result is within the returned bound of the exact
  rational convolution. (The characteristic-function composition's bounds: test_pld_charfn.py.)
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpcore.pld.discretize import _quadrature_error
from dpcore.pld.losses import gaussian_model, laplace_model
from dpcore.pld.pmf import _convolve


def _gl(f, c, w, n):
    x, wt = np.polynomial.legendre.leggauss(n)
    return mpmath.fsum(mpmath.mpf(float(wi)) * w * f(c + w * mpmath.mpf(float(xi))) for xi, wi in zip(x, wt))


@pytest.mark.parametrize("model,which", [(gaussian_model(1.0), 0), (gaussian_model(0.7).subsample(0.3), 0),
                                         (gaussian_model(0.7).subsample(0.3).reverse(), 0), (laplace_model(1.0), 0)])
@pytest.mark.parametrize("half", [0.1, 0.25, 0.5])
@pytest.mark.parametrize("nodes", [3, 8])
def test_quadrature_bound_covers_the_gauss_legendre_error(model, which, half, nodes):
    piece = model.pieces[which]
    centers = np.array([0.5, 1.7]) if math.isfinite(piece.hi - piece.lo) else np.array([-2.0, 0.3, 1.0, 3.5])
    centers = centers if piece.hi - piece.lo > 1.0 else np.array([0.5])
    half = min(half, 0.5 * (piece.hi - piece.lo))
    a_low = -0.2
    q_mass, q_up = _quadrature_error(piece, centers, np.full(centers.size, half), np.full(centers.size, nodes),
                                     np.full(centers.size, a_low), np.arange(centers.size), centers.size)
    with mpmath.workdps(40):
        for i, c in enumerate(centers):
            c, w = mpmath.mpf(float(c)), mpmath.mpf(half)
            lo, hi = c - w, c + w
            cp_lo, _, cq_lo, _ = piece.mp_tails(lo)
            cp_hi, _, cq_hi, _ = piece.mp_tails(hi)
            exact_p, exact_q = cp_hi - cp_lo, cq_hi - cq_lo  # the pieces' cdfs are in x
            pdf_p = lambda x: mpmath.mpf(float(piece.pdf_p(np.array([float(x)]))[0]))  # noqa: E731
            pdf_q = lambda x: mpmath.mpf(float(piece.pdf_q(np.array([float(x)]))[0]))  # noqa: E731
            err_p = abs(_gl(pdf_p, c, w, nodes) - exact_p)
            err_split = abs(_gl(pdf_p, c, w, nodes) - mpmath.exp(a_low) * _gl(pdf_q, c, w, nodes)
                            - (exact_p - mpmath.exp(a_low) * exact_q))
            # float64 density values, nodes and weights inside the rule: ~1e-16 relative per term
            assert err_p <= q_mass[i] + 1e-15 * exact_p
            assert err_split <= q_up[i] + 1e-15 * (exact_p + mpmath.exp(a_low) * exact_q)


def test_quadrature_bound_is_observable_and_not_vacuous():
    piece = gaussian_model(1.0).pieces[0]
    q_mass, _ = _quadrature_error(piece, np.array([1.0]), np.array([0.5]), np.array([3]), np.array([0.0]),
                                  np.array([0]), 1)
    assert 0 < q_mass[0] < 1e-2  # a real bound on a visible error (3 nodes on a panel of width σ)


@pytest.mark.parametrize("sizes", [(17, 40), (150, 400), (257, 257)])
@pytest.mark.parametrize("same", [False, True])
def test_fft_bound_covers_the_exact_convolution(sizes, same):
    rng = np.random.default_rng(sum(sizes))
    a = rng.random(sizes[0]) ** 8
    a /= a.sum()
    b = a if same else rng.random(sizes[1]) ** 8
    b = b / b.sum()
    c, entry = _convolve(a, b, same=same)
    n = a.size + b.size - 1
    assert c.size == n
    fa = [Fraction(float(x)) for x in a]
    fb = [Fraction(float(x)) for x in b]
    exact = [Fraction(0)] * n
    for i, x in enumerate(fa):
        if x:
            for j, y in enumerate(fb):
                exact[i + j] += x * y
    worst = max(abs(Fraction(float(ci)) - e) for ci, e in zip(c, exact))
    assert worst <= entry
    assert entry < 1e-12  # and it is a usable bound


def test_fft_length_is_a_power_of_two(monkeypatch):
    import dpcore.pld.pmf as pmf

    lengths = []
    real = pmf.sfft.rfft

    def spy(x, n=None, *args, **kw):
        lengths.append(n)
        return real(x, n, *args, **kw)

    monkeypatch.setattr(pmf.sfft, "rfft", spy)
    for n in (3, 100, 1000, 4097):
        _convolve(np.ones(n) / n, np.ones(7) / 7, same=False)
    assert lengths and all(m & (m - 1) == 0 for m in lengths)


def _exact_gl_rule(nodes: int):
    """Gauss–Legendre nodes and weights in mpmath (closed forms), so the rule's own error is visible far
    below float64's resolution."""
    if nodes == 2:
        x = 1 / mpmath.sqrt(3)
        return [-x, x], [mpmath.mpf(1), mpmath.mpf(1)]
    x = mpmath.sqrt(mpmath.mpf(3) / 5)
    return [-x, mpmath.mpf(0), x], [mpmath.mpf(5) / 9, mpmath.mpf(8) / 9, mpmath.mpf(5) / 9]


@pytest.mark.parametrize("nodes", [2, 3])
@pytest.mark.parametrize("offset", [-1.2, 0.0, 3.0, 6.0])
def test_quadrature_bound_holds_on_the_narrowest_panels_each_rule_is_used_for(nodes, offset):
    """At its switch threshold (the widest panel a rule is chosen for) the N-node rule's exact error is
    within the bound; a bound with ρ^{−2N} instead of ρ^{−2(N−1)} fails here by up to 1e4 (review finding)."""
    from dpcore.pld.discretize import _RADIUS, _THRESHOLDS

    piece = gaussian_model(1.0).pieces[0]
    half = _RADIUS * piece.scale / (_THRESHOLDS[nodes] * 1.0001)
    center = 1.0 + offset
    q_mass, _ = _quadrature_error(piece, np.array([center]), np.array([half]), np.array([nodes]), np.array([0.0]),
                                  np.array([0]), 1)
    xs, ws = _exact_gl_rule(nodes)
    with mpmath.workdps(60):
        c, w = mpmath.mpf(center), mpmath.mpf(half)
        quad = mpmath.fsum(wi * w * mpmath.npdf(c + w * xi, 1, 1) for xi, wi in zip(xs, ws))
        exact = mpmath.ncdf(c + w, 1, 1) - mpmath.ncdf(c - w, 1, 1)
        assert abs(quad - exact) <= q_mass[0]
