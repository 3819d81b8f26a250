"""Private solvers in the shapes and sizes users bring (issue 26): big dense data, sparse data kept sparse,
multiclass, the ℓp solvers' default p, and the ℓ1 penalty — beside scikit-learn (and diffprivlib).

Sections (each prints a markdown table; RESULTS.md "Shapes and sizes" holds the numbers of one run):

``--dense``
    Dense n × d (default 10⁶ × 100, unit-norm-bounded rows, labels of a noisy linear model):
    ``DPLogisticRegression()`` (default solver) and ``solver="dp_sgd"`` against scikit-learn's
    ``LogisticRegression()``. Every fit runs in a fresh subprocess, the methods interleaved ``--repeats``
    times: CPU seconds of the fit (``time.process_time``; one BLAS thread), the peak resident memory the
    fit adds (VmHWM reset before the fit: everything, Numba's allocations included) and, from a second
    fit of the same process, tracemalloc's peak (NumPy / Python allocations only). Ratios to
    scikit-learn; peak as a multiple of the data.
``--sparse``
    CSR n × d of density ρ (default 2·10⁵ × 5·10⁴, ρ = 10⁻³: 50 stored entries a row on Zipf-distributed
    columns, the bag-of-words shape; rows scaled to unit norm): the same three fits, peak as a multiple
    of the CSR size, held-out accuracy; then on a subsample where a dense copy fits (2·10⁴ × 5·10³) the
    dense and the sparse fit of the same seed: accuracy of both and the largest coefficient difference.
``--multiclass``
    digits (10 classes, scikit-learn's copy; rows scaled to unit norm, a public per-record map) and a
    20-newsgroups-shaped sparse problem (synthetic: 20 classes, 11 314 / 7 532 documents, 10⁵ words,
    ≈ 120 words a document, 6 % from the class's 400 topic words (drawn from 1 500 shared topical words)
    and the rest from a Zipf background, log-tf rows of unit norm; scikit-learn reaches 0.87 on it, as on
    the real data — ``fetch_20newsgroups`` needs the network): test accuracy (mean ± sd and worst over ``--seeds``) at
    ε ∈ {0.5, 1, 2, 8} of the default (``multi_class="auto"``: softmax by DP-GD), one-vs-rest objective
    perturbation, dp_sgd (softmax) and dp_gd one-vs-rest, beside scikit-learn (non-private) and diffprivlib's
    ``LogisticRegression(epsilon, data_norm=1)`` (dense input only; diffprivlib 0.6.6 does not import with
    scikit-learn ≥ 1.6, so ``--diffprivlib-python`` names an interpreter of an environment with
    scikit-learn < 1.6 and diffprivlib, run on the same split).
``--lp-rule``
    a9a (``../shared/data``): test error of the ℓp solvers from the estimator with p = 1 + 1/(c·ln d) for
    c ∈ {0.5, 1, 2} and p = 1.5, at ε = 1 (``--seeds`` seeds): the rule behind
    ``algorithms.estimators.default_lp_exponent``.
``--l1``
    a9a: ``penalty="l1"`` against ``"l2"`` for dp_gd, dp_sgd, dp_svrg_pp at ε = 1: test error and the
    share of zero weights.

Usage: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_shapes.py [--dense] [--sparse] [--multiclass]
[--lp-rule] [--l1] [--repeats 3] [--seeds 3] [--n-dense N] [--n-sparse N] [--data DIR]
[--diffprivlib-python PYTHON]`` (no section flag: all).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "..", "shared", "data")
EPSILONS = (0.5, 1.0, 2.0, 8.0)
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


# --------------------------------------------------------------------------------------------- data


def dense_data(n: int, d: int, seed: int = 0):
    """Rows of norm ≤ 1 (Gaussian rows scaled by the public constant 1/(√d·1.2), then clipped to 1 —
    a per-record map), labels of a noisy linear model."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((n, d)) / (math.sqrt(d) * 1.2)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    big = norms > 1.0
    X[big] /= norms[big, None]
    w = gen.standard_normal(d) * 3.0
    y = (X @ w + 0.3 * gen.standard_normal(n) > 0).astype(int)
    return X, y


