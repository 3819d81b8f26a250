"""ℓp geometry of Su–Zhao–Wang: κ, r, s; the mirror map's gradient / inverse / strong convexity; the
exact Bregman steps checked against a numerical minimisation of the step objective (SciPy)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize

from algorithms.mirror_maps import (
    bregman_divergence, bregman_step, lp_geometry, lp_norm_kernel, mirror_constraint, mirror_grad_kernel,
    mirror_inverse_kernel, mirror_value, primal_diameter,
)


def test_geometry_constants_follow_the_paper():
    g = lp_geometry(1.5, 100)  # 1/(p−1) = 2 < 2 ln 100
    assert (g.kappa, g.q, g.r, g.s) == pytest.approx((2.0, 3.0, 3.0, 1.5))
    g = lp_geometry(1.01, 10)  # 1/(p−1) = 100 > 2 ln 10: κ capped, s = 1 + 1/(2 ln d)
    assert g.kappa == pytest.approx(2 * math.log(10))
    assert g.r == pytest.approx(1 + 2 * math.log(10))
    assert g.s == pytest.approx(1 + 1 / (2 * math.log(10)))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf, 0.5])
def test_p_outside_1_2_is_refused_naming_p_and_the_range(p):
    with pytest.raises(ValueError, match=r"p must be in \(1, 2\)"):
        lp_geometry(p, 10)


def test_l2_ball_is_refused_for_mirror_steps():
    with pytest.raises(ValueError, match="constraint must be one of"):
        mirror_constraint("l2", 1.0)


@settings(max_examples=40, deadline=None)
@given(st.floats(1.05, 1.95), st.integers(2, 30), st.integers(0, 2**31))
def test_inverse_gradient_inverts_the_gradient(p, d, seed):
    g = lp_geometry(p, d)
    w = np.random.default_rng(seed).normal(size=d)
    th = np.empty(d)
    back = np.empty(d)
    mirror_grad_kernel(w, g.s, g.kappa, th)
    mirror_inverse_kernel(th, g.r, g.kappa, back)
    np.testing.assert_allclose(back, w, rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.floats(1.05, 1.95), st.integers(2, 30), st.integers(0, 2**31))
def test_mirror_map_is_1_strongly_convex_in_the_primal_norm(p, d, seed):
    """D_Φ(w, v) ≥ (m/2)‖w − v‖_p² with m = 1 when s = p (the paper's claim) and m = d^{−2(1/p − 1/s)} ≥ 1/e
    when κ is capped at 2 ln d."""
    g = lp_geometry(p, d)
    m = min(1.0, d ** (-2 * (1 / p - 1 / g.s)))
    assert m >= math.exp(-1) * (1 - 1e-12)
    rng = np.random.default_rng(seed)
    w, v = rng.normal(size=d), rng.normal(size=d)
    assert bregman_divergence(w, v, g) >= 0.5 * m * lp_norm_kernel(w - v, p) ** 2 * (1 - 1e-9)


def test_capped_kappa_breaks_unit_modulus_in_the_primal_norm():
    """The counterexample hypothesis found (p = 1.125, d = 2): with κ = 2 ln d the modulus w.r.t. ‖·‖_p is < 1."""
    g = lp_geometry(1.125, 2)
    w, v = np.array([0.12573022, -0.13210486]), np.array([0.64042265, 0.10490012])
    assert bregman_divergence(w, v, g) < 0.5 * lp_norm_kernel(w - v, 1.125) ** 2


def _scipy_step(theta, g, con, rng):
    """Best of several SciPy solves of min_{w∈C} Φ(w) − ⟨θ, w⟩ (independent route)."""
    d, R = g.d, con.radius
    f = lambda v: mirror_value(v, g) - theta @ v  # noqa: E731
    best = None
    for _ in range(4):
        x0 = rng.normal(size=d) * 0.05
        if con.name == "none":
            res = minimize(f, x0, method="BFGS", options={"gtol": 1e-12})
        elif con.name == "l1":  # split w = a − b, a, b ≥ 0: a smooth, exactly representable problem
            h = lambda z: f(z[:d] - z[d:])  # noqa: E731
            res = minimize(h, np.abs(np.concatenate([x0, -x0])), method="SLSQP", bounds=[(0, None)] * (2 * d),
                           constraints=[{"type": "ineq", "fun": lambda z: R - z.sum()}],
                           options={"ftol": 1e-15, "maxiter": 2000})
            res.x = res.x[:d] - res.x[d:]
        elif con.name == "simplex":
            res = minimize(f, np.full(d, R / d), method="SLSQP", bounds=[(0, None)] * d,
                           constraints=[{"type": "eq", "fun": lambda v: v.sum() - R}],
                           options={"ftol": 1e-15, "maxiter": 2000})
        elif con.name == "linf":
            res = minimize(f, x0, method="L-BFGS-B", bounds=[(-R, R)] * d, options={"ftol": 1e-15, "gtol": 1e-12})
        else:
            res = minimize(f, x0, method="SLSQP",
                           constraints=[{"type": "ineq", "fun": lambda v: R**g.s - np.sum(np.abs(v) ** g.s)}],
                           options={"ftol": 1e-15, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    return best


@pytest.mark.parametrize("p", [1.1, 1.5, 1.9])
@pytest.mark.parametrize("name,radius", [("none", None), ("l1", 0.7), ("simplex", 1.3), ("linf", 0.2), ("lp", 0.5)])
def test_bregman_step_matches_numerical_minimisation(p, name, radius):
    rng = np.random.default_rng(int(100 * p) + len(name))
    g = lp_geometry(p, 6)
    con = mirror_constraint(name, radius)
    for _ in range(3):
        theta = rng.normal(size=6) * 2.0
        w = bregman_step(theta, g, con)
        f = lambda v: mirror_value(v, g) - theta @ v  # noqa: E731
        ref = _scipy_step(theta, g, con, rng)
        # ours is feasible ...
        if name == "l1":
            assert np.abs(w).sum() <= radius * (1 + 1e-12)
        elif name == "simplex":
            assert w.min() >= 0 and abs(w.sum() - radius) <= 1e-12 * radius * 6
        elif name == "linf":
            assert np.abs(w).max() <= radius
        elif name == "lp":
            assert lp_norm_kernel(w, g.s) <= radius * (1 + 1e-12)
        # ... at least as good as SciPy (up to SciPy's own constraint tolerance), and the same point
        assert f(w) <= ref.fun + 1e-7 * (1 + abs(ref.fun))
        np.testing.assert_allclose(w, ref.x, atol=5e-4)


def test_active_l1_step_lands_on_the_sphere_to_rounding():
    g = lp_geometry(1.3, 50)
    con = mirror_constraint("l1", 1.0)
    theta = np.random.default_rng(3).normal(size=50) * 10
    w = bregman_step(theta, g, con)
    assert 1.0 - 1e-12 <= np.abs(w).sum() <= 1.0 + 1e-12


def _full_root_step(theta, g, name, R):
    """An independent route for high d: the KKT root ν of ‖∇Φ*(shrink(θ, ν))‖₁ = R by SciPy's brentq
    on the residual summed over every coordinate (no active set, no dropped terms, libm powers)."""
    v = np.abs(theta) if name == "l1" else theta

    def point(nu):
        u = np.maximum(v - nu, 0.0)
        out = np.empty_like(u)
        mirror_inverse_kernel(u, g.r, g.kappa, out)
        return out

    top = v.max()
    lo, step = (0.0, 0.0) if name == "l1" else (top - 10.0 * (1.0 + abs(top)), 10.0 * (1.0 + abs(top)))
    while name == "simplex" and point(lo).sum() <= R:  # widen until the bracket holds a sign change
        step *= 2.0
        lo = top - step
    if point(lo).sum() <= R:  # ℓ1 only: the unconstrained point is inside the ball
        nu = lo
    else:
        nu = brentq(lambda x: point(x).sum() - R, lo, top, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    w = point(nu)
    return (np.copysign(w, theta) if name == "l1" else w), nu > lo, nu


@pytest.mark.parametrize("name", ["l1", "simplex"])
@pytest.mark.parametrize("d,scale", [(2000, 1.0), (2000, 30.0), (20000, 3.0)])
def test_high_dimensional_step_matches_the_full_root(name, d, scale):
    """Many coordinates, most of them negligible (tⱼ^{r−2} below 2^-60/d, dropped by the kernel) or
    zero: the step still matches the full-sum root to rounding, and lands on the constraint."""
    g = lp_geometry(1.1, d)
    R = 5.0
    rng = np.random.default_rng(d + int(scale))
    w0 = np.zeros(d)
    w0[:5] = 1.0
    gphi = np.empty(d)
    mirror_grad_kernel(w0, g.s, g.kappa, gphi)
    theta = gphi - scale * rng.normal(size=d)
    w = bregman_step(theta, g, mirror_constraint(name, R))
    ref, active, _ = _full_root_step(theta, g, name, R)
    np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-12 * R)
    total = np.abs(w).sum() if name == "l1" else w.sum()
    assert total <= R * (1 + 1e-13)
    if active:
        assert total >= R * (1 - 1e-13)
    if name == "simplex":
        assert w.min() >= 0.0


def _adversarial_theta(family, d, rng, kappa, R):
    """θ's that stress the bracket's start ν₀ = top − κR: a top far above κR (``huge``: ν₀ is often not
    certified in floating point, the simplex doubles a step), a top a hair above κR (``edge``: ν₀ ≈ 0⁺), many ties
    at the top, pure noise cut deep by the ball (``dense``), all values negative (``negative``)."""
    kr = kappa * R
    if family == "dense":
        return 30.0 * rng.normal(size=d)
    if family == "ties":
        theta = rng.normal(size=d)
        theta[: rng.integers(1, d + 1)] = 3.0 * kr * rng.choice([-1.0, 1.0])
        return rng.permutation(theta)
    if family == "huge":
        return kr * 2.0**14 * (1.0 + 1e-6 * rng.random(d)) * rng.choice([-1.0, 1.0], size=d)
    if family == "edge":
        theta = rng.uniform(-1.0, 1.0, size=d) * kr * 0.5
        theta[rng.integers(d)] = kr * (1.0 + rng.choice([2.0**-52, 1e-12, 1e-6, 1e-2]))
        return theta
    return -rng.exponential(size=d) - 0.5  # negative


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(["dense", "ties", "huge", "edge", "negative"]), name=st.sampled_from(["l1", "simplex"]),
       p=st.sampled_from([1.1, 1.5, 1.9]), d=st.integers(2, 300), R=st.floats(0.1, 10.0), seed=st.integers(0, 2**32 - 1))
def test_certified_start_agrees_with_the_full_root(family, name, p, d, R, seed):
    """The step's bracket starts at ν₀ = top − κR (no evaluation below it) when a floating-point check
    proves h(ν₀) > 0: the full-sum root lies above ν₀ whenever ν₀ is proved, and the step equals the
    full-sum (brentq, libm) step on random and adversarial θ's, feasible and on the constraint."""
    g = lp_geometry(p, d)
    theta = _adversarial_theta(family, d, np.random.default_rng(seed), g.kappa, R)
    w = bregman_step(theta, g, mirror_constraint(name, R))
    ref, active, nu = _full_root_step(theta, g, name, R)
    top = float((np.abs(theta) if name == "l1" else theta).max())
    lo = top - g.kappa * R * (1.0 + 2.0**-40)
    if top - lo >= g.kappa * R * (1.0 + 2.0**-41):
        assert nu >= lo
    # ν lives on the float grid near top: with a huge top one step of it moves wⱼ by ~r·spacing(top)/(vⱼ − ν)
    # relatively (and ‖w‖₁ by ~r·spacing(top)/(top − ν))
    v = np.abs(theta) if name == "l1" else theta
    sp = abs(float(np.spacing(top)))
    err = np.abs(w - ref)
    assert np.all(err <= (1e-9 + (8.0 * g.r * sp / np.maximum(v - nu, sp) if active else 0.0)) * np.abs(ref) + 1e-12 * R)
    grid = 8.0 * g.r * sp / max(top - nu, sp) if active else 0.0
    total = np.abs(w).sum() if name == "l1" else w.sum()
    assert total <= R * (1 + 1e-13)
    if active:
        assert total >= R * (1 - 1e-12 - grid)


def test_diameters_in_the_primal_norm():
    g = lp_geometry(1.5, 4)
    assert primal_diameter(mirror_constraint("l1", 2.0), g) == 4.0
    assert primal_diameter(mirror_constraint("simplex", 1.0), g) == pytest.approx(2 ** (1 / 1.5))
    assert primal_diameter(mirror_constraint("linf", 1.0), g) == pytest.approx(2 * 4 ** (1 / 1.5))
    assert primal_diameter(mirror_constraint("none", None), g) == math.inf


@pytest.mark.parametrize("scale", [1.0, 30.0])
def test_l1_root_needs_few_residual_evaluations(scale):
    """Newton aimed at the middle of the stopping window, a probe past it by the predicted Newton error, no
    bisection while within rounding noise of the window: ≤ 8 residual evaluations per step on mirror-step
    θ's (a probe landing a rounding error on the wrong side once cost 20+ bisections of [ν, top])."""
    from algorithms.constraints import L1
    from algorithms.mirror_maps import bregman_step_kernel

    d = 4000
    g = lp_geometry(1.1, d)
    rng = np.random.default_rng(int(scale))
    w0 = np.zeros(d)
    w0[:5] = 1.0
    gphi = np.empty(d)
    mirror_grad_kernel(w0, g.s, g.kappa, gphi)
    out = np.empty(d)
    evals = [bregman_step_kernel(L1, 5.0, g.r, g.s, g.kappa, gphi - scale * rng.normal(size=d), out) for _ in range(300)]
    assert max(evals) <= 8
