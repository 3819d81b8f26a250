"""Where the geometry matters: ℓ1-constrained sparse logistic regression, Su–Zhao–Wang mirror descent
(p close to 1) against Euclidean DP-SGD and Phased DP-SGD, excess empirical / test risk versus d;
plus the throughput of the compiled mirror step against a NumPy implementation of the same step.

Problem (synthetic): xᵢ ∈ {−1, +1}ᵈ uniform (‖x‖_∞ = 1, ‖x‖₂ = √d), a 5-sparse truth w⋆ with
entries ±1, labels from the logistic model, C = {‖w‖₁ ≤ 5}. The loss is 1-Lipschitz w.r.t. ‖·‖₁
up to the dual norm of x: ‖∇ℓ‖_q ≤ d^{1/q} for the mirror methods (q = p/(p − 1), public), while the
Euclidean methods must bound ‖∇ℓ‖₂ ≤ √d. Real data: a9a (d = 123 binary features + intercept) when
``../shared/data/a9a`` exists (skipped with a message otherwise), C = {‖w‖₁ ≤ 5}.

Methods (each at (ε, δ = 1e-5), replace-one):
* ``mirror-A3``: :func:`algorithms.noisy_mirror_descent` (Alg. 3) with its defaults — Gaussian noise
  (ℓ2 clip at the public ‖x‖₂ bound, exact dpcore accounting) and the tuned schedule (T = 100 full-batch
  steps, α = 0, step c/β with c = κ) — p = 1.1, β = ¼ max‖x‖_q² (public: d^{2/q}/4 for ±1 features).
* ``mirror-A3-gg``: the same schedule with the paper's generalized-Gaussian noise in ℓr (ℓq clip,
  Lemma 3 + optimal composition): isolates the noise choice.
* ``mirror-A3-paper``: the theorem's schedule (Theorem 7's T and α, c = 1) and noise — the previous
  default, kept for reference.
* ``mirror-A7``: :func:`algorithms.batched_truncated_mirror_descent` (Alg. 7), p = 1.1, τ = d^{1/q}
  (the public gradient bound; nothing is truncated), ``schedule="theorem"``: T and γ from Theorem 16 (the
  recorded table's column; the solver's default is now the tuned schedule, RESULTS.md). Lemma 3 certifies only
  ε ≤ 1: at ε = 2 it is run at ε = 1, which is also a (2, δ) guarantee.
* ``dp-sgd``: :func:`algorithms.dp_sgd` (batches of 256 without replacement, 5 epochs, ℓ1 projection,
  ℓ2 clip √d, library defaults otherwise).
* ``phased-sgd``: :func:`algorithms.phased_dp_sgd` (Alg. 6, ℓ1 projection, ℓ2 clip √d, Lemma 14's η).

Excess risk = L(w) − L(ŵ⋆) with ŵ⋆ the non-private constrained empirical minimiser (FISTA with exact
ℓ1 projection, 400 iterations), on the training set (empirical) and a held-out set (test).

Usage: ``python benchmarks/bench_mirror_descent.py [--quick] [--seeds 5] [--png docs/mirror_descent_vs_d.png]``
(the default grid: d ∈ {100, 1000, 10000} and a9a, ε ∈ {0.5, 1, 2}, 5 seeds; n = 50 000 for d ≤ 1000
and n = 20 000 for d = 10 000 — a 50 000 × 10 000 float64 design would take 4 GB of a shared machine).
Parts of the grid can run in separate processes (``--datasets 10000 --seeds 3 --json b.json``) and be
merged into one table and figure (``--merge a.json b.json --png …``).
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
import os
import sys
import time

import numpy as np

from algorithms import batched_truncated_mirror_descent, dp_sgd, noisy_mirror_descent, phased_dp_sgd
from algorithms.noisy_mirror_descent import tuned_steps
from algorithms.constraints import L1, get_constraint
from algorithms.losses import get_loss
from algorithms.mirror_maps import bregman_step_kernel, lp_geometry, mirror_grad_kernel

DELTA = 1e-5
RADIUS = 5.0
P_MIRROR = 1.1
LOSS = get_loss("logistic")
A9A = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "a9a")


def synthetic(n: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([-1.0, 1.0]), size=(n, d))
    w = np.zeros(d)
    w[:5] = rng.choice([-1.0, 1.0], size=5)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w))), 1.0, -1.0)
    return X, y


def load_a9a():
    from sklearn.datasets import load_svmlight_file

    out = []
    for name in ("a9a.trn.bz2", "a9a.tst.bz2"):
        X, y = load_svmlight_file(os.path.join(A9A, name), zero_based=True, n_features=123)
        X = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
        out.append((np.ascontiguousarray(X), y.astype(np.float64)))
    return out


def constrained_optimum(X, y, iters: int = 400) -> np.ndarray:
    """FISTA on the mean logistic loss over ‖w‖₁ ≤ R (exact projection), step 1/β, β = ¼ max‖x‖₂²."""
    con = get_constraint("l1", RADIUS)
    beta = 0.25 * float(np.max(np.sum(X * X, axis=1)))
    w = np.zeros(X.shape[1])
    v, t = w.copy(), 1.0
    for _ in range(iters):
        w_new = con.project(v - LOSS.gradient(v, X, y) / beta)
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        v = w_new + (t - 1) / t_new * (w_new - w)
        w, t = w_new, t_new
    return w


METHODS = ("mirror-A3", "mirror-A3-gg", "mirror-A3-paper", "mirror-A7", "dp-sgd", "phased-sgd")


def run_methods(X, y, eps: float, seed: int, methods=METHODS):
    """Weights of each method in ``methods`` at (eps, DELTA) and the wall time. ``eps = inf`` runs
    ``mirror-A3`` noise-free with the private default's T (its optimisation floor)."""
    n, d = X.shape
    q = P_MIRROR / (P_MIRROR - 1)
    lq = float(np.max(np.linalg.norm(X, ord=q, axis=1)))  # public here: ‖x‖_q = d^{1/q} for ±1 features
    l2 = math.nextafter(float(np.max(np.linalg.norm(X, axis=1))), math.inf)
    beta = 0.25 * lq * lq
    common = dict(loss="logistic", delta=DELTA, constraint="l1", radius=RADIUS, rng=seed)
    mirror = dict(p=P_MIRROR, epsilon=eps, smoothness=beta, **common)
    gg = dict(clip_norm=lq, noise="generalized_gaussian", **mirror)
    runs = {
        "mirror-A3": lambda: noisy_mirror_descent(X, y, data_norm_bound=l2, **mirror,
                                                  **({"steps": tuned_steps(n, d)} if math.isinf(eps) else {})),
        "mirror-A3-gg": lambda: noisy_mirror_descent(X, y, **gg),
        "mirror-A3-paper": lambda: noisy_mirror_descent(X, y, schedule="theorem", **gg),
        "mirror-A7": lambda: batched_truncated_mirror_descent(X, y, truncation=lq, schedule="theorem", clip_norm=lq,
                                                              **dict(mirror, epsilon=min(eps, 1.0))),
        "dp-sgd": lambda: dp_sgd(X, y, epsilon=eps, data_norm_bound=l2, batch_size=256, epochs=5,
                                 sampling="without_replacement", **common),
        "phased-sgd": lambda: phased_dp_sgd(X, y, p=P_MIRROR, epsilon=eps, data_norm_bound=l2, **common),
    }
    out = {}
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for m in methods:
            out[m] = runs[m]().weights
    return out, time.perf_counter() - t


