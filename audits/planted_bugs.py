"""Planted-bug catalogue: deliberately broken variants of mechanisms and solvers.

Each entry is a bug class that real DP code has shipped (auditing-methods notes §3), rebuilt on top
of the library's own mechanisms and solvers so that the audit has something it *must* catch. The
broken releases are the functions and classes below; :mod:`audits.targets` turns each into an
:class:`audits.AuditTarget` with worst-case neighbours and a distinguisher, and
:data:`CATALOGUE` states, for every bug, the audit (estimator, trial budget per side) that flags
it at 95% confidence. ``planted_bug_suite`` in :mod:`audits.library_audit` runs them all.
:data:`REPLAY_PLANTED` holds the variants the sensitivity-conformance replay must catch
(:func:`audits.conformance.check_solver` with ``solve=replay_planted(bug, name)``): norms that underflow and a
bias term left out of the clip.

Every broken release *claims* the privacy of its correct twin (the claim is what the buggy code
would report through dpcore); the bug only changes what it does.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Dict, Optional, Tuple
from unittest import mock

import numpy as np

import dpcore
from algorithms import sufficient_statistics
from algorithms.clipping import clipped_sum_sensitivity
from algorithms.losses import get_loss
from algorithms.result import SolverResult
from dpcore._validation import check_positive, check_positive_int
from dpcore.events import GaussianEvent, SelfComposedEvent
from mechanisms import Gaussian
from mechanisms.base import Mechanism

__all__ = [
    "PlantedBug",
    "CATALOGUE",
    "HalfNoise",
    "half_noise",
    "half_noise_solver_run",
    "unit_target_bound_adassp_run",
    "unit_target_bound_joint_adassp_run",
    "naive_float_laplace",
    "naive_float_laplace_support",
    "reused_noise_release",
    "double_release",
    "unclipped_sum",
    "add_remove_sensitivity",
    "early_stopped_gd",
    "early_stopped_output_perturbation",
    "exact_minimiser_sensitivity",
    "underflowing_dual_norms_run",
    "unscaled_row_norms_run",
    "unclipped_bias_dp_gd",
    "REPLAY_PLANTED",
    "replay_planted",
]


@dataclass(frozen=True)
class PlantedBug:
    """One planted bug and the audit that must flag it.

    Attributes
    ----------
    name : str
        Catalogue name (``dpcore audit … --planted NAME``).
    kind : {"mechanism", "solver"}
        Whether :func:`audits.targets.mechanism_target` or :func:`~audits.targets.solver_target`
        builds it.
    base : str
        The mechanism or solver it breaks (the target name to pass with ``planted=NAME``).
    estimator : str
        Estimator of the stated budget (``"clopper-pearson"`` or ``"gdp"``).
    trials : int
        Trials per side within which the audit flags the bug at 95% confidence.
    summary : str
        What is broken.
    reference : str
        Where the bug class comes from.
    solvers : tuple of str
        Solvers on which the bug can also be planted (``solver_target(name, …, planted=…)``).
    solver_trials : int
        Trials per side within which the solver variants are flagged (same estimator).
    """

    name: str
    kind: str
    base: str
    estimator: str
    trials: int
    summary: str
    reference: str
    solvers: Tuple[str, ...] = ()
    solver_trials: int = 0


CATALOGUE: Dict[str, PlantedBug] = {
    b.name: b
    for b in (
        PlantedBug(
            "half-noise", "mechanism", "gaussian", "gdp", 10_000,
            "Gaussian noise at σ/2 while claiming the ε of σ (true ε ≈ 2.15 for a claim of 1 at δ=1e-5); "
            "for DP-GD, every step's noise multiplier halved.",
            "auditing notes §3 row 1 (Tramèr et al. 2022, noise off by a factor)",
            solvers=("dp_gd",), solver_trials=5_000,
        ),
        PlantedBug(
            "no-clipping", "mechanism", "gaussian", "clopper-pearson", 500,
            "Clipped-sum query released without clipping; a record of norm 50·C moves the sum by 50·C.",
            "auditing notes §3 row 4 (TF-Privacy #46/#81)",
        ),
        PlantedBug(
            "reused-noise", "mechanism", "gaussian", "clopper-pearson", 500,
            "Two Gaussian queries answered with one noise draw: their difference is released noise-free.",
            "auditing notes §3 row 7 (jax_privacy RNG pitfall)",
        ),
        PlantedBug(
            "wrong-sampling-rate", "mechanism", "gaussian", "clopper-pearson", 20_000,
            "Poisson-subsampled Gaussian sum accounted at sampling rate q = 0.01 but run on every record (q = 1).",
            "auditing notes §3 row 6 (Opacus #80, shuffle vs Poisson)",
        ),
        PlantedBug(
            "add-remove-sensitivity", "mechanism", "laplace", "clopper-pearson", 20_000,
            "Laplace on a clipped sum calibrated to Δ = C (add/remove) while neighbours replace one record (Δ = 2C).",
            "auditing notes §3 row 3 (TF-Privacy #620)",
        ),
        PlantedBug(
            "float-laplace", "mechanism", "laplace", "clopper-pearson", 1_000,
            "ε-DP Laplace sampled naively in float64 (inverse CDF); outputs impossible under one neighbour.",
            "Mironov 2012 (CCS), 'On significance of the least significant bits for DP', §3",
        ),
        PlantedBug(
            "double-spending", "mechanism", "gaussian", "gdp", 30_000,
            "The same query released twice, each release calibrated to the full (ε, δ); the claim "
            "counts one (true ε ≈ 1.47 for a claim of 1 at δ=1e-5).",
            "auditing notes §3 row 9 (dp-recorder test_double_spending; Opacus #346)",
        ),
        PlantedBug(
            "early-stopped-output-perturbation", "solver", "output_perturbation_gd", "gdp", 1_000,
            "GD stopped by a gradient-norm test (data-dependent T) with noise calibrated to the exact "
            "minimiser's Δ = 2L/(nλ); found by the sensitivity check, confirmed by the audit.",
            "Zhang, Zheng, Mou, Wang 2017, Lemmas 2-3; Chaudhuri, Monteleoni, Sarwate 2011, Cor. 8",
        ),
        PlantedBug(
            "norm-underflow", "solver", "noisy_mirror_descent_dense", "clopper-pearson", 300,
            "The dual norms ‖x‖_q of the l_p solvers computed as (Σ|xⱼ|^q)^{1/q} without scaling: at p = 1.001 "
            "(q = 1001) every entry below ~0.47 underflows, a row of 0.4's gets norm 0 and its gradient skips the "
            "clip (Alg. 3) or the truncation (Alg. 4, 7) while the noise is calibrated to the clip.",
            "issue 21 (the leak of the l_p solvers); auditing notes §3 row 4 (clipping that does not bind)",
            solvers=("batched_truncated_mirror_descent_dense", "shuffled_truncated_mirror_descent_dense"),
            solver_trials=600,  # the shuffled reports carry n local noises: ε_lb 0.89–1.12 at 300, 1.49–1.65 at 600
        ),
        PlantedBug(
            "clip-skipped-at-zero-norm", "solver", "dp_gd_tiny", "clopper-pearson", 300,
            "Row norms computed as sqrt(Σx²) without scaling: a row of entries ~1e-170 gets norm 0, and the clip "
            "treats a zero norm as a zero gradient and keeps the coefficient; with a clip norm of 1e-200 the "
            "record's unclipped gradient is ~1e28 times the sensitivity.",
            "issue 21 (norms that underflow); issue 13 (the clip must bound every finite input)",
        ),
        PlantedBug(
            "adassp-unit-target-bound", "solver", "adassp", "clopper-pearson", 400,
            "AdaSSP's Xᵀy noise calibrated to Δ = 2X (the target bound Y dropped from Δ = 2X·Y, right only "
            "for |y| ≤ 1) on labels |y| ≤ Y = 10: that release runs at a tenth of its noise.",
            "auditing notes §3 row 3 (sensitivity for the wrong domain); Wang 2018 Alg. 2",
        ),
        PlantedBug(
            "adassp-joint-unit-target-bound", "solver", "adassp_joint", "clopper-pearson", 2_000,
            "AdaSSP's joint release of [X, k·y]ᵀ[X, k·y] with the label column scaled by k = X (target bound "
            "taken as 1) instead of X/Y, noise calibrated for rows of norm √2·X: on labels |y| ≤ Y = 10 the "
            "cross entries move 10× further than the noise assumes.",
            "auditing notes §3 row 3 (sensitivity for the wrong domain); Wang 2018 §4 (SSP)",
        ),
    )
}


# ------------------------------------------------------------------------------------ half-noise
class HalfNoise:
    """A mechanism whose noise is half the calibrated noise, reporting the original claim.

    ``randomize(value, rng) = value + ½·(noise of the wrapped mechanism)``: for every scale family
    (Gaussian, Laplace, ℓ2-Laplace, generalized Gaussian) that is exactly the mechanism with its
    noise parameter halved. ``privacy_event`` is the wrapped one — the false claim.

    Parameters
    ----------
    mechanism : mechanisms.Mechanism
        The correctly calibrated mechanism.
    """

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism

    def randomize(self, value: object, rng: np.random.Generator) -> np.ndarray:
        """``value`` + half of one noise draw of the wrapped mechanism (same shape as ``value``)."""
        arr = np.asarray(value, dtype=np.float64)
        return arr + 0.5 * self.mechanism.randomize(np.zeros_like(arr), rng)

    def privacy_event(self, relation: str = "add_remove"):
        """The wrapped mechanism's event (what the buggy code claims)."""
        return self.mechanism.privacy_event(relation)


