"""Audit targets for the library's private solvers: worst-case canaries on small problems.

Construction (auditing-methods notes §1.1–1.2; Nasr et al. 2021's "Dirac" canary):

* D holds base records with ‖x‖₂ ≤ 1 whose last coordinate is 0 (Nasr et al. 2021's "Dirac"
  canary, :func:`audits.neighbours.dirac_canary`) plus (replace-one) the mirror canary (−e_d, +Y);
  D′ holds (e_d, +Y) instead. Under add/remove (DP-SGD with Poisson sampling) D has no canary and
  D′ adds (e_d, +Y). The canary's feature has the maximal norm R = 1 along a coordinate no other
  record uses, and with the Huber loss (threshold h = 1) and Y = 10 its residual stays in the
  linear part, so its gradient is saturated (norm h·R = L) and opposite in D and D′: the per-step
  gradient difference is the full 2L (replace-one) — the worst case the calibrations assume.
* The distinguisher is the projection of the released model on the canary direction, w·e_d. With no
  regulariser, w_d after T steps of (noisy) gradient descent is −η Σₜ (g̃ₜ)_d, the sum of the
  white-box gradient-canary statistics of every step (Nasr et al. 2023, §4) — the final model already
  carries it, so no iterate access is needed.
* Every trial calls the solver's own public function with a fresh seed (from the trial ``rng``).
  No batching: the deterministic part of a gradient-perturbation solver depends on the noise drawn
  at earlier steps, so it cannot be shared between trials.

AdaSSP (Wang 2018, Alg. 2; :func:`algorithms.sufficient_statistics.adassp`) releases λ̃_min, XᵀX̂ and
Xᵀŷ (three composed Gaussians) and post-processes them into θ̂. Its target uses the squared loss, the
target bound Y = 10 (= the canary's label) and the same mirror pair: (±e_d)(±e_d)ᵀ is the same matrix,
so λ_min(XᵀX) and XᵀX are equal on D and D′, while Xᵀy moves by 2Y·e_d — its full replace-one
sensitivity 2X·Y. No single pair reaches all three sensitivities at once (the XᵀX bound √2X² needs
x ⟂ x′, the Xᵀy bound 2XY needs x′ = ±x), and θ̂ is linear only in Xᵀŷ, so the audit tests the Xᵀy
release at its worst case, with the budget split (0.01, 0.01, 0.98) that gives that release 0.99 of
the claim's μ (the default split gives it 0.69); the score is again θ̂·e_d, and the claim is the ε of
all three releases. The base records lie on the axes (:func:`canary_datasets`, ``base="axes"``, n = 3000):
θ̂ = (XᵀX̂ + λI)⁻¹Xᵀŷ divides by XᵀX̂ ≈ (n/d)·I, so θ̂·e_d is, up to a relative error σ·d/n, the canary
coordinate of the noisy Xᵀŷ — a Gaussian score. With the canary's column empty (the gradient solvers'
base) it divided by 1 + noise of std ≈ 10 instead, a heavy-tailed ratio: ε_lb 0.00 at 2 000 runs per side
and 0.22 (joint, 8 000) before, 0.6–0.9 now (benchmarks/RESULTS.md, "audit all").

The estimator follows the claim's event: a composition of un-sampled Gaussian releases
(:func:`dpcore.risk.exact_gdp_mu` is not None) is exactly μ-GDP, and so is every score computed from it, so
such targets are labelled ``noise_family="gaussian"`` (the Gaussian-DP estimator); anything sampled,
shuffled, truncated or profile-only stays ``"other"``. The solvers that default to the RDP accountant are
calibrated with ``accountant="auto"`` (:data:`_TIGHT`): under RDP their release is 8–24 % more private than
the claim, a gap no attack can show.

AdaSSP's ``variant="joint"`` (target ``adassp_joint``, what ``DPLinearRegression(solver="adassp")`` runs)
releases G = ZᵀZ, Z = [X, k·y] with k = X/Y, as one Gaussian. The same mirror pair maps to the rows
(±e_d, k·Y) = (±e_d, X): G moves only in its two (d, d+1) entries, each by 2X², so ‖ΔG‖_F = 2√2·X²,
the joint release's full replace-one sensitivity √2·B² with B² = 2X². The score is again θ̂·e_d.

A solver at ``epsilon=math.inf`` (noise off) separates D from D′ perfectly: the audit then reports
ε_lb at the Clopper–Pearson ceiling (≈ ln(trials/3.7)), which shows that the attack works.

Norm-stress targets (issue 21). A single-coordinate canary has ‖x‖_q = 1 for every q, so it cannot expose a
norm that underflows. The ``*_dense`` targets replay the issue's one-record attack on the ℓp solvers:
n = d = 20, logistic loss, p = 1.001 (q = 1001), D of all-zero rows, D′ with row 0 replaced by 0.4·𝟏 (‖·‖₂ =
1.79 ≤ data_norm_bound 2, but 0.4^1001 underflows), clip / truncation 10⁻³, one step, score = the sum of the
released weights (the canary pushes every coordinate the same way). ``dp_gd_tiny`` does the same for the ℓ2
clip of the linear solvers at extreme magnitudes: rows of entries 10⁻¹⁷⁰ (Σx² underflows), clip norm
10⁻²⁰⁰, the canary's label −1 in D and +1 in D′. The planted bugs ``norm-underflow`` and ``clip-skipped-at-zero-norm``
(:mod:`audits.planted_bugs`) must be caught on them.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from functools import partial
from typing import Dict, Optional, Tuple

import numpy as np

import dpcore
from dpcore._validation import check_choice, check_delta, check_positive, check_positive_int
from dpcore.events import PrivacyEvent
from dpcore.risk import exact_gdp_mu

from . import planted_bugs as pb
from .neighbours import dirac_canary
from .sensitivity import sensitivity_check
from .target import FunctionTarget

__all__ = ["SOLVER_NAMES", "SOLVER_SETTINGS", "COMMON_SETTINGS", "solver_target", "canary_datasets",
           "dense_canary_datasets", "tiny_canary_datasets", "early_stopped_witness", "NORM_STRESS_NAMES"]

_MODULES = {
    "dp_gd": "algorithms.dp_gd",
    "dp_sgd": "algorithms.dp_sgd",
    "dp_svrg": "algorithms.dp_svrg",
    "dp_svrg_pp": "algorithms.dp_svrg",
    "dp_accmd": "algorithms.dp_accmd",
    "output_perturbation_gd": "algorithms.output_perturbation",
    "objective_perturbation": "algorithms.objective_perturbation",
    "approximate_minima_perturbation": "algorithms.approximate_minima_perturbation",
    "approx_objective_perturbation": "algorithms.approx_objective_perturbation",
    "dp_srm": "algorithms.dp_srm",
    "rrpsgd": "algorithms.rrpsgd",
    "noisy_mirror_descent": "algorithms.noisy_mirror_descent",
    "phased_dp_sgd": "algorithms.phased_dp_sgd",
    "batched_truncated_mirror_descent": "algorithms.truncated_mirror_descent",
    "shuffled_truncated_mirror_descent": "algorithms.truncated_mirror_descent",
    "adassp": "algorithms.sufficient_statistics",
    "adassp_joint": "algorithms.sufficient_statistics",
    "noisy_mirror_descent_dense": "algorithms.noisy_mirror_descent",
    "batched_truncated_mirror_descent_dense": "algorithms.truncated_mirror_descent",
    "shuffled_truncated_mirror_descent_dense": "algorithms.truncated_mirror_descent",
    "dp_gd_tiny": "algorithms.dp_gd",
}
SOLVER_NAMES = tuple(_MODULES)
#: targets that run another name's function with extra settings (``SOLVER_SETTINGS``)
_FUNCTIONS = {"adassp_joint": "adassp", "noisy_mirror_descent_dense": "noisy_mirror_descent",
              "batched_truncated_mirror_descent_dense": "batched_truncated_mirror_descent",
              "shuffled_truncated_mirror_descent_dense": "shuffled_truncated_mirror_descent", "dp_gd_tiny": "dp_gd"}

_CANARY_LABEL = 10.0  # |Y|: keeps the canary's Huber residual in the linear (saturated) part
COMMON_SETTINGS = {"loss": "huber", "data_norm_bound": 1.0}
#: The solvers below default to the RDP accountant, whose ε for their event is 8–24 % above the exact one at a
#: claim of 1 (DP-GD's 20 Gaussian steps: PLD ε 0.915); calibrated that way the release is more private than its
#: claim and no attack can show the difference. ``accountant="auto"`` (dpcore's default: the tightest
#: certified bound) calibrates σ so that the claim is tight; the noise path the audit exercises is the same.
_TIGHT = {"accountant": "auto"}
# Small, fast configurations (the audit needs thousands of runs); see module docstring.
SOLVER_SETTINGS: Dict[str, dict] = {
    # tol=None: with epsilon=inf these first-order solvers run their own T-step schedule noise-free (their
    # default is to minimise the objective to a tolerance instead), the release the audit studies;
    # DP-SGD keeps the default (its noise-free schedule is still random through Poisson sampling)
    "dp_gd": {"steps": 20, "trace": False, "tol": None, **_TIGHT},
    "dp_sgd": {"batch_size": 10, "sampling_rate": 0.1, "steps": 20, "trace": False, **_TIGHT},  # public schedule
    "dp_svrg": {"alpha": 0.1, "epochs": 3, "batch_size": 10, "trace": False, "tol": None, **_TIGHT},
    "dp_svrg_pp": {"epochs": 3, "batch_size": 10, "trace": False, "tol": None, **_TIGHT},
    "dp_accmd": {"constraint": "l2", "radius": 5.0, "steps": 20, "trace": False, "tol": None, **_TIGHT},
    # the default method="minimizer" (Chaudhuri et al. 2011): Δ = 2L/(nα) + 2γ/α, which the saturated canary
    # reaches (α·w_d = ±L/n at the minimiser). method="gd" is calibrated to Zhang et al.'s Lemma 3,
    # Δ = 5L(α + β)/(nαβ) ≥ 2.5·2L/(nα), while its iterates converge to that same minimiser: no canary gets
    # beyond ~40 % of its Δ (measured: ε_lb 0.21 at 10⁴ runs per side), so the row audits the tight path.
    "output_perturbation_gd": {"alpha": 0.1},
    "objective_perturbation": {"alpha": 0.1},
    "approximate_minima_perturbation": {"alpha": 0.1},
    "approx_objective_perturbation": {"alpha": 0.1},
    # Su–Zhao–Wang l_p solvers (Phased DP-SGD is Euclidean; the others need 1 < p < 2)
    "noisy_mirror_descent": {"p": 1.5, "steps": 10, "trace": False},
    "phased_dp_sgd": {"p": 2.0, "trace": False},
    "batched_truncated_mirror_descent": {"p": 1.5, "steps": 5, "constraint": "l1", "radius": 5.0, "trace": False},
    "shuffled_truncated_mirror_descent": {"p": 1.5, "steps": 20, "constraint": "l1", "radius": 5.0, "trace": False},
    # wang-jayaraman-evans-gu Alg. 1 with the benchmark defaults' clips (C₂ = C₁/50, γ = 1/2; the Huber loss is a
    # regression loss, so C₁ = G — the 0.85·G default of classification losses is not exercised here), last iterate
    "dp_srm": {"batch_size": 50, "steps": 20, "output": "last", "trace": False, **_TIGHT},
    # T_max = 1: with a random R the noise-off scores spread and the threshold selection stays below the
    # Clopper–Pearson ceiling; R ≤ T_max is post-processing of T_max accounted releases anyway
    "rrpsgd": {"batch_size": 50, "max_rounds": 1, "trace": False, **_TIGHT},
    # AdaSSP fits the squared loss on labels |y| ≤ Y; Y = the canary's label (module docstring). The canary moves
    # only Xᵀy, so the budget goes there: (0.01, 0.01, 0.98) instead of the default (0.05, 0.475, 0.475) puts
    # μ_Xᵀy at 0.99·μ instead of 0.69·μ; the claim (all three releases) is the same
    "adassp": {"loss": "squared", "target_bound": _CANARY_LABEL, "budget_split": (0.01, 0.01, 0.98)},
    # the joint variant DPLinearRegression(solver="adassp") runs (module docstring)
    "adassp_joint": {"loss": "squared", "target_bound": _CANARY_LABEL, "variant": "joint"},
    # issue 21's one-record attack (module docstring, "Norm-stress targets")
    "noisy_mirror_descent_dense": {"loss": "logistic", "data_norm_bound": 2.0, "p": 1.001, "steps": 1,
                                   "noise": "generalized_gaussian", "clip_norm": 1e-3, "trace": False},
    "batched_truncated_mirror_descent_dense": {"loss": "logistic", "data_norm_bound": 2.0, "p": 1.001, "steps": 1,
                                               "truncation": 1e-3, "radius": 5.0, "trace": False},
    "shuffled_truncated_mirror_descent_dense": {"loss": "logistic", "data_norm_bound": 2.0, "p": 1.001, "steps": 1,
                                                "truncation": 1e-3, "radius": 5.0, "trace": False},
    "dp_gd_tiny": {"loss": "logistic", "data_norm_bound": 1.0, "steps": 1, "clip_norm": 1e-200, "trace": False,
                   "tol": None},
}
#: Solvers whose guarantee exists only for small ε (Su–Zhao–Wang Theorem 9: ε = O(√(log(n/δ)/n))) are
#: audited at min(ε, cap) on a larger canary problem (n, d) instead of the defaults.
_EPSILON_CAP = {"shuffled_truncated_mirror_descent": 0.05,
                # n = 20 local reports with ε₀ ≤ 1 reach at most ε ≈ 0.9996 at δ = 1e-5 after shuffling
                "shuffled_truncated_mirror_descent_dense": 0.99}
# dp_srm / rrpsgd: full batches on n = 50, so that every release (and every random round R ≥ 1) sees the canary
_PROBLEM_SIZE = {"shuffled_truncated_mirror_descent": (2000, 3), "dp_srm": (50, 3), "rrpsgd": (50, 3),
                 "adassp": (3000, 3), "adassp_joint": (3000, 3)}
#: AdaSSP's base records lie on the axes (:func:`canary_datasets`, ``base="axes"``): a Gaussian score
_AXES_BASE = ("adassp", "adassp_joint")
# solvers taking noise_multiplier: calibrated once, the trials reuse it
_NOISE_MULTIPLIER = ("dp_gd", "dp_sgd", "dp_svrg", "dp_svrg_pp", "dp_accmd", "dp_srm", "rrpsgd", "adassp",
                     "adassp_joint", "dp_gd_tiny")
_ADD_REMOVE = ("dp_sgd",)  # Poisson sampling is analysed under add/remove

#: Planted solver bugs that wrap the solver's own run (the claim stays the correct solver's).
_BUGGY_RUNS = {"half-noise": pb.half_noise_solver_run, "adassp-unit-target-bound": pb.unit_target_bound_adassp_run,
               "adassp-joint-unit-target-bound": pb.unit_target_bound_joint_adassp_run,
               "norm-underflow": pb.underflowing_dual_norms_run,
               "clip-skipped-at-zero-norm": pb.unscaled_row_norms_run}

# early-stopped output perturbation (planted): logistic loss, λ = 1, stop at ‖∇F‖ ≤ 0.25
_ES_ALPHA, _ES_TOL, _ES_N, _ES_D = 1.0, 0.25, 50, 3


def _solver(name: str):
    return getattr(importlib.import_module(_MODULES[name]), _FUNCTIONS.get(name, name))


def canary_datasets(n: int, d: int, relation: str, seed: int = 0,
                    base: str = "isolated") -> Tuple[Tuple[np.ndarray, np.ndarray], ...]:
    """(D, D′) with a Dirac canary on coordinate d − 1 (module docstring).

    Base records: n − 1 (add/remove) or n (replace-one, row 0 is replaced) regression records with
    ‖x‖ ≤ 1 and labels in [−1, 1]; the canary is :func:`audits.neighbours.dirac_canary` with label
    +Y. Under replace-one D holds its mirror (−e_d, +Y): both gradients are saturated, of opposite
    directions along e_d.

    Parameters
    ----------
    n : int
        Size of D′ (≥ 3).
    d : int
        Dimension (≥ 2); the last coordinate is the canary's.
    relation : {"replace_one", "add_remove"}
    seed : int
        Seed of the base records.
    base : {"isolated", "axes"}
        ``"isolated"``: Gaussian directions with the canary's column zeroed (the gradient solvers: only
        the canary moves coordinate d − 1). ``"axes"``: record i is ±e_{i mod d} (AdaSSP: XᵀX is
        diagonal with ≈ n/d on every coordinate, the canary's included, so the noisy XᵀX̂ + λI that θ̂
        divides by is ≈ (n/d)·I up to a relative error of σ·d/n and θ̂_{d−1} is, to that order, linear
        in the noisy Xᵀŷ the canary moves — a Gaussian score. With the canary's column empty, XᵀX̂'s
        (d−1, d−1) entry is 1 + noise of std ≫ 1 and θ̂_{d−1} a heavy-tailed ratio).

    Returns
    -------
    ((X, y), (X′, y′))
    """
    n = check_positive_int("n", n, minimum=3)
    d = check_positive_int("d", d, minimum=2)
    base = check_choice("base", base, ("isolated", "axes"))
    rng = np.random.default_rng(seed)
    m = n - 1 if relation == "add_remove" else n
    if base == "axes":
        X = np.zeros((m, d))
        X[np.arange(m), np.arange(m) % d] = rng.choice((-1.0, 1.0), size=m)
        y = rng.uniform(-1.0, 1.0, size=m)
    else:
        X = rng.normal(size=(m, d))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.clip(X[:, :-1] @ rng.normal(size=d - 1) + 0.1 * rng.normal(size=m), -1.0, 1.0)
    pair = dirac_canary(X, y, relation=relation, radius=1.0, coordinate=d - 1, label=_CANARY_LABEL,
                        isolate=base == "isolated")
    return pair.D, pair.D_prime


def dense_canary_datasets(n: int = 20, d: int = 20, value: float = 0.4) -> Tuple[Tuple[np.ndarray, np.ndarray], ...]:
    """(D, D′) of issue 21's attack: D has n all-zero rows (labels +1), D′ replaces row 0 by ``value``·𝟏.

    Parameters
    ----------
    n, d : int
        Records and dimension (≥ 2).
    value : float
        The canary's entries (feature units); 0.4 underflows to 0 when raised to the power q = 1001.
    """
    X = np.zeros((check_positive_int("n", n, minimum=2), check_positive_int("d", d, minimum=2)))
    y = np.ones(n)
    X1 = X.copy()
    X1[0] = value
    return (X, y), (X1, y.copy())


def tiny_canary_datasets(n: int = 20, d: int = 5, scale: float = 1e-170) -> Tuple[Tuple[np.ndarray, np.ndarray], ...]:
    """(D, D′) with every row ``scale``·𝟏, labels +1 but the canary's, which is −1 in D and +1 in D′ (so D′ pushes the
    weights up: the larger score): Σx² of a row underflows for ``scale`` below ~1e-162, while its true norm
    ``scale``·√d does not."""
    X = np.full((check_positive_int("n", n, minimum=2), check_positive_int("d", d, minimum=2)), scale)
    y1 = np.ones(n)
    y = y1.copy()
    y[0] = -1.0
    return (X, y), (X.copy(), y1)


#: Norm-stress targets: their datasets and the score (the sum of the released weights).
_STRESS_DATASETS = {"noisy_mirror_descent_dense": dense_canary_datasets,
                    "batched_truncated_mirror_descent_dense": dense_canary_datasets,
                    "shuffled_truncated_mirror_descent_dense": dense_canary_datasets,
                    "dp_gd_tiny": tiny_canary_datasets}
#: The norm-stress targets (issue 21): targeted attacks whose correct outcome is ε_lb = 0; the planted
#: ``norm-underflow`` / ``clip-skipped-at-zero-norm`` variants show their power.
NORM_STRESS_NAMES = tuple(_STRESS_DATASETS)


@dataclass(frozen=True)
class _SolverRuns:
    """Picklable sampler: ``n`` runs of a solver on D or D′, scored by w·e_d (``score="last"``) or Σⱼwⱼ
    (``score="sum"``, the norm-stress targets, whose canary moves every coordinate)."""

    name: str
    kwargs: Tuple[Tuple[str, object], ...]
    datasets: Tuple[Tuple[np.ndarray, np.ndarray], ...]
    bug: Optional[str] = None  # planted bug of :data:`_BUGGY_RUNS` (None: the correct solver)
    score: str = "last"

    def __call__(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        solve = _solver(self.name)
        if self.bug is not None:
            solve = partial(_BUGGY_RUNS[self.bug], solve)
        X, y = self.datasets[which]
        kwargs = dict(self.kwargs)
        seeds = rng.integers(0, 2**63 - 1, size=n)
        if self.score == "sum":
            return np.array([solve(X, y, rng=int(s), **kwargs).weights.sum() for s in seeds], dtype=np.float64)
        return np.array([solve(X, y, rng=int(s), **kwargs).weights[-1] for s in seeds], dtype=np.float64)


def _calibrated(name: str, kwargs: dict, dataset) -> Tuple[float, dict, PrivacyEvent]:
    """The ε the solver itself reports (dpcore, from its privacy event), the trial keywords and that event.

    Gradient-perturbation solvers (and AdaSSP) calibrate σ with the accountant on every call; the calibration is
    data-independent, so the trials reuse the σ/Δ of this first call (``noise_multiplier``) — the
    same releases, without re-running the accountant thousands of times. A solver given ``noise_multiplier`` still
    reports the ε it spent, with its ``accountant``: the trials replace a :data:`_TIGHT` accountant by the cheap
    ``"rdp"`` (``"auto"`` runs the PLD on every call; the reported ε of a trial is not used).
    """
    result = _solver(name)(*dataset, rng=0, **kwargs)
    if name in _NOISE_MULTIPLIER and math.isfinite(kwargs["epsilon"]):
        kwargs = dict(kwargs, epsilon=None, noise_multiplier=float(result.noise_multiplier))
        if kwargs.get("accountant") == _TIGHT["accountant"]:
            kwargs["accountant"] = "rdp"  # cheap; "auto" (dp_srm's default too) runs the PLD on every call
    return float(result.privacy.epsilon), kwargs, result.event


def solver_target(
    name: str,
    epsilon: float,
    delta: float,
    *,
    planted: Optional[str] = None,
    n: int = 100,
    d: int = 3,
) -> FunctionTarget:
    """Audit target for the library solver ``name`` at (``epsilon``, ``delta``).

    Parameters
    ----------
    name : str
        One of :data:`SOLVER_NAMES`.
    epsilon : float
        Target ε in (0, ∞] (nats); ``math.inf`` runs the solver without noise (claim ∞), the check
        that the attack itself works.
    delta : float
        δ in (0, 1).
    planted : str, optional
        A solver bug of the catalogue: ``"early-stopped-output-perturbation"`` (with
        ``name="output_perturbation_gd"``; then ``n``, ``d`` are fixed by the bug's construction),
        ``"half-noise"`` (with ``name="dp_gd"``: the calibrated noise multiplier halved, the
        claim kept), or ``"adassp-unit-target-bound"`` (with ``name="adassp"``: the Xᵀy noise
        calibrated for |y| ≤ 1, the claim kept), or ``"adassp-joint-unit-target-bound"`` (with
        ``name="adassp_joint"``: the label column scaled for |y| ≤ 1, the claim kept), or
        ``"norm-underflow"`` (with a ``*_dense`` ℓp target: dual norms computed without scaling), or
        ``"clip-skipped-at-zero-norm"`` (with ``name="dp_gd_tiny"``: row norms computed without
        scaling); finite ``epsilon`` only.
    n, d : int
        Dataset size (records) and dimension of the canary problem (the norm-stress targets fix theirs).

    Returns
    -------
    FunctionTarget
        Picklable; one solver call per trial.
    """
    name = check_choice("name", name, SOLVER_NAMES)
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_delta("delta", delta)
    bug = None if planted is None else pb.CATALOGUE.get(planted)
    if planted is not None:
        pairs = [(v.base, k) for k, v in pb.CATALOGUE.items() if v.kind == "solver"]
        pairs += [(s, k) for k, v in pb.CATALOGUE.items() for s in v.solvers]
        if (name, planted) not in pairs or not math.isfinite(epsilon):
            raise ValueError(f"planted must be one of the solver bugs {tuple(pairs)} (solver, bug) with a finite "
                             f"epsilon; got ({name!r}, {planted!r}) at epsilon={epsilon}")
        if planted == "early-stopped-output-perturbation":
            return _early_stopped_target(epsilon, delta)
    relation = "add_remove" if name in _ADD_REMOVE else "replace_one"
    n, d = _PROBLEM_SIZE.get(name, (n, d))
    if math.isfinite(epsilon):  # epsilon = inf stays the noise-free run (no regime to respect)
        epsilon = min(epsilon, _EPSILON_CAP.get(name, math.inf))
    stress = name in _STRESS_DATASETS
    datasets = (_STRESS_DATASETS[name]() if stress else
                canary_datasets(n, d, relation, base="axes" if name in _AXES_BASE else "isolated"))
    settings = dict({} if stress else COMMON_SETTINGS, **SOLVER_SETTINGS[name], epsilon=epsilon, delta=delta)
    claim, kwargs, event = _calibrated(name, settings, datasets[1])
    # GDP estimator only where the event is a composition of un-sampled Gaussians: its trade-off curve is then
    # exactly G_μ (Dong, Roth, Su 2022, Cor. 3.3) and every score, a post-processing, obeys it
    gaussian = math.isfinite(epsilon) and exact_gdp_mu(event) is not None
    family = "gaussian" if gaussian else "other"
    runs = _SolverRuns(name, tuple(kwargs.items()), datasets, bug=planted, score="sum" if stress else "last")
    label = name if planted is None else f"{name}[{planted}]"
    statistic = ("sum of the released weights (the dense / tiny canary moves every coordinate)" if stress
                 else "projection of the released model on the Dirac canary direction")
    return FunctionTarget(label, claim, delta, runs, relation, family, statistic)


# ------------------------------------------------------------ planted: early-stopped output perturbation
def _es_gd(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return pb.early_stopped_gd(X, y, alpha=_ES_ALPHA, tol=_ES_TOL)


def _es_declared(n: int) -> float:
    return pb.exact_minimiser_sensitivity(1.0, n, _ES_ALPHA)


def _es_base(rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    """n = 50 records in ℝ³ with ‖x‖ ≤ 1, labels of a noisy linear classifier."""
    X = rng.normal(size=(_ES_N, _ES_D))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=_ES_N) >= 0, 1.0, -1.0)
    return X, y


def early_stopped_witness(seed: int = 0, restarts: int = 20):
    """Sensitivity check of the early-stopped solver's deterministic part, restarted over base datasets.

    Each restart draws a base dataset (:func:`_es_base`) and runs the structured neighbour search
    (5 boundary pairs per record); the search stops at the first violation. The stopping time of
    :func:`audits.planted_bugs.early_stopped_gd` jumps when one record moves ‖∇F(w_t)‖ across the
    tolerance, which only some base datasets allow — hence the restarts over D itself (auditing
    notes §4: "optimising the base dataset D as well").

    Parameters
    ----------
    seed : int
        Seed of the base datasets.
    restarts : int
        Maximum number of base datasets tried.

    Returns
    -------
    SensitivityReport
        The largest ratio found; its witness pair is the pair the planted-bug target audits.
    """
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(check_positive_int("restarts", restarts)):
        report = sensitivity_check(_es_gd, _es_base(rng), _es_declared, relation="replace_one", search="structured",
                                   budget=5 * _ES_N, rng=rng, radius=1.0, min_size=_ES_N)
        if best is None or report.ratio > best.ratio:
            best = report
        if best.verdict == "violated":
            break
    return best


def _es_sampler(epsilon: float, delta: float, datasets, direction: np.ndarray, which: int, n: int,
                rng: np.random.Generator) -> np.ndarray:
    X, y = datasets[which]
    out, _ = pb.early_stopped_output_perturbation(X, y, epsilon=epsilon, delta=delta, alpha=_ES_ALPHA, tol=_ES_TOL,
                                                  size=n, rng=rng)
    return out @ direction


def _early_stopped_target(epsilon: float, delta: float) -> FunctionTarget:
    report = early_stopped_witness()
    datasets = report.witness
    diff = _es_gd(*datasets[1]) - _es_gd(*datasets[0])
    direction = diff / max(float(np.linalg.norm(diff)), 1e-300)
    _, mech = pb.early_stopped_output_perturbation(*datasets[0], epsilon=epsilon, delta=delta, alpha=_ES_ALPHA,
                                                   tol=_ES_TOL, size=0, rng=np.random.default_rng(0))
    claim = float(dpcore.get_epsilon(mech.privacy_event("replace_one"), delta, accountant="auto").epsilon)
    return FunctionTarget("output_perturbation_gd[early-stopped-output-perturbation]", claim, delta,
                          partial(_es_sampler, epsilon, delta, datasets, direction), "replace_one", "gaussian",
                          "projection on w(D') - w(D) of the sensitivity check's witness pair")
