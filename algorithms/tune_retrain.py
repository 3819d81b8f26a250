"""``tune={"method": "retrain"}``: private selection on a subsample, then one training run of the chosen
configuration on all rows — the scheme of Koskela & Kulkarni (NeurIPS 2023, "Practical differentially private
hyperparameter tuning with subsampling", arXiv 2301.11989): tune on a random subset of the data, carry the
chosen hyper-parameters over to the whole data set (here: each configuration is a rule of the public size and ε,
:func:`retrain_config`), train the final model once. The privacy analysis below is dpcore's own (not the paper's
tailored RDP bound): sampling without replacement around Papernot & Steinke's selection, then basic composition
with the final run.

**What runs** (``n`` training rows, the user's (ε, δ); ``replace_one``, n public):

1. *Budget split* (public): the selection gets (ε_sel, δ_sel) = (s·ε, δ/2) with s = ``selection_share``, the
   final run (ε_fin, δ_fin) = (ε − ε_sel, δ − δ_sel), both rounded down so that ε_sel + ε_fin ≤ ε and
   δ_sel + δ_fin ≤ δ hold in floating point.
2. *Subsample*: m = max(2, ⌊q·n⌋) rows (q = ``subsample``, m public) drawn uniformly without replacement.
3. *Repeat-and-select on the subsample* (Papernot & Steinke 2022; :mod:`dpcore.selection`): K runs (K from the
   public distribution); each run draws one configuration of :data:`RETRAIN_GRID` at random, instantiates it for
   (m, ε_run) — ε_run the training ε of one run alone, public — trains DP-GD on the subsample with noise
   multiplier z₀·√T (its T steps compose to exactly one Gaussian of multiplier z₀), and releases its number of
   correctly classified subsample rows plus N(0, z_s²) (sensitivity 1 under replace-one). The configuration of
   the best noisy score is the selection's only output. Accounted as
   ``SampledWithoutReplacementEvent(RepeatAndSelectEvent(run, E[K], η), m, n)`` — Wang, Balle &
   Kasiviswanathan 2019, Thm 9 (sampling without replacement of any RDP mechanism, replace-one) around
   Papernot & Steinke's Thm 2 / Thm 6 — in RDP, z₀ and z_s calibrated to (ε_sel, δ_sel) (z_s carries the share
   ``score_share`` of a run's μ²).
4. *Final run*: the chosen configuration instantiated for (n, ε_fin) — the same rule of public quantities — is
   trained on all n rows by DP-GD calibrated by its own accountant to (ε_fin, δ_fin). With the Poisson
   distribution K = 0 is possible; the selection then outputs nothing and the final run trains the public
   fallback configuration (DP-GD's defaults, ``RETRAIN_GRID[0]``) — no extra release, the same final budget.

**Too little data to tune**: when the calibrated score noise z_s/m (public: n, ε, δ and the options) exceeds
:data:`SCORE_NOISE_LIMIT` — or no noise multiplier meets the selection's share at all (its floor: the
log E[K]/(λ − 1) term of Papernot & Steinke's bounds does not shrink with the noise; ε = 0.1 at the defaults) —
no selection can tell the candidates apart; nothing of steps 2–4 runs and the fit is the
untuned one (``solver`` as given, the rule for ``"auto"``) at the whole (ε, δ), with one
:class:`TuningSkippedWarning` (its text: public quantities only).

**Accounting of the whole** (``privacy_``): the adaptive basic composition (Dwork, Rothblum & Vadhan 2010) of the
selection's (ε_sel′, δ_sel) — its own RDP → (ε, δ) bound, ε_sel′ ≤ ε_sel — and the final run's reported
(ε_fin′, δ_fin′): ``ComposedEvent([ApproxDpEvent(ε_sel′, δ_sel), ApproxDpEvent(ε_fin′, δ_fin′)])`` under the
``"composition"`` accountant, so ε = ε_sel′ + ε_fin′ ≤ ε. ``tuning_`` states the two shares; the final run's
own event is ``final_event_``.
Neither method reports the number of runs K: Papernot &
Steinke's bound covers the best run's output with K hidden, and the pair (K, best noisy score) is not covered —
with K's heavy tail a reviewer measured δ 34–1400× the claimed 1e-5 for it (E[K] = 5, η = −0.5).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ._solver_common import logistic_smoothness

__all__ = ["RETRAIN_GRID", "FEW_STEPS_GRID", "retrain_grid", "retrain_config", "selection_budget", "subsample_size",
           "subsample_selection_event", "whole_privacy", "fit_retrained", "SCORE_NOISE_LIMIT", "TuningSkippedWarning"]

#: The public grid of configurations, each a rule of (rows, ε) (:func:`retrain_config`): DP-GD's defaults (the
#: fallback) and their variants — twice / half the steps, a ridge 10× weaker. Chosen on ijcnn1 and breast_cancer
#: (benchmarks/bench_auto.py --tune; RESULTS.md "Defaults and private selection"): half the step and the few-step
#: rule's plain steps lost up to 0.009 there when the final run has n·ε ≥ 1000 (they are added below that).
RETRAIN_GRID: Tuple[Dict[str, Any], ...] = (
    {"rule": "dp_gd", "steps": 1.0, "step": 1.0, "ridge": 1.0},
    {"rule": "dp_gd", "steps": 2.0, "step": 1.0, "ridge": 1.0},
    {"rule": "dp_gd", "steps": 0.5, "step": 1.0, "ridge": 1.0},
    {"rule": "dp_gd", "steps": 1.0, "step": 1.0, "ridge": 0.1},
)
#: Added when the final run is in the few-step regime (n·ε_fin below :data:`algorithms.auto_solver.FEW_STEPS_BELOW`):
#: the rule's plain steps, 1× and 2× ⌈n·ε/130⌉, intercept R/2.
FEW_STEPS_GRID: Tuple[Dict[str, Any], ...] = (
    {"rule": "few_steps", "steps": 1.0, "step": 1.0, "ridge": 0.0},
    {"rule": "few_steps", "steps": 2.0, "step": 1.0, "ridge": 0.0},
)


#: Largest standard deviation of a tuning run's noisy accuracy (z_s/m, a fraction of the subsample) at which the
#: selection runs; above it the fit is the untuned one at the whole ε, with a :class:`TuningSkippedWarning`. Chosen on
#: breast_cancer and digits (z_s/m = 0.03–0.3 at ε = 0.5–2: tune lost up to 0.04 there; ijcnn1: 0.002–0.005).
SCORE_NOISE_LIMIT = 0.01


class TuningSkippedWarning(UserWarning):
    """``tune={"method": "retrain"}`` found (from public quantities only) that its selection's score noise would be
    above :data:`SCORE_NOISE_LIMIT`: the fit is the untuned one, at the whole ε."""


def retrain_grid(n: int, final_epsilon: float) -> Tuple[Dict[str, Any], ...]:
    """The grid for ``n`` rows and the final run's ε (public): :data:`RETRAIN_GRID`, plus :data:`FEW_STEPS_GRID` when
    n·ε_fin < FEW_STEPS_BELOW."""
    from .auto_solver import FEW_STEPS_BELOW

    return RETRAIN_GRID + (FEW_STEPS_GRID if n * final_epsilon < FEW_STEPS_BELOW else ())


def retrain_config(spec: Dict[str, Any], n: int, epsilon: float, data_norm_bound: float) -> Dict[str, Any]:
    """The DP-GD hyper-parameters of grid entry ``spec`` for ``n`` rows at training ε = ``epsilon`` (public).

    Parameters
    ----------
    spec : dict
        An entry of :data:`RETRAIN_GRID`.
    n : int
        Rows the run trains on (m in the selection, n in the final run).
    epsilon : float
        The run's training ε (nats).
    data_norm_bound : float
        R (feature units).

    Returns
    -------
    dict
        ``steps, learning_rate, momentum, alpha, intercept_scaling`` (DP-GD's arguments; the learning rate is η·β
        divided by the logistic loss's smoothness β = (R² + c²)/4 on rows of norm ≤ √(R² + c²)).
    """
    from .auto_solver import FEW_STEPS_FACTOR, FEW_STEPS_INTERCEPT, FEW_STEPS_PER
    from .dp_gd import BENCHMARK_MOMENTUM, default_step_factor, default_steps
    from .estimators import AUTO_ALPHA_EPS_CAP, AUTO_ALPHA_GRADIENT_C, AUTO_ALPHA_MAX

    alpha = spec["ridge"] * min(AUTO_ALPHA_MAX, AUTO_ALPHA_GRADIENT_C / (n * min(epsilon, AUTO_ALPHA_EPS_CAP)))
    if spec["rule"] == "few_steps":
        c = FEW_STEPS_INTERCEPT * data_norm_bound
        steps = max(1, math.ceil(spec["steps"] * n * epsilon / FEW_STEPS_PER))
        factor, momentum = FEW_STEPS_FACTOR, 0.0
    else:
        c = data_norm_bound
        steps = max(1, math.ceil(spec["steps"] * default_steps(n, epsilon)))
        factor, momentum = spec["step"] * default_step_factor(n, epsilon, steps), BENCHMARK_MOMENTUM
    beta = logistic_smoothness(data_norm_bound, c)
    return {"steps": steps, "learning_rate": factor / beta, "momentum": momentum, "alpha": alpha,
            "intercept_scaling": c}


def selection_budget(epsilon: float, delta: float, share: float) -> Tuple[float, float, float, float]:
    """(ε_sel, δ_sel, ε_fin, δ_fin): the split of step 1 of the module docstring, with ε_sel + ε_fin ≤ ε and
    δ_sel + δ_fin ≤ δ in floating point."""
    eps_sel, delta_sel = share * epsilon, 0.5 * delta
    eps_fin, delta_fin = epsilon - eps_sel, delta - delta_sel
    while eps_sel + eps_fin > epsilon:
        eps_fin = math.nextafter(eps_fin, 0.0)
    while delta_sel + delta_fin > delta:
        delta_fin = math.nextafter(delta_fin, 0.0)
    return eps_sel, delta_sel, eps_fin, delta_fin


def subsample_size(n: int, fraction: float) -> int:
    """m = max(2, ⌊q·n⌋), at most n (public: n and q)."""
    return min(n, max(2, int(math.floor(fraction * n))))


def subsample_selection_event(noise_multiplier: float, score_multiplier: float, candidates: float,
                              distribution: str, shape: Any, batch: int, n: int) -> Any:
    """The selection of step 3 (``replace_one``): ``SampledWithoutReplacementEvent(RepeatAndSelectEvent(run, E[K],
    η), m, n)`` with run = ``ComposedEvent([GaussianEvent(z₀), GaussianEvent(z_s)])`` (the wrapper is dropped when
    m = n)."""
    from dpcore.events import ComposedEvent, GaussianEvent, SampledWithoutReplacementEvent
    from dpcore.selection import selection_event

    run = ComposedEvent([GaussianEvent(noise_multiplier, "replace_one"),
                         GaussianEvent(score_multiplier, "replace_one")])
    selection = selection_event(run, candidates, distribution, shape)
    return selection if batch == n else SampledWithoutReplacementEvent(selection, batch, n)


#: Integer Rényi orders of the selection's calibration (Wang-Balle-Kasiviswanathan's Thm 9 sums over every integer
#: order up to the largest one: the default grid's 8192 makes one evaluation take seconds). A coarser grid only
#: raises the ε it finds, so the calibrated noise is safe; the reported ε uses the default grid.
CALIBRATION_ORDERS = np.array([2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128,
                               160, 192, 256], dtype=float)


@functools.lru_cache(maxsize=64)
def _calibrated(eps_sel: float, delta_sel: float, candidates: float, distribution: str, shape: Any,
                score_share: float, batch: int, n: int) -> Optional[Tuple[float, float, Any]]:
    """(z₀, z_s, the selection's ``PrivacyResult``) at (ε_sel, δ_sel), or None when no multiplier up to 1e8 meets
    ε_sel: the least run multiplier z (μ² = 1/z² split
    1 − f : f between training and score) whose selection meets ε_sel on :data:`CALIBRATION_ORDERS`, by bisection in
    log z to a relative 1e-4 on the safe side; the selection's reported result is certified (dpcore's mpmath
    recomputation, ``certify=True``). Public arguments only, so cached across fits."""
    import dpcore

    f = score_share
    if not 0.0 < f < 1.0:
        raise ValueError(f"tune score_share must be in (0, 1); got {score_share!r}")

    def event(z: float) -> Any:
        return subsample_selection_event(z / math.sqrt(1.0 - f), z / math.sqrt(f), candidates, distribution, shape,
                                         batch, n)

    def meets(z: float) -> bool:
        return dpcore.get_epsilon(event(z), delta_sel, accountant="rdp", orders=CALIBRATION_ORDERS).epsilon <= eps_sel

    lo, hi = 0.5, 2.0
    while not meets(hi):
        lo, hi = hi, hi * 4.0
        if hi > 1e8:  # below the selection's floor (its log E[K]/(λ − 1) term does not shrink with the noise)
            return None
    while lo > 1e-3 and meets(lo):
        hi, lo = lo, lo / 4.0
    while hi / lo > 1.0 + 1e-4:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    selection = dpcore.get_epsilon(event(hi), delta_sel, accountant="rdp", certify=True)  # mpmath recomputation
    if not selection.epsilon <= eps_sel:  # the default grid contains the calibration's orders: never expected
        raise ArithmeticError(f"the calibrated selection reports {selection.epsilon!r} > its share {eps_sel!r}")
    return hi / math.sqrt(1.0 - f), hi / math.sqrt(f), selection


def whole_privacy(selection: Any, final: Any, delta: float) -> Any:
    """The tuned fit's guarantee: basic composition of the selection's and the final run's (ε, δ) results
    (``PrivacyResult``s, ``replace_one``), by dpcore's ``"composition"`` accountant, at the fit's ``delta``."""
    import dpcore
    from dpcore.events import ApproxDpEvent, ComposedEvent

    whole = ComposedEvent([ApproxDpEvent(selection.epsilon, selection.delta, "replace_one"),
                           ApproxDpEvent(final.epsilon, final.delta, "replace_one")])
    return dpcore.get_epsilon(whole, delta, accountant="composition")


def _subsample_rows(D: Any, rows: np.ndarray) -> Any:
    """The Design of the given rows (their row scale applied; the intercept is added by the fit)."""
    import scipy.sparse as sp

    from ._data import as_design
    from .rows import CSRRows, DenseRows

    r = D.rows
    scale = D.scale
    if isinstance(r, CSRRows):
        X = sp.csr_matrix((r.data, r.indices, r.indptr), shape=(D.n, r.shape[1] - (1 if r.intercept else 0)))[rows]
    else:
        X = (r.X if isinstance(r, DenseRows) else r)[rows]
    if scale.shape[0]:
        X = sp.diags(scale[rows]) @ X if sp.issparse(X) else X * scale[rows, None]
    return as_design(sp.csr_matrix(X) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64))


def _score(model: Any, X: Any, y: np.ndarray) -> float:
    """Correctly classified rows of (X, y) (sensitivity 1 under replace-one)."""
    return float(np.sum(np.where(X @ model.coef_ + model.intercept_ > 0, 1.0, -1.0) == y))


def _fit_untuned(est: Any, X: Any, y: np.ndarray, score_noise: float) -> Any:
    """The fit without tuning (``solver`` as given, the whole ε), with one :class:`TuningSkippedWarning`."""
    from .auto_solver import fit_auto

    why = (f"the tuning runs' noisy accuracy would have noise of standard deviation {score_noise:.3g} (above "
           f"{SCORE_NOISE_LIMIT:g}), too much to tell the candidates apart" if math.isfinite(score_noise) else
           "no noise meets the selection's share of epsilon (below the floor of its log E[K] term)")
    warnings.warn(f"{type(est).__name__}(tune={{'method': 'retrain'}}): at n = {X.shape[0]} rows and epsilon = "
                  f"{est.epsilon:g} {why}; no selection ran and the whole epsilon went to the untuned fit "
                  f"(solver={est.solver!r})", TuningSkippedWarning, stacklevel=5)
    if est.solver == "auto":
        fit_auto(est, X, y)
    else:
        est._fit_weights(X, y, {}, {})
    est.tuning_ = {"method": "retrain", "skipped": True, "score_noise": score_noise,
                   "selection_epsilon": 0.0, "final_epsilon": est.privacy_.epsilon}
    return est


def fit_retrained(est: Any, X: Any, y: np.ndarray, opts: Dict[str, Any], rng: np.random.Generator) -> Any:
    """Fit ``est`` by the module docstring's algorithm on mapped rows ``X`` (a Design) and ±1 labels ``y``."""
    import dpcore
    from dpcore.events import GaussianEvent

    from .auto_solver import adopt, fitted_copy
    from .model_selection import NoTuningRunWarning, run_candidate, validated_selection

    from dpcore._validation import _as_real, check_open_unit, check_sampling_rate

    q = check_sampling_rate("tune subsample", opts["subsample"])  # the fraction of rows the tuning runs see
    share = check_open_unit("tune selection_share", opts["selection_share"])  # the share of ε spent on selecting
    if not est.delta > 0.0:
        raise ValueError(f"tune needs delta in (0, 1) (Gaussian tuning runs); got delta={est.delta!r}")
    n, d = X.shape
    R = est.data_norm_bound
    eps_sel, delta_sel, eps_fin, delta_fin = selection_budget(est.epsilon, est.delta, share)
    m = subsample_size(n, q)
    shape = None if opts["shape"] is None else _as_real("tune shape", opts["shape"])
    validated_selection(lambda: subsample_selection_event(1.0, 1.0, opts["candidates"], opts["distribution"], shape,
                                                          m, n))
    calibrated = _calibrated(eps_sel, delta_sel, _as_real("tune candidates", opts["candidates"]),
                             opts["distribution"], shape, _as_real("tune score_share", opts["score_share"]), m, n)
    if calibrated is None or calibrated[1] / m > SCORE_NOISE_LIMIT:  # public (n, ε, δ, options): the selection
        return _fit_untuned(est, X, y, math.inf if calibrated is None else calibrated[1] / m)  # could tell nothing
    z0, zs, sel = calibrated
    selection_ev = subsample_selection_event(z0, zs, opts["candidates"], opts["distribution"], shape, m, n)
    repeat = selection_ev if m == n else selection_ev.event
    run_eps = dpcore.get_epsilon(GaussianEvent(z0, "replace_one"), est.delta).epsilon  # public: ε, δ, opts
    rows = np.sort(rng.choice(n, size=m, replace=False)) if m < n else np.arange(n)
    Xs, ys = (X, y) if m == n else (_subsample_rows(X, rows), y[rows])
    grid = retrain_grid(n, eps_fin)
    runs = repeat.sample_count(rng)
    best: Tuple[float, Any] = (-math.inf, None)
    for _ in range(runs):
        spec = grid[int(rng.integers(len(grid)))]
        cfg = retrain_config(spec, m, run_eps, R)
        inner = run_candidate(est, Xs, ys, cfg, z0, rng)
        score = _score(inner, Xs, ys) + float(rng.normal(0.0, zs))
        if score > best[0]:
            best = (score, spec)
    score, spec = best
    if spec is None:  # K = 0 (Poisson): the selection output nothing; the public fallback configuration
        spec = RETRAIN_GRID[0]
        warnings.warn(
            f"{type(est).__name__}(tune=...): the number of tuning runs K ~ Poisson(mean {opts['candidates']:g}) came "
            f"out 0 (probability exp(-{opts['candidates']:g}), drawn independently of the data): the final run trains "
            "the public fallback configuration (DP-GD's defaults) at the same final budget", NoTuningRunWarning,
            stacklevel=4)
    cfg = retrain_config(spec, n, eps_fin, R)
    final = fitted_copy(est, solver="dp_gd", epsilon=eps_fin, delta=delta_fin, alpha=cfg["alpha"],
                        intercept_scaling=cfg["intercept_scaling"],
                        solver_params={"steps": cfg["steps"], "learning_rate": cfg["learning_rate"],
                                       "momentum": cfg["momentum"]}, random_state=rng)
    final._fit_weights(X, y, {}, {})
    fin = final.privacy_
    if not (fin.epsilon <= eps_fin and fin.delta <= delta_fin and fin.relation == "replace_one"):
        raise ArithmeticError(f"the final run reported {fin!r}, outside its budget ({eps_fin!r}, {delta_fin!r})")
    adopt(est, final)
    est.privacy_ = whole_privacy(sel, fin, est.delta)
    est.final_event_ = final._privacy_event
    est.solver_ = "dp_gd"
    est.tuning_ = {
        "method": "retrain", "candidates": opts["candidates"], "distribution": opts["distribution"],
        "shape": repeat.shape, "grid_size": len(grid), "chosen": dict(spec),
        "chosen_params": cfg, "subsample_rows": m, "run_training_epsilon": run_eps,
        "noisy_accuracy": score / m if runs else None, "noise_multiplier": z0, "score_noise_multiplier": zs,
        "score_share": opts["score_share"], "selection_epsilon": sel.epsilon, "selection_delta": delta_sel,
        "selection_certified": sel.certified,  # mpmath conversion; the leaves it re-ran with the fast code:
        "selection_recomputed_by_the_fast_code": list(sel.details.get("certification", {}).get(
            "recomputed_by_the_fast_code", [])),
        "final_epsilon": fin.epsilon, "final_delta": fin.delta,
        "analysis": "subsampled repeat-and-select (Papernot & Steinke 2022 in Wang-Balle-Kasiviswanathan 2019 "
                    "Thm 9, RDP) composed with the final DP-GD run by basic composition (Koskela et al. 2023)",
    }
    return est
