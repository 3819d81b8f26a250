"""The regressors' ``solver="auto"``: the solver and its key hyper-parameters as a rule of public quantities.

The rule (:func:`choose_regression_solver`) reads n (training rows), d (the solver's features, with the
intercept column), ε and the estimator's loss — nothing else about the data. Under ``replace_one``, the relation
every estimator reports, n is public. The targets enter only through the public ``target_bound`` /
``target_range`` that scale them to [−1, 1] (required for a private fit). Regimes:

1. **Low signal** — n·ε/√d below :data:`SHRINK_BELOW` (``DPLinearRegression``) or :data:`CONSTANT_BELOW`
   (``DPHuberRegressor``): one :class:`~algorithms.auto_solver.LowSignalWarning` whose text depends on public
   quantities only, and for least squares AdaSSP (its noise-adaptive ridge shrinks the fit towards the middle
   of the public target range), for the Huber loss the private mean of the scaled targets
   (:func:`private_mean`: their sum with Laplace noise, the whole ε, pure ε-DP). Mean R² on diabetes /
   syn_small / syn_noisy / adult_hours (8 seeds; ``/tmp`` sweep over n·ε/√d, RESULTS.md):

   ========  ==============================  ==============================  ==============================
   n·ε/√d    private mean                    DP-GD, T below                  AdaSSP
   ========  ==============================  ==============================  ==============================
   0.3       −3.80 / −6.51 / −4.28 / −6.47   −14.0 / −8.02 / −2.48 / −1.73   −0.13 / −0.04 / 0.00 / −0.52
   1         −2.25 / −2.94 / −2.17 / −1.06   −1.69 / −1.14 / −0.34 / −0.40   −0.13 / −0.04 / 0.00 / −0.49
   2         −1.05 / −1.61 / −0.54 / −0.27   −0.45 / −0.36 / −0.09 / −0.24   −0.13 / −0.03 / 0.00 / −0.45
   5         −0.18 / −0.27 / −0.08 / −0.04   −0.01 / −0.12 / −0.03 / −0.10   −0.11 / −0.03 / 0.00 / −0.34
   ========  ==============================  ==============================  ==============================

   Worst over the four sets: AdaSSP below 1.5, DP-GD above (they tie at 2: −0.45 / −0.45) (the constant only ever wins on adult_hours, whose
   public range 1–99 is off-centre: there it stays ahead of DP-GD up to n·ε/√d ≈ 20, by 0.04–0.06 — no public
   rule separates it from the centred sets). The Huber estimator has no AdaSSP; below n·ε/√d = 1 its constant
   beats one DP-GD step in the worst case (diabetes at 0.93, 20 seeds: −2.36 against −2.48).
2. **DP-GD** with T = :func:`regression_steps` (n, ε) full-batch steps (its other parameters the estimators'
   regression defaults): DP-GD's own ⌈n·ε/15⌉ below n·ε = 1500 but without its floor of 10 steps (diabetes at
   ε = 0.1, n·ε = 31, 5 seeds: 10 steps R² −1.10, 3 steps +0.09), 100 up to n·ε = 6000, then ⌈n·ε/60⌉ up to 300
   (syn_large at ε = 0.5, n·ε = 17 500: 100 steps 0.908, 292 steps 0.984; adult_hours at ε = 1: 0.161 → 0.177).
3. **Objective perturbation** (``DPHuberRegressor``) from n·ε = :data:`OBJECTIVE_FROM_NE` on (adult_hours
   ε = 2 / 10: 0.185 / 0.192 against DP-GD's 0.178 / 0.179; syn_large and syn_noisy within 0.001 of DP-GD),
   **AdaSSP** (``DPLinearRegression``, its "joint" variant) from n·ε = :data:`ADASSP_FROM_NE` on (adult_hours
   ε = 10: 0.185 against 0.179; syn_large ε = 10 0.988 against 0.989; at n·ε ≈ 70 000 it still loses 0.005–0.008).

ε = ∞ gives the noiseless minimiser (objective perturbation for the Huber loss, DP-GD to its tolerance for least
squares). The constants were chosen on diabetes, adult_hours and the synthetic sets syn_small, syn_noisy,
syn_large (``benchmarks/bench_regression_auto.py``, ``RULE_DATASETS``, 3–20 seeds); adult_age, wine_alcohol and
syn_wide (``HELD_OUT``) were first run after the rule was fixed (RESULTS.md "Regressors on solver='auto'"): on
adult_age the default is within 0.011 of the best fixed solver at every ε; on wine_alcohol (n = 124, a public range
five times the targets' spread) it is below the private mean at ε ≤ 0.5 — the rule reads no quantity that tells
such a range from a tight one.
Every solver stays selectable by name; ``solver="auto"`` stores the one it ran in ``solver_`` and the rule's
:class:`~algorithms.auto_solver.AutoChoice` in ``auto_choice_``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Tuple

import numpy as np

from dpcore._validation import check_positive, check_positive_int

from .auto_solver import AutoChoice, LowSignalWarning

__all__ = ["choose_regression_solver", "regression_steps", "private_mean", "fit_private_mean", "warn_low_signal", "CONSTANT_BELOW",
           "SHRINK_BELOW", "STEPS_PER", "STEPS_FLAT", "STEPS_PER_LARGE", "STEPS_MAX", "OBJECTIVE_FROM_NE", "ADASSP_FROM_NE"]

#: The private mean below this n·ε/√d (d with the intercept column; diabetes at ε = 0.01: 0.93 → constant).
CONSTANT_BELOW = 1.0
#: DPLinearRegression: AdaSSP (its adaptive ridge shrinks the fit towards the public midpoint) below this n·ε/√d.
SHRINK_BELOW = 1.5
#: DP-GD's steps T = min(STEPS_MAX, max(min(STEPS_FLAT, ⌈n·ε/STEPS_PER⌉), ⌈n·ε/STEPS_PER_LARGE⌉)), at least 1.
STEPS_PER = 15.0
STEPS_FLAT = 100
STEPS_PER_LARGE = 60.0
STEPS_MAX = 300
#: DPHuberRegressor: objective perturbation from this n·ε on.
OBJECTIVE_FROM_NE = 50_000.0
#: DPLinearRegression: AdaSSP (its "joint" variant) from this n·ε on.
ADASSP_FROM_NE = 200_000.0


def regression_steps(n: int, epsilon: float) -> int:
    """DP-GD's number of full-batch steps T of the rule (module docstring): n·ε/15 as DP-GD's own default below
    n·ε = 1500 but without its floor of 10, 100 up to n·ε = 6000, then n·ε/60 up to 300."""
    ne = n * epsilon
    if ne >= STEPS_MAX * STEPS_PER_LARGE:  # compared before ceil: a huge finite ε is never converted to int
        return STEPS_MAX
    return min(STEPS_MAX, max(1, min(STEPS_FLAT, math.ceil(ne / STEPS_PER)), math.ceil(ne / STEPS_PER_LARGE)))


def choose_regression_solver(*, n: int, d: int, epsilon: float, loss: str) -> AutoChoice:
    """The rule of the module docstring.

    Parameters
    ----------
    n : int
        Public number of training rows (replace-one, the relation the estimators report).
    d : int
        Features the solver sees (with the intercept column).
    epsilon : float
        Target ε in (0, ∞] (nats); ∞ → the noiseless minimiser (objective perturbation for the Huber loss,
        DP-GD to its tolerance for least squares).
    loss : {"squared", "huber"}
        The estimator's loss (``DPLinearRegression`` / ``DPHuberRegressor``).

    Returns
    -------
    AutoChoice
        ``solver`` (a solver name or ``"constant"``), ``solver_params`` (DP-GD's ``steps``), ``regime``
        (``"constant"``, ``"dp_gd"``, ``"objective"`` or ``"adassp"``) and ``signal`` = n·ε/√d.
    """
    n = check_positive_int("n", n)
    d = check_positive_int("d", d)
    eps = check_positive("epsilon", epsilon, allow_inf=True)
    if loss not in ("squared", "huber"):
        raise ValueError(f"loss must be 'squared' or 'huber'; got {loss!r}")
    if math.isinf(eps):
        if loss == "huber":
            return AutoChoice("objective_perturbation", regime="objective", signal=math.inf)
        return AutoChoice("dp_gd", regime="dp_gd", signal=math.inf)
    ne = n * eps
    signal = ne / math.sqrt(d)
    if loss == "squared" and signal < SHRINK_BELOW:
        return AutoChoice("adassp", regime="low_signal", signal=signal)
    if signal < CONSTANT_BELOW:
        return AutoChoice("constant", regime="constant", signal=signal)
    if loss == "huber" and ne >= OBJECTIVE_FROM_NE:
        return AutoChoice("objective_perturbation", regime="objective", signal=signal)
    if loss == "squared" and ne >= ADASSP_FROM_NE:
        return AutoChoice("adassp", regime="adassp", signal=signal)
    return AutoChoice("dp_gd", {"steps": regression_steps(n, eps)}, regime="dp_gd", signal=signal)


def private_mean(t: np.ndarray, epsilon: float, rng: Any) -> Tuple[float, Any]:
    """The privately estimated mean of scaled targets t ∈ [−1, 1]ⁿ: (mean in [−1, 1], its event).

    The sum Σᵢ tᵢ gets Laplace noise by the exact lattice release of :class:`mechanisms.Laplace` (secure,
    pure ε-DP, its ℓ1 sensitivity Δ = 2 under ``replace_one``: replacing one record moves one tᵢ ∈ [−1, 1] by at
    most 2; Dwork & Roth 2014, Thm 3.6), divided by the public n and clipped to [−1, 1] (post-processing).
    Returns the release's :class:`~dpcore.events.PureDpEvent` under ``replace_one``.

    Parameters
    ----------
    t : ndarray of shape (n,)
        Targets already scaled to [−1, 1] by the public ``target_bound`` / ``target_range`` (target units / B).
    epsilon : float
        ε > 0 of the release (nats).
    rng : None, int or numpy.random.Generator
        Source of the noise.
    """
    from mechanisms import Laplace

    from ._solver_common import as_generator

    t = np.asarray(t, dtype=np.float64)
    n = check_positive_int("n", t.shape[0])
    if not np.all(np.abs(t) <= 1.0):
        raise ValueError("private_mean needs targets scaled to [-1, 1] (a public target_bound / target_range)")
    mech = Laplace.calibrate(check_positive("epsilon", epsilon), sensitivity=2.0)
    noisy = float(mech.randomize(np.array([float(np.sum(t))]), rng=as_generator(rng))[0])
    return min(max(noisy / n, -1.0), 1.0), mech.privacy_event("replace_one")


def fit_private_mean(est: Any, D: Any, t: np.ndarray, extra: dict) -> Any:
    """The constant branch of ``solver="auto"``: ``est`` predicts :func:`private_mean` of the scaled targets ``t``
    (the whole ε) with ``coef_`` = 0; ``privacy_`` is the release's guarantee at ``est.delta``. The caller
    (``_fit_scaled_targets``) maps the intercept back to target units."""
    import dpcore

    from .seeding import warn_if_fixed_seed

    if extra.get("target_bound") != 1.0:  # the rule returns the constant only at a finite ε, where a bound is required
        raise ValueError("the private-mean predictor needs a public target_bound or target_range")
    est._row_map(D, fitting=True)  # the public norm-bound check runs on every branch
    warn_if_fixed_seed(est.random_state, type(est).__name__)
    mean, event = private_mean(t, est.epsilon, est.random_state)
    est.coef_, est.intercept_ = np.zeros(D.d), mean
    est._privacy_event = event
    est.privacy_ = dpcore.get_epsilon(event, est.delta)
    return est


def warn_low_signal(est: Any, n: int) -> None:
    """One :class:`~algorithms.auto_solver.LowSignalWarning` after a fit in the ``"constant"`` or ``"low_signal"``
    regime (none otherwise); its text reads only public quantities: n, d, ε and the rule's thresholds."""
    choice = est.auto_choice_
    if choice.regime not in ("constant", "low_signal"):
        return
    d = est.n_features_in_ + bool(est.fit_intercept)
    if choice.regime == "constant":
        what = (f"below {CONSTANT_BELOW:g}: too little data for a model at this epsilon, so the fit is the constant "
                "predictor of the targets' mean released with Laplace noise (the whole epsilon)")
    else:
        what = (f"below {SHRINK_BELOW:g}: too little data for an unregularised model at this epsilon, so the fit is "
                "AdaSSP, whose noise-adaptive ridge shrinks it towards the middle of the public target range")
    warnings.warn(f"{type(est).__name__}(solver='auto'): n*epsilon/sqrt(d) = {choice.signal:.3g} is {what} (n = {n}, "
                  f"d = {d} with the intercept, epsilon = {est.epsilon:g}); raise epsilon or pass a solver to fit "
                  "another model anyway", LowSignalWarning, stacklevel=5)
