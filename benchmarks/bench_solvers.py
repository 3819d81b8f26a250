"""Speed of the gradient-perturbation solvers (DP-GD, DP-SGD, DP-SVRG, DP-SVRG++, DP-AccMD).

Synthetic logistic regression (``algorithms.synthetic.make_classification``, ‖xᵢ‖ ≤ 1), n = 50 000,
d = 100 and d = 1 000. Reported, per solver:

* kernel throughput in per-example gradient evaluations per second ("examples·passes/s"; DP-SVRG
  stores ℓ'(⟨x̃, xᵢ⟩) at each snapshot, so an inner step costs one evaluation per example), the
  compiled kernel alone;
* the same algorithm written in straightforward NumPy (per-example gradients materialised, clipped,
  summed — the way one writes it without a GLM-specific trick) and the speed-up over it;
* one epoch (n gradient evaluations) against one streaming pass over X (``X @ w``, the memory-
  bandwidth bound);
* ``fit`` time at ε = 1, δ = 1e-5 (validation + dpcore calibration + kernel) against scikit-learn's
  non-private ``LogisticRegression().fit`` in the same run;
* diffprivlib's ``LogisticRegression`` and Opacus DP-SGD when importable (skipped with a message
  otherwise); ``--external-python PY`` runs them in another interpreter (e.g. a throwaway venv with
  diffprivlib) on the same data, passed through a temporary ``.npz`` file.

BLAS is limited to one thread for every timing (the kernels are single-threaded); each timing is the
minimum CPU time of the process over ``--repeat`` runs (robust to other processes on shared cores).

Run: ``.venv/bin/python benchmarks/bench_solvers.py [--d 100 1000] [--n 50000] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Dict, List

import numpy as np
from threadpoolctl import threadpool_limits

from algorithms.clipping import row_norms_kernel
from algorithms.dp_accmd import dp_accmd, dp_accmd_kernel, lp_mirror_parameters
from algorithms.dp_gd import dp_gd, dp_gd_kernel
from algorithms.dp_sgd import dp_sgd, dp_sgd_kernel
from algorithms.dp_svrg import dp_svrg, dp_svrg_kernel, dp_svrg_pp
from algorithms.synthetic import make_classification
from bench_solvers_external import best_time, external_baselines

ALPHA = 1e-3
SIGMA = 1.0  # noise std on the gradient sums for the kernel timings (value irrelevant to speed)


# ------------------------------------------------------------------ straightforward NumPy versions


def _np_clip_rows(G: np.ndarray, C: float) -> np.ndarray:
    return G * np.minimum(1.0, C / np.maximum(np.linalg.norm(G, axis=1), 1e-300))[:, None]


def _np_clipped_sum(X: np.ndarray, y: np.ndarray, w: np.ndarray, C: float) -> np.ndarray:
    c = -y / (1.0 + np.exp(y * (X @ w)))
    return _np_clip_rows(c[:, None] * X, C).sum(axis=0)  # per-example gradients, materialised


def numpy_dp_gd(X, y, steps, lr, C, gen):
    n, d = X.shape
    w = np.zeros(d)
    for _ in range(steps):
        g = _np_clipped_sum(X, y, w, C) + gen.normal(0.0, SIGMA, d)
        w = (w - lr * g / n) / (1.0 + lr * ALPHA)
    return w


def numpy_dp_sgd(X, y, steps, lr, C, batch, gen):
    n, d = X.shape
    w = np.zeros(d)
    q = batch / n
    for _ in range(steps):
        idx = np.flatnonzero(gen.random(n) < q)
        g = _np_clipped_sum(X[idx], y[idx], w, C) + gen.normal(0.0, SIGMA, d)
        w = (w - lr * g / batch) / (1.0 + lr * ALPHA)
    return w


def numpy_dp_svrg(X, y, epochs, m, lr, C, batch, gen):
    n, d = X.shape
    xt = np.zeros(d)
    for _ in range(epochs):
        ref = -y / (1.0 + np.exp(y * (X @ xt)))  # snapshot derivatives, stored as in the kernel
        vt = (_np_clip_rows(ref[:, None] * X, C).sum(axis=0) + gen.normal(0.0, SIGMA, d)) / n
        x = xt.copy()
        avg = np.zeros(d)
        for _ in range(m):
            idx = gen.choice(n, batch, replace=False)
            Xb, yb = X[idx], y[idx]
            cd = -yb / (1.0 + np.exp(yb * (Xb @ x))) - ref[idx]
            v = (_np_clip_rows(cd[:, None] * Xb, C).sum(axis=0) + gen.normal(0.0, SIGMA, d)) / batch + vt
            x = (x - lr * v) / (1.0 + lr * ALPHA)
            avg += x
        xt = avg / m
    return xt


# ------------------------------------------------------------------------------------ the benchmark


def bench_dimension(n: int, d: int, repeat: int, fit_repeat: int, external_python: str | None) -> Dict[str, object]:
    X, y, _ = make_classification(n, d, seed=0)
    rn = row_norms_kernel(X)
    w0 = np.zeros(d)
    lr, C, batch = 4.0, 1.0, 500
    per_pass = math.ceil(n / batch)
    gd_steps, sgd_epochs, svrg_epochs, acc_steps = 20, 3, 3, 20
    p, kappa = lp_mirror_parameters(d, 10.0)
    gen = np.random.default_rng(0)
    out: Dict[str, object] = {"n": n, "d": d}

    with threadpool_limits(1):
        w = np.full(d, 0.01)
        t_pass = best_time(lambda: X @ w, repeat)
        t_sum = best_time(lambda: X.sum(), repeat)
        out["stream_pass_s"] = t_pass
        out["x_sum_s"] = t_sum

        kernel_rng = np.random.default_rng(1)  # the Generator the compiled solver kernels draw from
        kernels = {
            "dp_gd": (lambda: dp_gd_kernel(0, 0.0, X, y, rn, w0, ALPHA, 0.0, 0, math.inf, gd_steps, lr, C, SIGMA,
                                           gd_steps, kernel_rng), gd_steps * n,
                      lambda: numpy_dp_gd(X, y, gd_steps, lr, C, gen)),
            "dp_sgd": (lambda: dp_sgd_kernel(0, 0.0, X, y, rn, w0, ALPHA, 0.0, 0, math.inf, sgd_epochs * per_pass,
                                             lr, C, SIGMA, True, batch / n, batch, float(batch), per_pass, kernel_rng),
                       sgd_epochs * n,
                       lambda: numpy_dp_sgd(X, y, sgd_epochs * per_pass, lr, C, batch, gen)),
            "dp_svrg": (lambda: dp_svrg_kernel(0, 0.0, X, y, rn, w0, ALPHA, 0.0, 0, math.inf, svrg_epochs, per_pass,
                                               False, lr, C, C, SIGMA, SIGMA, batch, kernel_rng),
                        svrg_epochs * (n + per_pass * batch),
                        lambda: numpy_dp_svrg(X, y, svrg_epochs, per_pass, lr, C, batch, gen)),
            "dp_accmd": (lambda: dp_accmd_kernel(0, 0.0, X, y, rn, w0, ALPHA, 2, 10.0, acc_steps, 0.25 * 400.0, C,
                                                 SIGMA, p, kappa, kernel_rng), acc_steps * n, None),
        }
        rows: List[dict] = []
        for name, (kern, evals, numpy_fn) in kernels.items():
            t_k = best_time(kern, repeat)
            row = {"solver": name, "kernel_s": t_k, "evals_per_s": evals / t_k,
                   "epoch_over_stream_pass": (t_k * n / evals) / t_pass}
            if numpy_fn is not None:
                t_np = best_time(numpy_fn, max(1, repeat // 2))
                row.update(numpy_s=t_np, numpy_evals_per_s=evals / t_np, speedup_vs_numpy=t_np / t_k)
            rows.append(row)
        out["kernels"] = rows

        from sklearn.linear_model import LogisticRegression

        yl = (y > 0).astype(int)
        out["sklearn_fit_s"] = best_time(lambda: LogisticRegression().fit(X, yl), fit_repeat)
        common = dict(epsilon=1.0, delta=1e-5, alpha=ALPHA, data_norm_bound=1.0, trace=False, rng=0)
        fits = {
            "dp_gd": lambda: dp_gd(X, y, steps=gd_steps, **common),
            "dp_sgd": lambda: dp_sgd(X, y, batch_size=batch, epochs=sgd_epochs, dataset_size=X.shape[0], **common),
            "dp_svrg": lambda: dp_svrg(X, y, epochs=svrg_epochs, batch_size=batch, **common),
            "dp_svrg_pp": lambda: dp_svrg_pp(X, y, epochs=4, batch_size=batch, **common),
            "dp_accmd": lambda: dp_accmd(X, y, steps=acc_steps, constraint="l1", radius=10.0, **common),
        }
        out["fits"] = []
        for name, fit in fits.items():
            t_fit = best_time(fit, fit_repeat)
            out["fits"].append({"solver": name, "fit_s": t_fit, "over_sklearn": t_fit / out["sklearn_fit_s"]})
    out["external"] = external_baselines(X, y, fit_repeat)
    if external_python:
        out["external"].update(external_in(external_python, X, y, fit_repeat))
    return out


_EXTERNAL = """
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
sys.path.insert(0, {bench_dir!r})
from bench_solvers_external import external_baselines
data = np.load({path!r})
with threadpool_limits(1):
    print(json.dumps(external_baselines(data["X"], data["y"], {repeat})))
