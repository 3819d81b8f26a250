"""Non-convex private training: the DP-SRM paper's Table 2 on a9a, a one-hidden-layer network on
a9a / ijcnn1 against scikit-learn, and per-example-gradient throughput (Numba vs NumPy, and Opacus).

Part 1 — wang-jayaraman-evans-gu §7.1, Table 2: logistic regression with the non-convex penalty
λΣⱼθⱼ²/(1 + θⱼ²), λ = 1e-3, ε ∈ {0.2, 0.5}, δ = 1e-5, replace-one, ``--seeds`` runs (default 10).
Rows are scaled to ‖x‖ = 1 after appending an intercept feature (a per-record map; the papers' G = 1).
DP-SRM: b₀ = b = 100, C₁ = 1, C₂ = γ = 0.01 (the paper's §7.1 values), 5 passes, last iterate (and
the uniformly random iterate of Alg. 1 as a second row).
DP-GD: 20 full-batch steps (20 passes, as in Table 2), η = 1/β, last iterate (§6.1).
RRPSGD: b = 100, T_max = 16 passes (E[R] ≈ 8 passes, Table 2's 8–10). DP-SGD: b = 256, 5 passes,
without replacement. All σ from the dpcore accountant (Theorem 5.1's σ is refused on a9a at these
ε: its order condition fails — printed). Columns: test error, data passes (gradient evaluations / n),
CPU seconds per run (process time, calibration included), final ‖∇F‖ on the training set; mean (sd).

Part 2 — ``DPMLPClassifier`` (tanh, ``--hidden`` units) on a9a and ijcnn1 at ε ∈ {1, ∞} (DP-SGD and
DP-SRM) against ``sklearn.neural_network.MLPClassifier`` of the same width (non-private, tanh).

Part 3 — per-example clipped-gradient throughput of the network (examples/s): the Numba kernel
:func:`algorithms.mlp_kernels.mlp_clipped_sum_kernel` against a vectorised NumPy implementation of
the same step; a DP-SGD epoch against Opacus when ``/tmp/peers_nonconvex/bin/python`` has torch and
opacus (a throwaway venv; skipped with a message otherwise).

Usage: ``python benchmarks/bench_nonconvex.py [--seeds 10] [--hidden 16] [--skip-mlp]``. Data from
``../shared/data`` (skipped with a message when absent).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from algorithms.dp_gd import dp_gd  # noqa: E402
from algorithms.dp_sgd import dp_sgd  # noqa: E402
from algorithms.dp_srm import dp_srm, dp_srm_paper_sigmas  # noqa: E402
from algorithms.losses import get_loss  # noqa: E402
from algorithms.mlp import DPMLPClassifier  # noqa: E402
from algorithms.mlp_kernels import mlp_clipped_sum_kernel, n_parameters  # noqa: E402
from algorithms.regularizers import Regularizer  # noqa: E402
from algorithms.rrpsgd import rrpsgd  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
LAM, DELTA = 1e-3, 1e-5
# wang-jayaraman-evans-gu Table 2 (a9a, δ = 1e-5): test error (sd), data passes, CPU time (s), gradient norm (sd)
PAPER = {
    0.2: {"dp_gd": ("0.4155 (0.0107)", 20, 1.245, "0.0953 (0.0212)"),
          "rrpsgd": ("0.4019 (0.0033)", 8, 39.61, "0.2175 (0.0116)"),
          "dp_srm": ("0.3579 (0.0009)", 4, 0.6007, "0.0528 (0.0042)")},
    0.5: {"dp_gd": ("0.3859 (0.0057)", 20, 1.261, "0.0866 (0.0129)"),
          "rrpsgd": ("0.3861 (0.0028)", 10, 52.32, "0.1454 (0.0126)"),
          "dp_srm": ("0.3506 (0.0011)", 5, 0.7383, "0.0502 (0.0061)")},
}
PAPER_NONPRIVATE = "0.3346 (0.007) (STORM)"
SOLVERS = {
    "dp_srm": (dp_srm, dict(batch_size=100, epochs=5, diff_clip_norm=0.01, momentum=0.01, output="last")),
    "dp_srm (random iterate)": (dp_srm, dict(batch_size=100, epochs=5, diff_clip_norm=0.01, momentum=0.01)),
    "dp_gd": (dp_gd, dict(steps=20, output="last")),
    "rrpsgd": (rrpsgd, dict(batch_size=100, max_epochs=16)),
    "dp_sgd": (dp_sgd, dict(batch_size=256, epochs=5, sampling="without_replacement")),
}


def load(name: str, n_features: int, zero_based: bool):
    from sklearn.datasets import load_svmlight_file

    out = []
    for part in ("trn", "tst"):
        X, y = load_svmlight_file(os.path.join(DATA, name, f"{name}.{part}.bz2"), zero_based=zero_based,
                                  n_features=n_features)
        out.append((np.ascontiguousarray(X.toarray()), np.where(y > 0, 1.0, -1.0)))
    return out


def unit_rows(X: np.ndarray) -> np.ndarray:
    """Append an intercept feature and scale every row to norm 1 (a per-record map)."""
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    return np.ascontiguousarray(X / np.linalg.norm(X, axis=1)[:, None])


def table2(seeds: int) -> None:
    (Xtr, ytr), (Xte, yte) = load("a9a", 123, True)
    Xtr, Xte = unit_rows(Xtr), unit_rows(Xte)
    n = Xtr.shape[0]
    loss, reg = get_loss("logistic"), Regularizer(nonconvex=LAM)
    print(f"## Table 2 reproduction: a9a (n = {n}, d = {Xtr.shape[1]}), λ = {LAM}, δ = {DELTA}, {seeds} seeds")
    for eps in (0.2, 0.5):
        try:
            steps = math.ceil((5 * n - 100) / 200) + 1  # dp_srm's T for 5 passes at b = 100
            dp_srm_paper_sigmas(eps, DELTA, n=n, steps=steps, batch_size=100, initial_batch_size=100, clip_norm=1.0,
                                diff_clip_norm=0.01, momentum=0.01)
            print(f"ε={eps}: Theorem 5.1 calibration applies")
        except ValueError as exc:
            print(f"ε={eps}: Theorem 5.1 calibration refused — {exc}")
    print()
    head = ("| ε | solver | test error | passes | CPU s | ‖∇F‖ | paper test error | paper passes | paper CPU s | "
            "paper ‖∇F‖ |")
    print(head)
    print("|" + "---|" * 10)
    for eps in (0.2, 0.5):
        for name, (fn, kw) in SOLVERS.items():
            errs, gns, passes, cpu = [], [], [], []
            for s in range(seeds):
                t = time.process_time()
                res = fn(Xtr, ytr, epsilon=eps, delta=DELTA, alpha=LAM, penalty="nonconvex", data_norm_bound=1.0,
                         rng=1000 + s, **kw)
                cpu.append(time.process_time() - t)
                w = res.weights
                errs.append(float(np.mean(np.where(Xte @ w > 0, 1.0, -1.0) != yte)))
                gns.append(float(np.linalg.norm(loss.gradient(w, Xtr, ytr) + reg.smooth_gradient(w))))
                passes.append(res.n_gradient_evaluations / n)
                assert res.privacy.epsilon <= eps
            p = PAPER[eps].get(name.split()[0], ("—", "—", "—", "—"))
            print(f"| {eps} | {name} | {np.mean(errs):.4f} ({np.std(errs):.4f}) | {np.mean(passes):.1f} | "
                  f"{np.median(cpu):.3f} | {np.mean(gns):.4f} ({np.std(gns):.4f}) | "
                  f"{p[0]} | {p[1]} | {p[2]} | {p[3]} |",
                  flush=True)
    w_np = nonprivate(Xtr, ytr, loss, reg)
    print(f"\nnon-private stationary point (L-BFGS-B): test error "
          f"{np.mean(np.where(Xte @ w_np > 0, 1.0, -1.0) != yte):.4f}; paper's non-private baseline "
          f"{PAPER_NONPRIVATE}\n")


def nonprivate(X, y, loss, reg):
    from algorithms.objective import reference_minimizer

    return reference_minimizer(X, y, loss, reg)


def mlp_part(hidden: int, seeds: int) -> None:
    from sklearn.neural_network import MLPClassifier

    sets = {"a9a": load("a9a", 123, True), "ijcnn1": load("ijcnn1", 22, False)}
    print(f"## One-hidden-layer tanh network, {hidden} units: test error (mean over {seeds} seeds), δ = {DELTA}")
    print("| data | model | ε | test error | fit s |")
    print("|---|---|---|---|---|")
    for name, ((Xtr, ytr), (Xte, yte)) in sets.items():
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = MLPClassifier(hidden_layer_sizes=(hidden,), activation="tanh", max_iter=50, random_state=0)
            sk.fit(Xtr, ytr)
        print(f"| {name} | sklearn MLPClassifier (non-private, adam) | ∞ | {1 - sk.score(Xte, yte):.4f} | "
              f"{time.perf_counter() - t:.1f} |", flush=True)
        for solver, kw in (("dp_sgd", dict(batch_size=256, learning_rate=1.0, epochs=5)),
                           ("dp_srm", dict(batch_size=256, learning_rate=1.0, epochs=5, diff_clip_norm=0.1,
                                           momentum=0.1))):
            for eps in (1.0, math.inf):
                errs, secs = [], []
                for s in range(seeds):
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = DPMLPClassifier(hidden_units=hidden, solver=solver, epsilon=eps, delta=DELTA,
                                              clip_norm=1.0, random_state=s, **kw).fit(Xtr, ytr)
                    secs.append(time.perf_counter() - t)
                    errs.append(1 - est.score(Xte, yte))
                print(f"| {name} | DPMLPClassifier {solver} | {eps} | {np.mean(errs):.4f} ({np.std(errs):.4f}) | "
                      f"{np.median(secs):.1f} |", flush=True)
    print()


def numpy_clipped_sum(theta, X, y, d, h, clip):
    """The same step as ``mlp_clipped_sum_kernel`` (K = 1) in vectorised NumPy."""
    hd = h * d
    W1, b1 = theta[:hd].reshape(h, d), theta[hd:hd + h]
    W2, b2 = theta[hd + h:hd + 2 * h], theta[hd + 2 * h]
    z = np.tanh(X @ W1.T + b1)
    o = z @ W2 + b2
    m = y * o
    do = -y / (1.0 + np.exp(m))
    da = (do[:, None] * W2[None, :]) * (1.0 - z * z)
    sq = (da * da).sum(1) * ((X * X).sum(1) + 1.0) + do * do * ((z * z).sum(1) + 1.0)
    f = np.minimum(1.0, clip / np.maximum(np.sqrt(sq), 1e-300))
    da_f, do_f = da * f[:, None], do * f
    return np.concatenate([(da_f.T @ X).ravel(), da_f.sum(0), do_f @ z, [do_f.sum()]])


def numpy_loop_clipped_sum(theta, X, y, d, h, clip):
    """The same step as a per-example loop in NumPy (gradient, norm, clip, add — the textbook way)."""
    hd = h * d
    W1, b1 = theta[:hd].reshape(h, d), theta[hd:hd + h]
    W2, b2 = theta[hd + h:hd + 2 * h], theta[hd + 2 * h]
    out = np.zeros(theta.shape[0])
    for x, yi in zip(X, y):
        z = np.tanh(W1 @ x + b1)
        do = -yi / (1.0 + np.exp(yi * (z @ W2 + b2)))
        da = do * W2 * (1.0 - z * z)
        g = np.concatenate([np.outer(da, x).ravel(), da, do * z, [do]])
        out += g * min(1.0, clip / max(float(np.linalg.norm(g)), 1e-300))
    return out


def throughput(hidden: int) -> None:
    (Xtr, ytr), _ = load("a9a", 123, True)
    X, y = np.ascontiguousarray(Xtr[:8192]), ytr[:8192]
    n, d = X.shape
    rng = np.random.default_rng(0)
    theta = rng.normal(size=n_parameters(d, hidden, 1)) * 0.1
    out = np.empty(theta.shape[0])
    idx = np.arange(n)
    mlp_clipped_sum_kernel(theta, X, y, idx, n, 1.0, d, hidden, 1, out)  # compile
    ref = numpy_clipped_sum(theta, X, y, d, hidden, 1.0)
    assert np.allclose(out, ref, rtol=1e-9, atol=1e-9)
    assert np.allclose(numpy_loop_clipped_sum(theta, X[:64], y[:64], d, hidden, 1.0),
                       numpy_clipped_sum(theta, X[:64], y[:64], d, hidden, 1.0), rtol=1e-9, atol=1e-12)
    res = {}
    for label in ("numba", "numpy", "loop"):
        for b in (64, 8192):
            Xb, yb, ib = X[:b], y[:b], idx[:b]
            if label == "numba":
                def f():
                    mlp_clipped_sum_kernel(theta, Xb, yb, ib, b, 1.0, d, hidden, 1, out)
            elif label == "numpy":
                def f():
                    numpy_clipped_sum(theta, Xb, yb, d, hidden, 1.0)
            else:
                def f():
                    numpy_loop_clipped_sum(theta, Xb[:min(b, 512)], yb[:min(b, 512)], d, hidden, 1.0)
            reps = max(3, 40_000 // b)
            m = min(b, 512) if label == "loop" else b  # the loop is timed on at most 512 rows
            t = time.perf_counter()
            for _ in range(reps):
                f()
            res[(label, b)] = reps * m / (time.perf_counter() - t)
    print(f"## Per-example clipped gradients of the {hidden}-unit network on a9a (d = {d}, P = {theta.size}), "
          "examples/s, one thread")
    print("| batch | Numba kernel | NumPy vectorised | NumPy per-example loop | vs vectorised | vs loop |")
    print("|---|---|---|---|---|---|")
    for b in (64, 8192):
        print(f"| {b} | {res[('numba', b)]:,.0f} | {res[('numpy', b)]:,.0f} | {res[('loop', b)]:,.0f} | "
              f"{res[('numba', b)] / res[('numpy', b)]:.1f}× | {res[('numba', b)] / res[('loop', b)]:.0f}× |")
    print()
    opacus_epoch(hidden)


OPACUS = r"""
import json, sys, time, numpy as np, torch
from opacus import PrivacyEngine
torch.set_num_threads(1)
d, h, n, b = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), 256
rng = np.random.default_rng(0)
X = torch.tensor((rng.random((n, d)) < 0.1).astype(np.float32))
y = torch.tensor(rng.integers(0, 2, n).astype(np.float32))
model = torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.Tanh(), torch.nn.Linear(h, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=b)
pe = PrivacyEngine()
model, opt, loader = pe.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=1.0,
                                     max_grad_norm=1.0)