def half_noise(mechanism: Mechanism) -> HalfNoise:
    """The half-noise variant of ``mechanism`` (see :class:`HalfNoise`)."""
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a mechanisms.Mechanism; got {mechanism!r}")
    return HalfNoise(mechanism)


def half_noise_solver_run(solve: Callable, X: np.ndarray, y: np.ndarray, *, noise_multiplier: float, **kwargs):
    """Run a gradient-perturbation solver at half the noise multiplier its claim was calibrated for.

    ``solve`` is a library solver accepting ``noise_multiplier`` (σ/Δ of every release, e.g.
    :func:`algorithms.dp_gd.dp_gd`); the caller keeps claiming the ε of ``noise_multiplier`` (the
    bug: σ/2 is what runs). Returns the solver's :class:`~algorithms.result.SolverResult`, whose own
    ``privacy`` field would expose the bug — the buggy code reports the calibrated claim instead.
    """
    return solve(X, y, noise_multiplier=0.5 * check_positive("noise_multiplier", noise_multiplier), **kwargs)


# ------------------------------------------------------------------------- adassp-unit-target-bound
def unit_target_bound_adassp_run(solve: Callable, X: np.ndarray, y: np.ndarray, **kwargs):
    """Run AdaSSP with its sensitivities computed for the target bound 1 instead of ``target_bound`` (the bug).

    ``solve`` is :func:`algorithms.sufficient_statistics.adassp`; during the call its
    ``adassp_sensitivities`` is replaced by one that ignores the target bound Y, so Δ_Xᵀy = 2X
    (replace-one) instead of 2X·Y while Δ_λmin and Δ_XᵀX (which do not involve Y) are unchanged: for
    Y > 1 the Xᵀy release runs at 1/Y of its calibrated noise. The privacy event, hence the claim, is
    the correct one (it does not depend on the sensitivities).
    """
    correct = sufficient_statistics.adassp_sensitivities

    def unit_bound(norm_bound: float, target_bound: float, relation: str) -> tuple:
        return correct(norm_bound, 1.0, relation)

    with mock.patch.object(sufficient_statistics, "adassp_sensitivities", unit_bound):
        return solve(X, y, **kwargs)


