"""Non-convex private training: the DP-SRM paper's Table 2 on a9a, a one-hidden-layer network on
a9a / ijcnn1 against scikit-learn, and per-example-gradient throughput (Numba vs NumPy, and Opacus).

Part 1 — wang-jayaraman-evans-gu §7.1, Table 2: logistic regression with the non-convex penalty
λΣⱼθⱼ²/(1 + θⱼ²), λ = 1e-3, ε ∈ {0.2, 0.5}, δ = 1e-5, replace-one, ``--seeds`` runs (default 10).
Rows are scaled to ‖x‖ = 1 after appending an intercept feature (a per-record map; the papers' G = 1).
DP-SRM with its defaults (full batches, T = ⌈nε/160⌉ ≤ 100, γ = 1/2, C₂ = C₁/50, extrapolation 0.8,
step min(1.9, nε/(600√T))/β, last iterate), with its previous defaults (T = 100, no extrapolation,
step 1.9/β), and with ``defaults="paper"`` (b₀ = b = 100, C₁ = 1, C₂ = γ = 0.01, 5 passes, step cap
C₂/β; last and uniformly random iterate). DP-GD with its defaults, with Table 2's 20 full-batch steps
(last iterate, §6.1) and with DP-SRM's T and Nesterov 0.8 (the same schedule and extrapolation).
RRPSGD: b = 100, T_max = 16 passes (E[R] ≈ 8 passes, Table 2's 8–10). DP-SGD: b = 256,
5 passes, without replacement. All σ from the dpcore accountant (Theorem 5.1's σ is refused on a9a
at these ε: its order condition fails — printed). Columns: test error, test logistic loss (nats),
data passes (gradient evaluations / n), CPU seconds per run (process time, calibration included),
final ‖∇F‖ on the training set; mean (sd), and the worst seed's test error. The paper's non-private baseline is compared with the
non-private stationary point of the same objective on raw and on unit-norm features.

``--srm-sweep`` — the benchmark that chose DP-SRM's defaults: test error (mean of ``--seeds``, at most
4; seeds 5000, 5001, …, disjoint from Table 2's 1000–1009) of DP-GD (defaults, and with DP-SRM's T and Nesterov 0.8) and of DP-SRM settings on a9a, ijcnn1 (unit rows + intercept) and synthetic
data (``algorithms.synthetic.make_classification(60000, 10, scale=8)``: 40000 training, 20000 test
rows) at ε ∈ {0.2, 1}; ``--sweep-data`` picks the data sets. It includes the variance-reduction regime
(step cap s, C₂ = s/4, γ = C₂/C₁), which lost. Table 2 ends with the paired per-seed difference of
DP-SRM's defaults against every DP-GD row and its standard error.

Part 2 — ``DPMLPClassifier`` (tanh, ``--hidden`` units) on a9a and ijcnn1 at ε ∈ {1, ∞} (DP-SGD with
the Adam and the heavy-ball update, with the earlier plain settings, DP-SRM) against
``sklearn.neural_network.MLPClassifier`` of the same width (non-private, tanh, adam, 50 iterations).

Part 3 — per-example clipped-gradient throughput of the network on a9a (examples/s, process time,
best of 5 rounds in which every cell is timed once in turn, one thread: BLAS limited to one thread). (A) one call on the first b rows: the Numba
kernel :func:`algorithms.mlp_kernels.mlp_clipped_sum_kernel` (norms from the outer-product structure,
Goodfellow 2015, fused with the clip and the sum) against three NumPy implementations of the same
computation — the natural vectorised one (per-example gradients materialised with einsum, then norms,
clip, sum; in blocks of ≤ 4096 rows), a vectorised one using the same norm trick, and a per-example
loop. (B) whole DP-Adam runs (DPMLPClassifier's default step: uniform batch without replacement,
clipped sum, Gaussian noise, Adam, cosine schedule) of two epochs, T = ⌈2n/b⌉ steps: the Numba run is
one call of :func:`algorithms.mlp_kernels.mlp_noisy_sgd_kernel`; the NumPy runs loop over the steps in
Python (``numpy_dp_adam``) with the materialised or the norm-trick clipped sum. b ∈ {64, 256, 1024, n}
(1024: the DPMLPClassifier default for dp_sgd / dp_srm / rrpsgd; n: dp_gd). A DP-SGD epoch
against Opacus when ``/tmp/peers_nonconvex/bin/python`` has torch and opacus (a throwaway venv;
skipped with a message otherwise).

``--table2-objective`` — Table 2 in the paper's own metric (issue 24): the training objective on raw a9a
features (:func:`table2_objective`), DP-SRM's defaults (C₁ = 0.85·G, accountant "auto"), the previous defaults
(C₁ = G, accountant "rdp") and options (averaged outputs, C₁ = 0.7·G, μ = 0.7).

``--averaging`` — DP-SRM's averaged outputs (``output="tail_average"`` / ``"ema"``, post-processing of the same
run) and clip norms C₁ = c·G against C₁ = G (:func:`averaging`): training objective and test error on a9a,
ijcnn1, the sweep's synthetic set, Adult, breast_cancer and digits — and on the sets held out for the clip default,
wine, synthetic_wide, synthetic_wide_large and synthetic_d20 (``--averaging-data``) — at ε ∈ {0.2, 0.5, 1}, sweep
seeds 5000…, with the per-seed paired difference against the first of ``--averaging-settings``; ``--accountant``
(default auto) for every row.

``--calibration-time`` — wall time of DP-SRM's noise calibration with accountant "rdp" and "auto" for its typical
(n, T, b) (:func:`calibration_time`).

``--mlp-accountant`` — ``DPMLPClassifier(solver="dp_srm")`` with its defaults (20 passes, b = min(1024, n), η = 1.5,
C₁ = 1, C₂ = γ·C₁ = 0.1) calibrated with accountant "rdp" against "auto" (:func:`mlp_accountant`), both in every
seed (paired, interleaved; ``--mlp-solver`` dp_sgd / dp_gd / rrpsgd: the other solvers): noise multiplier z, test error mean (sd) [worst seed], the calibration's wall time
(median, the MLP's own ``calibrated_privacy`` call timed) on a9a, ijcnn1 (the sets the MLP defaults were chosen
on), breast_cancer, digits (0 vs rest) and wine (class 0 vs rest; scikit-learn, held out from every default
choice) (``--mlp-data``), unit rows + intercept, ε ∈ {0.2, 1}, ``--seeds`` seeds 7000, 7001, … (disjoint from
every sweep); then auto − rdp paired by seed: mean, standard error and the worst seed's difference.

Usage: ``python benchmarks/bench_nonconvex.py [--seeds 10] [--hidden 16] [--skip-table2] [--skip-mlp]
[--skip-throughput] [--srm-sweep] [--table2-objective] [--calibration-time] [--mlp-accountant [--mlp-data
wine,digits]] [--averaging [--averaging-data
a9a,adult] [--averaging-settings base,c085] [--accountant auto]]``. Data from
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
sys.path.insert(0, os.path.dirname(__file__))  # benchmarks/datasets.py (Adult)

from algorithms.dp_gd import dp_gd  # noqa: E402
from algorithms.dp_sgd import dp_sgd  # noqa: E402
from algorithms.dp_srm import default_srm_steps, dp_srm, dp_srm_paper_sigmas  # noqa: E402
from algorithms.losses import get_loss  # noqa: E402
from algorithms.mlp import MLP_SOLVERS, DPMLPClassifier  # noqa: E402
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
PAPER_SRM = dict(defaults="paper", output="last")  # b₀ = b = 100, C₁ = 1, C₂ = γ = 0.01, 5 passes (§7.1)
SOLVERS = {
    "dp_srm (defaults: T = ⌈nε/160⌉, extrapolation 0.8)": (dp_srm, {}),
    "dp_srm (previous defaults: T = T_gd = 100, no extrapolation)": (dp_srm, dict(steps=100, extrapolation=0.0,
                                                                                   learning_rate=1.9 / (0.25 + 2 * LAM))),
    "dp_srm (paper's settings, last iterate)": (dp_srm, PAPER_SRM),
    "dp_srm (paper's settings, random iterate, Alg. 1)": (dp_srm, dict(defaults="paper")),
    "dp_gd (defaults)": (dp_gd, {}),
    "dp_gd (20 steps, last)": (dp_gd, dict(steps=20, output="last")),
    "dp_gd (dp_srm's T = ⌈nε/160⌉, Nesterov 0.8)": (dp_gd, dict(srm_schedule=True, momentum=0.8)),
    "rrpsgd (b = 100, 16 passes T_max)": (rrpsgd, dict(batch_size=100, max_epochs=16)),
    "dp_sgd (b = 256, w/o repl.)": (dp_sgd, dict(batch_size=256, epochs=5, sampling="without_replacement")),
}
# --srm-sweep: DP-SRM settings as rules of n (b, b₀ as fractions of n; T as a multiple of default_steps)
SRM_SWEEP = {
    "dp_gd (defaults)": None,
    "dp_gd T = ⌈nε/160⌉ (dp_srm's), Nesterov 0.8": dict(solver="dp_gd", steps_rule=True, momentum=0.8),
    "dp_srm defaults (b = n, T = ⌈nε/160⌉, γ = 0.5, C₂ = C₁/50, μ = 0.8, step min(1.9, nε/(600√T))/β)": {},
    "dp_srm defaults with μ = 0.9": dict(extrapolation=0.9),
    "dp_srm defaults with T = ⌈nε/250⌉": dict(steps_scale=250.0),
    "dp_srm defaults with γ = 0.2, C₂ = C₁/20": dict(momentum=0.2, diff_clip_norm=0.05),
    "dp_srm previous defaults (T = T_gd, no extrapolation, step 1.9/β)": dict(steps_gd=True, extrapolation=0.0,
                                                                             lr_factor=1.9),
    "dp_srm b = n/10, b₀ = n, T = 5·T_gd (no extrapolation)": dict(batch_frac=10, steps_factor=5.0,
                                                                     initial_batch_size=-1),
    "dp_srm paper's settings (b = 100, γ = C₂ = 0.01, step cap), last iterate": PAPER_SRM,
    # the variance-reduction regime: step cap s, C₂ = s/4 ≥ every per-example gradient difference (logistic,
    # ‖x‖ ≤ 1, μ = 0: the C₂ clip is a no-op), γ = C₂/C₁ (the paper's choice) and 3C₂/C₁
    "dp_srm VR regime: T = 100, step cap 0.4, C₂ = 0.1, γ = C₂/C₁ = 0.1, μ = 0, step 1.9/β": dict(
        steps=100, step_bound=0.4, diff_clip_norm=0.1, momentum=0.1, extrapolation=0.0, lr_factor=1.9),
    "dp_srm VR regime, γ = 3C₂/C₁ = 0.3": dict(steps=100, step_bound=0.4, diff_clip_norm=0.1, momentum=0.3,
                                               extrapolation=0.0, lr_factor=1.9),
    "dp_srm VR regime: T = 200, step cap 0.2, C₂ = 0.05, γ = C₂/C₁ = 0.05, μ = 0, step 1.9/β": dict(
        steps=200, step_bound=0.2, diff_clip_norm=0.05, momentum=0.05, extrapolation=0.0, lr_factor=1.9),
}
SWEEP_SEED0 = 5000  # --srm-sweep seeds 5000, 5001, …: disjoint from Table 2's evaluation seeds 1000–1009


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


def logistic_test_loss(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """Mean logistic loss log(1 + e^{−y⟨w, x⟩}) (nats)."""
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w))))


def table2(seeds: int) -> None:
    (Xtr_raw, ytr), (Xte_raw, yte) = load("a9a", 123, True)
    Xtr, Xte = unit_rows(Xtr_raw), unit_rows(Xte_raw)
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
    head = ("| ε | solver | test error (sd) [worst seed] | test loss | passes | CPU s | ‖∇F‖ | paper 'test error' | "
            "paper passes | paper CPU s | paper ‖∇F‖ |")
    print(head)
    print("|" + "---|" * 11)
    per_seed = {}  # (ε, solver) -> test errors by seed, for the paired comparison below
    for eps in (0.2, 0.5):
        for name, (fn, kw) in SOLVERS.items():
            errs, tls, gns, passes, cpu = [], [], [], [], []
            for s in range(seeds):
                kw2 = dict(kw)
                if kw2.pop("srm_schedule", False):  # DP-SRM's default T and step rule, public n and ε only
                    kw2["steps"] = default_srm_steps(n, eps)  # dp_gd's default step rule at that T
                t = time.process_time()
                res = fn(Xtr, ytr, epsilon=eps, delta=DELTA, alpha=LAM, penalty="nonconvex", data_norm_bound=1.0,
                         rng=1000 + s, **kw2)
                cpu.append(time.process_time() - t)
                w = res.weights
                errs.append(float(np.mean(np.where(Xte @ w > 0, 1.0, -1.0) != yte)))
                tls.append(logistic_test_loss(w, Xte, yte))
                gns.append(float(np.linalg.norm(loss.gradient(w, Xtr, ytr) + reg.smooth_gradient(w))))
                passes.append(res.n_gradient_evaluations / n)
                assert res.privacy.epsilon <= eps
            per_seed[eps, name] = np.array(errs)
            p = PAPER[eps].get(name.split()[0], ("—", "—", "—", "—"))
            print(f"| {eps} | {name} | {np.mean(errs):.4f} ({np.std(errs):.4f}) [{np.max(errs):.4f}] | "
                  f"{np.mean(tls):.4f} ({np.std(tls):.4f}) | {np.mean(passes):.1f} | {np.median(cpu):.3f} | {np.mean(gns):.4f} ({np.std(gns):.4f}) | "
                  f"{p[0]} | {p[1]} | {p[2]} | {p[3]} |",
                  flush=True)
    paired_difference(per_seed, seeds)
    print(f"\nNon-private stationary points (L-BFGS-B) of the same objective; paper's non-private baseline "
          f"{PAPER_NONPRIVATE}:")
    print("| features | test error | test loss | training objective |")
    print("|---|---|---|---|")
    for label, (A, B) in (("unit rows + intercept (the private runs')", (Xtr, Xte)),
                          ("raw binary features, no scaling", (Xtr_raw, Xte_raw))):
        w_np = nonprivate(A, ytr, loss, reg)
        obj = float(np.mean(np.logaddexp(0.0, -ytr * (A @ w_np)))) + LAM * float(np.sum(w_np**2 / (1 + w_np**2)))
        print(f"| {label} | {np.mean(np.where(B @ w_np > 0, 1.0, -1.0) != yte):.4f} | "
              f"{logistic_test_loss(w_np, B, yte):.4f} | {obj:.4f} |")
    print(f"majority-class test error: {np.mean(yte > 0):.4f}\n")


TABLE2_OBJECTIVE = {  # issue 24: the paper's metric
    "dp_srm (defaults: C₁ = 0.85·G, accountant auto)": {},
    "dp_srm (C₁ = 0.85·G, accountant rdp)": dict(accountant="rdp"),
    "dp_srm (C₁ = G, accountant auto)": dict(clip_norm=1.0),
    "dp_srm (previous defaults: C₁ = G, accountant rdp)": dict(clip_norm=1.0, accountant="rdp"),
    "dp_srm (paper's settings, last iterate)": dict(defaults="paper"),
    # options on top of the defaults (issue 24; chosen on nothing here — measured by --averaging, RESULTS.md)
    "dp_srm (output='tail_average')": dict(output="tail_average"),
    "dp_srm (output='ema')": dict(output="ema"),
    "dp_srm (clip_norm=0.7)": dict(clip_norm=0.7),
    "dp_srm (extrapolation=0.7)": dict(extrapolation=0.7),
    "dp_gd (defaults, accountant auto)": dict(accountant="auto"),
}


def table2_objective(seeds: int) -> None:
    """Table 2 in the paper's metric (issue 24): its "test error" column is the *training objective*
    (1/n)Σ log(1 + e^{−yᵢ⟨θ, xᵢ⟩}) + λΣⱼθⱼ²/(1 + θⱼ²) on the raw binary a9a features with an intercept feature
    (the paper's non-private STORM baseline 0.3346; the non-private optimum of this objective is 0.3343). The
    private runs train on unit rows (‖[x, 1]‖ = √(k + 1) with k ≤ 14 active binary features, a public bound of
    the schema); their weights in raw units are θ/√15, evaluated on the raw features (exact for the rows with 14
    active features, 98 % of a9a). Seeds 1000, 1001, … as Table 2; mean (sd) [worst seed], and the test error."""
    (Xtr_raw, ytr), (Xte_raw, yte) = load("a9a", 123, True)
    Xtr, Xte = unit_rows(Xtr_raw), unit_rows(Xte_raw)
    A = np.hstack([Xtr_raw, np.ones((Xtr_raw.shape[0], 1))])
    scale = math.sqrt(15.0)

    print(f"\n## Table 2 in the paper's metric (training objective on raw a9a features), {seeds} seeds\n")
    print("| ε | solver | training objective (sd) [worst seed] | paper's DP-SRM | seeds ≤ paper's mean | "
          "test error (sd) [worst] | majority-class test error |")
    print("|---|---|---|---|---|---|---|")
    for eps in (0.2, 0.5):
        for name, kw in TABLE2_OBJECTIVE.items():
            fn = dp_gd if name.startswith("dp_gd") else dp_srm
            objs, errs = [], []
            for s in range(seeds):
                res = fn(Xtr, ytr, epsilon=eps, delta=DELTA, alpha=LAM, penalty="nonconvex", data_norm_bound=1.0,
                         rng=1000 + s, **kw)
                assert res.privacy.epsilon <= eps
                objs.append(objective_of(res.weights / scale, A, ytr))
                errs.append(float(np.mean(np.where(Xte @ res.weights > 0, 1.0, -1.0) != yte)))
            paper = PAPER[eps]["dp_srm"][0]
            below = int(np.sum(np.array(objs) <= float(paper.split()[0])))
            print(f"| {eps} | {name} | {np.mean(objs):.4f} ({np.std(objs):.4f}) [{np.max(objs):.4f}] | "
                  f"{paper} | {below} / {seeds} | {np.mean(errs):.4f} ({np.std(errs):.4f}) [{np.max(errs):.4f}] | "
                  f"{np.mean(yte > 0):.4f} |", flush=True)


AVERAGING = {  # --averaging: key -> (row label, dp_srm arguments); C₁ = clip_scale·G (G = 1 on ‖x‖ ≤ 1)
    "base": ("C₁ = G (the previous default), last iterate", dict(clip_scale=1.0)),
    "tail": ("tail average, last ⌈T/2⌉, C₁ = G", dict(output="tail_average", clip_scale=1.0)),
    "ema": ("EMA ρ = 0.9, C₁ = G", dict(output="ema", clip_scale=1.0)),
    "ema07": ("EMA ρ = 0.7, C₁ = G", dict(output="ema", ema_decay=0.7, clip_scale=1.0)),
    "c09": ("C₁ = 0.9·G, last iterate", dict(clip_scale=0.9)),
    "c085": ("C₁ = 0.85·G, last iterate (the default)", dict(clip_scale=0.85)),
    "c08": ("C₁ = 0.8·G, last iterate", dict(clip_scale=0.8)),
    "c07": ("C₁ = 0.7·G, last iterate", dict(clip_scale=0.7)),
}
AVERAGING_SETS = ("a9a", "ijcnn1", "synthetic", "adult", "breast_cancer", "digits")
# held out for the clip-norm default (issue 24 item 5): used to choose no DP-SRM default. synthetic_d20 is
# benchmarks/datasets.py's "synthetic" (n = 20 000, d = 20; not the sweep's synthetic set above).
HELD_OUT_SETS = ("wine", "synthetic_wide", "synthetic_wide_large", "synthetic_d20")


def averaging_sets(only: str) -> dict:
    """{name: ((X_train, y_train), (X_test, y_test))} with unit rows + intercept (:func:`unit_rows`); Adult,
    breast_cancer, digits (0 vs rest), wine (class 0 vs rest) and the synthetic_wide* sets (split 0) from
    ``benchmarks/datasets.py`` (as bench_auto.py); ``synthetic_d20`` is its ``"synthetic"``."""
    from algorithms.synthetic import make_classification
    from datasets import load as load_split

    sets = {}
    for key in only.split(","):
        if key in ("a9a", "ijcnn1"):
            (Xtr, ytr), (Xte, yte) = load(key, *((123, True) if key == "a9a" else (22, False)))
        elif key == "synthetic":
            Xs, ys, _ = make_classification(60000, 10, scale=8.0, seed=3)
            (Xtr, ytr), (Xte, yte) = (Xs[:40000], ys[:40000]), (Xs[40000:], ys[40000:])
        else:
            split = load_split("synthetic" if key == "synthetic_d20" else key, directory=DATA)
            if split is None:
                continue
            Xtr, ytr, Xte, yte = split
        sets[key] = ((unit_rows(np.asarray(Xtr)), ytr), (unit_rows(np.asarray(Xte)), yte))
    return sets


def averaging(seeds: int, only: str, settings: str, accountant: str) -> None:
    """DP-SRM's output options and clip norm (issue 24 item 5): the private problem's training objective (mean
    logistic loss on the unit rows + λ's non-convex penalty) and the test error, mean (sd) [worst seed] over the
    sweep seeds 5000, 5001, …, ε ∈ {0.2, 0.5, 1}; then every setting minus C₁ = G (the first of ``settings``),
    paired by seed, with the worst seed's difference."""
    sets = averaging_sets(only)
    keys = settings.split(",")
    per_seed = {}
    print(f"## DP-SRM output averaging and clip norm: training objective / test error, mean (sd) [worst] of "
          f"{seeds} seeds ({SWEEP_SEED0}…), λ = {LAM} (non-convex), δ = {DELTA}, accountant {accountant}\n")
    print("| data | n | ε | setting | training objective | test error |")
    print("|---|---|---|---|---|---|")
    for key, ((Xtr, ytr), (Xte, yte)) in sets.items():
        for eps in (0.2, 0.5, 1.0):
            for setting in keys:
                name, kw = AVERAGING[setting]
                kw2 = dict(kw)
                kw2["clip_norm"] = kw2.pop("clip_scale")  # the logistic loss's Lipschitz constant G = 1 on ‖x‖ ≤ 1
                objs, errs = [], []
                for s in range(seeds):
                    res = dp_srm(Xtr, ytr, epsilon=eps, delta=DELTA, alpha=LAM, penalty="nonconvex",
                                 data_norm_bound=1.0, rng=SWEEP_SEED0 + s, accountant=accountant, **kw2)
                    assert res.privacy.epsilon <= eps
                    w = res.weights
                    objs.append(objective_of(w, Xtr, ytr))
                    errs.append(float(np.mean(np.where(Xte @ w > 0, 1.0, -1.0) != yte)))
                per_seed[key, eps, setting] = np.array(objs), np.array(errs)
                print(f"| {key} | {Xtr.shape[0]} | {eps} | {name} | {np.mean(objs):.4f} ({np.std(objs):.4f}) "
                      f"[{np.max(objs):.4f}] | {np.mean(errs):.4f} ({np.std(errs):.4f}) [{np.max(errs):.4f}] |",
                      flush=True)
    base = keys[0]
    print(f"\nPaired by seed, setting − {AVERAGING[base][0]} (negative: better): objective / test error, mean "
          "(standard error) [worst seed's difference]")
    print("| data | ε | " + " | ".join(AVERAGING[k][0] for k in keys[1:]) + " |")
    print("|---|---|" + "---|" * (len(keys) - 1))
    se = (lambda v: float(np.std(v, ddof=1) / math.sqrt(seeds)) if seeds > 1 else float("nan"))
    for key in sets:
        for eps in (0.2, 0.5, 1.0):
            cells = []
            for setting in keys[1:]:
                do, de = (a - b for a, b in zip(per_seed[key, eps, setting], per_seed[key, eps, base]))
                cells.append(f"{np.mean(do):+.4f} ({se(do):.4f}) [{np.max(do):+.4f}] / "
                             f"{np.mean(de):+.4f} ({se(de):.4f}) [{np.max(de):+.4f}]")
            print(f"| {key} | {eps} | " + " | ".join(cells) + " |")
    print()


def calibration_time(rounds: int) -> None:
    """Wall time of DP-SRM's noise calibration (:func:`algorithms._solver_common.calibrated_privacy` on
    :func:`algorithms.dp_srm.dp_srm_event`, what ``dp_srm`` runs before its kernel) with ``accountant="rdp"``
    and ``"auto"``, for dp_srm's typical (n, T, b): its defaults (full batches, T = default_srm_steps(n, ε)) on
    the benchmark sizes, a minibatch run (b = n/10) and the paper's settings (b = 100, 5 passes). Best of
    ``rounds`` rounds, the two accountants interleaved in every round (first calls excluded: one warm-up call
    each); the noise multiplier z each reaches (its ε ≤ the target)."""
    from algorithms._solver_common import calibrated_privacy
    from algorithms.dp_srm import dp_srm_event

    cases = []
    for n in (124, 1257, 32561, 49990):
        for eps in (0.2, 1.0):
            cases.append((f"defaults (b = n, T = {default_srm_steps(n, eps)})", n, n, default_srm_steps(n, eps), eps))
    cases.append(("minibatch b = n/10, T = 500", 32561, 3256, 500, 0.5))
    cases.append(("paper's settings (b = 100, 5 passes)", 32561, 100, math.ceil((5 * 32561 - 100) / 200) + 1, 0.2))
    print(f"\n## DP-SRM calibration wall time, accountant rdp vs auto (best of {rounds}, interleaved), δ = {DELTA}\n")
    print("| setting | n | b | T | ε | rdp: z, ms | auto: z (accountant used), ms | time auto / rdp | z auto / rdp |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, n, b, T, eps in cases:
        best, result = {}, {}
        for r in range(rounds + 1):
            for acc in ("rdp", "auto"):
                t = time.perf_counter()
                z, _, privacy, _ = calibrated_privacy(lambda zz: dp_srm_event(zz, b, b, n, T), epsilon=eps,
                                                      delta=DELTA, noise_multiplier=None, relation="replace_one",
                                                      accountant=acc)
                dt = time.perf_counter() - t
                assert privacy.epsilon <= eps
                if r > 0:  # round 0 warms up
                    best[acc] = min(best.get(acc, math.inf), dt)
                result[acc] = (z, privacy.accountant)
        print(f"| {label} | {n} | {b} | {T} | {eps} | {result['rdp'][0]:.3f}, {1e3 * best['rdp']:.1f} | "
              f"{result['auto'][0]:.3f} ({result['auto'][1]}), {1e3 * best['auto']:.1f} | "
              f"{best['auto'] / best['rdp']:.2f} | {result['auto'][0] / result['rdp'][0]:.3f} |", flush=True)


MLP_ACCOUNTANT_SETS = ("a9a", "ijcnn1", "breast_cancer", "digits", "wine")
MLP_SEED0 = 7000  # --mlp-accountant seeds 7000, 7001, …: disjoint from every sweep that chose a default


def mlp_accountant(seeds: int, only: str, solver: str = "dp_srm") -> None:
    """``DPMLPClassifier(solver=solver)`` calibrated with accountant "rdp" vs "auto" (the two interleaved in
    every seed, same seed for both): z, test error mean (sd) [worst], median calibration wall time; then the
    paired difference auto − rdp of the test error (mean, standard error, worst seed)."""
    import algorithms.mlp as mlp_mod

    calibrate = mlp_mod.calibrated_privacy
    spent = []

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return calibrate(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t)

    mlp_mod.calibrated_privacy = timed
    sets = averaging_sets(only)
    accountants = ("rdp", "auto")
    print(f"## DPMLPClassifier solver={solver}: accountant rdp vs auto, defaults, {seeds} seeds ({MLP_SEED0}…), "
          f"δ = {DELTA}\n")
    print("| data | n | b | ε | accountant | z | test error mean (sd) [worst] | calibration ms (median) | fit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    paired = []
    for key, ((Xtr, ytr), (Xte, yte)) in sets.items():
        n = Xtr.shape[0]
        with warnings.catch_warnings():  # compile, and each accountant's first call, outside the timings
            warnings.simplefilter("ignore")
            for acc in accountants:
                DPMLPClassifier(solver=solver, epochs=1, epsilon=1.0, delta=DELTA, classes=[-1.0, 1.0],
                                accountant=acc, random_state=0).fit(Xtr[:200], ytr[:200])
        for eps in (0.2, 1.0):
            errs = {a: [] for a in accountants}
            cal = {a: [] for a in accountants}
            fit = {a: [] for a in accountants}
            zs = {}
            for s in range(seeds):
                for acc in accountants:
                    spent.clear()
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = DPMLPClassifier(solver=solver, epsilon=eps, delta=DELTA, classes=[-1.0, 1.0],
                                              accountant=acc, random_state=MLP_SEED0 + s).fit(Xtr, ytr)
                    fit[acc].append(time.perf_counter() - t)
                    cal[acc].append(spent[0])
                    assert est.privacy_.epsilon <= eps
                    zs[acc] = (est.noise_multiplier_, est.privacy_.accountant)
                    errs[acc].append(1.0 - est.score(Xte, yte))
            for acc in accountants:
                e = np.array(errs[acc])
                print(f"| {key} | {n} | {n if solver == 'dp_gd' else min(1024, n)} | {eps} | {acc} ({zs[acc][1]}) | {zs[acc][0]:.3f} | "
                      f"{e.mean():.4f} ({e.std():.4f}) [{e.max():.4f}] | {1e3 * np.median(cal[acc]):.1f} | "
                      f"{np.median(fit[acc]):.2f} |", flush=True)
            diff = np.array(errs["auto"]) - np.array(errs["rdp"])
            paired.append((key, eps, zs["auto"][0] / zs["rdp"][0], diff,
                           np.median(cal["auto"]) / np.median(cal["rdp"])))
    mlp_mod.calibrated_privacy = calibrate
    print("\n| data | ε | z auto / rdp | test error auto − rdp: mean ± se [worst seed] | calibration time auto / rdp |")
    print("|---|---|---|---|---|")
    for key, eps, zr, d, tr in paired:
        se = d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else math.nan
        print(f"| {key} | {eps} | {zr:.3f} | {d.mean():+.4f} ± {se:.4f} [{d.max():+.4f}] | {tr:.2f} |")


def objective_of(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """(1/n)Σ log(1 + e^{−yᵢ⟨w, xᵢ⟩}) + λΣⱼwⱼ²/(1 + wⱼ²) (nats)."""
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w)))) + LAM * float(np.sum(w**2 / (1 + w**2)))


def paired_difference(per_seed: dict, seeds: int) -> None:
    """DP-SRM's defaults minus each DP-GD row, seed by seed (same seeds, same data): mean, its standard error
    sd/√seeds (sd with ddof = 1), and the seeds on which DP-SRM is better / tied / worse."""
    srm = next(iter(SOLVERS))
    print(f"\nPaired test-error difference, {srm.split(' (')[0]} defaults − DP-GD, same {seeds} seeds (negative: "
          "DP-SRM better):")
    print("| ε | DP-GD row | mean difference | standard error | seeds better / tied / worse |")
    print("|---|---|---|---|---|")
    for eps in (0.2, 0.5):
        for name in SOLVERS:
            if not name.startswith("dp_gd"):
                continue
            diff = per_seed[eps, srm] - per_seed[eps, name]
            se = float(np.std(diff, ddof=1) / math.sqrt(seeds)) if seeds > 1 else float("nan")
            print(f"| {eps} | {name} | {np.mean(diff):+.4f} | {se:.4f} | "
                  f"{int(np.sum(diff < 0))} / {int(np.sum(diff == 0))} / {int(np.sum(diff > 0))} |")


def srm_sweep(seeds: int, only: str) -> None:
    """The benchmark behind dp_srm's defaults (module docstring)."""
    from algorithms.dp_gd import default_steps
    from algorithms.synthetic import make_classification

    sets = {}
    for key in only.split(","):
        if key == "a9a":
            sets[key] = load("a9a", 123, True)
        elif key == "ijcnn1":
            sets[key] = load("ijcnn1", 22, False)
        else:  # "synthetic" (main validates the names)
            Xs, ys, _ = make_classification(60000, 10, scale=8.0, seed=3)
            sets[key] = ((Xs[:40000], ys[:40000]), (Xs[40000:], ys[40000:]))
    seeds = max(1, min(seeds, 4))
    print(f"## DP-SRM defaults sweep: test error, mean (sd) of {seeds} seeds ({SWEEP_SEED0}…), λ = {LAM} "
          f"(non-convex), δ = {DELTA}")
    print("| setting | " + " | ".join(f"{k} ε={e}" for k in sets for e in (0.2, 1.0)) + " |")
    print("|---|" + "---|" * (2 * len(sets)))
    rows = {name: [] for name in SRM_SWEEP}
    for key, ((Xtr, ytr), (Xte, yte)) in sets.items():
        Xtr, Xte = unit_rows(Xtr), unit_rows(Xte)
        n = Xtr.shape[0]
        for eps in (0.2, 1.0):
            for name, kw in SRM_SWEEP.items():
                errs = []
                for s in range(seeds):
                    common = dict(epsilon=eps, delta=DELTA, alpha=LAM, penalty="nonconvex", data_norm_bound=1.0,
                                  rng=SWEEP_SEED0 + s)
                    if kw is None:
                        res = dp_gd(Xtr, ytr, **common)
                    else:
                        kw2 = dict(kw)
                        fn = dp_gd if kw2.pop("solver", "dp_srm") == "dp_gd" else dp_srm
                        if kw2.pop("steps_rule", False):
                            kw2["steps"] = default_srm_steps(n, eps)
                        scale = kw2.pop("steps_scale", None)
                        if scale is not None:
                            kw2["steps"] = int(min(100, max(10, math.ceil(n * eps / scale))))
                        if kw2.pop("steps_gd", False):
                            kw2["steps"] = default_steps(n, eps)
                        lr_factor = kw2.pop("lr_factor", None)
                        if lr_factor is not None:  # over β = loss smoothness 1/4 + the penalty's 2λ
                            kw2["learning_rate"] = lr_factor / (0.25 + 2 * LAM)
                        frac = kw2.pop("batch_frac", None)
                        if frac is not None:
                            kw2["batch_size"] = math.ceil(n / frac)
                        if kw2.get("initial_batch_size") == -1:
                            kw2["initial_batch_size"] = n
                        factor = kw2.pop("steps_factor", None)
                        if factor is not None:
                            kw2["steps"] = int(factor * default_steps(n, eps))
                        res = fn(Xtr, ytr, **common, **kw2)
                    errs.append(float(np.mean(np.where(Xte @ res.weights > 0, 1.0, -1.0) != yte)))
                rows[name].append(f"{np.mean(errs):.4f} ({np.std(errs):.4f})")
                print(f"  {key} ε={eps} {name}: {rows[name][-1]}", file=sys.stderr, flush=True)
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


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
        for label, solver, kw in (
                ("dp_sgd, Adam (20 passes, b = 1024, η = 3/√P, β = (0.9, 0.999), ε_a = σ/b, cosine, C = 2)", "dp_sgd",
                 dict(optimizer="adam")),
                ("dp_sgd, heavy ball (20 passes, b = 1024, η = 1.5, μ = 0.9, cosine, C = 1)", "dp_sgd",
                 dict(optimizer="momentum")),
                ("dp_sgd, previous settings (5 passes, b = 256, η = 1, plain)", "dp_sgd",
                 dict(batch_size=256, learning_rate=1.0, epochs=5, heavy_ball=0.0, lr_schedule="constant",
                      optimizer="momentum")),
                ("dp_srm (5 passes, b = 256, η = 1, C₂ = γ = 0.1)", "dp_srm",
                 dict(batch_size=256, learning_rate=1.0, epochs=5, diff_clip_norm=0.1, momentum=0.1))):
            for eps in (1.0, math.inf):
                errs, secs = [], []
                for s in range(seeds):
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = DPMLPClassifier(hidden_units=hidden, solver=solver, epsilon=eps, delta=DELTA,
                                              classes=[-1.0, 1.0], random_state=s, **kw).fit(Xtr, ytr)
                    secs.append(time.perf_counter() - t)
                    errs.append(1 - est.score(Xte, yte))
                print(f"| {name} | DPMLPClassifier {label} | {eps} | {np.mean(errs):.4f} ({np.std(errs):.4f}) | "
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


def numpy_materialised_clipped_sum(theta, X, y, d, h, clip):
    """The same step the natural vectorised way: every per-example gradient materialised (einsum outer
    products, (b, P)), then per-example norms, clip factors and the clipped sum."""
    hd = h * d
    W1, b1 = theta[:hd].reshape(h, d), theta[hd:hd + h]
    W2, b2 = theta[hd + h:hd + 2 * h], theta[hd + 2 * h]
    z = np.tanh(X @ W1.T + b1)
    do = -y / (1.0 + np.exp(y * (z @ W2 + b2)))
    da = (do[:, None] * W2[None, :]) * (1.0 - z * z)
    G = np.concatenate([np.einsum("bh,bd->bhd", da, X).reshape(X.shape[0], hd), da, do[:, None] * z, do[:, None]],
                       axis=1)
    f = np.minimum(1.0, clip / np.maximum(np.linalg.norm(G, axis=1), 1e-300))
    return f @ G


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


def numpy_dp_adam(theta0, X, y, d, h, steps, batch, lr, clip, sigma, rng, clipped_sum, beta1=0.9, beta2=0.999,
                  adam_eps=1e-8):
    """``steps`` DP-Adam steps as a NumPy user writes them (a Python loop over steps): the same step as
    :func:`algorithms.mlp_kernels.mlp_noisy_sgd_kernel` with ``adam=True, cosine=True`` — a uniform
    b-subset without replacement (``rng.choice``; all rows when b = n), ``clipped_sum`` of its rows,
    Gaussian noise of std σ on the sum, Adam (Kingma & Ba Alg. 1) with a cosine step schedule."""
    n, P = X.shape[0], theta0.shape[0]
    theta, m, v = theta0.copy(), np.zeros(P), np.zeros(P)
    for t in range(steps):
        if batch < n:
            idx = rng.choice(n, batch, replace=False)
            s = clipped_sum(theta, X[idx], y[idx], d, h, clip)
        else:
            s = clipped_sum(theta, X, y, d, h, clip)
        g = (s + rng.normal(0.0, sigma, P)) / batch
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        eta = lr * 0.5 * (1.0 + math.cos(math.pi * t / steps))
        theta -= eta * (m / (1.0 - beta1 ** (t + 1))) / (np.sqrt(v / (1.0 - beta2 ** (t + 1))) + adam_eps)
    return theta


def chunked(clipped_sum, rows=4096):
    """``clipped_sum`` over blocks of at most ``rows`` rows, summed (bounded memory for the
    materialised (b, P) gradients at b = n)."""
    def run(theta, X, y, d, h, clip):
        return sum(clipped_sum(theta, X[i:i + rows], y[i:i + rows], d, h, clip) for i in range(0, X.shape[0], rows))
    return run


def best_cpu_seconds(cells: dict, rounds: int = 5) -> dict:
    """Least process time of each cell's callable over ``rounds`` rounds; every round times every cell once,
    in turn, so a load change on the shared machine hits all columns alike (single-threaded code)."""
    best = {key: math.inf for key in cells}
    for _ in range(rounds):
        for key, fn in cells.items():
            t = time.process_time()
            fn()
            best[key] = min(best[key], time.process_time() - t)
    return best


def throughput(hidden: int) -> None:
    from threadpoolctl import threadpool_limits

    from algorithms.mlp_kernels import mlp_noisy_sgd_kernel

    (Xtr, ytr), _ = load("a9a", 123, True)
    X, y = np.ascontiguousarray(Xtr), ytr
    n, d = X.shape
    rng = np.random.default_rng(0)
    theta = rng.normal(size=n_parameters(d, hidden, 1)) * 0.1
    P = theta.shape[0]
    out = np.empty(P)
    idx = np.arange(n)
    with threadpool_limits(1):
        mlp_clipped_sum_kernel(theta, X, y, idx, 64, 1.0, d, hidden, 1, out)  # compile
        for b in (64, 1024):
            ref = numpy_clipped_sum(theta, X[:b], y[:b], d, hidden, 1.0)
            mlp_clipped_sum_kernel(theta, X, y, idx, b, 1.0, d, hidden, 1, out)
            assert np.allclose(out, ref, rtol=1e-9, atol=1e-9)
            assert np.allclose(numpy_materialised_clipped_sum(theta, X[:b], y[:b], d, hidden, 1.0), ref, rtol=1e-9,
                               atol=1e-12)
        assert np.allclose(numpy_loop_clipped_sum(theta, X[:64], y[:64], d, hidden, 1.0),
                           numpy_clipped_sum(theta, X[:64], y[:64], d, hidden, 1.0), rtol=1e-9, atol=1e-12)
        # part A: one clipped-sum call on the first b rows
        fns = {"numba": lambda b: mlp_clipped_sum_kernel(theta, X, y, idx, b, 1.0, d, hidden, 1, out),
               "materialised": lambda b: chunked(numpy_materialised_clipped_sum)(theta, X[:b], y[:b], d, hidden, 1.0),
               "trick": lambda b: numpy_clipped_sum(theta, X[:b], y[:b], d, hidden, 1.0),
               "loop": lambda b: numpy_loop_clipped_sum(theta, X[:min(b, 512)], y[:min(b, 512)], d, hidden, 1.0)}
        batches = (64, 256, 1024, n)
        cells, work = {}, {}
        for label, fn in fns.items():
            for b in batches:
                reps = max(1, 40_000 // b)
                cells[(label, b)] = lambda fn=fn, b=b, reps=reps: [fn(b) for _ in range(reps)]
                work[(label, b)] = reps * (min(b, 512) if label == "loop" else b)  # the loop: at most 512 rows
        res = {key: work[key] / sec for key, sec in best_cpu_seconds(cells).items()}
        print(f"## Per-example clipped gradients of the {hidden}-unit network on a9a (d = {d}, P = {P}): one call "
              "on the first b rows, examples/s (best of 5 interleaved rounds of process time, one thread, BLAS limited to "
              "one thread)")
        print("| batch | Numba kernel | NumPy materialised (einsum) | NumPy norm trick | NumPy per-example loop | "
              "vs materialised | vs norm trick | vs loop |")
        print("|---|---|---|---|---|---|---|---|")
        for b in batches:
            r = {k: res[(k, b)] for k in fns}
            print(f"| {b} | {r['numba']:,.0f} | {r['materialised']:,.0f} | {r['trick']:,.0f} | {r['loop']:,.0f} | "
                  f"{r['numba'] / r['materialised']:.1f}× | {r['numba'] / r['trick']:.1f}× | "
                  f"{r['numba'] / r['loop']:.0f}× |")
        print()
        # part B: whole DP-Adam runs (DPMLPClassifier's default step), T steps
        lr, sigma = 3.0 / math.sqrt(P), 2.0
        mlp_noisy_sgd_kernel(theta, X, y, d, hidden, 1, 2, 64, lr, 1.0, sigma, 0.0, np.random.default_rng(0), 0.9,
                             True, True, 0.999, 1e-8)  # compile
        cells, steps = {}, {}
        for b in (64, 256, 1024, n):
            T = steps[b] = math.ceil(2 * n / b)  # two epochs (a default fit runs 20; X's CSR form is built once per run)
            cells[("numba", b)] = lambda T=T, b=b: mlp_noisy_sgd_kernel(
                theta, X, y, d, hidden, 1, T, b, lr, 1.0, sigma, 0.0, np.random.default_rng(1), 0.9, True, True, 0.999,
                1e-8)
            for label, fn in (("materialised", chunked(numpy_materialised_clipped_sum)), ("trick", numpy_clipped_sum)):
                cells[(label, b)] = lambda T=T, b=b, fn=fn: numpy_dp_adam(theta, X, y, d, hidden, T, b, lr, 1.0, sigma,
                                                                          np.random.default_rng(1), fn)
        sec = best_cpu_seconds(cells)
        rows = [(b, T, T * b / sec[("numba", b)], T * b / sec[("materialised", b)], T * b / sec[("trick", b)])
                for b, T in steps.items()]
        print(f"## DP-Adam training steps (the DPMLPClassifier default step: batch draw without replacement, clipped "
              f"sum, Gaussian noise, Adam, cosine schedule) on a9a (n = {n}), examples/s = T·b / process seconds "
              "(best of 5 interleaved rounds); Numba: the whole T-step run in one call (mlp_noisy_sgd_kernel), NumPy: a Python loop "
              "over the steps")
        print("| batch | T | Numba run | NumPy materialised (einsum, ≤ 4096-row blocks) | NumPy norm trick | "
              "vs materialised | vs norm trick |")
        print("|---|---|---|---|---|---|---|")
        for b, T, nb, mat, tr in rows:
            print(f"| {b} | {T} | {nb:,.0f} | {mat:,.0f} | {tr:,.0f} | {nb / mat:.1f}× | {nb / tr:.1f}× |")
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
        same = dict(hidden_units=hidden, optimizer="momentum", heavy_ball=0.0, clip_norm=1.0)  # Opacus's SGD, C = 1
        DPMLPClassifier(epochs=0.01, random_state=0, **same).fit(Xs[:500], ys[:500])  # compile
        t = time.perf_counter()
        DPMLPClassifier(epochs=1, batch_size=256, random_state=0, **same).fit(Xs, ys)
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
    ap.add_argument("--table2-objective", action="store_true",
                    help="only Table 2 in the paper's metric (training objective on raw features; issue 24)")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--srm-sweep", action="store_true")
    ap.add_argument("--averaging", action="store_true",
                    help="only DP-SRM's output averaging and clip norm on --averaging-data (issue 24)")
    ap.add_argument("--averaging-data", default=",".join(AVERAGING_SETS),
                    help=f"comma list of {', '.join(AVERAGING_SETS + HELD_OUT_SETS)}")
    ap.add_argument("--averaging-settings", default=",".join(AVERAGING),
                    help=f"comma list of {', '.join(AVERAGING)}; the first is the paired baseline")
    ap.add_argument("--accountant", default="auto", choices=("rdp", "auto"), help="--averaging's accountant")
    ap.add_argument("--calibration-time", action="store_true",
                    help="only DP-SRM's calibration wall time, accountant rdp vs auto")
    ap.add_argument("--mlp-accountant", action="store_true",
                    help="DPMLPClassifier's DP-SRM with accountant rdp vs auto")
    ap.add_argument("--mlp-solver", default="dp_srm", choices=MLP_SOLVERS,
                    help="--mlp-accountant's DPMLPClassifier solver (default dp_srm)")
    ap.add_argument("--mlp-data", default=",".join(MLP_ACCOUNTANT_SETS),
                    help=f"--mlp-accountant's comma list of {', '.join(AVERAGING_SETS + HELD_OUT_SETS)}")
    ap.add_argument("--sweep-data", default="a9a,ijcnn1,synthetic")
    args = ap.parse_args()
    if args.seeds < 1 or args.hidden < 1:
        print("bench_nonconvex: --seeds and --hidden must be >= 1", file=sys.stderr)
        return 2
    bad = set(args.sweep_data.split(",")) - {"a9a", "ijcnn1", "synthetic"}
    if bad:
        print(f"bench_nonconvex: --sweep-data takes a9a, ijcnn1, synthetic; got {sorted(bad)}", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(DATA, "a9a", "a9a.trn.bz2")):
        print(f"bench_nonconvex: a9a not found under {DATA}: skipped", file=sys.stderr)
        return 0
    bad = set(args.averaging_data.split(",")) - set(AVERAGING_SETS + HELD_OUT_SETS)
    if bad:
        print(f"bench_nonconvex: --averaging-data takes {', '.join(AVERAGING_SETS + HELD_OUT_SETS)}; got "
              f"{sorted(bad)}", file=sys.stderr)
        return 2
    bad = set(args.averaging_settings.split(",")) - set(AVERAGING)
    if bad:
        print(f"bench_nonconvex: --averaging-settings takes {', '.join(AVERAGING)}; got {sorted(bad)}",
              file=sys.stderr)
        return 2
    bad = set(args.mlp_data.split(",")) - set(AVERAGING_SETS + HELD_OUT_SETS)
    if bad:
        print(f"bench_nonconvex: --mlp-data takes {', '.join(AVERAGING_SETS + HELD_OUT_SETS)}; got {sorted(bad)}",
              file=sys.stderr)
        return 2
    if args.mlp_accountant:
        mlp_accountant(args.seeds, args.mlp_data, args.mlp_solver)
        return 0
    if args.calibration_time:
        calibration_time(max(3, min(args.seeds, 10)))
        return 0
    if args.srm_sweep:
        srm_sweep(args.seeds, args.sweep_data)
    if args.averaging:
        averaging(args.seeds, args.averaging_data, args.averaging_settings, args.accountant)
        return 0
    if args.table2_objective:
        table2_objective(args.seeds)
        return 0
    if not args.skip_table2:
        table2(args.seeds)
    if not args.skip_mlp:
        mlp_part(args.hidden, max(1, min(args.seeds, 3)))
    if not args.skip_throughput:
        throughput(args.hidden)
    return 0


if __name__ == "__main__":
    sys.exit(main())