def risk_table(datasets, eps_grid, seeds, methods=METHODS, floor=False):
    """Rows of excess empirical / test risk (mean, sd and the per-seed values) per dataset, ε, method;
    ``floor``: also ``mirror-A3`` noise-free (ε = inf, the private T; deterministic, one run)."""
    rows = []
    for label, d, (Xtr, ytr), (Xte, yte) in datasets:
        w_opt = constrained_optimum(Xtr, ytr)
        f_tr, f_te = LOSS.value(w_opt, Xtr, ytr), LOSS.value(w_opt, Xte, yte)
        w0_emp = LOSS.value(np.zeros(d), Xtr, ytr) - f_tr  # the trivial model's excess risk
        grid = [(eps, seeds, methods) for eps in eps_grid] + ([(math.inf, 1, ("mirror-A3",))] if floor else [])
        for eps, n_seeds, ms in grid:
            acc = {}
            wall = 0.0
            for seed in range(n_seeds):
                ws, sec = run_methods(Xtr, ytr, eps, seed, ms)
                wall += sec
                for m, w in ws.items():
                    acc.setdefault(m, []).append((LOSS.value(w, Xtr, ytr) - f_tr, LOSS.value(w, Xte, yte) - f_te))
            for m, vals in acc.items():
                a = np.array(vals)
                rows.append(dict(data=label, d=d, n=Xtr.shape[0], eps=eps, method=m, seeds=n_seeds, emp=a[:, 0].mean(),
                                 emp_sd=a[:, 0].std(ddof=1) if len(a) > 1 else 0.0, test=a[:, 1].mean(),
                                 test_sd=a[:, 1].std(ddof=1) if len(a) > 1 else 0.0,
                                 emp_seeds=a[:, 0].tolist(), test_seeds=a[:, 1].tolist(), w0_emp=w0_emp,
                                 sec_per_fit=wall / n_seeds / len(ms)))
            print(f"  {label} d={d} eps={eps}: {wall:.1f}s for {n_seeds} seeds", file=sys.stderr, flush=True)
    return rows


