"""The record every solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict

import numpy as np

from dpcore.events import PrivacyEvent
from dpcore.result import PrivacyResult

__all__ = ["SolverResult", "check_finite_model"]


def check_finite_model(weights: np.ndarray, who: str, arguments: str) -> None:
    """``ValueError`` when a trained model has a NaN / inf entry: a scale argument (one of ``arguments``) too
    large for float64 overflowed the run. A NaN / inf model is never released; refusing reveals nothing a
    returned NaN would not."""
    if not np.all(np.isfinite(weights)):
        raise ValueError(f"{who}: the iterates overflowed float64 (non-finite weights); {arguments} is too extreme "
                         "for float64 arithmetic")


@dataclass(frozen=True)
class SolverResult:
    """Output of a private solver.

    Only :attr:`weights` is covered by the privacy guarantee. Everything else computed from the
    data — the traces, ``n_gradient_evaluations`` and ``wall_time`` of solvers whose work depends
    on the data (Newton iterations, early stopping), ``details["clipped"]`` — is a diagnostic for
    the data owner and must not be published; the traces are computed only with ``trace=True`` (opt-in).

    Attributes
    ----------
    weights : ndarray, shape (d,)
        The released model.
    privacy : PrivacyResult
        ε (upper bound, nats), δ, relation and accountant, computed by ``dpcore.get_epsilon`` from
        :attr:`event` (ε = inf when the noise was switched off).
    event : PrivacyEvent
        The dpcore event describing exactly what the solver ran.
    objective_trace : ndarray
        F(w) = (1/n) Σ ℓ + r at the start and after every pass over the data. Diagnostic computed on
        the raw data without noise: NOT covered by the privacy guarantee (do not publish it).
    grad_norm_trace : ndarray
        Norm of the noiseless prox-gradient mapping at the same points (same caveat).
    n_gradient_evaluations : int
        Per-example gradient evaluations performed (privately used ones; traces excluded).
    wall_time : float
        Seconds spent in the solver (validation, calibration and kernels; traces excluded).
    noise_multiplier : float
        σ/Δ of the Gaussian releases (0 when the noise is off).
    sigma : float
        Absolute standard deviation of the noise added to each released gradient *sum*
        (``noise_multiplier · Δ``); the noise on a mean gradient is ``sigma / batch``.
    solver : str
        Solver name.
    details : dict
        Solver-specific facts: step counts from the kernel, clip norm, sensitivity, label mapping,
        number of clipped gradients, calibration result …
    """

    weights: np.ndarray
    privacy: PrivacyResult
    event: PrivacyEvent
    objective_trace: np.ndarray
    grad_norm_trace: np.ndarray
    n_gradient_evaluations: int
    wall_time: float
    noise_multiplier: float
    sigma: float
    solver: str = ""
    details: Dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # A NaN / inf model is never released: a scale argument (learning_rate, clip_norm,
        # data_norm_bound, noise_multiplier, radius, ...) too large for float64 overflowed the run.
        # Refusing reveals nothing a returned NaN would not.
        check_finite_model(self.weights, self.solver or "solver", "learning_rate, clip_norm / data_norm_bound, "
                           "noise_multiplier, radius or smoothness")

    @property
    def epsilon(self) -> float:
        return self.privacy.epsilon

    @property
    def delta(self) -> float:
        return self.privacy.delta