def sparse_data(n: int, d: int, per_row: int, seed: int = 0):
    """CSR with ``per_row`` entries a row on Zipf(1)-distributed columns (duplicates summed), unit-norm rows,
    labels of a noisy sparse linear model."""
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    gen = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / (np.arange(d) + 10.0))
    cdf /= cdf[-1]
    cols = np.searchsorted(cdf, gen.random(n * per_row)).astype(np.int32)
    X = sp.csr_matrix((gen.random(n * per_row) + 0.5, cols, np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    X = normalize(X)
    w = gen.standard_normal(d)
    y = (X @ w * 10.0 + 0.3 * gen.standard_normal(n) > 0).astype(int)
    return X, y


def newsgroups_shaped(seed: int = 0, n_train: int = 11314, n_test: int = 7532, d: int = 100_000, k: int = 20):
    """Synthetic 20-newsgroups-shaped documents (module docstring): (X_train, X_test, y_train, y_test), CSR."""
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    gen = np.random.default_rng(seed)
    background = np.cumsum(1.0 / (np.arange(d) + 20.0))
    background /= background[-1]
    pool = gen.choice(d, 1500, replace=False)  # the classes' topics overlap within 1 500 topical words
    topics = [gen.choice(pool, 400, replace=False) for _ in range(k)]
    topic_cdf = np.cumsum(1.0 / (np.arange(400) + 5.0))
    topic_cdf /= topic_cdf[-1]

    def draw(n):
        y = gen.integers(0, k, n)
        lengths = np.maximum(20, gen.poisson(120, n))
        rows, cols = [], []
        for i in range(n):
            m = lengths[i]
            on_topic = gen.random(m) < 0.06
            words = np.searchsorted(background, gen.random(m))
            words[on_topic] = topics[y[i]][np.searchsorted(topic_cdf, gen.random(int(on_topic.sum())))]
            rows.append(np.full(m, i))
            cols.append(words)
        X = sp.csr_matrix((np.ones(int(lengths.sum())), (np.concatenate(rows), np.concatenate(cols))), shape=(n, d))
        X.sum_duplicates()
        X.data = np.log1p(X.data)
        return normalize(X), y

    Xtr, ytr = draw(n_train)
    Xte, yte = draw(n_test)
    return Xtr, Xte, ytr, yte


def digits(seed: int = 0):
    """digits with unit-norm rows, a fixed 75/25 split (public)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import normalize

    X, y = load_digits(return_X_y=True)
    return train_test_split(normalize(X), y, test_size=0.25, random_state=seed, stratify=y)


# ------------------------------------------------------------------------------ one fit per process


_CHILD = r"""
import json, re, sys, time, tracemalloc, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {root!r}); sys.path.insert(0, {here!r})
import numpy as np
import bench_shapes as B
spec = json.loads({spec!r})
if spec["shape"] == "dense":
    X, y = B.dense_data(spec["n"], spec["d"])
else:
    X, y = B.sparse_data(spec["n"], spec["d"], spec["per_row"])
n_test = spec["n"] // 10
Xtr, ytr, Xte, yte = X[n_test:], y[n_test:], X[:n_test], y[:n_test]
def make():
    if spec["method"] == "scikit-learn":
        from sklearn.linear_model import LogisticRegression
        return LogisticRegression()
    from algorithms import DPLogisticRegression
    kw = {{}} if spec["method"] == "default" else {{"solver": spec["method"]}}
    return DPLogisticRegression(classes=[0, 1], random_state=0, **kw)
if spec["method"] != "scikit-learn":  # compile (and load the cache) outside the measurement
    make().fit(Xtr[:2000], ytr[:2000])
def hwm():
    return int(re.search(r"VmHWM:\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
def rss():
    return int(re.search(r"VmRSS:\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
m = make()
open("/proc/self/clear_refs", "w").write("5")
base = rss()
t = time.process_time()
m.fit(Xtr, ytr)
cpu = time.process_time() - t
peak = hwm() - base
acc = float(m.score(Xte, yte))
m2 = make()
tracemalloc.start()
m2.fit(Xtr, ytr)
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
size = Xtr.nbytes if hasattr(Xtr, "nbytes") and not hasattr(Xtr, "nnz") else \
    Xtr.data.nbytes + Xtr.indices.nbytes + Xtr.indptr.nbytes
print(json.dumps({{"cpu": cpu, "peak": peak, "traced": traced, "acc": acc, "size": size}}))
"""


def run_child(spec: dict) -> dict:
    code = _CHILD.format(root=ROOT, here=HERE, spec=json.dumps(spec))
    env = dict(os.environ, **ONE_THREAD)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{spec}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def timing_table(title: str, base: dict, methods, repeats: int) -> None:
    """Interleaved subprocess fits; median CPU, ratio to scikit-learn, peaks."""
    rows = {m: [] for m in methods}
    for _ in range(repeats):
        for m in methods:
            rows[m].append(run_child(dict(base, method=m)))
    size = rows[methods[0]][0]["size"]
    sk = np.median([r["cpu"] for r in rows["scikit-learn"]])
    print(f"\n### {title}  (data {size / 2**20:.0f} MiB, {repeats} interleaved repeats, CPU seconds)\n")
    print("| fit | CPU s (median, min–max) | × scikit-learn | peak RSS added (MiB) | peak ÷ data | "
          "tracemalloc peak (MiB) | held-out accuracy |")
    print("|---|---|---|---|---|---|---|")
    for m in methods:
        c = [r["cpu"] for r in rows[m]]
        peak = max(r["peak"] for r in rows[m])
        print(f"| {m} | {np.median(c):.2f} ({min(c):.2f}–{max(c):.2f}) | {np.median(c) / sk:.2f} | "
              f"{peak / 2**20:.0f} | {(size + peak) / size:.2f} | {max(r['traced'] for r in rows[m]) / 2**20:.0f} | "
              f"{np.mean([r['acc'] for r in rows[m]]):.4f} |")


def dense_section(args) -> None:
    timing_table(f"Dense {args.n_dense} × 100", {"shape": "dense", "n": args.n_dense, "d": 100},
                 ("scikit-learn", "default", "dp_sgd"), args.repeats)


def sparse_section(args) -> None:
    timing_table(f"Sparse CSR {args.n_sparse} × 50000, density 1e-3",
                 {"shape": "sparse", "n": args.n_sparse, "d": 50_000, "per_row": 50},
                 ("scikit-learn", "default", "dp_sgd"), args.repeats)
    from algorithms import DPLogisticRegression

    X, y = sparse_data(20_000, 5_000, 50, seed=1)
    Xd = X.toarray()
    print("\n#### Dense and sparse fits of one subsample (20 000 × 5 000, same seed)\n")
    print("| solver | accuracy dense | accuracy sparse | max |coef difference| |")
    print("|---|---|---|---|")
    for solver in ("objective_perturbation", "dp_sgd", "dp_gd"):
        fits = [DPLogisticRegression(solver=solver, classes=[0, 1], random_state=0).fit(A, y) for A in (Xd, X)]
        print(f"| {solver} | {fits[0].score(Xd, y):.4f} | {fits[1].score(X, y):.4f} | "
              f"{np.max(np.abs(fits[0].coef_ - fits[1].coef_)):.1e} |")


def _score(make, Xtr, ytr, Xte, yte):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(make().fit(Xtr, ytr).score(Xte, yte))


def multiclass_section(args) -> None:
    from sklearn.linear_model import LogisticRegression

    from algorithms import DPLogisticRegression

    problems = [("digits", digits())]
    print("generating the 20-newsgroups-shaped problem ...", file=sys.stderr)
    problems.append(("20news-shaped (synthetic, sparse)", newsgroups_shaped()))
    for name, (Xtr, Xte, ytr, yte) in problems:
        classes = np.unique(ytr)
        print(f"\n### {name}: n = {Xtr.shape[0]}, d = {Xtr.shape[1]}, {classes.size} classes "
              f"(test accuracy, mean ± sd [worst] over {args.seeds} seeds)\n")
        sk = _score(lambda: LogisticRegression(max_iter=2000), Xtr, ytr, Xte, yte)
        print(f"scikit-learn LogisticRegression (non-private): {sk:.4f}\n")
        methods = {
            "default (multi_class='auto': softmax by dp_gd)": {},
            "objective perturbation (one-vs-rest)": {"multi_class": "ovr"},
            "dp_sgd (softmax)": {"solver": "dp_sgd"},
            "dp_gd (one-vs-rest)": {"solver": "dp_gd", "multi_class": "ovr"},
        }
        print("| method | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " | CPU s at ε = 1 |")
        print("|---|" + "---|" * (len(EPSILONS) + 1))
        for label, kw in methods.items():
            cells, cpu1 = [], math.nan
            for eps in EPSILONS:
                accs = []
                for seed in range(args.seeds):
                    t = time.process_time()
                    accs.append(_score(lambda: DPLogisticRegression(epsilon=eps, classes=classes, random_state=seed,
                                                                    **kw), Xtr, ytr, Xte, yte))
                    if eps == 1.0 and seed == 0:
                        cpu1 = time.process_time() - t
                cells.append(f"{np.mean(accs):.3f} ± {np.std(accs):.3f} [{min(accs):.3f}]")
            print(f"| {label} | " + " | ".join(cells) + f" | {cpu1:.2f} |")
        if hasattr(Xtr, "nnz"):
            need = 8 * Xtr.shape[0] * Xtr.shape[1] / 2**30
            print(f"| diffprivlib | dense input only: the copy would need {need:.1f} GiB | | | | |")
            continue
        scores = diffprivlib_scores(Xtr, ytr, Xte, yte, args)
        if scores is None:
            print("| diffprivlib | not importable here (pass --diffprivlib-python) | | | | |")
            continue
        cells = [f"{np.mean(a):.3f} ± {np.std(a):.3f} [{min(a):.3f}]" for a in scores]
        print("| diffprivlib LogisticRegression (ε-DP, data_norm=1) | " + " | ".join(cells) + " | |")


_DPL = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np
from diffprivlib.models import LogisticRegression
d = np.load(sys.argv[1])
out = [[float(LogisticRegression(epsilon=e, data_norm=1.0, random_state=s).fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"]))
        for s in range(int(sys.argv[2]))] for e in json.loads(sys.argv[3])]
print(json.dumps(out))
"""


def diffprivlib_scores(Xtr, ytr, Xte, yte, args):
    """Test accuracies [per ε][per seed] of diffprivlib's LogisticRegression(epsilon, data_norm=1): in this
    interpreter, or — diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.6 — in ``--diffprivlib-python``
    (an environment with scikit-learn < 1.6 and diffprivlib), on the same split; None if neither works."""
    import tempfile

    python = args.diffprivlib_python
    if python is None:
        try:
            import diffprivlib.models  # noqa: F401
            python = sys.executable
        except Exception:  # an ImportError / TypeError of the incompatible versions
            return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "split.npz")
        np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
        out = subprocess.run([python, "-c", _DPL, path, str(args.seeds), json.dumps(list(EPSILONS))],
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(f"diffprivlib failed: {out.stderr[-500:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _a9a(args):
    sys.path.insert(0, HERE)
    from bench_defaults import load

    return load(args.data, "a9a")


def lp_rule_section(args) -> None:
    from algorithms import DPLogisticRegression

    data = _a9a(args)
    if data is None:
        return
    Xtr, ytr, Xte, yte = data
    d = Xtr.shape[1] + 1  # with the intercept column
    rules = {f"1 + 1/(c ln d), c = {c:g}": 1.0 + 1.0 / (c * math.log(d)) for c in (0.5, 1.0, 2.0)}
    rules["1.5"] = 1.5
    print(f"\n### ℓp solvers on a9a at ε = 1: test error by p (d = {d}; mean ± sd [worst] over {args.seeds} seeds)\n")
    solvers = ("noisy_mirror_descent", "batched_truncated_mirror_descent", "shuffled_truncated_mirror_descent")
    print("| p | value | " + " | ".join(solvers) + " |")
    print("|---|---|" + "---|" * len(solvers))
    for label, p in rules.items():
        cells = []
        for solver in solvers:
            errs = [1.0 - _score(lambda: DPLogisticRegression(solver=solver, epsilon=1.0, classes=[-1, 1],
                                                              random_state=s, solver_params={"p": p}),
                                 Xtr, ytr, Xte, yte) for s in range(args.seeds)]
            cells.append(f"{np.mean(errs):.4f} ± {np.std(errs):.4f} [{max(errs):.4f}]")
        print(f"| {label} | {p:.4f} | " + " | ".join(cells) + " |")


def l1_section(args) -> None:
    from algorithms import DPLogisticRegression

    data = _a9a(args)
    if data is None:
        return
    Xtr, ytr, Xte, yte = data
    print(f"\n### penalty='l1' against 'l2' on a9a at ε = 1 (alpha='auto'; {args.seeds} seeds)\n")
    print("| solver | penalty | test error | zero weights |")
    print("|---|---|---|---|")
    for solver in ("dp_gd", "dp_sgd", "dp_svrg_pp"):
        for penalty in ("l2", "l1"):
            errs, zeros = [], []
            for s in range(args.seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = DPLogisticRegression(solver=solver, penalty=penalty, epsilon=1.0, classes=[-1, 1],
                                             random_state=s).fit(Xtr, ytr)
                errs.append(1.0 - m.score(Xte, yte))
                zeros.append(float(np.mean(m.coef_ == 0.0)))
            print(f"| {solver} | {penalty} | {np.mean(errs):.4f} ± {np.std(errs):.4f} | {np.mean(zeros):.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("dense", "sparse", "multiclass", "lp-rule", "l1"):
        ap.add_argument(f"--{flag}", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-dense", type=int, default=1_000_000)
    ap.add_argument("--n-sparse", type=int, default=200_000)
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--diffprivlib-python", default=None,
                    help="interpreter with diffprivlib and scikit-learn < 1.6 (diffprivlib 0.6.6 does not import "
                         "with scikit-learn >= 1.6)")
    args = ap.parse_args()
    chosen = [f for f in ("dense", "sparse", "multiclass", "lp_rule", "l1") if getattr(args, f)]
    for section in chosen or ("dense", "sparse", "multiclass", "lp_rule", "l1"):
        globals()[f"{section}_section"](args)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
