"""``DPLogisticRegression(tune=...)``: private hyper-parameter selection inside the user's ε, accounted.

Two methods (``tune["method"]``): ``"retrain"`` (the default; :mod:`algorithms.tune_retrain`) selects a
configuration at a share of ε and trains it once on all rows; ``"release_best"`` (this module) releases the best
tuning run itself, as follows.

Repeat-and-select (Liu & Talwar 2019; Papernot & Steinke 2022 — :mod:`dpcore.selection`): the number of
runs K is drawn from a public distribution; each run picks one candidate of a public grid at random
(its own randomness), trains it, and releases its number of correctly classified training records
with Gaussian noise (the score, sensitivity 1 under replace-one); only the run with the best noisy
score is released (its model, its hyper-parameters and its noisy score).

Every candidate releases exactly the same privacy curve, so one event describes a run whatever the
candidate: the candidates are DP-GD runs (T full-batch Gaussian releases with noise multiplier
z₀·√T, whose composition is exactly one Gaussian with multiplier z₀ — μ² = T/(z₀√T)² = 1/z₀²) and the
constant predictor (one Gaussian release of the class count with multiplier z₀). A run is therefore
``ComposedEvent([GaussianEvent(z₀), GaussianEvent(z_s)])`` (training, score; ``replace_one``), and
the fit is ``RepeatAndSelectEvent(run, K, η)``; z₀ and z_s (the score's share ``score_share`` of
μ² = 1/z₀² + 1/z_s²) are calibrated so that the whole selection meets the user's (ε, δ) with the RDP
accountant, and each candidate's own event is checked against the run's curve before its result is
used. ``privacy_`` is the selection's guarantee; ``tuning_`` states the share of one run and of the
selection (and, like :mod:`algorithms.tune_retrain`, never K: the bound covers the best run's output with K hidden).

**No run (Poisson).** Papernot & Steinke's Poisson variant draws K = 0 with probability e^{−E[K]}, and the
selection then outputs ⊥ (nothing). The estimator must still return a model, and drawing K again is not
allowed (the accounting covers one draw). With ``distribution="poisson"`` the tuned fit therefore also
accounts, always, one *fallback* release: the class count with Gaussian noise of the constant candidate's
multiplier z₀ (sensitivity 1 under replace-one). It runs only when K = 0, and the estimator then returns
that privately chosen constant predictor with one :class:`NoTuningRunWarning` (its text: the distribution,
E[K] and P(K = 0) — public quantities and the data-independent draw K). The event is then
``ComposedEvent([RepeatAndSelectEvent(run, K, ∞), GaussianEvent(z₀)])`` — an adaptive composition whose
second release depends on the first's output only, so its RDP is at most the sum — and z₀, z_s are
calibrated to the user's (ε, δ) with the fallback included. The other distributions have K ≥ 1.

The grid is public (n, d, ε, δ and the tuning options; :func:`candidate_grid`) and centred on what
``solver="auto"`` runs, because with K = 1 (likely at E[K] = 5) whichever candidate was drawn is released:
in the few-step regime (n·ε < 1000, :data:`algorithms.auto_solver.FEW_STEPS_BELOW`) the rule's T₀ = ⌈n·ε_run/130⌉ plain steps of η·β = 1.9 at one
run's training ε_run with T ∈ {T₀, 2T₀, 3T₀}, intercept feature R/2, and the constant predictor where the rule
itself returns it (n·ε/√d < 10);
otherwise DP-GD's own defaults computed at one run's training ε (T₀ = ``default_steps``, η·β =
``default_step_factor``, μ = 0.9, c = R) with T ∈ {T₀, 2T₀} and η·β or half of it. (The previous generic grid —
T ∈ {T₀/3, T₀, 3T₀} × two step rules × two ridges + the constant — drew a poor candidate too often: ijcnn1
ε = 0.5 worst seed 0.0948, RESULTS.md "Defaults and private selection".)
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from dpcore._validation import check_choice, check_positive

from ._solver_common import logistic_smoothness

__all__ = ["TUNE_DEFAULTS", "NoTuningRunWarning", "candidate_grid", "fit_tuned", "tuning_event"]

#: Defaults of ``tune=True`` / ``tune=K`` (benchmarks/bench_auto.py --tune; RESULTS.md "Defaults, issue 24").
TUNE_DEFAULTS = {"candidates": 5.0, "distribution": "truncated_negative_binomial", "shape": -0.5,
                 "score_share": 0.2, "method": "retrain", "subsample": 1.0, "selection_share": 0.2}
#: ``tune["method"]``: retrain the chosen configuration on all rows (:mod:`algorithms.tune_retrain`; the default
#: since it lost less than release_best on a9a / Adult / digits and never loses where it skips the selection), or
#: release the best tuning run itself (this module).
TUNE_METHODS = ("release_best", "retrain")


class NoTuningRunWarning(UserWarning):
    """``tune`` with ``distribution="poisson"`` drew K = 0 runs: the fit is the accounted fallback, the privately
    chosen constant predictor (module docstring)."""


def _options(tune: Any) -> Dict[str, Any]:
    if tune is True:
        return dict(TUNE_DEFAULTS)
    if isinstance(tune, dict):
        unknown = set(tune) - set(TUNE_DEFAULTS)
        if unknown:
            raise ValueError(f"tune has unknown keys {sorted(unknown)}; allowed: {sorted(TUNE_DEFAULTS)}")
        out = {**TUNE_DEFAULTS, **tune}
        if "distribution" in tune and "shape" not in tune:
            out["shape"] = None
        return out
    if isinstance(tune, bool) or not isinstance(tune, (int, float, np.integer, np.floating)):
        raise ValueError(f"tune must be None, True, a mean number of runs >= 1 or a dict with keys "
                         f"{sorted(TUNE_DEFAULTS)}; got {tune!r}")
    if not 1.0 <= float(tune) < math.inf:
        raise ValueError(f"tune must be None, True, a finite mean number of runs >= 1 or a dict; got {tune!r}")
    return {**TUNE_DEFAULTS, "candidates": float(tune)}


def candidate_grid(n: int, d: int, epsilon: float, data_norm_bound: float,
                   run_epsilon: Optional[float] = None) -> List[Dict[str, Any]]:
    """The public grid (module docstring), centred on what ``solver="auto"`` would run: dicts of DP-GD ``steps,
    learning_rate, momentum, alpha, intercept_scaling``, and ``{"constant": True}`` in the few-step regime.

    Parameters
    ----------
    n, d : int
        Public training rows and solver features (intercept included).
    epsilon : float
        The user's total ε (nats): picks the regime as :func:`algorithms.auto_solver.choose_solver` does.
    data_norm_bound : float
        R (feature units).
    run_epsilon : float, optional
        ε (nats, at the fit's δ) of one candidate's training release alone — what DP-GD's default step count and
        step size are computed for (default ``epsilon``).
    """
    from .auto_solver import CONSTANT_BELOW, FEW_STEPS_BELOW, FEW_STEPS_FACTOR, FEW_STEPS_INTERCEPT, FEW_STEPS_PER
    from .dp_gd import BENCHMARK_MOMENTUM, default_step_factor, default_steps

    ne = n * epsilon
    eps_run = epsilon if run_epsilon is None else run_epsilon
    grid: List[Dict[str, Any]] = []
    if ne < FEW_STEPS_BELOW:  # the rule's few plain steps (c = R/2) at one run's ε, 2× and 3× as many
        c = FEW_STEPS_INTERCEPT * data_norm_bound
        beta = logistic_smoothness(data_norm_bound, c)
        t0 = max(1, math.ceil(n * eps_run / FEW_STEPS_PER))
        for steps in (t0, 2 * t0, 3 * t0):
            grid.append({"steps": steps, "learning_rate": FEW_STEPS_FACTOR / beta, "momentum": 0.0, "alpha": 0.0,
                         "intercept_scaling": c})
        if ne / math.sqrt(d) < CONSTANT_BELOW:  # where the rule itself returns the constant
            grid.append({"constant": True})
        return grid
    # DP-GD's defaults at one run's training ε (T, η·β, momentum 0.9, c = R), with double the steps and half the
    # step: every candidate near the default (a run of K = 1 releases whichever was drawn)
    c = data_norm_bound
    beta = logistic_smoothness(data_norm_bound, c)
    t0 = default_steps(n, eps_run)
    for steps in (t0, 2 * t0):
        factor = default_step_factor(n, eps_run, steps)
        for scale in (1.0, 0.5):
            grid.append({"steps": steps, "learning_rate": scale * factor / beta, "momentum": BENCHMARK_MOMENTUM,
                         "alpha": 0.0, "intercept_scaling": c})
    return grid


def tuning_event(noise_multiplier: float, score_multiplier: float, candidates: float, distribution: str,
                 shape: Any):
    """The selection event of the module docstring (``replace_one``): ``RepeatAndSelectEvent(run, K, η)``, composed
    with the fallback's ``GaussianEvent(noise_multiplier)`` when the distribution allows K = 0 (Poisson)."""
    from dpcore.events import ComposedEvent, GaussianEvent
    from dpcore.selection import selection_event

    run = ComposedEvent([GaussianEvent(noise_multiplier, "replace_one"), GaussianEvent(score_multiplier, "replace_one")])
    selection = selection_event(run, candidates, distribution, shape)
    if math.isinf(selection.shape):  # Poisson: K = 0 possible, the fallback count is accounted as well
        return ComposedEvent([selection, GaussianEvent(noise_multiplier, "replace_one")])
    return selection


def _selection(event: Any) -> Any:
    """The ``RepeatAndSelectEvent`` of :func:`tuning_event`'s event (the first part when a fallback is composed)."""
    from dpcore.selection import RepeatAndSelectEvent

    return event if isinstance(event, RepeatAndSelectEvent) else event.events[0]


def validated_selection(build: Any) -> Any:
    """``build()`` (a selection event), its ``ValueError`` naming the estimator's parameter — tune's ``candidates``
    (the selection's mean) or ``shape`` — instead of the event's."""
    try:
        return build()
    except ValueError as exc:
        message = str(exc)
        for name, key in (("mean", "candidates"), ("shape", "shape")):
            if message.startswith(f"{name} must"):
                raise ValueError(f"tune {key}" + message[len(name):]) from None
        raise


def _calibrate(epsilon: float, delta: float, opts: Dict[str, Any]) -> Tuple[float, float]:
    """(z₀, z_s) with the whole tuned fit's ε ≤ ``epsilon`` (RDP accountant; :func:`tuning_event`, the
    fallback included): z is the run's whole μ² = 1/z², training 1 − f of it, the score f."""
    from dpcore.calibration import MIN_NOISE_MULTIPLIER, calibrate

    f = float(opts["score_share"])
    if not 0.0 < f < 1.0:
        raise ValueError(f"tune score_share must be in (0, 1); got {opts['score_share']!r}")

    def event(z: float) -> Any:
        return tuning_event(z / math.sqrt(1.0 - f), z / math.sqrt(f), opts["candidates"], opts["distribution"],
                            opts["shape"])

    validated_selection(lambda: event(1.0))
    try:
        z = calibrate(event, "noise_multiplier", epsilon, delta, lower=0.5, upper=2.0, increasing=False,
                      bounds=(MIN_NOISE_MULTIPLIER, 1e8), accountant="rdp").value
    except ValueError as exc:
        if "cannot be met" not in str(exc):
            raise
        raise ValueError(f"epsilon={epsilon!r} at delta={delta!r} is too small for tune={opts['candidates']:g} runs on "
                         f"average ({opts['distribution']}): no noise multiplier in the calibration range meets it; "
                         "raise epsilon, lower the tune candidates, or fit without tune") from None
    return z / math.sqrt(1.0 - f), z / math.sqrt(f)


def _noisy_constant(y: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> float:
    """The constant candidate / fallback: the count of +1 labels plus N(0, z₀²) (sensitivity 1 under replace-one),
    its fraction clipped to [1/(n+1), n/(n+1)] (n public); returns the released intercept (logit)."""
    n = y.shape[0]
    noisy = float(np.sum(y > 0)) + float(rng.normal(0.0, noise_multiplier))
    frac = min(max(noisy / n, 1.0 / (n + 1)), n / (n + 1.0))
    return math.log(frac / (1.0 - frac))


def _check_curve(event: Any, reference: Any) -> None:
    """A candidate's event must have the run's training curve (what ran is what is accounted)."""
    import dpcore
    from dpcore.orders import DEFAULT_ORDERS

    ran, planned = dpcore.compute_rdp(event, DEFAULT_ORDERS), dpcore.compute_rdp(reference, DEFAULT_ORDERS)
    if not np.all(ran <= planned * (1.0 + 1e-9)):
        raise ArithmeticError("a tuning candidate released more than the run's planned privacy curve")


def run_candidate(est: Any, X: Any, y: np.ndarray, config: Dict[str, Any], noise_multiplier: float,
                  rng: np.random.Generator) -> Any:
    """One tuning run: a fitted copy of ``est`` by DP-GD with ``config`` (``steps, learning_rate, momentum, alpha,
    intercept_scaling``) and noise multiplier z₀·√T per step — T steps compose to one Gaussian of multiplier z₀
    (``noise_multiplier``) — its event checked against that curve (:func:`_check_curve`)."""
    from dpcore.events import GaussianEvent

    from .auto_solver import fitted_copy

    inner = fitted_copy(est, solver="dp_gd", epsilon=None, alpha=config["alpha"],
                        intercept_scaling=config["intercept_scaling"],
                        solver_params={"steps": config["steps"], "learning_rate": config["learning_rate"],
                                       "momentum": config["momentum"],
                                       "noise_multiplier": noise_multiplier * math.sqrt(config["steps"])},
                        random_state=rng)
    inner._fit_weights(X, y, {}, {})
    _check_curve(inner._privacy_event, GaussianEvent(noise_multiplier, "replace_one"))
    return inner


def fit_tuned(est: Any, X: np.ndarray, y: np.ndarray) -> Any:
    """Fit ``est`` (``tune`` set) on rows ``X`` and ±1 labels ``y`` by private selection; sets ``coef_``,
    ``intercept_``, ``privacy_`` (the whole selection), ``tuning_`` and ``solver_``."""
    import dpcore
    from dpcore.events import GaussianEvent

    from ._solver_common import as_generator
    from .auto_solver import adopt
    from .seeding import warn_if_fixed_seed

    opts = _options(est.tune)
    opts["distribution"] = check_choice("tune distribution", opts["distribution"],
                                        ("poisson", "geometric", "logarithmic", "truncated_negative_binomial"))
    eps = check_positive("epsilon", est.epsilon)
    if math.isinf(eps):
        raise ValueError("tune needs a finite epsilon (selection without noise has no privacy to account)")
    if est.solver not in ("auto", "dp_gd"):
        raise ValueError(f"tune selects among DP-GD runs and the constant; solver must be 'auto' or 'dp_gd'; "
                         f"got {est.solver!r}")
    warn_if_fixed_seed(est.random_state, type(est).__name__)
    rng = as_generator(est.random_state)
    X = est._clip_rows(X, fitting=True)
    method = check_choice("tune method", opts["method"], TUNE_METHODS)
    if method == "retrain":  # selection on a subsample, then one final run (algorithms.tune_retrain)
        from .tune_retrain import fit_retrained

        return fit_retrained(est, X, y, opts, rng)
    if opts["subsample"] != TUNE_DEFAULTS["subsample"] or opts["selection_share"] != TUNE_DEFAULTS["selection_share"]:
        raise ValueError("tune subsample and selection_share apply to method='retrain' only (method='release_best' "
                         "releases the best tuning run itself, trained on all rows)")
    n, d = X.shape
    z0, zs = _calibrate(eps, est.delta, opts)
    event = tuning_event(z0, zs, opts["candidates"], opts["distribution"], opts["shape"])
    selection = _selection(event)
    run_eps = dpcore.get_epsilon(GaussianEvent(z0, "replace_one"), est.delta).epsilon  # public: from ε, δ, opts
    grid = candidate_grid(n, d + bool(est.fit_intercept), eps, est.data_norm_bound, run_eps)
    runs = selection.sample_count(rng)
    best: Tuple[float, Any, Dict[str, Any]] = (-math.inf, None, {})
    for _ in range(runs):
        cand = grid[int(rng.integers(len(grid)))]
        if cand.get("constant"):
            w, b = np.zeros(d), _noisy_constant(y, z0, rng)
            model = (w, b)
        else:
            inner = model = run_candidate(est, X, y, cand, z0, rng)
            w, b = inner.coef_, inner.intercept_
        correct = float(np.sum(np.where(X @ w + b > 0, 1.0, -1.0) == y))
        score = correct + float(rng.normal(0.0, zs))  # sensitivity 1 under replace-one
        if score > best[0]:
            best = (score, model, cand)
    score, model, cand = best
    if model is None:  # K = 0 (Poisson): the selection output ⊥; the accounted fallback (module docstring)
        model, cand = (np.zeros(d), _noisy_constant(y, z0, rng)), {"constant": True, "fallback": True}
        warnings.warn(
            f"{type(est).__name__}(tune=...): the number of tuning runs K ~ Poisson(mean {opts['candidates']:g}) "
            f"came out 0 (probability exp(-{opts['candidates']:g}) = {math.exp(-opts['candidates']):.3g}, drawn "
            "independently of the data): no candidate ran, so the fit is the accounted fallback, the constant "
            "predictor of the class count released with Gaussian noise (its cost is included in privacy_); "
            "refitting spends the budget again — use a larger mean or distribution='truncated_negative_binomial' "
            "(K >= 1)", NoTuningRunWarning, stacklevel=3)
    if isinstance(model, tuple):
        est.coef_, est.intercept_ = model
    else:
        adopt(est, model)
    privacy = dpcore.get_epsilon(event, est.delta, accountant="rdp")
    one_run = dpcore.get_epsilon(selection.event, est.delta, accountant="rdp")
    est.privacy_ = privacy
    est.solver_ = "constant" if cand.get("constant") else "dp_gd"
    est.tuning_ = {
        "candidates": opts["candidates"], "distribution": opts["distribution"], "shape": selection.shape,
        "grid_size": len(grid), "run_training_epsilon": run_eps, "chosen": dict(cand), "noisy_accuracy": score / n if runs else None,
        "one_run_epsilon": one_run.epsilon, "selection_epsilon": privacy.epsilon - one_run.epsilon,
        "score_share": opts["score_share"], "noise_multiplier": z0, "score_noise_multiplier": zs,
        "fallback_noise_multiplier": None if event is selection else z0,  # Poisson: in selection_epsilon too
        "analysis": "repeat-and-select, Papernot & Steinke 2022 (dpcore.selection), RDP accountant",
    }
    return est
