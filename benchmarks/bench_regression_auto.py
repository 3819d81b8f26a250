"""The regressors' ``solver="auto"`` against every fixed regression solver and the private mean (issue 24, item 2).

Every fit is ``DPLinearRegression(...)`` / ``DPHuberRegressor(...)`` with ``epsilon=ε``, δ = 1e-5, R = 1, a public
``target_range`` and every other argument at its default, ``random_state=seed``; seed s also seeds the train /
test split of the data sets split here. Metric: test R² (and MSE, target units²) per seed; each row gives the
mean over seeds, the worst seed, and on how many seeds the fit was below the private mean of the same seed
(``algorithms.auto_regressor.private_mean`` with the whole ε, i.e. the constant ``solver="auto"`` falls back to).

Data sets / targets (features: a public per-row map to norm ≤ 1; feature statistics from the training split
only — a non-private step, as in issue 24; target ranges are public, from the documentation, never the data):

* ``diabetes`` (scikit-learn): 70/30 split, standardised, scaled by 1/√d, rows clipped to norm 1;
  ``target_range=(0, 350)`` (a disease-progression score; sklearn documents 25–346). 309 training rows, d = 10.
* ``adult_hours`` / ``adult_age`` (``../shared/data/adult``, raw UCI census, the given train / test files):
  hours-per-week (1–99) / age (17–90, top-coded at 90), the census schema's ranges, from the other attributes —
  the 5 other numeric columns standardised, the 8 categorical ones one-hot over the training file's
  categories (``?`` its own category), the income label as a 0/1 column, rows to unit norm.
  32 561 / 16 281 rows, d = 5 + 102 + 1 = 108.
* ``wine_alcohol`` (scikit-learn's wine): alcohol (% by volume; ``target_range=(8, 16)``, the span of still
  table wine) from the other 12 measurements and the cultivar (one-hot), standardised, scaled by 1/√d and
  clipped to norm 1; 70/30 split. 124 training rows, d = 15.
* ``syn_*``: scikit-learn ``make_regression`` (all features informative, noise-free) with Gaussian noise of
  ``r`` × the signal's standard deviation added; features divided by √d + 3 and clipped to norm 1; targets
  divided by 3 × their known standard deviation √(‖w‖² + noise²) and clipped to the stated range [−1, 1]
  (public: 3 standard deviations of the generator's law). 70/30 split.
  ``syn_small`` n = 1 000, d = 10, r = 0.5; ``syn_noisy`` n = 10 000, d = 30, r = 1; ``syn_large`` n = 50 000,
  d = 50, r = 0.1; ``syn_wide`` n = 4 000, d = 100, r = 0.3.

``RULE_DATASETS`` chose the rule of :mod:`algorithms.auto_regressor`; ``HELD_OUT`` were not run until it was
fixed (RESULTS.md "Regressors on solver='auto'").

Usage: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_regression_auto.py [--datasets a,b] [--eps 0.01,0.1,0.5,1,2,10]
[--seeds 5] [--candidates linear:dp_gd,huber:dp_gd,...] [--no-auto]``. A missing data file is skipped with a
message. Times are CPU seconds of this process.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import datasets  # noqa: E402

#: Data sets the rule was chosen on; the held-out ones were first run after it was fixed.
RULE_DATASETS = ("diabetes", "adult_hours", "syn_small", "syn_noisy", "syn_large")
HELD_OUT = ("adult_age", "wine_alcohol", "syn_wide")
RANGES = {"diabetes": (0.0, 350.0), "adult_hours": (1.0, 99.0), "adult_age": (17.0, 90.0),
          "wine_alcohol": (8.0, 16.0)}
SYNTHETIC = {"syn_small": (1_000, 10, 0.5), "syn_noisy": (10_000, 30, 1.0), "syn_large": (50_000, 50, 0.1),
             "syn_wide": (4_000, 100, 0.3)}
ADULT_TARGET = {"adult_hours": 12, "adult_age": 0}  # column of the UCI file
#: (estimator, solver) of every fixed candidate, with its defaults
CANDIDATES = (("linear", "dp_gd"), ("linear", "dp_sgd"), ("linear", "adassp"), ("huber", "dp_gd"),
              ("huber", "dp_sgd"), ("huber", "objective_perturbation"), ("huber", "output_perturbation_gd"))


def _clip_rows(Z: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))  # benchmark preprocessing, not a sensitivity
    return Z / np.maximum(1.0, norms)[:, None]


def _standard_split(X, y, split: int):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=split)
    sc = StandardScaler().fit(Xtr)
    scale = math.sqrt(X.shape[1])
    return _clip_rows(sc.transform(Xtr) / scale), ytr, _clip_rows(sc.transform(Xte) / scale), yte


def _adult(target: int, directory: str):
    paths = [os.path.join(directory, "adult", f"adult.{part}.bz2") for part in ("data", "test")]
    if not all(os.path.exists(p) for p in paths):
        print(f"skipping adult: {paths[0]} not found", file=sys.stderr)
        return None
    train, test = (datasets._adult_rows(p) for p in paths)
    Xtr, Xte = datasets.adult_features(train, test, [j for j in datasets.ADULT_NUMERIC if j != target])
    income = [np.array([[1.0 if r[14].rstrip(".") == ">50K" else 0.0] for r in rows]) for rows in (train, test)]
    ytr, yte = (np.array([float(r[target]) for r in rows]) for rows in (train, test))
    return (datasets._unit_rows(np.hstack([Xtr, income[0]])), ytr, datasets._unit_rows(np.hstack([Xte, income[1]])),
            yte)


def _synthetic(name: str, split: int):
    from sklearn.datasets import make_regression

    n, d, r = SYNTHETIC[name]
    X, y, w = make_regression(n, d, n_informative=d, noise=0.0, coef=True, random_state=7000 + split)
    gen = np.random.default_rng(8000 + split)
    noise = r * float(np.linalg.norm(w))  # the signal's sd: X has N(0, 1) entries
    y = y + noise * gen.standard_normal(n)
    scale = 3.0 * math.sqrt(float(w @ w) + noise * noise)
    X, y = _clip_rows(X / (math.sqrt(d) + 3.0)), np.clip(y / scale, -1.0, 1.0)
    cut = int(0.7 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def load(name: str, split: int, directory: str = datasets.DATA):
    """(X_train, y_train, X_test, y_test, target_range) of ``name`` (module docstring), or None."""
    from sklearn import datasets as skd

    if name == "diabetes":
        X, y = skd.load_diabetes(return_X_y=True)
        return (*_standard_split(X, y, split), RANGES[name])
    if name == "wine_alcohol":
        X, cultivar = skd.load_wine(return_X_y=True)
        features = np.column_stack([X[:, 1:], np.eye(3)[cultivar]])
        return (*_standard_split(features, X[:, 0], split), RANGES[name])
    if name in ADULT_TARGET:
        data = _adult(ADULT_TARGET[name], directory)
        return None if data is None else (*data, RANGES[name])
    if name in SYNTHETIC:
        return (*_synthetic(name, split), (-1.0, 1.0))
    raise ValueError(f"unknown data set {name!r}")


def r2_mse(y: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    mse = float(np.mean((y - pred) ** 2))
    return 1.0 - mse / float(np.var(y)), mse


def _number(text: str):
    """An int, a float or the string itself (a solver_params value given on the command line)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def make(estimator: str, solver: str, eps: float, rng_range, seed: int, n: int, spec: str = ""):
    """The estimator of a candidate; ``spec`` "k=v;..." sets solver_params (``steps_div=s``: T = min(300, ⌈n·ε/s⌉))."""
    from algorithms import DPHuberRegressor, DPLinearRegression

    params = {}
    for item in filter(None, spec.split(";")):
        key, value = item.split("=")
        if key == "steps_div":
            params["steps"] = min(300, max(1, math.ceil(n * eps / float(value))))
        else:
            params[key] = _number(value)
    cls = DPLinearRegression if estimator == "linear" else DPHuberRegressor
    return cls(solver=solver, epsilon=eps, target_range=rng_range, random_state=seed, solver_params=params or None)


