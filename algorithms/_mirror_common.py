"""Plumbing shared by the ℓp mirror-descent solvers of Su, Zhao, Wang (Algorithms 3, 4, 7):
validated set-up, per-example dual norms, the generalized-Gaussian mechanism in the dual's smooth
norm, and the release-count check.

Privacy is never computed here by hand: the mechanism's privacy comes from
:class:`mechanisms.GeneralizedGaussian` (Su–Zhao–Wang Lemma 3) and is reported by ``dpcore``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

import dpcore
from dpcore._validation import check_choice, check_positive
from dpcore.events import PrivacyEvent
from dpcore.result import PrivacyResult
from mechanisms.base import convert_sensitivity
from mechanisms.generalized_gaussian import GeneralizedGaussian

from ._solver_common import Setup, check_iterations, check_relation_replace_one, setup
from ._data import lq_row_norms
from .constraints import Constraint
from .mirror_maps import LP, LpGeometry, bregman_step_kernel, lp_geometry, mirror_constraint

__all__ = ["MirrorSetup", "mirror_setup", "gg_mechanism", "check_releases", "default_steps_nonprivate",
           "check_mirror_calibration", "check_steps", "calibrated_gg",
           "warn_paper_over_target", "event_epsilon"]


@dataclass(frozen=True)
class MirrorSetup:
    """Validated inputs of a mirror-descent run.

    Attributes
    ----------
    base : Setup
        Data, loss, L2 strength, the per-example bound C (``base.clip``), start time.
    geo : LpGeometry
        κ, r, s of the ℓp geometry.
    constraint : Constraint
        The set C the mirror steps project onto (may be ``"lp"``).
    dual_norms : ndarray, shape (n,)
        ‖xᵢ‖_q; a per-example gradient ℓ'·xᵢ has dual norm |ℓ'|·‖xᵢ‖_q.
    smoothness : float
        β w.r.t. ‖·‖_p (per-example), in gradient units per weight unit.
    w0 : ndarray
        argmin_C Φ: 0 for the balls, the uniform point for the simplex.
    """

    base: Setup
    geo: LpGeometry
    constraint: Constraint
    dual_norms: np.ndarray
    smoothness: float
    w0: np.ndarray


def mirror_setup(X, y, *, p, loss, alpha, constraint, radius, clip_norm, data_norm_bound, epsilon, delta,
                 relation, smoothness, loss_params, where: str) -> MirrorSetup:
    """Validate a mirror-descent call (replace-one only: the schedules use the public n)."""
    check_relation_replace_one(relation, "the batch sizes and the noise scale use the dataset size n")
    con = mirror_constraint(constraint, radius)
    # setup() sizes the default per-example bound from the ℓ2 radius of C; the ball ‖w‖_s ≤ R (s < 2)
    # lies in the ℓ2 ball of radius R.
    base_con = "l2" if con.kind == LP else con.name
    base = setup(X, y, loss=loss, alpha=alpha, l1=0.0, constraint=base_con,
                 radius=None if con.name == "none" else con.radius, clip_norm=clip_norm,
                 data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=None,
                 loss_params=loss_params, layouts=True)  # CSR / intercept rows kept (algorithms.rows)
    if base.data.d < 2:
        raise ValueError(f"the l_p geometry of {where} needs dimension d >= 2; got d={base.data.d}")
    geo = lp_geometry(p, base.data.d)
    dual = lq_row_norms(base.data.X, geo.q)  # scaled: no underflow at q ≫ 1 (p near 1); any row layout
    if smoothness is not None:
        beta = check_positive("smoothness", smoothness)
    elif base.smoothness is not None and base.smoothness > 0:
        # β_φ·max‖x‖_q² ≤ β_φ·R² for q ≥ 2: the ℓ2 constant bounds the ℓp smoothness of a GLM loss.
        beta = float(base.smoothness)
    else:
        raise ValueError("smoothness (beta w.r.t. the l_p norm) is required when data_norm_bound is not given")
    w0 = np.empty(base.data.d)
    bregman_step_kernel(con.kind, con.radius, geo.r, geo.s, geo.kappa, np.zeros(base.data.d), w0)
    return MirrorSetup(base, geo, con, dual, beta, w0)


def gg_mechanism(geo: LpGeometry, sigma: float, sensitivity_q: float) -> GeneralizedGaussian:
    """𝒢𝒢 noise in the dual's smooth norm ℓr for a query with ℓq sensitivity ``sensitivity_q``
    (converted to ℓr by Hölder, factor d^{1/r − 1/q} ≤ e^{1/2})."""
    return GeneralizedGaussian(geo.r, sigma, geo.d, convert_sensitivity(sensitivity_q, geo.q, geo.r, geo.d))


@lru_cache(maxsize=256)
def calibrated_gg(geo: LpGeometry, epsilon: float, delta: float, sensitivity_q: float) -> GeneralizedGaussian:
    """Least σ that Lemma 3 certifies (ε ≤ 1, δ ≤ 1/2) for one release with ℓq sensitivity (memoised:
    data-independent, and audits call the solvers thousands of times). A refusal names the (ε, δ) it
    was asked for (a tiny ε gave only "sigma must be in (0, inf); got inf")."""
    try:
        return GeneralizedGaussian.calibrate(epsilon, delta, sensitivity_q, p=geo.r, dimension=geo.d, norm=geo.q)
    except ValueError as exc:
        raise ValueError(f"epsilon={epsilon!r}, delta={delta!r} cannot be calibrated for this release: {exc}") from exc


@lru_cache(maxsize=256)
def event_epsilon(event: PrivacyEvent, delta: float, accountant: str) -> PrivacyResult:
    """``dpcore.get_epsilon(event, delta, accountant=...)``, memoised (events are immutable and hashable)."""
    return dpcore.get_epsilon(event, delta, accountant=accountant)


def check_releases(kernel_releases: int, accounted: int) -> None:
    """Refuse to release a model whose kernel made other noisy releases than the event accounts for."""
    if int(kernel_releases) != int(accounted):
        raise RuntimeError(f"kernel performed {kernel_releases} noisy releases but the event accounts {accounted}")


def default_steps_nonprivate(n: int) -> int:
    """T = ⌈√n⌉ when the noise is off (ε = inf): the papers' step counts are set by the privacy term."""
    return max(1, math.ceil(math.sqrt(n)))


def check_mirror_calibration(calibration: str) -> str:
    return check_choice("calibration", calibration, ("accountant", "paper"))


def check_steps(steps: Optional[int], default: float, n: Optional[int], name: str = "steps") -> int:
    """``steps`` if given, else the theorem's T rounded up; in [1, n] when ``n`` is given (one batch per
    step), unbounded when None (full-batch steps)."""
    if steps is not None:
        T = check_iterations(name, steps)
    else:
        if not math.isfinite(default) or default <= 0:
            raise ValueError(f"{name}: the default schedule is not finite here; give {name} explicitly")
        T = max(1, math.ceil(default))
    if n is not None and T > n:
        raise ValueError(f"{name} must be in [1, n={n}] (each batch holds at least one record); got {T}")
    return T


def warn_paper_over_target(privacy: PrivacyResult, target_epsilon: float, solver: str) -> None:
    """Warn when the paper's printed noise buys less privacy than its target (the report stays dpcore's)."""
    if privacy.epsilon > target_epsilon:
        warnings.warn(
            f"{solver}(calibration='paper'): the printed noise scale gives epsilon={privacy.epsilon:.6g} > target "
            f"{target_epsilon:.6g} under dpcore's accounting (reported as such); use calibration='accountant'",
            UserWarning, stacklevel=3,
        )