lossf = torch.nn.BCEWithLogitsLoss()
t = time.perf_counter()
for xb, yb in loader:
    opt.zero_grad(); lossf(model(xb).squeeze(-1), yb).backward(); opt.step()
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def opacus_epoch(hidden: int) -> None:
    py = "/tmp/peers_nonconvex/bin/python"
    d, n = 124, 32561
    Xs = (np.random.default_rng(0).random((n, d)) < 0.1).astype(np.float64)
    ys = np.where(np.random.default_rng(1).random(n) < 0.5, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPMLPClassifier(hidden_units=hidden, epochs=0.01, random_state=0).fit(Xs[:500], ys[:500])  # compile
        t = time.perf_counter()
        DPMLPClassifier(hidden_units=hidden, epochs=1, batch_size=256, random_state=0).fit(Xs, ys)
    ours = time.perf_counter() - t
    print(f"## One DP-SGD epoch, {hidden}-unit network, n = {n}, d = {d}, b = 256 (one thread)")
    print(f"DPMLPClassifier (Numba, calibration included): {ours:.2f} s")
    if not os.path.exists(py):
        print("Opacus: skipped (no throwaway venv at /tmp/peers_nonconvex with torch + opacus)\n")
        return
    try:
        out = subprocess.run([py, "-c", OPACUS, str(d), str(hidden), str(n)], capture_output=True, text=True,
                             timeout=600, check=True).stdout
        seconds = json.loads(out.strip().splitlines()[-1])["seconds"]
        print(f"Opacus (torch CPU, Poisson batches, fixed σ): {seconds:.2f} s\n")
    except (subprocess.SubprocessError, ValueError, KeyError) as exc:
        print(f"Opacus: skipped ({type(exc).__name__})\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--skip-mlp", action="store_true")
    ap.add_argument("--skip-table2", action="store_true")
    args = ap.parse_args()
    if args.seeds < 1 or args.hidden < 1:
        print("bench_nonconvex: --seeds and --hidden must be >= 1", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(DATA, "a9a", "a9a.trn.bz2")):
        print(f"bench_nonconvex: a9a not found under {DATA}: skipped", file=sys.stderr)
        return 0
    if not args.skip_table2:
        table2(args.seeds)
    if not args.skip_mlp:
        mlp_part(args.hidden, max(1, min(args.seeds, 3)))
    throughput(args.hidden)
    return 0


if __name__ == "__main__":
    sys.exit(main())