def d_slopes(rows, key: str = "emp", boot: int = 4000, seed: int = 0):
    """Least-squares slope of log(excess risk) against log d over the synthetic rows, per (method, ε),
    with a percentile bootstrap 95 % interval (seeds resampled independently at each d). Also, for
    ``mirror-A3``, the slope of the privacy part risk(ε) − risk(ε = inf) (the noise-free floor at the
    same T). Rows: (method, ε, d's, means, slope, lo, hi)."""
    rng = np.random.default_rng(seed)
    syn = [r for r in rows if r["data"] == "synthetic" and "emp_seeds" in r]
    floor = {r["d"]: r[key] for r in syn if r["method"] == "mirror-A3" and math.isinf(r["eps"])}
    out = []
    for m in sorted({r["method"] for r in syn}):
        for eps in sorted({r["eps"] for r in syn if r["method"] == m and not math.isinf(r["eps"])}):
            cells = sorted((r["d"], np.array(r[key + "_seeds"])) for r in syn if r["method"] == m and r["eps"] == eps)
            variants = [(m, lambda v, d: v)]
            if m == "mirror-A3" and all(d in floor for d, _ in cells):
                variants.append((m + " minus floor", lambda v, d: v - floor[d]))
            for name, tr in variants:
                ds = np.log([d for d, _ in cells])
                vals = [tr(v, d) for d, v in cells]
                means = np.array([v.mean() for v in vals])
                if len(cells) < 2 or np.any(means <= 0):
                    continue
                slope = np.polyfit(ds, np.log(means), 1)[0]
                bs = []
                for _ in range(boot):
                    mb = np.array([rng.choice(v, size=v.size).mean() for v in vals])
                    if np.all(mb > 0):
                        bs.append(np.polyfit(ds, np.log(mb), 1)[0])
                lo, hi = np.percentile(bs, [2.5, 97.5])
                out.append((name, eps, [d for d, _ in cells], means, slope, lo, hi))
    return out


def _print_slopes(rows) -> None:
    print("log-log slope of excess empirical risk against d (synthetic; bootstrap 95% CI over seeds). "
          "Prediction: ~0.5 for mirror descent (sqrt(d)/(n eps) polylog), ~1 for Euclidean (an extra sqrt(d))")
    print(f"{'method':>24} {'eps':>4} {'d':>18} {'means':>34} {'slope':>6} {'95% CI':>16}")
    for name, eps, ds, means, slope, lo, hi in d_slopes(rows):
        print(f"{name:>24} {eps:>4} {','.join(map(str, ds)):>18} {' '.join(f'{m:.3g}' for m in means):>34} "
              f"{slope:>6.2f} [{lo:>6.2f}, {hi:>6.2f}]")
    print()


