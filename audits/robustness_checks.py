"""Audit rows for the attacks of issue 13 that are not about the noise level: a deterministic
default seed, and extreme (finite) records that defeat clipping.

* ``estimator_default_seed`` — the estimator built with its *default* arguments is fitted on D or
  D′ (:func:`audits.solver_targets.canary_datasets`, replace-one, Huber regression by objective
  perturbation). The attacker guesses the seed (the former default, 0), fits on D with it, and
  scores a release 0 if it equals that reference bit for bit, else 1 (larger = looks like D′). A deterministic default makes
  every release on D match and none on D′ (ε_lb ≈ 4 at 150 trials per side for a claim of 1); with
  fresh OS entropy no release matches and ε_lb = 0. ``planted=True`` fits with ``random_state=0``,
  the former default: the row must then read VIOLATED.
* ``dp_gd[extreme-record:underflow]`` / ``dp_gd[extreme-record:overflow]`` — DP-GD (squared loss,
  per-example clipping at C = 1) on D with a zero record versus D′ where that record is replaced by
  an extreme one on the canary coordinate: entries 1e-170 with target 1e200 (‖x‖² underflows: the
  gradient escaped clipping, coefficients ~1e29) or entries 1e308 (the margin overflows: the
  clipped gradient was inf·0 = NaN). Score: the released weight on the canary coordinate, +inf
  when any weight is not finite. A correct solver is an ordinary DP release here and passes.

Every row is audited with Clopper–Pearson (the scores are not Gaussian).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Tuple

import numpy as np

from algorithms import DeterministicSeedWarning, DPHuberRegressor, dp_gd
from dpcore._validation import check_choice, check_delta, check_positive

from .solver_targets import canary_datasets
from .target import FunctionTarget

__all__ = ["ROBUSTNESS_NAMES", "robustness_target"]

ROBUSTNESS_NAMES = ("estimator_default_seed", "dp_gd[extreme-record:underflow]", "dp_gd[extreme-record:overflow]")

_FORMER_DEFAULT_SEED = 0
_N, _D = 100, 3
# target_bound 10 (the canary's |Y|) with h = 0.1 of the scaled targets is the fit on raw targets with h = 1 (the
# estimators refuse a private regression without a public target bound, issue 24)
_ESTIMATOR = {"solver": "objective_perturbation", "alpha": 0.1, "fit_intercept": False, "target_bound": 10.0,
              "huber_delta": 0.1}
_EXTREME = {"underflow": (1e-170, 1e200), "overflow": (1e308, 0.0)}  # (entry on the canary coordinate, target)
_GD = {"loss": "squared", "clip_norm": 1.0, "learning_rate": 0.5, "steps": 20}


def _fit(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, random_state: object) -> DPHuberRegressor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeterministicSeedWarning)
        return DPHuberRegressor(epsilon=epsilon, delta=delta, random_state=random_state, **_ESTIMATOR).fit(X, y)


@dataclass(frozen=True)
class _SeedRuns:
    """Picklable sampler: 0 where a default-constructed fit reproduces the attacker's reference, else 1."""

    datasets: Tuple[Tuple[np.ndarray, np.ndarray], ...]
    reference: np.ndarray
    epsilon: float
    delta: float
    planted: bool

    def __call__(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        X, y = self.datasets[which]
        seed = _FORMER_DEFAULT_SEED if self.planted else None
        return np.array([float(not np.array_equal(_fit(X, y, self.epsilon, self.delta, seed).coef_, self.reference))
                         for _ in range(n)])


@dataclass(frozen=True)
class _ExtremeRuns:
    """Picklable sampler: DP-GD's weight on the canary coordinate (+inf if the output is not finite)."""

    datasets: Tuple[Tuple[np.ndarray, np.ndarray], ...]
    noise_multiplier: float

    def __call__(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        X, y = self.datasets[which]
        out = np.empty(n)
        for k, seed in enumerate(rng.integers(0, 2**63 - 1, size=n)):
            w = dp_gd(X, y, noise_multiplier=self.noise_multiplier, rng=int(seed), **_GD).weights
            out[k] = w[-1] if np.all(np.isfinite(w)) else math.inf
        return out


def _extreme_datasets(kind: str) -> Tuple[Tuple[np.ndarray, np.ndarray], ...]:
    (X, y), _ = canary_datasets(_N, _D, "replace_one")
    entry, target = _EXTREME[kind]
    X0, y0, X1, y1 = X.copy(), y.copy(), X.copy(), y.copy()
    X0[0], y0[0] = 0.0, 0.0
    X1[0], y1[0] = 0.0, target
    X1[0, -1] = entry
    return (X0, y0), (X1, y1)


def robustness_target(name: str, epsilon: float, delta: float, *, planted: bool = False) -> FunctionTarget:
    """Audit target ``name`` (one of :data:`ROBUSTNESS_NAMES`) at the claim (``epsilon``, ``delta``).

    Parameters
    ----------
    name : str
        One of :data:`ROBUSTNESS_NAMES`.
    epsilon : float
        Target ε in (0, ∞) (nats) the release is calibrated to; the claim is the ε it reports.
    delta : float
        δ in (0, 1).
    planted : bool
        ``estimator_default_seed`` only: fit with the former fixed default seed (must be caught).

    Returns
    -------
    FunctionTarget
        Picklable, Clopper–Pearson (``noise_family="other"``), replace-one.
    """
    name = check_choice("name", name, ROBUSTNESS_NAMES)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if name == "estimator_default_seed":
        datasets = canary_datasets(_N, _D, "replace_one")
        reference = _fit(*datasets[0], epsilon, delta, _FORMER_DEFAULT_SEED)
        runs = _SeedRuns(datasets, reference.coef_, epsilon, delta, bool(planted))
        label = name + ("[planted: fixed seed]" if planted else "")
        return FunctionTarget(label, float(reference.privacy_.epsilon), delta, runs, "replace_one", "other",
                              "release differs from the attacker's fit on D with the guessed seed")
    if planted:
        raise ValueError(f"planted applies to 'estimator_default_seed' only; got name={name!r}")
    datasets = _extreme_datasets(name.split(":")[1].rstrip("]"))
    first = dp_gd(*datasets[1], epsilon=epsilon, delta=delta, rng=0, **_GD)
    runs = _ExtremeRuns(datasets, float(first.noise_multiplier))
    return FunctionTarget(name, float(first.privacy.epsilon), delta, runs, "replace_one", "other",
                          "released weight on the extreme record's coordinate (+inf if not finite)")