def unit_target_bound_joint_adassp_run(solve: Callable, X: np.ndarray, y: np.ndarray, **kwargs):
    """Run AdaSSP's ``variant="joint"`` with its label scaling done for the target bound 1 (the bug).

    ``solve`` is :func:`algorithms.sufficient_statistics.adassp`; during the call the joint release
    receives Y = 1 in place of ``target_bound`` (the labels are still validated against the true
    bound by the caller), so it scales the labels by k = X instead of X/Y and calibrates the noise
    for rows of norm √2·X, while rows reach norm √(X² + X²Y²): for Y > 1 the release runs at about
    1/Y of its needed noise. The privacy event, hence the claim, is the correct one.
    """
    correct = sufficient_statistics._joint

    def unit_bound(data, target_bound: float, norm_bound: float, **options):
        return correct(data, 1.0, norm_bound, **options)

    with mock.patch.object(sufficient_statistics, "_joint", unit_bound):
        return solve(X, y, **kwargs)


# ---------------------------------------------------------------------------------- float-laplace
_GRID = 2.0**53  # numpy's Generator.random() returns k·2⁻⁵³, k ∈ {0, …, 2⁵³ − 1}


def _naive_laplace_from_grid(value, scale: float, j: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """The naive sampler's arithmetic: value + (−scale·sign)·log(j·2⁻⁵³), evaluated in float64."""
    return value + (-scale * sign) * np.log(j / _GRID)


def naive_float_laplace(value: float, scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` releases of ``value`` + Laplace(scale) by the textbook float inverse CDF.

    u ~ U[0, 1) on the 2⁻⁵³ grid, a = u − ½, output value − scale·sign(a)·ln(1 − 2|a|) — every
    operation in float64, no snapping. Mironov 2012 (§3) shows the set of outputs reachable from a
    given ``value`` is porous and depends on ``value``, so an output can rule out a neighbour and
    the mechanism is not ε-DP for any ε. (1 − 2|a| is an exact multiple j·2⁻⁵³, j ≥ 1 but for the
    u = 0 draw, of probability 2⁻⁵³, which returns −inf.)

    Parameters
    ----------
    value : float
        True query answer (query units).
    scale : float
        Laplace scale b = Δ/ε (query units).
    size : int
        Number of independent releases.
    rng : numpy.random.Generator
    """
    b = check_positive("scale", scale)
    u = rng.random(check_positive_int("size", size, minimum=0))
    a = u - 0.5
    j = (1.0 - 2.0 * np.abs(a)) * _GRID
    with np.errstate(divide="ignore"):
        return _naive_laplace_from_grid(float(value), b, j, np.sign(a))


def naive_float_laplace_support(outputs: np.ndarray, value: float, scale: float, window: int = 6) -> np.ndarray:
    """Whether each output can be produced by :func:`naive_float_laplace` from ``value``.

    Inverts the sampler: for each sign, j ≈ 2⁵³·exp(−sign·(y − value)/scale), then replays the
    sampler's exact float arithmetic on the grid points j − window … j + window. The float map
    j ↦ y is monotone, so if y is reachable at all, a preimage lies next to the real-arithmetic
    inverse (tested: every output of the sampler is recognised from its own ``value``).

    Parameters
    ----------
    outputs : array of float
        Released values.
    value : float
        Candidate true answer.
    scale : float
        Laplace scale b.
    window : int
        Grid points searched on each side of the estimate.

    Returns
    -------
    ndarray of bool, shape of ``outputs``
    """
    y = np.asarray(outputs, dtype=np.float64)
    b = check_positive("scale", scale)
    found = y == value  # a = 0 exactly: output equals value
    z = y - value
    for sign in (1.0, -1.0):
        with np.errstate(over="ignore"):
            est = np.round(np.minimum(np.exp(-sign * z / b), 1.0) * _GRID)
        for k in range(-window, window + 1):
            j = est + k
            ok = (j >= 1.0) & (j <= _GRID)
            replay = _naive_laplace_from_grid(value, b, np.where(ok, j, 1.0), sign)
            found |= ok & (replay == y)
    return found


# ----------------------------------------------------------------------------------- reused noise
def reused_noise_release(answers: np.ndarray, mechanism: Mechanism, rng: np.random.Generator) -> np.ndarray:
    """Release several queries with ONE noise draw shared by all of them (the bug).

    Parameters
    ----------
    answers : array, shape (n, k)
        n independent releases of k query answers each (query units).
    mechanism : mechanisms.Mechanism
        Calibrated for one query; the claim composes k independent releases.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, k)
        ``answers[i, j] + z_i``: differences of released answers are noise-free.
    """
    a = np.asarray(answers, dtype=np.float64)
    z = mechanism.randomize(np.zeros(a.shape[0]), rng)
    return a + z[:, None]


# --------------------------------------------------------------------------------- double spending
def double_release(value: np.ndarray, mechanism: Mechanism, rng: np.random.Generator) -> np.ndarray:
    """Release every answer twice with independent noise, each release paying the full budget (the bug).

    Parameters
    ----------
    value : array, shape (n,)
        n independent query answers (query units).
    mechanism : mechanisms.Mechanism
        Calibrated to the whole (ε, δ) budget for one release.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, 2)
        Two noisy releases per answer; only one was accounted for.
    """
    a = np.asarray(value, dtype=np.float64)
    return mechanism.randomize(np.column_stack([a, a]), rng)


# ------------------------------------------------------------------------- clipping / sensitivity
def unclipped_sum(records: np.ndarray, clip_norm: float) -> np.ndarray:
    """The "clipped" sum with the clipping step skipped (the bug): Σᵢ xᵢ, rows of shape (n, d).

    ``clip_norm`` is accepted and ignored, exactly as in the buggy code path whose noise is still
    calibrated to ``clipped_sum_sensitivity(clip_norm, relation)``.
    """
    check_positive("clip_norm", clip_norm)
    return np.asarray(records, dtype=np.float64).sum(axis=-2)


def add_remove_sensitivity(clip_norm: float, relation: str) -> float:
    """Δ of a clipped sum computed for add/remove whatever ``relation`` is run (the bug).

    The correct value is ``algorithms.clipping.clipped_sum_sensitivity(clip_norm, relation)``
    (2C under replace-one); this returns C for both relations.
    """
    return clipped_sum_sensitivity(clip_norm, "add_remove")


# --------------------------------------------------------------- early-stopped output perturbation
def exact_minimiser_sensitivity(lipschitz: float, n: int, alpha: float) -> float:
    """2L/(nλ): ℓ2 sensitivity of the exact minimiser of (1/n)Σℓ + (λ/2)‖w‖² under replace-one.

    Chaudhuri, Monteleoni, Sarwate 2011 (JMLR), Corollary 8. It bounds the *exact* minimiser only.
    """
    return 2.0 * check_positive("lipschitz", lipschitz) / (check_positive_int("n", n) * check_positive("alpha", alpha))


def early_stopped_gd(
    X: np.ndarray, y: np.ndarray, *, alpha: float, tol: float, loss: str = "logistic", max_steps: int = 1_000
) -> np.ndarray:
    """Gradient descent on (1/n)Σℓ + (α/2)‖w‖² from 0, stopped once ‖∇F(w)‖₂ ≤ ``tol``.

    Step η = 1/(β + α) with β the loss smoothness for ‖x‖ ≤ max row norm. The stopping time
    depends on the data, so the output is *not* the exact minimiser and one record can change the
    number of steps taken — the deterministic part of the planted bug.

    Parameters
    ----------
    X, y : arrays, shapes (n, d) and (n,)
    alpha : float
        L2 strength λ > 0.
    tol : float
        Gradient-norm stopping threshold (gradient units).
    loss : str
        A loss of :func:`algorithms.losses.get_loss`.
    max_steps : int
        Cap on the number of steps.

    Returns
    -------
    ndarray, shape (d,)
    """
    lam = check_positive("alpha", alpha)
    tol = check_positive("tol", tol)
    lossf = get_loss(loss)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    beta = lossf.smoothness(float(np.max(np.linalg.norm(X, axis=1))))
    eta = 1.0 / (beta + lam)
    w = np.zeros(X.shape[1])
    for _ in range(check_positive_int("max_steps", max_steps)):
        g = lossf.gradient(w, X, y) + lam * w
        if float(np.linalg.norm(g)) <= tol:
            break
        w = w - eta * g
    return w


def early_stopped_output_perturbation(
    X: np.ndarray,
    y: np.ndarray,
    *,
    epsilon: float,
    delta: float,
    alpha: float,
    tol: float,
    size: int,
    rng: np.random.Generator,
    data_norm_bound: float = 1.0,
) -> Tuple[np.ndarray, Gaussian]:
    """``size`` releases of :func:`early_stopped_gd` + Gaussian noise calibrated to 2L/(nλ) (the bug).

    The deterministic part is computed once and the noise drawn ``size`` times — exactly what the
    (buggy) solver does on a fixed dataset. The noise assumes the exact minimiser's sensitivity
    (:func:`exact_minimiser_sensitivity`), which a data-dependent stopping time breaks.

    Returns
    -------
    releases : ndarray, shape (size, d)
    mechanism : mechanisms.Gaussian
        The (wrongly calibrated) noise mechanism; its event is the claim.
    """
    L = get_loss("logistic").lipschitz(data_norm_bound)
    mech = Gaussian.calibrate(epsilon, delta, sensitivity=exact_minimiser_sensitivity(L, len(y), alpha))
    w = early_stopped_gd(X, y, alpha=alpha, tol=tol)
    return mech.randomize(np.broadcast_to(w, (size, w.size)), rng), mech



# --------------------------------------------------------------------- norms that underflow (issue 21)
def _unscaled_norms(X: np.ndarray, order: float) -> np.ndarray:
    """(Σⱼ|xⱼ|^order)^{1/order} of every row with no scaling — the bug: every |xⱼ|^order below 2⁻¹⁰⁷⁴ is 0."""
    with np.errstate(under="ignore", over="ignore"):
        return np.ascontiguousarray(np.sum(np.abs(X) ** order, axis=1) ** (1.0 / order))


def underflowing_dual_norms_run(solve: Callable, X: np.ndarray, y: np.ndarray, **kwargs) -> SolverResult:
    """Run an ℓp solver (``noisy_mirror_descent``, ``batched_`` / ``shuffled_truncated_mirror_descent``) with its
    per-example dual norms ‖xᵢ‖_q computed without scaling (planted bug ``norm-underflow``, issue 21).

    The solver's own set-up runs; only the dual norms it hands to its kernel are replaced by
    (Σ|xᵢⱼ|^q)^{1/q} in float64, which is 0 for a row of 0.4's at q = 1001: that row's gradient then passes
    the clip (Alg. 3 with generalized-Gaussian noise) or the truncation test (Alg. 4, 7) whole. The event,
    hence the claim, is the correct solver's.
    """
    module = importlib.import_module(solve.__module__)
    correct = module.mirror_setup

    def underflowing(*args, **kw):
        m = correct(*args, **kw)
        return dataclasses.replace(m, dual_norms=_unscaled_norms(m.base.data.X, m.geo.q))

    with mock.patch.object(module, "mirror_setup", underflowing):
        return solve(X, y, **kwargs)


def unscaled_row_norms_run(solve: Callable, X: np.ndarray, y: np.ndarray, **kwargs) -> SolverResult:
    """Run a gradient solver (``dp_gd``, ``dp_sgd``, ...) with its row norms ‖xᵢ‖₂ computed as √(Σx²) without
    scaling (planted bug ``clip-skipped-at-zero-norm``): a row of entries ~1e-170 gets norm 0, and the clip —
    correct for a true zero norm, whose gradient c·0 is the zero vector — keeps its coefficient, so the record
    adds c·xᵢ unclipped. The event, hence the claim, is the correct solver's."""
    from algorithms import _solver_common

    correct = _solver_common.prepare_data

    def unscaled(*args, **kw):
        data = correct(*args, **kw)
        return dataclasses.replace(data, row_norms=_unscaled_norms(data.X, 2.0))

    with mock.patch.object(_solver_common, "prepare_data", unscaled):
        return solve(X, y, **kwargs)


def unclipped_bias_dp_gd(X: np.ndarray, y: np.ndarray, *, loss: str = "logistic", epsilon: Optional[float] = None,
                         delta: float = 1e-5, steps: int = 1, learning_rate: float = 1.0, clip_norm: float = 1.0,
                         noise_multiplier: float = 2.0, w0: Optional[np.ndarray] = None, rng=None,
                         **ignored) -> SolverResult:
    """DP-GD (wang-ye-xu-2017 Alg. 4) on a model with a bias, w·x + b, whose bias gradient is not clipped
    (planted bug ``unclipped-bias``): each record adds clip_C(ℓ′·x) to the weight block and ℓ′ itself to the
    bias, so a record moves the released sum by up to 2C in the weights *and* 2·sup|ℓ′| in the bias while the
    noise N(0, (z·2C)²) and the event claim Δ = 2C (replace-one). Logistic or Huber loss (``loss``); signature
    of :func:`algorithms.dp_gd.dp_gd` (``epsilon`` must be None: the multiplier is given).

    Returns
    -------
    SolverResult
        ``weights`` = [w, b] (length d + 1), the correct DP-GD's event and claim, ``details["sensitivity"]``
        = 2C and ``details["learning_rate"]``.
    """
    start = time.perf_counter()
    if epsilon is not None:
        raise ValueError("unclipped_bias_dp_gd takes noise_multiplier, not epsilon")
    C = check_positive("clip_norm", clip_norm)
    z = check_positive("noise_multiplier", noise_multiplier)
    T = check_positive_int("steps", steps)
    lossf = get_loss(loss)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, d = X.shape
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    theta = np.zeros(d + 1)
    if w0 is not None:
        theta[:d] = np.asarray(w0, dtype=np.float64)[:d]
    sens = clipped_sum_sensitivity(C, "replace_one")
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    for _ in range(T):
        c = lossf.deriv(X @ theta[:d] + theta[d], y)
        weight_coef = c * np.minimum(1.0, C / np.maximum(np.abs(c) * norms, 1e-300))
        g = np.append(X.T @ weight_coef, c.sum())  # the bug: the bias coefficient c is not clipped
        g += gen.normal(0.0, z * sens, d + 1)
        theta -= learning_rate / n * g
    event = SelfComposedEvent(GaussianEvent(z, "replace_one"), T)
    return SolverResult(weights=theta, privacy=dpcore.get_epsilon(event, delta), event=event,
                        objective_trace=np.empty(0), grad_norm_trace=np.empty(0), n_gradient_evaluations=n * T,
                        wall_time=time.perf_counter() - start, noise_multiplier=z, sigma=z * sens,
                        solver="dp_gd[unclipped-bias]",
                        details={"sensitivity": sens, "learning_rate": learning_rate, "clip_norm": C})


#: Planted variants of the sensitivity-conformance replay (:func:`audits.conformance.check_solver`):
#: bug name → (the solver it replaces, a factory from the library solver to the planted one).
REPLAY_PLANTED: Dict[str, Tuple[Tuple[str, ...], Callable[[Callable], Callable]]] = {
    "norm-underflow": (("noisy_mirror_descent", "batched_truncated_mirror_descent",
                        "shuffled_truncated_mirror_descent"), lambda solve: partial(underflowing_dual_norms_run, solve)),
    "clip-skipped-at-zero-norm": (("dp_gd", "dp_sgd", "rrpsgd", "dp_accmd", "dp_srm", "dp_svrg"),
                                  lambda solve: partial(unscaled_row_norms_run, solve)),
    "unclipped-bias": (("dp_gd",), lambda solve: unclipped_bias_dp_gd),
}


def replay_planted(bug: str, name: str) -> Callable:
    """The planted variant ``bug`` of the library solver ``name``, with the solver's signature (for
    ``audits.conformance.check_solver(name, ..., solve=replay_planted(bug, name))``)."""
    from .conformance import library_solver

    if bug not in REPLAY_PLANTED or name not in REPLAY_PLANTED[bug][0]:
        pairs = [(s, b) for b, (solvers, _) in REPLAY_PLANTED.items() for s in solvers]
        raise ValueError(f"(name, bug) must be one of {pairs}; got ({name!r}, {bug!r})")
    return REPLAY_PLANTED[bug][1](library_solver(name))
