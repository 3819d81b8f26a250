"""Sensitivity conformance of what runs: replay each release on neighbouring datasets.

A solver's privacy claim rests on one number per release — the sensitivity Δ its noise was calibrated for
(the event's noise multiplier is σ/Δ). This harness measures what the code *actually releases* on a pair of
neighbouring datasets D, D′ and compares the change with that Δ (issue 21):

**Coupled replay** (the gradient solvers, output perturbation, AdaSSP, the network). The solver runs on D
and on D′ from the same seed, so every data-independent draw — batch, permutation, noise — coincides; one
step from a chosen start point ``w0`` (unconstrained, no regulariser) makes the released point the same
too. The release is recovered from the output by inverting the deterministic update — ``w₁ = w₀ − s·(q + N)``
for gradient descent, the mirror map ``θ = ∇Φ(w₁)`` for mirror descent (Su, Zhao, Wang, Algorithms 3, 4, 7)
— and the noise N cancels in the difference: what remains is q(D) − q(D′), the change of the query that
ran, measured in the norm the event's sensitivity is stated in (ℓ2, or the dual ℓq of the ℓp solvers).
Under ``add_remove`` (DP-SGD with Poisson sampling at rate 1) the smaller dataset's generator starts one
draw ahead, so the noise draws still coincide (the batch sampler draws one geometric skip per record).

**Query kernels** (later releases whose query point differs between two runs: DP-SRM's momentum
differences, the network's clip at arbitrary weights): the solver's own public query function is
evaluated on D and D′ at the same point.

**Record bounds** (objective perturbation, AMP, App-ObjP: no query is released; lecture14 Thm 14.3 needs
every per-record gradient ≤ L and curvature ≤ β): the harness's sup|ℓ′|·‖x‖₂ and sup ℓ″·‖x‖₂² of the
differing records against the solver's L and β.

Every norm is computed by :mod:`audits.exact_norms` (mpmath from the exact float values; nothing shared
with the solvers' norm code); the float rounding of the recovery is bounded per coordinate and subtracted,
so a check reads ``"violated"`` only when the change exceeds Δ by more than rounding can explain. Each
report also checks that the privacy event was built with the declared Δ and the noise that ran (σ = z·Δ;
for the generalized Gaussian, the event is Lemma 3's for σ and Δ). Like :func:`audits.sensitivity_check`
this only falsifies: pairs that pass are no proof.

Public API: :func:`check_solver`, :data:`SOLVERS`, :data:`COVERAGE` (what each replay checks and what it
does not), :class:`~audits.replay.ReleaseCheck`, :class:`~audits.replay.ConformanceReport`.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Optional

from dpcore._validation import check_choice, check_positive_int

from .replay import RTOL, ConformanceReport, Dataset, ReleaseCheck, pair
from .replay_gradient import ADAPTERS as _GRADIENT
from .replay_release import ADAPTERS as _RELEASE

__all__ = ["ReleaseCheck", "ConformanceReport", "check_solver", "SOLVERS", "COVERAGE", "RTOL"]

_ADAPTERS: Dict[str, Callable] = {**_GRADIENT, **_RELEASE}

#: Every solver function and estimator the harness replays (the 15 seed systems, AdaSSP's two variants,
#: ``DPMLPClassifier``).
SOLVERS = tuple(_ADAPTERS)

_LIBRARY = {
    "dp_gd": ("algorithms.dp_gd", "dp_gd"), "dp_sgd": ("algorithms.dp_sgd", "dp_sgd"),
    "dp_svrg": ("algorithms.dp_svrg", "dp_svrg"), "dp_svrg_pp": ("algorithms.dp_svrg", "dp_svrg_pp"),
    "dp_accmd": ("algorithms.dp_accmd", "dp_accmd"), "dp_srm": ("algorithms.dp_srm", "dp_srm"),
    "rrpsgd": ("algorithms.rrpsgd", "rrpsgd"),
    "noisy_mirror_descent": ("algorithms.noisy_mirror_descent", "noisy_mirror_descent"),
    "phased_dp_sgd": ("algorithms.phased_dp_sgd", "phased_dp_sgd"),
    "batched_truncated_mirror_descent": ("algorithms.truncated_mirror_descent", "batched_truncated_mirror_descent"),
    "shuffled_truncated_mirror_descent": ("algorithms.truncated_mirror_descent", "shuffled_truncated_mirror_descent"),
    "output_perturbation_gd": ("algorithms.output_perturbation", "output_perturbation_gd"),
    "objective_perturbation": ("algorithms.objective_perturbation", "objective_perturbation"),
    "approximate_minima_perturbation": ("algorithms.approximate_minima_perturbation",
                                        "approximate_minima_perturbation"),
    "approx_objective_perturbation": ("algorithms.approx_objective_perturbation", "approx_objective_perturbation"),
    "adassp": ("algorithms.sufficient_statistics", "adassp"),
    "adassp_joint": ("algorithms.sufficient_statistics", "adassp"),
    "DPMLPClassifier": ("algorithms.mlp", "DPMLPClassifier"),
}

#: What each replay checks, and what it does not (the adapters' docstrings, collected).
COVERAGE: Dict[str, str] = {name: " ".join((fn.__doc__ or "").split()) for name, fn in _ADAPTERS.items()}


def library_solver(name: str) -> Callable:
    """The library's solver function (or estimator class) that :func:`check_solver` replays for ``name``."""
    module, attr = _LIBRARY[check_choice("name", name, SOLVERS)]
    return getattr(importlib.import_module(module), attr)


