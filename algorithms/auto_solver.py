"""``solver="auto"``: the solver and its key hyper-parameters as a rule of public quantities only.

The rule reads n (training rows), d (features of the solver, with the intercept column), ε, the number
of classes k and nothing else about the data. Under ``replace_one`` — the relation every estimator
reports — n is public; under ``add_remove`` n itself is private, and a caller must pass a public
stand-in (e.g. the ``dataset_size`` of its schedule) instead of len(X).

Regimes (the signal-to-noise of a private mean gradient grows like n·ε and its noise norm like √d):

1. **Constant** — n·ε/(√d·(k − 1)) < :data:`CONSTANT_BELOW`: the data cannot support a model at this ε
   (breast_cancer at ε = 0.1: every fixed solver is worse than the majority class on 6–15 of 20 seeds,
   RESULTS.md "Defaults, issue 24"). The estimator releases the class counts with exact discrete
   Laplace noise (pure ε-DP, the whole budget) and predicts the privately chosen majority class
   (:func:`private_constant`), with one :class:`LowSignalWarning` whose text depends on public
   quantities only.
2. **Few steps** — n·ε < :data:`FEW_STEPS_BELOW`: DP-GD with T = ⌈n·ε/130⌉ full-batch steps of
   η·β = 1.9, no momentum, intercept feature c = R/2 (breast_cancer, n = 398: T = 1 … 7 for ε = 0.2 … 2;
   the estimator's DP-GD default there takes 10–14 momentum steps of η·β ≈ 0.1 and loses 0.03–0.10).
3. **Low ε** — ε < :data:`OBJECTIVE_FROM`: DP-GD with its defaults when d < :data:`SGD_FROM_D` (ijcnn1,
   synthetic at ε = 0.1, where objective perturbation's ridge makes ijcnn1 the majority classifier and
   DP-SGD is worse than the majority class on 2 of 5 seeds), DP-SGD with its defaults from d ≥ 50 on
   (a9a, Adult at ε = 0.1: DP-GD's 100 momentum steps lose 0.008 / 0.012 to it).
4. **Moderate** — ε ≥ 0.5 and n·ε < :data:`OBJECTIVE_FROM_NE`: DP-GD with its defaults (digits ε = 1, 2 and
   synthetic_wide ε ≥ 0.5, where objective perturbation's ridge costs 0.03–0.06).
5. Otherwise **objective perturbation** with its defaults (a9a, ijcnn1, synthetic at ε ≥ 0.5).

The constants were chosen on a9a, ijcnn1, breast_cancer and synthetic data
(``benchmarks/bench_auto.py``, ``RULE_DATASETS``); Adult, digits (0 vs rest), wine and the wide
synthetic set were held out until the rule was fixed (``HELD_OUT``) — except :data:`SGD_FROM_D`, added
after Adult's ε = 0.1 miss and so chosen on a9a and Adult; its held-out check is ``synthetic_wide_large``
(n = 28 000, d = 100: DP-SGD within 0.001 of DP-GD at ε = 0.1; RESULTS.md "Defaults and private selection"),
and :data:`OBJECTIVE_FROM_NE` with FEW_STEPS_BELOW's move from 1300 to 1000, chosen on digits and synthetic_wide
after digits at ε = 1 / 2 missed by 0.049 / 0.059 (no held-out set is left in that band of n·ε).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import numpy as np

from dpcore._validation import check_positive, check_positive_int
from ._solver_common import logistic_smoothness

__all__ = ["AutoChoice", "LowSignalWarning", "choose_solver", "private_constant", "fit_auto", "CONSTANT_BELOW",
           "FEW_STEPS_BELOW", "FEW_STEPS_PER", "OBJECTIVE_FROM", "OBJECTIVE_FROM_NE", "SGD_FROM_D"]

#: Constant predictor below this n·ε/(√d·(k − 1)) (breast_cancer: 7.1 at ε = 0.1 → constant; 14.3 at ε = 0.2,
#: where one DP-GD step beats the majority class on 20 of 20 seeds).
CONSTANT_BELOW = 10.0
#: DP-GD with few plain steps below this n·ε (T = ⌈n·ε/FEW_STEPS_PER⌉ ≤ 8; was 1300 until digits at ε = 1,
#: n·ε = 1257, gave the majority class with them where DP-GD's defaults reach 0.050).
FEW_STEPS_BELOW = 1000.0
FEW_STEPS_PER = 130.0
#: Objective perturbation from this ε on (above the few-step regime); DP-GD's defaults below it.
OBJECTIVE_FROM = 0.5
#: From OBJECTIVE_FROM on, objective perturbation only from this n·ε on; DP-GD's defaults between FEW_STEPS_BELOW
#: and it (digits ε = 1, 2: DP-GD 0.050 / 0.020 against objective perturbation's 0.098 / 0.079; synthetic ε = 0.5,
#: n·ε = 7000: objective perturbation 0.385 against DP-GD's 0.400).
OBJECTIVE_FROM_NE = 5000.0
#: Below OBJECTIVE_FROM, DP-SGD's defaults from this many solver features on (intercept included; ijcnn1 23 and
#: synthetic 21 below, a9a 124 and Adult 109 above), DP-GD's below it.
SGD_FROM_D = 50
#: η·β of the few-step regime and its intercept feature (a fraction of R).
FEW_STEPS_FACTOR = 1.9
FEW_STEPS_INTERCEPT = 0.5


class LowSignalWarning(UserWarning):
    """The rule found the data too small for a model at this ε (public n, d, ε only) and returned the
    privately chosen constant predictor."""


@dataclass(frozen=True)
class AutoChoice:
    """What ``solver="auto"`` runs.

    Attributes
    ----------
    solver : str
        A solver name of :data:`algorithms.estimators.SOLVERS`, or ``"constant"``.
    solver_params : dict
        Hyper-parameters passed to the solver (on top of the estimator's own rules).
    intercept_scaling : float or None
        c of the intercept feature (None: the estimator's default).
    regime : str
        ``"constant"``, ``"few_steps"``, ``"low_epsilon"`` (DP-GD or DP-SGD by d), ``"moderate"`` or ``"objective"``.
    signal : float
        n·ε/(√d·(k − 1)), the public signal-to-noise proxy the rule compares.
    """

    solver: str
    solver_params: Dict[str, Any] = field(default_factory=dict)
    intercept_scaling: Optional[float] = None
    regime: str = ""
    signal: float = math.nan


def choose_solver(*, n: int, d: int, epsilon: float, data_norm_bound: float = 1.0, n_classes: int = 2,
                  fit_intercept: bool = True) -> AutoChoice:
    """The rule of the module docstring.

    Parameters
    ----------
    n : int
        Public number of training rows (replace-one; under add-remove a public stand-in).
    d : int
        Features the solver sees (with the intercept column).
    epsilon : float
        Target ε in (0, ∞] (nats); ∞ → objective perturbation without noise.
    data_norm_bound : float
        R, the public row-norm bound (feature units).
    n_classes : int
        Number of classes k ≥ 2 (the signal of each one-vs-rest direction is split k − 1 ways).
    fit_intercept : bool
        Whether the estimator adds the intercept feature.
    """
    n = check_positive_int("n", n)
    d = check_positive_int("d", d)
    eps = check_positive("epsilon", epsilon, allow_inf=True)
    R = check_positive("data_norm_bound", data_norm_bound)
    k = check_positive_int("n_classes", n_classes, minimum=2)
    if math.isinf(eps):
        return AutoChoice("objective_perturbation", regime="objective", signal=math.inf)
    ne = n * eps
    signal = ne / (math.sqrt(d) * (k - 1))
    if signal < CONSTANT_BELOW:
        return AutoChoice("constant", regime="constant", signal=signal)
    if ne < FEW_STEPS_BELOW:
        c = FEW_STEPS_INTERCEPT * R if fit_intercept else None
        beta = logistic_smoothness(R, 0.0 if c is None else c)
        params = {"steps": max(1, math.ceil(ne / FEW_STEPS_PER)), "momentum": 0.0,
                  "learning_rate": FEW_STEPS_FACTOR / beta}
        return AutoChoice("dp_gd", params, c, "few_steps", signal)
    if eps < OBJECTIVE_FROM:
        return AutoChoice("dp_sgd" if d >= SGD_FROM_D else "dp_gd", regime="low_epsilon", signal=signal)
    if ne < OBJECTIVE_FROM_NE:
        return AutoChoice("dp_gd", regime="moderate", signal=signal)
    return AutoChoice("objective_perturbation", regime="objective", signal=signal)


def private_constant(y: np.ndarray, epsilon: float, rng: Any) -> Tuple[float, float, Any]:
    """The privately chosen constant predictor of ±1 labels: (intercept, noisy positive fraction, event).

    The count of +1 labels gets exact discrete Laplace noise of scale 1/ε (``mechanisms.DiscreteLaplace``,
    sensitivity 1 under replace-one: replacing one record moves the count by at most 1; pure ε-DP). The
    intercept is the logit of the noisy fraction, clipped to [1/(n+1), n/(n+1)] (n public). Returns the
    release's :class:`~dpcore.events.PureDpEvent` under ``replace_one``."""
    from mechanisms import DiscreteLaplace

    from ._solver_common import as_generator

    y = np.asarray(y)
    n = y.shape[0]
    mech = DiscreteLaplace.calibrate(check_positive("epsilon", epsilon))
    noisy = int(mech.randomize(int(np.sum(y > 0)), rng=as_generator(rng)))
    frac = min(max(noisy / n, 1.0 / (n + 1)), n / (n + 1.0))
    return math.log(frac / (1.0 - frac)), frac, mech.privacy_event("replace_one")


def fitted_copy(est: Any, **params: Any) -> Any:
    """A fresh estimator of ``est``'s class with its constructor parameters, ``params`` changed, ``tune``
    off and ``solver`` concrete (what :func:`fit_auto` and the tuning candidates fit)."""
    given = est.get_params(deep=False)
    if "tune" in given:
        given["tune"] = None
    inner = type(est)(**{**given, **params})
    inner.n_features_in_ = est.n_features_in_
    inner.classes_ = est.classes_
    return inner


def adopt(est: Any, inner: Any) -> None:
    """Copy the fitted attributes (``coef_``, ``intercept_``, ``privacy_``, ``alpha_``, …) of ``inner``."""
    for name, value in vars(inner).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(est, name, value)


def fit_constant(est: Any, y: np.ndarray, choice: AutoChoice) -> Any:
    """The constant branch of :func:`fit_auto`: :func:`private_constant` with the whole ε, one warning."""
    import warnings

    import dpcore

    from .seeding import warn_if_fixed_seed

    warn_if_fixed_seed(est.random_state, type(est).__name__)
    intercept, _, event = private_constant(y, est.epsilon, est.random_state)
    d = est.n_features_in_
    est.coef_, est.intercept_ = np.zeros(d), intercept
    est.privacy_ = dpcore.get_epsilon(event, est.delta)
    warnings.warn(
        f"{type(est).__name__}(solver='auto'): n*epsilon/(sqrt(d)*(k-1)) = {choice.signal:.3g} is below "
        f"{CONSTANT_BELOW:g} (n = {y.shape[0]}, d = {d + bool(est.fit_intercept)} with the intercept, epsilon = "
        f"{est.epsilon:g}): too little data for a model at this epsilon, so the fit is the constant predictor of the "
        "class counts released with discrete Laplace noise (the whole epsilon); raise epsilon or pass a solver "
        "to fit a model anyway", LowSignalWarning, stacklevel=3)
    return est


def fit_auto(est: Any, X: np.ndarray, y: np.ndarray) -> Any:
    """Fit ``est`` (``solver="auto"``) on rows ``X`` and ±1 labels ``y``: the rule's solver and parameters
    (user ``solver_params`` / a numeric ``intercept_scaling`` take precedence), or the private constant.
    Sets ``solver_`` (the solver run) and ``auto_choice_`` (:class:`AutoChoice`)."""
    X = est._clip_rows(X, fitting=True)  # the public norm-bound check runs on every branch
    n, d = X.shape
    choice = choose_solver(n=n, d=d + bool(est.fit_intercept), epsilon=est.epsilon,
                           data_norm_bound=est.data_norm_bound, n_classes=len(est.classes_),
                           fit_intercept=bool(est.fit_intercept))
    est.auto_choice_ = choice
    est.solver_ = choice.solver
    if choice.solver == "constant":
        return fit_constant(est, y, choice)
    params: Dict[str, Any] = {"solver": choice.solver,
                              "solver_params": {**choice.solver_params, **(est.solver_params or {})}}
    if choice.intercept_scaling is not None and est.intercept_scaling == "auto":
        params["intercept_scaling"] = choice.intercept_scaling
    elif est.intercept_scaling == "auto":
        params["intercept_scaling"] = 1.0
    inner = fitted_copy(est, **params)
    inner._fit_weights(X, y, {}, {})
    adopt(est, inner)
    est.auto_choice_, est.solver_ = choice, choice.solver
    return est