def plot_slopes(rows, path) -> None:
    """Log-log excess empirical risk against d per ε with the fitted slopes (and their CIs) in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fits = d_slopes(rows)
    eps_grid = sorted({f[1] for f in fits})
    fig, axes = plt.subplots(1, len(eps_grid), figsize=(4.6 * len(eps_grid), 4.2), squeeze=False)
    for j, eps in enumerate(eps_grid):
        ax = axes[0][j]
        for name, e, ds, means, slope, lo, hi in fits:
            if e != eps:
                continue
            ds = np.array(ds, dtype=float)
            line = ax.plot(ds, means, "o-", label=f"{name}: slope {slope:.2f} [{lo:.2f}, {hi:.2f}]")[0]
            c = np.polyfit(np.log(ds), np.log(means), 1)
            ax.plot(ds, np.exp(np.polyval(c, np.log(ds))), ":", color=line.get_color(), lw=0.8)
        syn = [r for r in rows if r["data"] == "synthetic" and r["method"] == "mirror-A3" and r["eps"] == eps]
        if syn:
            d0 = min(r["d"] for r in syn)
            y0 = [r["emp"] for r in syn if r["d"] == d0][0]
            ds = np.array(sorted({r["d"] for r in syn}), dtype=float)
            ax.plot(ds, y0 * np.sqrt(ds / d0), "k--", lw=0.7, label="slope 0.5")
            ax.plot(ds, y0 * ds / d0, "k-.", lw=0.7, label="slope 1")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("d")
        ax.set_title(f"excess empirical risk, ε={eps}")
        ax.legend(fontsize=6.5)
    ns = sorted({r["n"] for r in rows if r["data"] == "synthetic"})
    fig.suptitle(f"d-dependence, ℓ1 ball R={RADIUS}, ±1 features, n={'/'.join(map(str, ns))}: fitted log-log slopes "
                 "(bootstrap 95% CI over seeds)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def numpy_l1_step(theta, r, kappa, R):
    """NumPy implementation of the same exact ℓ1-ball Bregman step as the compiled kernel
    (:func:`algorithms.mirror_maps.bregman_step_kernel`): the power sums A, B, C of the active
    coordinates vectorised (c = t^{r−2} by one log and one exp per coordinate, then three dot
    products), the same bracketed Newton / probe / bisection from the same start (max(0, top − κR),
    lowered by 2^-40 relatively) with the same stopping rule (adjacent floats or h(b) ∈ [−8·2^-52·R, 0]),
    the same active-set compaction (values ≤ a + τ(top − a) dropped), and the point from the same sums over the active set (reusing the last residual's
    powers when it was evaluated at the returned ν)."""
    v = np.abs(theta)
    top = float(v.max())
    tau = math.exp(math.log(2.0**-60 / theta.size) / (r - 2.0))  # tⱼ ≤ τ: negligible in every sum
    lo = top - kappa * R * (1.0 + 2.0**-40)  # h(ν) ≥ (top − ν)/κ − R: the root lies above lo
    lo = lo if lo > 0.0 and top - lo >= kappa * R * (1.0 + 2.0**-41) else 0.0
    ids = np.flatnonzero(v > lo + tau * (top - lo))
    act = v[ids]
    tol = 8.0 * 2.0**-52 * R

    last = [None]  # (ν, m, A, c·t) of the last residual: the point at that ν reuses its powers

    def sums(nu):
        m = top - nu
        t = (act - nu) / m
        pos = t > 0.0
        c = np.zeros_like(t)
        c[pos] = np.exp((r - 2.0) * np.log(t[pos]))
        ct = c * t
        A = float(ct @ t)
        last[0] = (nu, m, A, ct)
        return m, A, float(ct.sum()), float(c.sum())

    def res(nu):
        if top - nu <= 0.0:
            return -R, 0.0
        m, A, B, C = sums(nu)
        f = A ** ((2.0 - r) / r) / kappa
        return m * f * B - R, -f * ((2.0 - r) * B * B / A + (r - 1.0) * C)

    def point(nu):
        out = np.zeros_like(theta)
        if last[0] is None or last[0][0] != nu:
            sums(nu)
        _, m, A, ct = last[0]
        out[ids] = np.copysign(m * A ** ((2.0 - r) / r) / kappa * ct, theta[ids])
        return out

    def shrink(nu, a, b):
        nonlocal act, ids
        h, dh = res(nu)
        if h > 0.0:
            keep = act > nu + tau * (top - nu)
            act, ids = act[keep], ids[keep]
            return nu, b, h, dh
        return a, nu, h, dh

    h0, d0 = res(lo)
    if h0 <= 0.0 and lo == 0.0:
        return point(0.0)
    a, b = lo, top
    aim = -0.5 * tol
    x, hx, dx = a, h0, d0
    curv = -1.0
    skips = 0
    for _ in range(400):
        width = b - a
        mid = a + 0.5 * width
        if not (a < mid < b):
            break
        newton = dx < 0.0
        cand = x - (hx - aim) / dx if newton else mid
        if not (a < cand < b):
            cand, newton = mid, False
        a, b, hc, dc = shrink(cand, a, b)
        if -tol <= hc <= 0.0:
            break
        if newton and dc < 0.0:
            s2 = (cand - x) ** 2
            curv = abs((hc - aim) / dc) / s2 if s2 > 0.0 else -1.0
        x, hx, dx = cand, hc, dc
        if dc < 0.0:
            step = -(hc - aim) / dc
            probe = cand + step * (1.0 + (min(1.0, 2.0 * curv * abs(step)) if curv >= 0.0 else 1.0))
            if a < probe < b:
                a, b, hp, dp = shrink(probe, a, b)
                if -tol <= hp <= 0.0:
                    break
                if abs(hp - aim) < abs(hx - aim):
                    x, hx, dx = probe, hp, dp
        if b - a > 0.5 * width:
            if abs(hx - aim) <= 2.0 * tol and skips < 2:
                skips += 1
                continue
            skips = 0
            mid = a + 0.5 * (b - a)
            a, b, hm, dm = shrink(mid, a, b)
            if -tol <= hm <= 0.0:
                break
            if abs(hm - aim) < abs(hx - aim):
                x, hx, dx = mid, hm, dm
    return point(b)


def _thetas(family: str, d: int, reps: int, g) -> np.ndarray:
    """θ's of the throughput table. ``"signal"``: θ = ∇Φ(w) − g, w five ones, g ~ N(0, I) (a mirror step
    near a sparse iterate: the root, when there is one, leaves few coordinates active); ``"dense"``:
    θ ~ N(0, 30²I) (the ball cuts deep into pure noise: many active coordinates, the root far from 0)."""
    rng = np.random.default_rng(d)
    if family == "dense":
        return 30.0 * rng.normal(size=(reps, d))
    w = np.zeros(d)
    w[:5] = 1.0
    gphi = np.empty(d)
    mirror_grad_kernel(w, g.s, g.kappa, gphi)
    return gphi - rng.normal(size=(reps, d))


def throughput(dims, families=("signal", "dense"), reps: int = 200):
    """Exact ℓ1-ball Bregman steps θ ↦ argmin_{‖w‖₁≤R} Φ(w) − ⟨θ, w⟩ per second of process CPU time
    (the machine is shared: CPU time is not inflated by other processes' load), the same θ's for both
    implementations, outputs checked equal, best of 3 passes. Rows: (family, d, Numba steps/s, NumPy
    steps/s, speed-up, mean residual evaluations per step)."""
    rows = []
    for family in families:
        for d in dims:
            g = lp_geometry(P_MIRROR, d)
            thetas = _thetas(family, d, reps, g)
            out = np.empty(d)
            evals = []

            def numba_step(k):
                evals.append(bregman_step_kernel(L1, RADIUS, g.r, g.s, g.kappa, thetas[k], out))
                return out

            def numpy_step(k):
                return numpy_l1_step(thetas[k], g.r, g.kappa, RADIUS)

            for k in range(reps):
                np.testing.assert_allclose(numba_step(k), numpy_step(k), rtol=1e-9, atol=1e-12)
            mean_evals = float(np.mean(evals))
            times = {}
            for name, fn in (("numba", numba_step), ("numpy", numpy_step)):
                best = math.inf
                for _ in range(3):
                    t = time.process_time()
                    for k in range(reps):
                        fn(k)
                    best = min(best, time.process_time() - t)
                times[name] = best / reps
            rows.append((family, d, 1.0 / times["numba"], 1.0 / times["numpy"], times["numpy"] / times["numba"],
                         mean_evals))
    return rows


def _print_throughput(dims) -> None:
    print("Mirror step (l1 ball, exact Bregman projection, p = 1.1), steps per CPU second")
    print(f"{'theta':>7} {'d':>6} {'numba':>12} {'numpy':>12} {'speed-up':>9} {'evals/step':>11}")
    for family, d, a, b, ratio, ev in throughput(dims):
        print(f"{family:>7} {d:>6} {a:>12.0f} {b:>12.0f} {ratio:>8.1f}x {ev:>11.2f}")


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    syn = [r for r in rows if r["data"] == "synthetic"]
    eps_grid = sorted({r["eps"] for r in syn})
    methods = sorted({r["method"] for r in syn})
    fig, axes = plt.subplots(2, len(eps_grid), figsize=(4.2 * len(eps_grid), 7), squeeze=False)
    for j, eps in enumerate(eps_grid):
        for i, key in enumerate(("emp", "test")):
            ax = axes[i][j]
            for m in methods:
                pts = sorted((r["d"], r[key], r[key + "_sd"]) for r in syn if r["eps"] == eps and r["method"] == m)
                ds, ys, sd = (np.array(v) for v in zip(*pts))
                ax.errorbar(ds, np.maximum(ys, 1e-6), yerr=sd, marker="o", capsize=3, label=m)
            ds = np.array(sorted({r["d"] for r in syn}))
            for anchor, style in (("dp-sgd", "k:"), ("mirror-A3", "k--")):
                ref = [r[key] for r in syn if r["eps"] == eps and r["method"] == anchor and r["d"] == ds[0]]
                if ref and ref[0] > 0:
                    ax.plot(ds, ref[0] * np.sqrt(ds / ds[0]), style, lw=0.8, label=f"∝ √d from {anchor}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("d")
            ax.set_title(f"{'empirical' if key == 'emp' else 'test'} excess risk, ε={eps}")
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    ns = sorted({(r["d"], r["n"]) for r in syn})
    fig.suptitle("ℓ1-ball sparse logistic regression (±1 features): mirror descent p=1.1 vs Euclidean; "
                 + ", ".join(f"n={n} at d={d}" for d, n in ns), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _print_risk(rows) -> None:
    seeds = sorted({r["seeds"] for r in rows})
    print(f"Excess risk (mean ± sd over {'/'.join(map(str, seeds))} seeds), delta={DELTA}, l1 radius {RADIUS}, "
          f"mirror p={P_MIRROR}")
    print(f"{'data':>9} {'d':>6} {'n':>6} {'eps':>4} {'method':>15} {'empirical':>22} {'test':>22}")
    for r in rows:
        print(f"{r['data']:>9} {r['d']:>6} {r['n']:>6} {r['eps']:>4} {r['method']:>15} "
              f"{r['emp']:>11.4g} ± {r['emp_sd']:<8.2g} {r['test']:>11.4g} ± {r['test_sd']:<8.2g}")
    print()


def _datasets(names, sizes):
    out = []
    for name in names:
        if name == "a9a":
            if os.path.isdir(A9A):
                tr, te = load_a9a()
                out.append(("a9a", tr[0].shape[1], tr, te))
            else:
                print(f"a9a not found at {A9A}: skipped", file=sys.stderr)
            continue
        d = int(name)
        n = sizes.get(d, 50_000)
        X, y = synthetic(n + 10_000, d, seed=d)
        out.append(("synthetic", d, (X[:n], y[:n]), (X[n:], y[n:])))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="d in {100, 1000}, n = 10000, 2 seeds, eps = 1")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--datasets", default="100,1000,10000,a9a", help="comma list of synthetic d's and/or a9a")
    ap.add_argument("--eps", default="0.5,1,2")
    ap.add_argument("--json", default=None, help="also write the risk rows here")
    ap.add_argument("--merge", nargs="+", default=None, help="print / plot rows from these --json files only")
    ap.add_argument("--png", default=None, help="write the risk-vs-d figure here")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma list of methods to run")
    ap.add_argument("--n", type=int, default=None, help="n for every synthetic d (default 50 000, 20 000 at d = 10 000)")
    ap.add_argument("--floor", action="store_true", help="also mirror-A3 noise-free at the private T (its floor)")
    ap.add_argument("--slopes", default=None, help="print log-log slopes against d and write their figure here")
    ap.add_argument("--throughput-only", action="store_true", help="only the mirror-step throughput table")
    ap.add_argument("--no-throughput", action="store_true")
    args = ap.parse_args(argv)
    if args.throughput_only:
        _print_throughput((100, 1000, 10_000))
        return 0
    if args.merge:
        rows = [r for path in args.merge for r in json.load(open(path))]
    else:
        if args.quick:
            names, eps_grid, seeds, sizes = ("100", "1000"), (1.0,), 2, {100: 10_000, 1000: 10_000}
        else:
            names, eps_grid, seeds = args.datasets.split(","), tuple(map(float, args.eps.split(","))), args.seeds
            sizes = {100: 50_000, 1000: 50_000, 10_000: 20_000}
            if args.n:
                sizes = {int(x): args.n for x in names if x != "a9a"}
        rows = risk_table(_datasets(names, sizes), eps_grid, seeds, tuple(args.methods.split(",")), args.floor)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=1)
    _print_risk(rows)
    if not (args.merge or args.no_throughput):
        _print_throughput(sorted({r["d"] for r in rows if r["data"] == "synthetic"}))
    if args.png:
        plot(rows, args.png)
        print(f"figure: {args.png}")
    if args.slopes:
        _print_slopes(rows)
        plot_slopes(rows, args.slopes)
        print(f"figure: {args.slopes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
