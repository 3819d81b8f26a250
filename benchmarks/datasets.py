"""Classification data sets of the benchmarks, preprocessed as a user would (issue 24), labels in {−1, +1}.

Every loader returns ``(X_train, y_train, X_test, y_test)`` with rows of norm ≤ 1 (a public per-row map:
each row divided by its norm), or ``None`` (with a message on stderr) when a file is missing. Feature
statistics (standardisation) come from the training split only — a non-private step, as in the issue.

* ``breast_cancer`` (scikit-learn): 70/30 stratified split (``random_state=split``), standardised, rows to
  unit norm. 398 training rows, d = 30.
* ``digits`` (scikit-learn): 0 vs rest, pixels / 16, rows to unit norm, 70/30 stratified. 1257 rows, d = 64.
* ``wine`` (scikit-learn): class 0 vs rest, standardised, unit rows, 70/30 stratified. 124 rows, d = 13.
* ``a9a`` / ``ijcnn1`` (``../shared/data``, LIBSVM): the given train / test files, rows to unit norm (CSR).
* ``adult`` (``../shared/data/adult``, raw UCI census): the 6 numeric columns standardised with the
  training file's statistics, the 8 categorical ones one-hot over the categories seen in the training
  file (a public schema; a missing value ``?`` is its own category, an unseen test category all zeros),
  rows to unit norm. 32 561 / 16 281 rows, d = 6 + 102.
* ``synthetic``: :func:`algorithms.synthetic.make_classification` (n = 20 000, d = 20, label noise 0.1),
  70/30 split; ``synthetic_wide``: n = 3 000, d = 100, scale 6, label noise 0.05 (small n, wide);
  ``synthetic_wide_large``: the same with n = 40 000 (wide with n·ε ≥ 1300 at ε = 0.1: the held-out check of
  ``algorithms.auto_solver.SGD_FROM_D``).
"""

from __future__ import annotations

import bz2
import os
import sys
from typing import Optional, Tuple

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
Split = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
SVMLIGHT = {"a9a": dict(zero_based=True, n_features=123), "ijcnn1": dict(zero_based=False, n_features=22)}
ADULT_NUMERIC = (0, 2, 4, 10, 11, 12)


def _unit_rows(X):
    from sklearn.preprocessing import normalize

    return normalize(X)


def _sklearn(name: str, split: int) -> Split:
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
        y = np.where(y == 1, 1.0, -1.0)
    elif name == "digits":
        X, t = datasets.load_digits(return_X_y=True)
        X, y = X / 16.0, np.where(t == 0, 1.0, -1.0)
    else:
        X, t = datasets.load_wine(return_X_y=True)
        y = np.where(t == 0, 1.0, -1.0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=split)
    if name != "digits":
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    return _unit_rows(Xtr), ytr, _unit_rows(Xte), yte


def _svmlight(name: str, directory: str) -> Optional[Split]:
    from sklearn.datasets import load_svmlight_file

    paths = [os.path.join(directory, name, f"{name}.{part}.bz2") for part in ("trn", "tst")]
    if not all(os.path.exists(p) for p in paths):
        print(f"skipping {name}: {paths[0]} not found", file=sys.stderr)
        return None
    (Xtr, ytr), (Xte, yte) = (load_svmlight_file(p, **SVMLIGHT[name]) for p in paths)
    return _unit_rows(Xtr), np.where(ytr > 0, 1.0, -1.0), _unit_rows(Xte), np.where(yte > 0, 1.0, -1.0)


def _adult_rows(path: str):
    rows = []
    with bz2.open(path, "rt") as fh:
        for line in fh:
            parts = [p.strip() for p in line.strip().split(",")]
            if len(parts) == 15:
                rows.append(parts)
    return rows


def adult_features(train: list, test: list, numeric) -> Tuple[np.ndarray, np.ndarray]:
    """(X_train, X_test) of raw UCI Adult rows: the ``numeric`` columns standardised with the training file's
    statistics, then the 8 categorical columns one-hot over the training file's categories (module docstring)."""
    categorical = [j for j in range(14) if j not in ADULT_NUMERIC]
    cats = {j: sorted({r[j] for r in train}) for j in categorical}  # the training file's categories

    def encode(rows):
        num = np.array([[float(r[j]) for j in numeric] for r in rows])
        blocks = [num]
        for j in categorical:
            index = {c: i for i, c in enumerate(cats[j])}
            block = np.zeros((len(rows), len(cats[j])))
            for i, r in enumerate(rows):
                k = index.get(r[j])
                if k is not None:
                    block[i, k] = 1.0
            blocks.append(block)
        return np.hstack(blocks)

    Xtr, Xte = encode(train), encode(test)
    k = len(numeric)
    mu, sd = Xtr[:, :k].mean(axis=0), Xtr[:, :k].std(axis=0)
    Xtr[:, :k] = (Xtr[:, :k] - mu) / sd
    Xte[:, :k] = (Xte[:, :k] - mu) / sd
    return Xtr, Xte


def _adult(directory: str) -> Optional[Split]:
    paths = [os.path.join(directory, "adult", f"adult.{part}.bz2") for part in ("data", "test")]
    if not all(os.path.exists(p) for p in paths):
        print(f"skipping adult: {paths[0]} not found", file=sys.stderr)
        return None
    train, test = (_adult_rows(p) for p in paths)
    Xtr, Xte = adult_features(train, test, ADULT_NUMERIC)
    ytr, yte = (np.array([1.0 if r[14].rstrip(".") == ">50K" else -1.0 for r in rows]) for rows in (train, test))
    return _unit_rows(Xtr), ytr, _unit_rows(Xte), yte


def _synthetic(name: str, split: int) -> Split:
    from algorithms.synthetic import make_classification

    if name == "synthetic":
        X, y, _ = make_classification(20_000, 20, seed=1000 + split)
    elif name == "synthetic_wide":
        X, y, _ = make_classification(3_000, 100, scale=6.0, label_noise=0.05, seed=2000 + split)
    else:
        X, y, _ = make_classification(40_000, 100, scale=6.0, label_noise=0.05, seed=3000 + split)
    cut = int(0.7 * X.shape[0])
    return X[:cut], y[:cut], X[cut:], y[cut:]


def load(name: str, split: int = 0, directory: str = DATA) -> Optional[Split]:
    """The data set ``name`` (module docstring); ``split`` seeds the random train / test split where there is
    one (the LIBSVM and Adult files come split)."""
    if name in ("breast_cancer", "digits", "wine"):
        return _sklearn(name, split)
    if name in SVMLIGHT:
        return _svmlight(name, directory)
    if name == "adult":
        return _adult(directory)
    if name in ("synthetic", "synthetic_wide", "synthetic_wide_large"):
        return _synthetic(name, split)
    raise ValueError(f"unknown data set {name!r}")


NAMES = ("breast_cancer", "digits", "wine", "a9a", "ijcnn1", "adult", "synthetic", "synthetic_wide", "synthetic_wide_large")