"""


def external_in(python: str, X: np.ndarray, y: np.ndarray, repeat: int) -> Dict[str, object]:
    """Run :func:`external_baselines` under another interpreter on the same (X, y)."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, X=X, y=y)
        code = _EXTERNAL.format(bench_dir=os.path.dirname(os.path.abspath(__file__)), path=path, repeat=repeat)
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"external": f"skipped: {python} failed ({proc.stderr.strip().splitlines()[-1:]})"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def print_table(res: Dict[str, object]) -> None:
    print(f"\n== n = {res['n']}, d = {res['d']}: one streaming pass X@w = {res['stream_pass_s'] * 1e3:.2f} ms, "
          f"X.sum() = {res['x_sum_s'] * 1e3:.2f} ms (1 BLAS thread)")
    print(f"{'solver':<11}{'kernel Mev/s':>13}{'NumPy Mev/s':>13}{'vs NumPy':>10}{'epoch/pass':>12}")
    for r in res["kernels"]:
        npy = f"{r['numpy_evals_per_s'] / 1e6:13.2f}{r['speedup_vs_numpy']:9.1f}x" if "numpy_s" in r else f"{'-':>13}{'-':>10}"
        print(f"{r['solver']:<11}{r['evals_per_s'] / 1e6:13.2f}{npy}{r['epoch_over_stream_pass']:11.2f}x")
    print(f"fit at eps=1 (calibration included) vs sklearn LogisticRegression().fit = {res['sklearn_fit_s']:.3f} s")
    for r in res["fits"]:
        print(f"  {r['solver']:<11}{r['fit_s']:8.3f} s  {r['over_sklearn']:6.2f}x sklearn")
    for k, v in res["external"].items():
        print(f"  {k}: {v if isinstance(v, str) else f'{v:.3f} s'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--d", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fit-repeat", type=int, default=3)
    ap.add_argument("--json", type=str, default=None, help="write the results here")
    ap.add_argument("--external-python", type=str, default=None,
                    help="interpreter with diffprivlib / opacus installed (run on the same data)")
    args = ap.parse_args()
    results = []
    for d in args.d:
        res = bench_dimension(args.n, d, args.repeat, args.fit_repeat, args.external_python)
        print_table(res)
        results.append(res)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