def check_solver(name: str, D: Dataset, D_prime: Dataset, *, seed: int = 0, solve: Optional[Callable] = None,
                 **settings: Any) -> ConformanceReport:
    """Replay ``name``'s releases on the neighbours ``D``, ``D_prime`` and compare each change with its Δ.

    Parameters
    ----------
    name : str
        One of :data:`SOLVERS`.
    D, D_prime : (X, y)
        Neighbouring datasets: the same size with exactly one record (features and/or label) replaced
        (``replace_one``), or ``D_prime`` = ``D`` plus one record appended last (``add_remove``: DP-SGD with
        Poisson sampling, AdaSSP). Real, finite arrays (complex, string or object data is refused, never
        cast); features in feature units, labels as the solver takes them. Identical datasets, several
        changed records or any other size difference are refused: a change above Δ on such a pair would be
        a false alarm.
    seed : int
        Seed ≥ 0 shared by both runs (it couples their noise).
    solve : callable, optional
        A replacement with the library solver's signature (a planted variant, :mod:`audits.planted_bugs`);
        default :func:`library_solver`.
    **settings
        Solver keywords overriding the harness's one-step configuration (``clip_norm``, ``p``, ``loss``,
        ``w0``, ``truncation``, ``noise``, ...; ``query_point`` for DP-SRM's later query, ``theta`` /
        ``theta_prev`` for the network's kernels). Settings that change the update being inverted (a
        regulariser, a binding constraint, several steps) make the recovery meaningless.

    Returns
    -------
    ConformanceReport
        ``verdict`` ``"violated"`` when a release moved by more than its Δ (beyond rounding) or the event
        does not match the declared Δ and the noise that ran; ``"conforms"`` otherwise — never a proof.

    Raises
    ------
    ValueError
        Bad arguments (naming ``D`` / ``D_prime``: not real, not finite, wrong shapes, not neighbours), a
        pair of the wrong relation for the solver, or the solver refusing the data.
    """
    name = check_choice("name", name, SOLVERS)
    seed = check_positive_int("seed", seed, minimum=0)
    A, B, relation = pair(D, D_prime)
    solve = library_solver(name) if solve is None else solve
    checks, issues = _ADAPTERS[name](name, solve, A, B, relation, seed, dict(settings))
    return ConformanceReport(name, tuple(checks), tuple(issues))
