"""scikit-learn style estimators over the private solvers: ``DPLogisticRegression``,
``DPHuberRegressor``, ``DPLinearRegression``.

scikit-learn is optional. When it is importable the estimators derive from
``sklearn.base.BaseEstimator`` and the classifier / regressor mixins (so ``clone``, ``Pipeline``,
``GridSearchCV`` and ``cross_val_score`` work); otherwise a small fallback base provides the same
``get_params`` / ``set_params`` contract and ``score``.

Privacy-relevant conventions (all documented on the classes):

* **Objective**: F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + (alpha/2)‖w‖² — sklearn's ``LogisticRegression(C)``
  corresponds to ``alpha = 1/(n·C)`` (with ``fit_intercept=False``, or liblinear's penalised
  intercept with the same ``intercept_scaling``).
* **Row-norm bound**: ``data_norm_bound`` R is a public promise ‖xᵢ‖₂ ≤ R that the sensitivity is
  computed from. It is never estimated from the data (that would leak). Rows above it raise
  ``ValueError``, unless ``clip_data=True``, which rescales each offending row to norm R — a
  per-record map, so the neighbouring relation and the guarantee are unchanged; ``predict`` /
  ``decision_function`` apply the same public map to their rows (the model was fitted on it).
* **Shapes** (issue 26): X is validated once (:func:`algorithms._data.as_design`) and never copied — a
  ``scipy.sparse`` X (e.g. CSR from ``load_svmlight_file``) stays canonical CSR for every solver whose
  kernels read the row layouts of :mod:`algorithms.rows` (every first-order solver and the perturbation
  family; AdaSSP gets a dense copy, refused beyond
  :data:`algorithms._data.MAX_DENSE_BYTES`), the intercept is a virtual constant column and the row map
  below a per-row scale; row norms are computed once.
* **One neighbouring relation**: every solver's ``privacy_`` is reported under ``replace_one``
  (n public, one record replaced), so solvers are comparable at equal ``epsilon``. DP-SGD, whose
  Poisson analysis is add/remove, is run by the estimators with ``sampling="without_replacement"``
  (replace-one accounting); Poisson sampling is refused here — under add/remove n is private, and
  the estimators' public rules (``alpha="auto"``, the full-batch fallback) read n. Call
  :func:`algorithms.dp_sgd` directly for Poisson sampling with a public schedule.
* **Intercept**: ``fit_intercept=True`` appends a constant feature c = ``intercept_scaling`` to
  every row; the solver sees rows of norm ≤ √(R² + c²) and that bound enters its sensitivity.
  The intercept is c·w_{d+1} and is regularised like the other weights (as in liblinear).
* **Targets** (regressors): a public ``target_bound`` B (fit y/B) or ``target_range`` (lo, hi) (fit
  (y − m)/h, m and h its midpoint and half-width) — checked, ``ValueError`` naming it, never clipped;
  the regressors' ``"auto"`` rules (``clip_norm``, ``huber_delta``, ``alpha``, DP-SGD / DP-SVRG
  schedules) are public rules of n, d, ε and these bounds (class docstrings).
* **Labels** (classifier): two or more classes; ``classes`` may be given (public label set),
  otherwise ``classes_ = unique(y)`` (the label *set* is then taken from the data, as scikit-learn
  does, outside the guarantee: :class:`~algorithms.label_set.PrivacyLeakWarning`; pass ``classes``).
  Two classes: ``classes_[0] → −1``, ``classes_[1] → +1``. k ≥ 3 (``multi_class``): one softmax model
  (:mod:`algorithms.multiclass`; the whole per-example gradient matrix clipped, one event as for two
  classes) or k one-vs-rest fits whose releases dpcore composes into one event (``privacy_event_``).
* ``epsilon=math.inf`` switches the noise off and reports ε = inf; the first-order solvers then
  minimise their objective to a convergence tolerance (``tol``) instead of a fixed budget.
* **Randomness**: ``random_state=None`` (default) draws fresh OS entropy; an int seed is for tests
  only (the fit is then a deterministic function of the data) and warns
  (:class:`~algorithms.seeding.DeterministicSeedWarning`).

After ``fit``: ``coef_``, ``intercept_``, ``privacy_`` (``dpcore.PrivacyResult``: ``.epsilon``,
``.delta``, ``.relation`` — replace-one for every solver), ``n_features_in_``; classifiers also ``classes_`` —
only outputs covered by the guarantee (or public). With ``keep_diagnostics=True`` (documented as
NOT private) also ``n_gradient_evaluations_`` and ``result_`` (the full
:class:`~algorithms.result.SolverResult`, with the solver's traces — objective values on the raw
data — switched on); these must not be published.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, Dict, Optional

import numpy as np

from dpcore._validation import check_bool, check_choice, check_delta, check_positive

from ._data import Design, as_design, validate_labels
from .approx_objective_perturbation import approx_objective_perturbation
from .approximate_minima_perturbation import approximate_minima_perturbation
from .dp_accmd import dp_accmd
from .dp_gd import BENCHMARK_STEP, default_steps, dp_gd
from .dp_sgd import dp_sgd
from .dp_srm import dp_srm
from .dp_svrg import dp_svrg, dp_svrg_pp
from .noisy_mirror_descent import noisy_mirror_descent
from .objective_perturbation import objective_perturbation
from .output_perturbation import output_perturbation_gd
from .phased_dp_sgd import phased_dp_sgd
from .truncated_mirror_descent import batched_truncated_mirror_descent, shuffled_truncated_mirror_descent
from .regression_score import r2_score
from .rrpsgd import rrpsgd
from .sufficient_statistics import adassp
from .clipping import augmented_norm_bound
from .label_set import label_set
from .multiclass import ovr_budget, ovr_privacy
from ._solver_common import as_generator, check_smoothness
from .seeding import warn_if_fixed_seed

__all__ = ["DPLogisticRegression", "DPHuberRegressor", "DPLinearRegression", "SOLVERS", "AUTO_ALPHA_C",
           "default_lp_exponent", "classifier_labels", "dp_estimator_tags", "NotFittedError"]

# alpha="auto": alpha = min(0.01, 10 / (n * min(epsilon, 10))) — a public rule of n and epsilon chosen by
# benchmarks/bench_defaults.py (RESULTS.md "Defaults"): on a9a the best fixed alpha moves from ~1e-3..1e-2
# at epsilon = 0.1 to ~1e-4..1e-3 at epsilon = 1 for the perturbation solvers; epsilon = inf uses epsilon = 10.
# Output perturbation (noise ∝ 1/(n alpha)) needs more: min(0.01, 0.08 (d / (n eps))^(2/3)), fitted on a9a and
# ijcnn1 (0.2 (d/(n eps)^2)^(1/3) gave a9a 0.224 ± 0.069 at eps = 0.1; the d^(2/3) fits both d = 124 and 23).
# Logistic regression by the gradient-perturbation solvers (GRADIENT_SOLVERS; their fixed budget of noisy steps
# already regularises): min(0.01, 1 / (n eps)) — 10/(n eps) is ijcnn1's majority classifier at eps = 0.1 even
# without noise (its good models need alpha <= 1e-4).
AUTO_ALPHA_C = 10.0
AUTO_ALPHA_OUTPUT_C = 0.08
AUTO_ALPHA_GRADIENT_C = 1.0
AUTO_ALPHA_MAX = 1e-2
GRADIENT_SOLVERS = ("dp_gd", "dp_sgd", "dp_svrg", "dp_svrg_pp", "dp_accmd")
#: The estimators (classifier and regressors) run GRADIENT_SOLVERS with accountant="auto" unless solver_params
#: names one: dpcore's tightest valid bound (PLD for the without-replacement Gaussian halves σ at ε = 0.1: a9a dp_sgd 0.194 → 0.172;
#: at ε = 1 a9a dp_sgd 0.1559 → 0.1546, dp_gd 0.1533 → 0.1525). Its calibration costs ~0.1–0.2 s (6–7 PLD
#: evaluations, dpcore.calibrate's log-secant); the solver functions keep "rdp" (their audits call them
#: thousands of times with a fixed noise multiplier).
ESTIMATOR_ACCOUNTANT = "auto"
#: Rows of norm up to R(1 + ROW_NORM_RTOL) are taken as float rounding of the bound R (e.g. unit-norm rows
#: stored in float32, relative error ~6e-8) and rescaled to norm R; rows beyond it need clip_data=True.
ROW_NORM_RTOL = 1e-6
AUTO_ALPHA_EPS_CAP = 10.0
#: largest float-centring overshoot of a scaled target that the regressors clip as rounding (target_range)
TARGET_ROUNDING_TOL = 1e-9
_U64 = 2.0 ** -53
#: DPLinearRegression(clip_norm="auto"): C = AUTO_CLIP_FRACTION·√(R² + c²), a quarter of the largest gradient
#: norm at w = 0 for targets in [−1, 1] (benchmarks/bench_defaults.py --diabetes; RESULTS.md "Diabetes").
AUTO_CLIP_FRACTION = 0.25
#: DPHuberRegressor(huber_delta="auto") with a target bound or range: h = 0.25 of the scaled targets (the same
#: gradient bound h·√(R² + c²) as the clip rule above; diabetes, RESULTS.md "Diabetes").
AUTO_HUBER_DELTA = 0.25
#: Regressors' alpha="auto" for the perturbation solvers (objective / AMP / App-ObjP: min(0.1, 30/(n·ε′)); output
#: perturbation: min(0.1, 1.75·(d/(n·ε′)²)^(1/3))): at n = 309 the classification rule's cap 0.01 leaves objective
#: perturbation at R² ≈ 0 on diabetes at ε = 1 (alpha 0.1: 0.32; RESULTS.md "Diabetes").
AUTO_ALPHA_REGRESSION_C = 30.0
#: output perturbation's constant (was 3 with c = 1: alpha 0.1 at ε = 1; with c = R/2 below, 1.75 gives 0.085 at ε = 1,
#: 0.018 at ε = 10 — diabetes R² 0.341 → 0.352 at ε = 1 (6 seeds), 0.447 → ~0.445 at ε = 10; RESULTS.md "Diabetes")
AUTO_ALPHA_REGRESSION_OUTPUT_C = 1.75
#: Regressors' intercept_scaling="auto" with a target bound or range: c = AUTO_INTERCEPT_FRACTION·R. The targets are
#: centred at the public midpoint, so the intercept is small; c enters every sensitivity through √(R² + c²)
#: (1.118·R instead of 1.414·R). Diabetes at ε = 1, 10 splits × 3 seeds, c = 1 → 0.5: dp_svrg 0.312 → 0.335,
#: dp_gd 0.390 → 0.400, objective perturbation 0.353 → 0.356; 6 seeds: output perturbation 0.315 → 0.341; 10 seeds:
#: AdaSSP (Alg. 2) 0.205 → 0.235; c = 0.35 / 0.7 no better (RESULTS.md "Diabetes, issue 15.1 follow-up").
AUTO_INTERCEPT_FRACTION = 0.5
#: DP-SVRG (regression) epochs = min(30, max(5, ⌈n·ε/AUTO_SVRG_EPOCH_DIVISOR⌉)): 8 at ε = 1, n = 309 (diabetes with
#: c = R/2, 6 seeds: 5 / 6 / 7 / 8 / 9 / 10 / 11 epochs 0.313 / 0.340 / 0.346 / 0.350 / 0.354 / 0.340 / 0.332, worst
#: seed best at 7–9), 30 at ε = 10.
AUTO_SVRG_EPOCH_DIVISOR = 40
AUTO_ALPHA_REGRESSION_MAX = 0.1
#: default p of the l_p solvers: 1 + 1/(LP_EXPONENT_SCALE·ln d), at most LP_EXPONENT_MAX (default_lp_exponent)
LP_EXPONENT_SCALE = 0.5
LP_EXPONENT_MAX = 1.9
#: solvers with a softmax kernel (algorithms.multiclass): multi_class="auto" fits k ≥ 3 classes with one softmax model
MULTINOMIAL_SOLVERS = ("dp_gd", "dp_sgd")
#: multi_class="auto" with a solver without a softmax kernel (e.g. the default objective perturbation) fits k ≥ 3
#: classes by softmax DP-GD: on digits (10 classes) it reaches 0.57 / 0.89 test accuracy at ε = 1 / 8 where
#: one-vs-rest objective perturbation (budget split ε/k) stays at 0.10 / 0.30; best at every ε on a
#: 20-newsgroups-shaped problem too (benchmarks/bench_shapes.py --multiclass, RESULTS.md "Shapes and sizes")
MULTICLASS_SOLVER = "dp_gd"
_PERTURBATION_SOLVERS = ("objective_perturbation", "approximate_minima_perturbation", "approx_objective_perturbation")

SOLVERS = {
    "dp_gd": dp_gd,
    "dp_sgd": dp_sgd,
    "dp_svrg": dp_svrg,
    "dp_svrg_pp": dp_svrg_pp,
    "dp_accmd": dp_accmd,
    "output_perturbation_gd": output_perturbation_gd,
    "objective_perturbation": objective_perturbation,
    "approximate_minima_perturbation": approximate_minima_perturbation,
    "approx_objective_perturbation": approx_objective_perturbation,
    "noisy_mirror_descent": noisy_mirror_descent,
    "phased_dp_sgd": phased_dp_sgd,
    "batched_truncated_mirror_descent": batched_truncated_mirror_descent,
    "shuffled_truncated_mirror_descent": shuffled_truncated_mirror_descent,
    "dp_srm": dp_srm,
    "rrpsgd": rrpsgd,
}


def _labels_1d(y: object) -> np.ndarray:
    """``y`` as a 1-D array; a column vector is accepted with scikit-learn's ``DataConversionWarning``."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        if _DataConversionWarning is not None:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it is raveled",
                          _DataConversionWarning, stacklevel=3)
        return y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels / targets; got shape {y.shape}")
    return y