def private_mean_prediction(ytr, rng_range, eps: float, seed: int) -> float:
    from algorithms.auto_regressor import private_mean

    lo, hi = rng_range
    mid, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
    mean, _ = private_mean(np.clip((ytr - mid) / half, -1.0, 1.0), eps, np.random.default_rng(seed))
    return mean * half + mid


def run(args) -> None:
    names = args.datasets.split(",")
    eps_grid = [float(e) for e in args.eps.split(",")]
    cands = [tuple(c.split(":", 2)) for c in args.candidates.split(",")] if args.candidates else list(CANDIDATES)
    cands = [(c[0], c[1], c[2] if len(c) > 2 else "") for c in cands]
    if not args.no_auto:
        cands += [("linear", "auto", ""), ("huber", "auto", "")]
    warnings.simplefilter("ignore")
    summary = []
    for name in names:
        loaded = [load(name, s) for s in range(args.seeds)] if name not in ADULT_TARGET else None
        if loaded is None:
            one = load(name, 0)
            if one is None:
                continue
            loaded = [one] * args.seeds
        Xtr, _, _, _, rr = loaded[0]
        n, d = Xtr.shape
        tag = "held out" if name in HELD_OUT else "rule"
        print(f"\n## {name} ({tag}): n = {n}, d = {d}, target_range = {rr}, {args.seeds} seeds\n", flush=True)
        print("| ε | n·ε | estimator | solver | R² mean | R² worst seed | MSE mean | seeds below private mean | "
              "CPU s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for eps in eps_grid:
            const = []
            for s, (Xa, ya, Xb, yb, rr) in enumerate(loaded):
                const.append(r2_mse(yb, np.full(yb.shape, private_mean_prediction(ya, rr, eps, 10_000 + s))))
            results = {("const", "private_mean"): const}
            for est, solver, spec in cands:
                t0, out, chosen = time.process_time(), [], set()
                for s, (Xa, ya, Xb, yb, rr) in enumerate(loaded):
                    model = make(est, solver, eps, rr, s, n, spec).fit(Xa, ya)
                    out.append(r2_mse(yb, model.predict(Xb)))
                    chosen.add(getattr(model, "solver_", solver))
                results[(est, solver + (f"[{spec}]" if spec else ""))] = out
                label = f"auto ({'/'.join(sorted(chosen))})" if solver == "auto" else solver + (f" {spec}" if spec else "")
                row(eps, n, est, label, out, const, time.process_time() - t0)
            row(eps, n, "-", "private mean", const, const, 0.0)
            summary.append((name, tag, eps, n, results))
    print("\n## Summary: the default (auto) against the best fixed solver (mean R² over seeds)\n")
    print("| data | set | ε | n·ε | estimator | best fixed | its R² | auto R² | gap | auto worst | private mean worst "
          "| auto seeds below private mean |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, tag, eps, n, results in summary:
        for est in ("linear", "huber"):
            fixed = {s: v for (e, s), v in results.items() if e == est and s != "auto"}
            if (est, "auto") not in results or not fixed:
                continue
            best = max(fixed, key=lambda s: np.mean([r for r, _ in fixed[s]]))
            b = np.mean([r for r, _ in fixed[best]])
            a = [r for r, _ in results[(est, "auto")]]
            c = [r for r, _ in results[("const", "private_mean")]]
            below = sum(x < y for x, y in zip(a, c))
            print(f"| {name} | {tag} | {eps:g} | {n * eps:.3g} | {est} | {best} | {b:.3f} | {np.mean(a):.3f} | "
                  f"{np.mean(a) - b:+.3f} | {min(a):.3f} | {min(c):.3f} | {below} |")


def row(eps, n, est, label, out, const, seconds) -> None:
    r2 = [r for r, _ in out]
    below = sum(r < c for r, (c, _) in zip(r2, const))
    print(f"| {eps:g} | {n * eps:.3g} | {est} | {label} | {np.mean(r2):.3f} | {min(r2):.3f} | "
          f"{np.mean([m for _, m in out]):.4g} | {below} | {seconds:.1f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default=",".join(RULE_DATASETS + HELD_OUT))
    p.add_argument("--eps", default="0.01,0.1,0.5,1,2,10")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--candidates", default="", help="estimator:solver,... (default: every fixed candidate)")
    p.add_argument("--no-auto", action="store_true", help="fixed candidates only (the sweep the rule came from)")
    args = p.parse_args()
    try:
        eps = [float(e) for e in args.eps.split(",")]
    except ValueError:
        eps = [math.nan]
    if not all(0 < e < math.inf for e in eps) or args.seeds < 1:
        p.error(f"--eps must be finite numbers > 0 and --seeds >= 1; got --eps {args.eps!r}, --seeds {args.seeds}")
    unknown = set(args.datasets.split(",")) - set(RULE_DATASETS + HELD_OUT)
    if unknown:
        p.error(f"--datasets must be among {', '.join(RULE_DATASETS + HELD_OUT)}; got {', '.join(sorted(unknown))}")
    run(args)


if __name__ == "__main__":
    main()