def default_lp_exponent(d: int) -> float:
    """p = 1 + 1/(LP_EXPONENT_SCALE·ln d) = 1 + 2/ln d of the ℓp solvers of Su–Zhao–Wang when ``solver_params``
    gives none, capped at ``LP_EXPONENT_MAX`` (they need p < 2) for small d: a public rule of d (with the
    intercept column). Nemirovski's 1 + 1/ln d (‖·‖_p within a constant of ‖·‖₁, κ = ln d in
    :func:`algorithms.mirror_maps.lp_geometry`) is the ℓ1-geometry choice; on a9a (d = 124) at ε = 1
    noisy_mirror_descent's test error is 0.171 with 1 + 2/ln d (p = 1.41), 0.182 with 1 + 1/ln d, 0.201 with
    1 + 1/(2 ln d), 0.168 with p = 1.5 (3 seeds; batched truncated mirror descent stays at the majority rate
    for every p), and on ijcnn1 every rule gives the majority rate (``benchmarks/bench_shapes.py --lp-rule``,
    RESULTS.md "Shapes and sizes")."""
    return min(LP_EXPONENT_MAX, 1.0 + 1.0 / (LP_EXPONENT_SCALE * math.log(max(d, 2))))


def classifier_labels(classes: Optional[Any], y: object, n: int, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(y as 1-D, the sorted label set) of a classifier's fit: ``classes`` (public) or ``unique(y)`` with a
    :class:`~algorithms.label_set.PrivacyLeakWarning`; ``ValueError`` for y None / of another length than X,
    continuous labels (without ``classes``), fewer than two classes, or labels outside ``classes``."""
    y = _labels_1d(y)
    if y.shape[0] != n:
        raise ValueError(f"y must have one label per row of X ({n}); got {y.shape[0]}")
    if classes is None and y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError("Unknown label type: continuous (a classifier takes class labels; use a regressor, or "
                         "pass the public label set as classes=)")
    labels = label_set(classes, y, where)
    if labels.shape[0] < 2:
        raise ValueError(f"classes must hold at least two distinct labels (a classifier cannot be trained on one "
                         f"class); got {labels.tolist()}")
    if not np.all(np.isin(y, labels)):
        raise ValueError(f"y must contain only the labels {labels.tolist()}")
    return y, labels


#: solver arguments an estimator always sets itself (``solver_params`` may not override them)
_ESTIMATOR_SET = ("X", "y", "loss", "epsilon", "delta", "alpha", "data_norm_bound", "rng", "loss_params")


def _checked_solver_params(params: Any, solver_name: str, accepted: Any) -> Dict[str, Any]:
    """``solver_params`` as a new dict, or ``ValueError`` naming it: not a dict, or a key the solver does not take
    or the estimator sets itself (were TypeErrors from the solver call: "unexpected keyword argument",
    "multiple values for keyword argument 'epsilon'")."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ValueError(f"solver_params must be a dict of keyword arguments of algorithms.{solver_name}; got {params!r}")
    bad = sorted(str(k) for k in params if k not in accepted or k in _ESTIMATOR_SET)
    if bad:
        allowed = sorted(k for k in accepted if k not in _ESTIMATOR_SET)
        raise ValueError(f"solver_params has keys that algorithms.{solver_name} does not take from an estimator: {bad} "
                         f"(the estimator sets {', '.join(_ESTIMATOR_SET[2:])} itself); allowed: {allowed}")
    return dict(params)


def _store_params(est: object, params: Dict[str, Any]) -> None:
    """Store constructor arguments unchanged (scikit-learn's convention: no validation in __init__)."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


class _FallbackBase:
    """``get_params`` / ``set_params`` with scikit-learn's contract (constructor arguments only)."""

    @classmethod
    def _get_param_names(cls) -> list:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """Constructor parameters and their current values."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "_FallbackBase":
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}; valid: {valid}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class _FallbackClassifier:
    _estimator_type = "classifier"

    def score(self, X: np.ndarray, y: np.ndarray, sample_weight: Optional[np.ndarray] = None) -> float:
        """Mean accuracy on (X, y) (no privacy guarantee: evaluate on public or held-out data)."""
        return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))


class _FallbackRegressor:
    _estimator_type = "regressor"



class _FallbackNotFittedError(ValueError, AttributeError):
    """Raised by predict / decision_function before fit (scikit-learn's ``NotFittedError`` when installed)."""


try:  # scikit-learn is an optional extra
    from sklearn.base import BaseEstimator as _Base
    from sklearn.base import ClassifierMixin as _ClassifierMixin
    from sklearn.base import RegressorMixin as _RegressorMixin
    from sklearn.exceptions import DataConversionWarning as _DataConversionWarning
    from sklearn.exceptions import NotFittedError
except ImportError:  # pragma: no cover - exercised by a subprocess test without sklearn
    _Base, _ClassifierMixin, _RegressorMixin = _FallbackBase, _FallbackClassifier, _FallbackRegressor
    NotFittedError, _DataConversionWarning = _FallbackNotFittedError, None


def dp_estimator_tags(tags: Any, sparse: bool) -> Any:
    """scikit-learn ≥ 1.6 tags of a private estimator: ``sparse`` input accepted or not; ``poor_score`` (the
    noise a private fit adds on scikit-learn's small check data costs accuracy: the checks' score
    thresholds do not apply); ``target_tags.required``."""
    tags.input_tags.sparse = sparse
    tags.target_tags.required = True
    if getattr(tags, "classifier_tags", None) is not None:
        tags.classifier_tags.poor_score = True
        tags.classifier_tags.multi_class = True
    if getattr(tags, "regressor_tags", None) is not None:
        tags.regressor_tags.poor_score = True
    return tags


class _DPLinearModel(_Base):
    """Shared fit machinery: data checks, intercept column, solver dispatch, fitted attributes."""

    _loss = "logistic"

    def _solver_fn(self):
        """The function of the solver chosen for this fit (``solver_``)."""
        return SOLVERS[self._running_solver()]

    def _running_solver(self) -> str:
        """``solver_`` during and after a fit (:meth:`_choose_solver`), else ``solver``."""
        return getattr(self, "solver_", self.solver)

    def _choose_solver(self) -> str:
        """``solver_``: the solver this fit runs — ``solver`` (checked), unless a k-class fit chooses its
        multiclass solver (:meth:`DPLogisticRegression._fit_multiclass`)."""
        auto = ("auto",) if hasattr(self, "tune") else ()  # the classifier's rule (algorithms.auto_solver)
        if self.solver not in SOLVERS and self.solver not in auto:
            raise ValueError(f"solver must be one of {tuple(SOLVERS) + auto}; got {self.solver!r}")
        check_choice("penalty", getattr(self, "penalty", "l2"), ("l2", "l1", "nonconvex"))
        self.solver_ = self.solver
        return self.solver_

    def _design(self, X: object, fitting: bool) -> Design:
        """X validated once (:func:`algorithms._data.as_design`: dense kept as given, sparse as CSR, row norms)."""
        if not fitting and not hasattr(self, "coef_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        if fitting:
            for flag in ("fit_intercept", "clip_data", "keep_diagnostics"):  # clip_data="no" used to clip
                check_bool(flag, getattr(self, flag))
            self._choose_solver()
        D = as_design(X)
        if fitting:
            self.n_features_in_ = D.d
        elif D.d != self.n_features_in_:
            raise ValueError(f"X has {D.d} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                             "features as input (as in fit)")
        return D

    def _fit_scaled_targets(self, X: np.ndarray, y: object, loss_params: Dict[str, Any], extra: Dict[str, Any]):
        """Regression: with a public ``target_bound`` B, check |yᵢ| ≤ B (``ValueError`` naming the worst
        target otherwise — never clipped silently), fit on y/B and scale the weights back by B. With a
        public ``target_range`` (lo, hi), likewise check lo ≤ yᵢ ≤ hi and fit on (y − m)/h ∈ [−1, 1]
        (m, h the public midpoint and half-width; the intercept gets m back). The solver is told the
        bound 1 of the scaled targets (``extra["target_bound"]``, used by AdaSSP's sensitivity)."""
        y, _ = validate_labels(_labels_1d(y), X.n, "regression")  # real, finite, one per row (never made real)
        rng_ = getattr(self, "target_range", None)
        if self.target_bound is None and rng_ is None:
            if math.isfinite(check_positive("epsilon", self.epsilon, allow_inf=True)):  # issue 24: never silently
                raise ValueError(
                    f"{type(self).__name__} needs a public target_bound B (|y| <= B) or target_range (lo, hi) for a "
                    "private fit: the noise is calibrated to the scaled targets, and on raw targets the defaults "
                    "give a model worse than the mean (diabetes: R^2 about -4); a bound read off the training "
                    "targets would not be private (epsilon=inf fits raw targets)")
            return self._fit_weights(X, y, loss_params, extra)
        if rng_ is not None:
            if self.target_bound is not None:
                raise ValueError(f"give target_bound or target_range, not both; got target_bound={self.target_bound!r}, "
                                 f"target_range={rng_!r}")
            bad = f"target_range must be a pair (lo, hi) of finite reals with lo < hi; got {rng_!r}"
            try:
                lo, hi = (float(v) for v in rng_)
            except (TypeError, ValueError) as exc:
                raise ValueError(bad) from exc
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(bad)
            out = np.flatnonzero(~((y >= lo) & (y <= hi)))
            if out.size:
                raise ValueError(f"target_range={rng_!r} is violated: target {int(out[0])} is {float(y[out[0]])!r}; the "
                                 "range is a public promise about every record (widen it, or clip the targets yourself)")
            mid, B = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
            if not B > 0.0:  # e.g. (0, 5e-324): the half-width underflows
                raise ValueError(f"target_range={rng_!r} is too narrow to represent its half-width in float64")
            # float centring moves (y − m)/h by at most ≈ 2u·max(|lo|, |hi|)/h + 4u beyond [−1, 1]: decided from the
            # public range alone (a check on the scaled targets would make fit's success depend on private data)
            if 2.0 * _U64 * max(abs(lo), abs(hi)) / B + 4.0 * _U64 > TARGET_ROUNDING_TOL:
                raise ValueError(f"target_range={rng_!r} is too narrow for its magnitude: centring it in float64 can "
                                 f"move a target beyond the range by more than {TARGET_ROUNDING_TOL:g} (shift the "
                                 "targets towards 0 yourself)")
        else:
            B = check_positive("target_bound", self.target_bound)
            worst = float(np.max(np.abs(y))) if y.size else 0.0
            if not worst <= B:
                raise ValueError(f"target_bound={B!r} is violated: a target has |y| = {worst!r}; the bound is a "
                                 "public promise about every record (raise it, or clip the targets yourself)")
            mid = 0.0
        scaled = np.clip((y - mid) / B, -1.0, 1.0)  # rounding only (≤ TARGET_ROUNDING_TOL, a public bound above)
        self._fit_weights(X, scaled, loss_params, {**extra, "target_bound": 1.0})
        with np.errstate(over="ignore"):
            coef, intercept = self.coef_ * B, self.intercept_ * B + mid
        if not (np.all(np.isfinite(coef)) and math.isfinite(intercept)):
            # a function of the released (private) weights and the public bound only: post-processing
            raise ValueError(f"the fitted model in target units overflows float64: the weights of the scaled problem "
                             f"times the half-range {B!r} exceed 1.8e308; the target bound (target_bound / target_range) "
                             f"must be small enough for the model to be stored — give a tighter one")
        self.coef_, self.intercept_ = coef, intercept
        return self

    def _alpha(self, shape: tuple, penalty: str) -> float:
        """The L2 strength used: ``alpha`` if a number, else the public rule (module constants
        ``AUTO_ALPHA_*``) of n, d (the solver's, with the intercept column) and ε; n is public under
        replace-one, the relation the estimators report. Stored as ``alpha_``."""
        if isinstance(self.alpha, str):
            if self.alpha != "auto":
                raise ValueError(f"alpha must be a number >= 0 or 'auto'; got {self.alpha!r}")
            n, d = shape
            eps = min(check_positive("epsilon", self.epsilon, allow_inf=True), AUTO_ALPHA_EPS_CAP)
            if penalty == "nonconvex":
                self.alpha_ = 1e-3  # λ of the non-convex penalty (wang-jayaraman-evans-gu §7.1)
            elif penalty == "l1":  # the l1 strength: the gradient solvers' L2 rule (benchmarks/bench_shapes.py --l1)
                self.alpha_ = min(AUTO_ALPHA_MAX, AUTO_ALPHA_GRADIENT_C / (n * eps))
            elif self._running_solver() == "output_perturbation_gd":  # bias α‖w‖² vs noise d(L/(nαε))²; fitted exponent 2/3
                self.alpha_ = min(AUTO_ALPHA_MAX, AUTO_ALPHA_OUTPUT_C * (d / (n * eps)) ** (2.0 / 3.0))
            elif self._loss == "logistic" and self._running_solver() in GRADIENT_SOLVERS:
                self.alpha_ = min(AUTO_ALPHA_MAX, AUTO_ALPHA_GRADIENT_C / (n * eps))
            else:
                self.alpha_ = min(AUTO_ALPHA_MAX, AUTO_ALPHA_C / (n * eps))
        else:
            self.alpha_ = float(self.alpha)
        return self.alpha_

    def _intercept_scaling(self) -> float:
        """c of the constant feature: ``intercept_scaling`` (> 0), stored as ``intercept_scaling_``."""
        self.intercept_scaling_ = check_positive("intercept_scaling", self.intercept_scaling)
        return self.intercept_scaling_

    def _clip_rows(self, D: Design, fitting: bool = False) -> Design:
        """:meth:`_row_map` under the name :mod:`algorithms.auto_solver` / :mod:`algorithms.model_selection` call."""
        return self._row_map(D, fitting)

    def _row_map(self, D: Design, fitting: bool = False) -> Design:
        """The public per-record map applied in fit and predict: rows with ‖xᵢ‖₂ > R rescaled to norm R —
        every such row with ``clip_data=True``; otherwise only rows within float rounding of the bound,
        R < ‖xᵢ‖₂ ≤ R(1 + ``ROW_NORM_RTOL``) (e.g. unit-norm rows stored as float32), and in ``fit`` any
        other row above R is a ``ValueError``. The map is per record and data-independent, and its
        output rows satisfy the bound R, so the sensitivity analysis for R holds unchanged. It is a
        per-row scale read by the kernels (:mod:`algorithms.rows`): X is not copied."""
        R = check_positive("data_norm_bound", self.data_norm_bound)
        if D.scale.shape[0]:  # already mapped (auto_solver / model_selection map before fitting inner copies)
            return D
        norms = D.x_norms
        over = norms > R
        if not over.any():
            return D
        if not self.clip_data:
            beyond = np.flatnonzero(norms > R * (1.0 + ROW_NORM_RTOL))
            if fitting and beyond.size:
                i = int(beyond[0])
                raise ValueError(f"data_norm_bound={R!r} is violated: row {i} has norm {float(norms[i])!r} (more than "
                                 f"a relative {ROW_NORM_RTOL:g} above the bound); rescale X, raise data_norm_bound, "
                                 "or pass clip_data=True to rescale such rows to norm data_norm_bound")
            over &= norms <= R * (1.0 + ROW_NORM_RTOL)  # predict: only the rounding map of fit
        rows = np.flatnonzero(over)
        scale, scaled = np.ones(D.n), norms.copy()
        scale[rows], scaled[rows] = D.scales_to_norm(rows, R)
        return D.with_row_scale(scale, scaled)

    def _solver_rows(self, D: Design) -> tuple[Design, float]:
        """(the rows the solver reads — row map and intercept column —, their public norm bound)."""
        R = check_positive("data_norm_bound", self.data_norm_bound)
        D = self._row_map(D, fitting=True)
        if not self.fit_intercept:
            return D, R
        c = self._intercept_scaling()
        return D.with_intercept(c), augmented_norm_bound(R, c)

    def _fit_weights(self, D: Design, y: np.ndarray, loss_params: Dict[str, Any], extra: Dict[str, Any]):
        """Fit one weight vector on labels / targets ``y`` (binary ±1 or scaled regression targets)."""
        D, bound = self._solver_rows(D)
        res = self._solve(D, y, bound, loss_params, extra, self.epsilon, self.delta)
        self._store_weights(np.asarray(res.weights, dtype=np.float64))
        self.privacy_ = res.privacy
        self._privacy_event = res.event  # what ran (algorithms.model_selection checks it against its accounting)
        self._keep(res)
        return self

    def _store_weights(self, w: np.ndarray) -> None:
        """coef_ / intercept_ from solver weights (last column: the intercept feature c)."""
        if self.fit_intercept:
            c = self._intercept_scaling()
            self.coef_, self.intercept_ = w[..., :-1].copy(), w[..., -1] * c
            if w.ndim == 1:
                self.intercept_ = float(self.intercept_)
        else:
            self.coef_ = w.copy()
            self.intercept_ = 0.0 if w.ndim == 1 else np.zeros(w.shape[0])

    def _keep(self, res) -> None:
        if self.keep_diagnostics:  # opt-in, not private (class docstring)
            self.result_ = res
            self.n_gradient_evaluations_ = int(np.sum([r.n_gradient_evaluations for r in np.atleast_1d(res)]))

    def _solve(self, D: Design, y: np.ndarray, bound: float, loss_params: Dict[str, Any], extra: Dict[str, Any],
               epsilon: float, delta: float, rng: Any = None, **overrides: Any):
        """The one place where the solver is called: ``solver_`` (:meth:`_choose_solver`) on rows ``D`` (norms ≤ ``bound``)
        at (``epsilon``, ``delta``) with noise from ``rng`` (default ``random_state``); ``overrides`` are keyword
        arguments of the estimator's own making (e.g. the number of classes of a softmax fit)."""
        solver, solver_name = self._solver_fn(), self._running_solver()
        rs = self.random_state
        if not (rs is None or isinstance(rs, np.random.Generator)
                or isinstance(rs, (int, np.integer)) and not isinstance(rs, bool) and rs >= 0):
            raise ValueError(f"random_state must be None (fresh OS entropy), an int seed >= 0 (tests only) or a "
                             f"numpy.random.Generator; got {rs!r}")
        if rng is None:
            warn_if_fixed_seed(rs, type(self).__name__)
            rng = rs
        accepted = inspect.signature(solver).parameters
        kwargs = _checked_solver_params(self.solver_params, solver_name, accepted)
        kwargs.update({k: v for k, v in extra.items() if k in accepted})  # e.g. clip_norm: gradient solvers only
        kwargs.update(overrides)
        if solver_name == "dp_sgd":  # replace-one accounting, like every other solver (module docstring)
            kwargs.setdefault("sampling", "without_replacement")
            if kwargs["sampling"] != "without_replacement":
                raise ValueError(f"solver_params sampling must be 'without_replacement' in the estimators (replace-one, "
                                 f"n public: alpha='auto' and the batch rules read n); got {kwargs['sampling']!r} — "
                                 "call algorithms.dp_sgd directly for Poisson sampling with a public schedule")
        if solver_name in GRADIENT_SOLVERS:
            kwargs.setdefault("accountant", ESTIMATOR_ACCOUNTANT)
        default_batch = accepted["batch_size"].default if "batch_size" in accepted else None
        if isinstance(default_batch, int) and default_batch > D.n and "batch_size" not in kwargs:
            kwargs["batch_size"] = D.n  # a solver default larger than the data: the full batch (n public)
        if self.keep_diagnostics and "trace" in accepted:
            kwargs.setdefault("trace", True)
        if "p" in accepted and accepted["p"].default is accepted["p"].empty and "p" not in kwargs:
            kwargs["p"] = default_lp_exponent(D.d)  # the l_p solvers' geometry: a public rule of d
        supplied = {"loss", "epsilon", "delta", "alpha", "data_norm_bound", "rng", "loss_params", *kwargs}
        missing = [name for name, par in accepted.items()
                   if par.kind is par.KEYWORD_ONLY and par.default is par.empty and name not in supplied]
        if missing:  # e.g. the l_p solvers' geometry p: no silent default for a modelling choice
            raise ValueError(f"solver={solver_name!r} needs solver_params with {', '.join(map(repr, missing))} "
                             f"(see algorithms.{solver_name}); got solver_params={self.solver_params!r}")
        penalty = check_choice("penalty", getattr(self, "penalty", "l2"), ("l2", "l1", "nonconvex"))
        alpha = self._alpha((D.n, D.d), penalty)
        if penalty == "l1":  # alpha·‖w‖₁ through the solver's exact prox step
            if "l1" not in accepted:
                raise ValueError(f"penalty='l1' needs a solver with an l1 prox step (dp_gd, dp_sgd, dp_svrg, dp_svrg_pp); "
                                 f"got solver={solver_name!r}")
            kwargs["l1"], alpha = alpha, 0.0
        elif penalty != "l2":
            if "penalty" not in accepted:
                raise ValueError(f"penalty={penalty!r} needs a solver that takes it (dp_gd, dp_sgd, dp_srm, rrpsgd); "
                                 f"got solver={solver_name!r}")
            kwargs["penalty"] = penalty
        return solver(D, y, loss=self._loss, epsilon=epsilon, delta=delta, alpha=alpha,
                      data_norm_bound=bound, rng=rng, loss_params=loss_params or None, **kwargs)

    def _linear_predict(self, X: object) -> np.ndarray:
        """⟨w, x⟩ + b for every row (the margin / the regression prediction); shape (n, k) for a classifier
        of k ≥ 3 classes. The row map of ``fit`` is applied (rows within rounding of R, or all rows above
        R with ``clip_data=True``, rescaled to norm R)."""
        D = self._row_map(self._design(X, False))
        coef = np.atleast_2d(self.coef_)
        out = np.column_stack([D.margins(w) for w in coef]) + self.intercept_
        return out[:, 0] if np.ndim(self.coef_) == 1 else out


class DPLogisticRegression(_ClassifierMixin, _DPLinearModel):
    """Differentially private logistic regression: two classes, or k ≥ 3 (``multi_class``).

    Parameters
    ----------
    solver : str
        One of ``dp_gd, dp_sgd, dp_svrg, dp_svrg_pp, dp_accmd, output_perturbation_gd,
        objective_perturbation, approximate_minima_perturbation, approx_objective_perturbation,
        dp_srm, rrpsgd`` or ``"auto"`` (default): a rule of the public n, d, ε and the number of classes
        (:mod:`algorithms.auto_solver`) — the privately chosen constant predictor when n·ε/√d is below 10
        (one :class:`~algorithms.auto_solver.LowSignalWarning`), DP-GD with a few plain steps for n·ε < 1000,
        for ε < 0.5 DP-GD's defaults below d = 50 and DP-SGD's from d = 50 on, for ε ≥ 0.5 DP-GD's defaults up to
        n·ε = 5000 and objective perturbation from there; the solver run is stored in ``solver_``.
        (Objective perturbation, the former default, is not the best solver at every ε: ijcnn1 at ε = 0.1 is the
        majority class with it; benchmarks/RESULTS.md, "Defaults and private selection".)
    epsilon : float
        Target ε in (0, ∞] (nats); ``math.inf`` = same algorithm without noise.
    delta : float
        Target δ (0 selects the ε-DP variants of output / objective perturbation).
    alpha : float or "auto"
        L2 strength ≥ 0: F = mean logistic loss + (alpha/2)‖w‖² (sklearn C = 1/(n·alpha)); with
        ``penalty="nonconvex"`` the λ of λΣⱼwⱼ²/(1 + wⱼ²) instead (wang-jayaraman-evans-gu §7.1, 1e-3).
        ``"auto"`` (default): min(0.01, 10/(n·ε′)) with ε′ = min(ε, 10) — for output perturbation
        min(0.01, 0.08·(d/(n·ε′))^(2/3)), for dp_gd, dp_sgd, dp_svrg, dp_svrg_pp, dp_accmd
        min(0.01, 1/(n·ε′)) —, public rules of n, d and ε (n is public under replace-one)
        chosen on a9a / ijcnn1 (benchmarks/bench_defaults.py); 1e-3 for the non-convex penalty. The
        value used is stored in ``alpha_``.
    penalty : {"l2", "l1", "nonconvex"}
        ``"l1"``: F = mean loss + alpha·‖w‖₁ (sparse models), through the exact soft-threshold prox of
        dp_gd, dp_sgd, dp_svrg and dp_svrg_pp (wang-ye-xu-2017 Alg. 2's non-smooth regulariser); data-independent,
        so the privacy is unchanged. ``alpha="auto"`` gives it the gradient solvers' rule min(0.01, 1/(n·ε′)).
        The ℓp solvers (``noisy_mirror_descent``, ``*_truncated_mirror_descent``) constrain w to an ℓ1 ball by
        default instead (their ``constraint="l1"``, ``radius``).
        ``"nonconvex"`` needs a solver that takes it: dp_gd, dp_sgd, dp_srm, rrpsgd.
    fit_intercept : bool
        Append the constant feature ``intercept_scaling`` (included in the norm bound).
    intercept_scaling : float or "auto"
        c > 0, value of the constant feature; ``"auto"`` (default): R/2 in ``solver="auto"``'s few-step
        regime, else 1.0. Stored in ``intercept_scaling_``.
    data_norm_bound : float
        Public bound R on ‖xᵢ‖₂ (feature units).
    clip_data : bool
        Rescale rows with ‖xᵢ‖₂ > R to norm R instead of raising ``ValueError``.
    classes : array-like of labels, optional
        Public label set (two or more). Default ``unique(y)``, as scikit-learn, with a
        :class:`~algorithms.label_set.PrivacyLeakWarning`: a label set read from the data is not
        covered by ``privacy_`` (one replaced record can add or remove a class).
    multi_class : {"auto", "multinomial", "ovr"}
        k ≥ 3 classes. ``"multinomial"``: one softmax model by ``solver`` (dp_gd or dp_sgd: each step
        releases the sum of per-example gradient *matrices*, each clipped to C as a whole, plus Gaussian
        noise — the binary run's event, no budget split; :mod:`algorithms.multiclass`). ``"ovr"``: k binary
        fits of ``solver``, class c against the rest, each at the share (ε_k, δ_k) of
        :func:`algorithms.multiclass.ovr_budget` (δ_k = δ/(2k), ε_k the largest whose k-fold composition
        dpcore bounds by ε — optimal composition; ε/k for δ = 0), composed into the one event
        ``privacy_event_`` that ``privacy_`` reports. ``"auto"`` (default): ``"multinomial"``, by DP-GD
        (``MULTICLASS_SOLVER``) when ``solver`` has no softmax kernel — on digits at ε = 1 / 8 it reaches test
        accuracy 0.57 / 0.89 where one-vs-rest objective perturbation stays at 0.10 / 0.30 and one-vs-rest
        DP-GD at 0.11 / 0.61, and it is the best at every ε on a 20-newsgroups-shaped problem
        (benchmarks/bench_shapes.py --multiclass; RESULTS.md "Shapes and sizes").
        The solver that ran is ``solver_``; ``multi_class_`` is ``"binary"``, ``"multinomial"`` or ``"ovr"``.
    random_state : None, int or numpy.random.Generator
        Source of the solver's noise. ``None`` (default): fresh OS entropy, as a private release
        needs. An int seed makes ``fit`` a deterministic function of the data — NOT private; for
        tests only, and it emits :class:`~algorithms.seeding.DeterministicSeedWarning`.
    solver_params : dict, optional
        Extra keyword arguments of the solver (e.g. ``{"epochs": 20}``; the ℓp solvers of Su–Zhao–Wang,
        ``noisy_mirror_descent, batched_truncated_mirror_descent, shuffled_truncated_mirror_descent``, run
        with p = :func:`default_lp_exponent` (d) = 1 + 2/ln d unless ``{"p": ...}`` is given; ``dp_sgd`` runs without
        replacement here — Poisson sampling (add/remove) is refused, use :func:`algorithms.dp_sgd`).
        dp_gd, dp_sgd, dp_svrg, dp_svrg_pp and dp_accmd calibrate with ``accountant="auto"``
        (dpcore's tightest bound; module constant ``ESTIMATOR_ACCOUNTANT``; the regressors do the same)
        unless ``{"accountant": ...}`` is given.
    keep_diagnostics : bool
        Opt-in, NOT private: keep ``result_`` (the solver's full result, traces on) and
        ``n_gradient_evaluations_`` — diagnostics computed on the raw data. Default False: only
        ``coef_``, ``intercept_`` and ``privacy_`` are stored.
    tune : None, True, float or dict
        Opt-in private hyper-parameter selection within ``epsilon``, accounted by :mod:`dpcore.selection`
        (Papernot & Steinke 2022). ``True``: the defaults ``{"method": "retrain", "selection_share": 0.2,
        "subsample": 1.0, "candidates": 5, "distribution": "truncated_negative_binomial", "shape": -0.5,
        "score_share": 0.2}``; a number: the mean number of runs; a dict overrides those keys.
        ``"retrain"`` (:mod:`algorithms.tune_retrain`, Koskela & Kulkarni 2023): repeat-and-select over a public
        grid of DP-GD rules at the share ``selection_share`` of ε on a fraction ``subsample`` of the rows, then the
        chosen rule trained once on all rows at the rest; ``privacy_`` is their basic composition; no selection
        (one ``TuningSkippedWarning``, the whole ε to the untuned fit) where its score noise would exceed 1 % of
        the rows. ``"release_best"`` (:mod:`algorithms.model_selection`): the best tuning run over a DP-GD grid
        centred on the ``solver="auto"`` rule's choice is the model. ``tuning_`` states the shares.
    """

    _loss = "logistic"

    def __init__(self, solver: str = "auto", epsilon: float = 1.0, delta: float = 1e-5, alpha: Any = "auto",
                 fit_intercept: bool = True, intercept_scaling: Any = "auto", data_norm_bound: float = 1.0,
                 clip_data: bool = False, classes: Optional[Any] = None, random_state: Any = None,
                 solver_params: Optional[dict] = None, keep_diagnostics: bool = False, penalty: str = "l2",
                 multi_class: str = "auto", tune: Any = None) -> None:
        _store_params(self, locals())

    def _intercept_scaling(self) -> float:
        """``intercept_scaling="auto"``: 1.0 (``solver="auto"`` picks its own, :mod:`algorithms.auto_solver`)."""
        if isinstance(self.intercept_scaling, str) and self.intercept_scaling == "auto":
            self.intercept_scaling_ = 1.0
            return 1.0
        return super()._intercept_scaling()

    def fit(self, X: object, y: object) -> "DPLogisticRegression":
        """Fit privately; see the class docstring for what ``privacy_`` covers."""
        D = self._design(X, True)
        check_choice("multi_class", self.multi_class, ("auto", "ovr", "multinomial"))  # also with two classes
        y, classes = classifier_labels(self.classes, y, D.n, type(self).__name__)
        self.classes_ = classes
        if classes.shape[0] > 2:
            if self.tune is not None:
                raise ValueError(f"tune selects among binary DP-GD runs; got {classes.shape[0]} classes (fit them with "
                                 "multi_class='auto': one softmax model, or tune=None)")
            return self._fit_multiclass(D, np.searchsorted(classes, y).astype(np.float64), classes.shape[0])
        self.multi_class_ = "binary"
        signs = np.where(y == classes[1], 1.0, -1.0)
        if self.tune is not None:  # private selection over a candidate grid (algorithms.model_selection)
            from .model_selection import fit_tuned

            return fit_tuned(self, D, signs)
        if self.solver == "auto":  # the rule of public quantities (algorithms.auto_solver)
            from .auto_solver import fit_auto

            return fit_auto(self, D, signs)
        return self._fit_weights(D, signs, {}, {})

    def __sklearn_tags__(self):
        """Sparse input (kept sparse by every solver that reads the row layouts of :mod:`algorithms.rows`),
        poor score under noise (:func:`dp_estimator_tags`)."""
        return dp_estimator_tags(super().__sklearn_tags__(), sparse=True)

    def _multi_class(self) -> str:
        """``multi_class="auto"``: the softmax model (one release of the whole gradient matrix per step: no
        budget split), with ``solver`` if it has a softmax kernel (``MULTINOMIAL_SOLVERS``), else with
        ``MULTICLASS_SOLVER`` (``solver_`` says which ran); ``"ovr"``: ``solver`` one-vs-rest. Chosen by
        ``benchmarks/bench_shapes.py --multiclass`` (class docstring)."""
        choice = check_choice("multi_class", self.multi_class, ("auto", "ovr", "multinomial"))
        if choice == "multinomial" and self.solver not in MULTINOMIAL_SOLVERS:
            raise ValueError(f"multi_class='multinomial' needs a solver with a softmax kernel {MULTINOMIAL_SOLVERS}; "
                             f"got solver={self.solver!r} (use multi_class='ovr', or 'auto': softmax by "
                             f"{MULTICLASS_SOLVER})")
        if choice == "auto":
            if self.solver not in MULTINOMIAL_SOLVERS:
                self.solver_ = MULTICLASS_SOLVER
            return "multinomial"
        if self.solver == "auto":
            raise ValueError("multi_class='ovr' needs a concrete solver (solver='auto' fits k >= 3 classes by one "
                             "softmax model: multi_class='auto')")
        return choice

    def _fit_multiclass(self, D: Design, codes: np.ndarray, k: int) -> "DPLogisticRegression":
        """k ≥ 3 classes: one softmax fit, or k one-vs-rest fits under the budget split of
        :func:`algorithms.multiclass.ovr_budget` composed into one dpcore event (:func:`ovr_privacy`)."""
        self.multi_class_ = self._multi_class()
        D, bound = self._solver_rows(D)
        if self.multi_class_ == "multinomial":
            res = self._solve(D, codes, bound, {}, {}, self.epsilon, self.delta, classes=k)
            self._store_weights(np.asarray(res.weights, dtype=np.float64))
            self.privacy_, self._privacy_event = res.privacy, res.event
            self._keep(res)
            return self
        delta = check_delta("delta", self.delta) if self.delta != 0.0 else 0.0
        eps_k, delta_k = ovr_budget(check_positive("epsilon", self.epsilon, allow_inf=True), delta, k)
        warn_if_fixed_seed(self.random_state, type(self).__name__)
        gen = as_generator(self.random_state)  # one stream: the k fits draw independent noise
        results = [self._solve(D, np.where(codes == c, 1.0, -1.0), bound, {}, {}, eps_k, delta_k, rng=gen)
                   for c in range(k)]
        self._store_weights(np.vstack([np.asarray(r.weights, dtype=np.float64) for r in results]))
        self.privacy_event_, self.privacy_ = ovr_privacy([r.privacy for r in results], eps_k, delta_k, delta)
        self._privacy_event = self.privacy_event_
        self._keep(results)
        return self

    def decision_function(self, X: object) -> np.ndarray:
        """Margins ⟨w, x⟩ + b: shape (n,) for two classes (of ``classes_[1]``), (n, k) for k ≥ 3 (one column per
        class, in ``classes_`` order). The row map of ``fit`` is applied."""
        return self._linear_predict(X)

    def predict_proba(self, X: object) -> np.ndarray:
        """P(class) per row, shape (n, k), columns in ``classes_`` order: the logistic link (two classes),
        softmax of the margins (multinomial) or the normalised one-vs-rest sigmoids (ovr)."""
        z = self.decision_function(X)
        if z.ndim == 1:
            p1 = 0.5 * (1.0 + np.tanh(0.5 * z))
            return np.column_stack([1.0 - p1, p1])
        if self.multi_class_ == "multinomial":
            e = np.exp(z - z.max(axis=1, keepdims=True))
        else:
            e = 0.5 * (1.0 + np.tanh(0.5 * z))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: object) -> np.ndarray:
        """The most likely class of each row."""
        z = self.decision_function(X)
        return self.classes_[(z > 0).astype(int) if z.ndim == 1 else np.argmax(z, axis=1)]


class _DPRegressor(_RegressorMixin, _DPLinearModel):
    """Regression-specific public defaults (issue 15.1; chosen on diabetes, benchmarks/bench_defaults.py
    --diabetes): the ``alpha="auto"`` rule of the perturbation solvers and DP-SGD's schedule."""

    def __sklearn_tags__(self):
        """Sparse input (kept sparse by every solver that reads the row layouts of :mod:`algorithms.rows`),
        poor score under noise (:func:`dp_estimator_tags`)."""
        return dp_estimator_tags(super().__sklearn_tags__(), sparse=True)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """⟨w, x⟩ + b (the row map of ``fit`` applied); ``ValueError`` if a prediction overflows float64."""
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._linear_predict(X)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"a prediction of {type(self).__name__} overflows float64 (|<w, x> + b| > 1.8e308; "
                             f"max |coef_| = {float(np.max(np.abs(self.coef_))):.3g}): the model's scale comes from "
                             f"target_bound / target_range, give a tighter one")
        return out

    def score(self, X: np.ndarray, y: np.ndarray, sample_weight: Optional[np.ndarray] = None) -> float:
        """Coefficient of determination R² on (X, y), without intermediate overflow
        (:func:`algorithms.regression_score.r2_score`; no privacy guarantee: evaluate on public or held-out data)."""
        return r2_score(y, self.predict(X), sample_weight)

    def _choose_solver(self) -> str:
        """``solver="auto"``: ``solver_`` is "auto" until :meth:`_auto_params` (in ``fit``, once n and d are known)
        replaces it by the rule's choice; any other name as the shared check."""
        if self.solver == "auto":
            self.solver_ = "auto"
            return self.solver_
        return super()._choose_solver()

    def _auto_params(self, D: Design) -> Dict[str, Any]:
        """``solver="auto"``: run the rule of :mod:`algorithms.auto_regressor` on the public n, d (with the
        intercept column), ε and the loss, set ``solver_`` (a solver name or ``"constant"``) and ``auto_choice_``,
        and return the rule's solver parameters that ``solver_params`` does not set. Other solvers: {}."""
        if self.solver != "auto":
            return {}
        from .auto_regressor import choose_regression_solver

        choice = choose_regression_solver(n=D.n, d=D.d + bool(self.fit_intercept), epsilon=self.epsilon,
                                          loss=self._loss)
        self.auto_choice_, self.solver_ = choice, choice.solver
        given = self.solver_params or {}
        return {k: v for k, v in choice.solver_params.items() if k not in given}

    def _fit_weights(self, D: Design, y: np.ndarray, loss_params: Dict[str, Any], extra: Dict[str, Any]):
        """The shared fit, or ``solver="auto"``'s constant: the private mean of the scaled targets
        (:func:`algorithms.auto_regressor.fit_private_mean`); after an auto fit in a low-signal regime one
        :class:`~algorithms.auto_solver.LowSignalWarning` (:func:`algorithms.auto_regressor.warn_low_signal`)."""
        from .auto_regressor import fit_private_mean, warn_low_signal

        if self._running_solver() == "constant":
            fit_private_mean(self, D, y, extra)
        else:
            super()._fit_weights(D, y, loss_params, extra)
        if self.solver == "auto":
            warn_low_signal(self, D.n)
        return self

    def _intercept_scaling(self) -> float:
        """``intercept_scaling="auto"`` (default): c = ``AUTO_INTERCEPT_FRACTION``·R = R/2 when a public
        ``target_bound`` / ``target_range`` scales the targets to [−1, 1] (the intercept is then small, and
        c enters every sensitivity through √(R² + c²)), else 1.0 (raw target units). Stored as
        ``intercept_scaling_``."""
        if isinstance(self.intercept_scaling, str):
            if self.intercept_scaling != "auto":
                raise ValueError(f"intercept_scaling must be a number > 0 or 'auto'; got {self.intercept_scaling!r}")
            scaled = self.target_bound is not None or getattr(self, "target_range", None) is not None
            R = check_positive("data_norm_bound", self.data_norm_bound)
            self.intercept_scaling_ = AUTO_INTERCEPT_FRACTION * R if scaled else 1.0
            return self.intercept_scaling_
        return super()._intercept_scaling()

    def _alpha(self, shape: tuple, penalty: str) -> float:
        """``alpha="auto"``: 0 for AdaSSP (its ridge is chosen privately by Algorithm 2); for objective
        perturbation / AMP / App-ObjP min(0.1, 30/(n·ε′)), for output perturbation
        min(0.1, 1.75·(d/(n·ε′)²)^(1/3)) (ε′ = min(ε, 10); n public under replace-one); else the shared rule."""
        if not (isinstance(self.alpha, str) and self.alpha == "auto" and penalty == "l2"):
            return super()._alpha(shape, penalty)
        n, d = shape
        eps = min(check_positive("epsilon", self.epsilon, allow_inf=True), AUTO_ALPHA_EPS_CAP)
        if self._running_solver() == "adassp":
            self.alpha_ = 0.0
        elif self._running_solver() == "output_perturbation_gd":
            scale = (n * eps) ** 2  # underflows to 0 for a tiny ε: α then takes its cap
            balance = (d / scale) ** (1.0 / 3.0) if scale > 0.0 else math.inf  # bias α‖w‖² vs noise d(L/(nαε))²
            self.alpha_ = min(AUTO_ALPHA_REGRESSION_MAX, AUTO_ALPHA_REGRESSION_OUTPUT_C * balance)
        elif self._running_solver() in _PERTURBATION_SOLVERS:
            self.alpha_ = min(AUTO_ALPHA_REGRESSION_MAX, AUTO_ALPHA_REGRESSION_C / (n * eps))
        else:
            return super()._alpha(shape, penalty)
        return self.alpha_

    def _solver_defaults(self, n: int) -> Dict[str, Any]:
        """Public defaults passed to the solver unless ``solver_params`` sets them: AdaSSP runs
        ``variant="joint"`` (diabetes ε = 1: R² 0.23 → 0.30; class docstring); DP-SGD takes DP-GD's
        step 1.9/β (β = √(R² + c²)², the smoothness of both losses) and half of DP-GD's step count
        ⌈default_steps(n, ε)/2⌉ (its own 1/β and 5 epochs of batch 256 stop at R² 0.25 on diabetes even at
        ε = 10); DP-SVRG (Huber) runs min(30, max(5, ⌈nε/40⌉)) epochs (diabetes, n = 309, accountant
        "auto", c = R/2: 8 epochs at ε = 1 give R² 0.350 where 11 (the former ⌈nε/30⌉) gave 0.332 and 20
        gave 0.216 with c = 1; 30 at ε = 10 give 0.46 where 15 gave 0.43) and clips the inner differences at
        the loss's Lipschitz constant G = h·√(R² + c²) like the snapshot gradients (its defaults, 5 epochs
        and 2G: R² 0.29 at ε = 10)."""
        given = self.solver_params or {}
        R = check_positive("data_norm_bound", self.data_norm_bound)
        c = self._intercept_scaling() if self.fit_intercept else 0.0
        eps = check_positive("epsilon", self.epsilon, allow_inf=True)
        if self._running_solver() == "dp_sgd":
            out = {"learning_rate": BENCHMARK_STEP / check_smoothness(R * R + c * c, R),
                   "steps": math.ceil(default_steps(n, eps) / 2)}
        elif self._running_solver() == "adassp":
            out = {"variant": "joint"}
        elif self._running_solver() == "dp_svrg":
            out = {"epochs": min(30, max(5, math.ceil(n * min(eps, 1e6) / AUTO_SVRG_EPOCH_DIVISOR)))}
            if hasattr(self, "huber_delta_"):  # DPLinearRegression passes its clip_norm_ anyway
                out["clip_norm"] = self.huber_delta_ * math.hypot(R, c)
        else:
            return {}
        return {k: v for k, v in out.items() if k not in given and not (k == "steps" and "epochs" in given)}


class DPHuberRegressor(_DPRegressor):
    """Differentially private Huber regression (Zhang et al. 2017 §4's loss).

    Parameters as :class:`DPLogisticRegression` (no ``classes``), plus

    solver : str
        A solver name of :class:`DPLogisticRegression` or ``"auto"`` (default): a rule of the public n, d and ε
        (:mod:`algorithms.auto_regressor`) — the private mean of the targets (Laplace, the whole ε; one
        :class:`~algorithms.auto_solver.LowSignalWarning`) when n·ε/√d < 1, objective perturbation from
        n·ε = 50 000 on, else DP-GD with T = :func:`~algorithms.auto_regressor.regression_steps` (n, ε) steps;
        chosen on diabetes, Adult (hours-per-week) and synthetic data and checked on held-out sets
        (``benchmarks/bench_regression_auto.py``; benchmarks/RESULTS.md, "Regressors on solver='auto'"). The
        solver run is ``solver_``, the rule's choice ``auto_choice_``. With its defaults every named solver
        reaches R² ≥ 0.30 at ε = 1 on diabetes (DP-GD 0.40, dp_sgd 0.41, the objective-perturbation family 0.36,
        dp_svrg 0.35, output perturbation 0.34; RESULTS.md, "Diabetes, issue 15.1 follow-up").
    huber_delta : float or "auto"
        Huber threshold h > 0 (target units — of the scaled targets in [−1, 1] when ``target_bound`` /
        ``target_range`` is given): quadratic for |residual| ≤ h, linear beyond; the loss is
        h·R-Lipschitz for ‖x‖ ≤ R whatever the targets, so h also sets the gradient noise.
        ``"auto"`` (default): ``AUTO_HUBER_DELTA`` = 0.25 of the scaled targets when a target bound or
        range is given (a quarter of the public half-range; on diabetes h = 1 gave R² 0.15 at ε = 1),
        else 1.0 (target units). Stored in ``huber_delta_``.
    intercept_scaling : float or "auto"
        c > 0, value of the constant feature (the solver's rows have norm ≤ √(R² + c²)). ``"auto"``
        (default): c = ``AUTO_INTERCEPT_FRACTION``·R = R/2 when ``target_bound`` / ``target_range`` is
        given — the targets are then centred and scaled to [−1, 1], so the intercept is small, and the
        smaller row bound (1.118·R instead of 1.414·R) lowers every sensitivity (diabetes at ε = 1:
        dp_svrg 0.31 → 0.34, output perturbation 0.30 → 0.34, the other solvers equal or better;
        benchmarks/RESULTS.md, "Diabetes") — else 1.0. A public rule; stored in ``intercept_scaling_``.
    target_bound : float, optional
        Public bound B on |yᵢ| (target units). Given, the solver fits y/B ∈ [−1, 1] (so the default
        ``huber_delta`` / ``clip_norm`` are on the scale of the targets) and the weights are scaled
        back; a target above B raises ``ValueError``. None: targets used as given.
    target_range : (float, float), optional
        Public range (lo, hi) of the targets (target units), instead of ``target_bound``: the solver
        fits (y − m)/h ∈ [−1, 1] with m = (lo + hi)/2, h = (hi − lo)/2, so targets far from 0 (e.g.
        diabetes' 25–346) need no large intercept; weights are scaled back by h and m is added to the
        intercept (with ``fit_intercept=False`` the intercept is m). A target outside raises
        ``ValueError`` naming it. Data-independent: never read the range off the training targets.
    """

    _loss = "huber"

    def __init__(self, solver: str = "auto", epsilon: float = 1.0, delta: float = 1e-5, alpha: Any = "auto",
                 huber_delta: Any = "auto", fit_intercept: bool = True, intercept_scaling: Any = "auto",
                 data_norm_bound: float = 1.0, clip_data: bool = False, random_state: Any = None,
                 solver_params: Optional[dict] = None, keep_diagnostics: bool = False,
                 target_bound: Optional[float] = None, target_range: Optional[tuple] = None) -> None:
        _store_params(self, locals())

    def fit(self, X: np.ndarray, y: np.ndarray) -> "DPHuberRegressor":
        """Fit privately (targets must be finite reals)."""
        X = self._design(X, True)
        if isinstance(self.huber_delta, str):
            if self.huber_delta != "auto":
                raise ValueError(f"huber_delta must be a number > 0 or 'auto'; got {self.huber_delta!r}")
            scaled = self.target_bound is not None or getattr(self, "target_range", None) is not None
            self.huber_delta_ = AUTO_HUBER_DELTA if scaled else 1.0
        else:
            self.huber_delta_ = check_positive("huber_delta", self.huber_delta)
        auto = self._auto_params(X)
        return self._fit_scaled_targets(X, y, {"huber_delta": self.huber_delta_}, {**self._solver_defaults(X.n), **auto})



class DPLinearRegression(_DPRegressor):
    """Differentially private least squares.

    Default ``solver="auto"``: a rule of the public n, d and ε (:mod:`algorithms.auto_regressor`) — AdaSSP
    (below) with one :class:`~algorithms.auto_solver.LowSignalWarning` when n·ε/√d < 1.5 (its adaptive ridge
    shrinks the fit towards the middle of the public target range), AdaSSP from n·ε = 200 000 on, else DP-GD
    with T = :func:`~algorithms.auto_regressor.regression_steps` (n, ε) steps and the clip rule
    ``clip_norm="auto"`` below (diabetes at ε = 1 with a public ``target_range``: R² 0.40; benchmarks/RESULTS.md,
    "Regressors on solver='auto'"); ``solver_`` is the solver run, ``auto_choice_`` the rule's choice. The gradient solvers (``dp_gd``,
    ``dp_sgd``, ...) clip every per-example gradient to ``clip_norm`` (sensitivity from C), which is passed only to solvers that
    take it. The squared loss is not Lipschitz on ℝᵈ, so the output / objective perturbation solvers
    refuse it (``ValueError``).

    ``solver="adassp"``: adaptive sufficient-statistics perturbation (Wang 2018, "Revisiting
    differentially private linear regression", Algorithm 2; :func:`algorithms.sufficient_statistics.adassp`
    — outside the five seed papers, the standard private least-squares baseline): noisy XᵀX, Xᵀy and
    λ_min(XᵀX), three Gaussian mechanisms composed and calibrated by dpcore, then a ridge solve. It
    needs a public ``target_bound`` or ``target_range`` (else ``ValueError``); ``clip_norm`` is unused.
    The estimator runs it with ``variant="joint"`` (one Gaussian release of [X, k·y]ᵀ[X, k·y] and a
    Gaussian-prior posterior mean; module docstring of :mod:`algorithms.sufficient_statistics`):
    on diabetes R² 0.30 at ε = 1 and 0.45 at ε = 10, where Algorithm 2 as printed
    (``solver_params={"variant": "alg2"}``) gives 0.23 and 0.44 — at n = 309 the Xᵀy noise alone
    (Δ = 2XY) keeps any ridge estimate below 0.30 on some seeds (benchmarks/RESULTS.md, "Diabetes").

    Parameters as :class:`DPHuberRegressor` (no ``huber_delta``; ``target_bound`` and
    ``target_range`` likewise; ``alpha="auto"`` is 0 for ``adassp``, whose ridge is adaptive, and
    otherwise the shared rule), plus

    clip_norm : float or "auto"
        Per-example gradient clip C > 0 of the gradient solvers (objective units per weight unit;
        of the scaled problem when ``target_bound`` / ``target_range`` is given). ``"auto"``
        (default): C = ``AUTO_CLIP_FRACTION``·√(R² + c²) = 0.25 × the largest gradient at w = 0 of a
        target in [−1, 1] (R = ``data_norm_bound``, c = ``intercept_scaling`` or 0) — a public rule,
        chosen on diabetes with ``dp_gd`` (the former default C = 1 gave R² 0.30 at ε = 1, C = 0.35 gave
        0.35; 0.1 under-fits); stored in ``clip_norm_``.
    """

    _loss = "squared"

    def __init__(self, solver: str = "auto", epsilon: float = 1.0, delta: float = 1e-5, alpha: Any = "auto",
                 clip_norm: Any = "auto", fit_intercept: bool = True, intercept_scaling: Any = "auto",
                 data_norm_bound: float = 1.0, clip_data: bool = False, random_state: Any = None,
                 solver_params: Optional[dict] = None, keep_diagnostics: bool = False,
                 target_bound: Optional[float] = None, target_range: Optional[tuple] = None) -> None:
        _store_params(self, locals())

    def _solver_fn(self):
        """``adassp`` (least squares only) besides the shared ERM solvers."""
        return adassp if self._running_solver() == "adassp" else super()._solver_fn()

    def _choose_solver(self) -> str:
        """``solver_`` = ``solver``, ``"adassp"`` included."""
        if self.solver == "adassp":
            self.solver_ = "adassp"
            return self.solver_
        return super()._choose_solver()


    def fit(self, X: np.ndarray, y: np.ndarray) -> "DPLinearRegression":
        """Fit privately with gradient clipping at ``clip_norm``."""
        X = self._design(X, True)
        auto = self._auto_params(X)
        if isinstance(self.clip_norm, str):
            if self.clip_norm != "auto":
                raise ValueError(f"clip_norm must be a number > 0 or 'auto'; got {self.clip_norm!r}")
            R = check_positive("data_norm_bound", self.data_norm_bound)
            c = self._intercept_scaling() if self.fit_intercept else 0.0
            self.clip_norm_ = AUTO_CLIP_FRACTION * math.hypot(R, c)
        else:
            self.clip_norm_ = check_positive("clip_norm", self.clip_norm)
        return self._fit_scaled_targets(X, y, {}, {"clip_norm": self.clip_norm_, **self._solver_defaults(X.n), **auto})

