"""Phased DP-SGD (Feldman, Koren, Talwar 2020) as used by Su, Zhao, Wang — Algorithm 6, Lemma 14
("modification of FKT Theorem 4.4"), Theorems 8 and 15.

k = ⌈log₂ n⌉ phases on disjoint parts S_i of sizes n_i = ⌊2⁻ⁱn⌋ (consecutive blocks of a random
permutation). Phase i starts at w_{i−1}, runs one pass of projected SGD with step η_i = 4⁻ⁱη,

    w ← Proj_C(prox_{η_i r}(w − η_i·clip_C(∇ℓ(w; x))))    (r = (alpha/2)‖w‖², C = ℝᵈ in the paper),

averages its n_i + 1 iterates into w̄_i and releases w_i = w̄_i + N(0, σ_i² I). Output Proj_C(w_k).

Privacy (replace-one; FKT Thm 4.4). For a β-smooth convex loss and η_i ≤ 1/(β + alpha) the SGD map
is non-expansive, so replacing one record of S_i moves w̄_i by at most 2Cη_i in ℓ2 (C: the ℓ2 clip
norm; clipping a GLM gradient ℓ'(⟨w, x⟩)x at C is the gradient of a convex, β-smooth Huberised loss,
so non-expansiveness survives it). Each record is in one phase and later phases are
post-processing, so the whole run is as private as one Gaussian release with noise multiplier
z = σ_i/(2Cη_i) (the same in every phase): ``GaussianEvent(z, "replace_one")``, reported by dpcore.

* ``calibration="accountant"`` (default): the least z with ε ≤ target (dpcore, analytic Gaussian);
* ``calibration="paper"``: σ_i = 4Lη_i√(log(1/δ))/ε (L = C), i.e. z = 2√(log(1/δ))/ε.

η (Lemma 14): η = (1/L)·min{4/√n, ε/(2√(d log(1/δ)))} (4/(L√n) when ε = inf); the condition
η ≤ 1/β (here 1/(β + alpha)) is checked and a ``ValueError`` raised when it fails.

Geometry. The algorithm is Euclidean; ``p`` ∈ (1, ∞] only selects the theorem: 2 ≤ p ≤ ∞ is
Theorem 8 (the ℓp → ℓ2 reduction, ‖θ‖₂ ≤ d^{1/2 − 1/p}‖θ‖_p, ‖g‖₂ ≤ ‖g‖_q), 1 < p < 2 is
Theorem 15. The privacy guarantee does not depend on p (it uses the ℓ2 clip norm). Note that
Theorem 15's proof uses ‖g‖₂ ≤ ‖g‖_q, which fails for q > 2; the utility bound for 1 < p < 2 is
therefore only as good as the ℓ2 Lipschitz constant C that is actually used.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional

import numpy as np

import dpcore
from dpcore._jit import jit
from dpcore._validation import check_choice, check_positive
from dpcore.events import GaussianEvent, NonPrivateEvent
from mechanisms.kernels import gaussian_noise_kernel

from ._solver_common import as_generator, check_relation_replace_one, finish, setup
from .clipping import clipped_batch_gradient_sum_kernel
from .constraints import project_kernel
from ._mirror_common import event_epsilon
from .mirror_maps import check_primal_p
from .regularizers import prox_gradient_step_kernel
from .result import SolverResult

__all__ = ["phased_dp_sgd", "phased_dp_sgd_kernel", "phase_sizes", "lemma14_step", "least_noise_multiplier"]


def phase_sizes(n: int) -> np.ndarray:
    """n_i = ⌊2⁻ⁱn⌋ for i = 1, …, k = ⌈log₂ n⌉ (Algorithm 6 line 2)."""
    k = max(1, math.ceil(math.log2(n)))
    return np.array([n >> i for i in range(1, k + 1)], dtype=np.int64)


def lemma14_step(lipschitz: float, n: int, d: int, epsilon: float, delta: float) -> float:
    """η = (1/L)·min{4/√n, ε/(2√(d log(1/δ)))} (Lemma 14); 4/(L√n) for ε = inf."""
    base = 4.0 / math.sqrt(n)
    if not math.isinf(epsilon):
        base = min(base, epsilon / (2.0 * math.sqrt(d * math.log(1.0 / delta))))
    return base / lipschitz


@jit
def phased_dp_sgd_kernel(kind, param, X, y, row_norms, perm, sizes, eta, clip, alpha, ckind, cradius, z, rng):
    """Run Algorithm 6. Returns (w_k, phase outputs, releases, gradient evaluations, clipped count).
    Phase i uses perm[start_i : start_i + n_i]; the noise σ_i = z·2Cη_i."""
    d = X.shape[1]
    k = sizes.shape[0]
    w = np.zeros(d)
    project_kernel(ckind, cradius, w)
    g = np.empty(d)
    idx = np.empty(1, np.int64)
    outs = np.empty((k + 1, d))
    outs[0] = w
    start = 0
    releases = 0
    evals = 0
    clipped = 0
    for i in range(k):
        eta_i = eta * 4.0 ** (-(i + 1))
        avg = w.copy()
        for t in range(sizes[i]):
            idx[0] = perm[start + t]
            clipped += clipped_batch_gradient_sum_kernel(kind, param, X, y, row_norms, w, idx, 1, clip, g)
            prox_gradient_step_kernel(w, g, eta_i, eta_i, alpha, 0.0, ckind, cradius)
            avg += w
        evals += sizes[i]
        start += sizes[i]
        for j in range(d):
            w[j] = avg[j] / (sizes[i] + 1)
        if z > 0.0:
            w += gaussian_noise_kernel(rng, d, z * 2.0 * clip * eta_i)
        releases += 1
        project_kernel(ckind, cradius, w)  # post-processing
        outs[i + 1] = w
    return w, outs, releases, evals, clipped


@lru_cache(maxsize=256)
def least_noise_multiplier(epsilon: float, delta: float, accountant: str) -> float:
    """Least z with ``GaussianEvent(z, "replace_one")`` (ε, δ)-DP by dpcore (safe side); memoised."""
    return float(dpcore.calibrate(lambda v: GaussianEvent(v, "replace_one"), "noise_multiplier", epsilon, delta,
                                  lower=0.5, upper=4.0, increasing=False, accountant=accountant).value)


def phased_dp_sgd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    p: float = 2.0,
    loss: str = "logistic",
    epsilon: float,
    delta: float = 1e-5,
    alpha: float = 0.0,
    learning_rate: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    relation: str = "replace_one",
    calibration: str = "accountant",
    accountant: str = "analytic_gaussian",
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Phased DP-SGD (Su, Zhao, Wang, Algorithm 6 = Feldman, Koren, Talwar 2020; Lemma 14, Theorems 8, 15).

    Parameters
    ----------
    X, y : array_like
        Data and labels.
    p : float
        ℓp geometry of the problem, in (1, ∞] (``math.inf`` for ℓ∞): Theorem 8 for p ≥ 2, Theorem 15
        for 1 < p < 2. The algorithm itself is Euclidean.
    loss : str
    epsilon : float
        Target ε in (0, ∞]; ``inf`` switches the noise off.
    delta : float
        Target δ in (0, 1).
    alpha : float
        L2 strength (alpha/2)‖w‖² (applied by its exact prox in every step).
    learning_rate : float, optional
        η (phase i uses 4⁻ⁱη); default Lemma 14's. Must satisfy η ≤ 1/(β + alpha).
    clip_norm, data_norm_bound : float, optional
        Per-example ℓ2 clip C (the paper's L) or the public row-norm bound it is derived from;
        ``data_norm_bound`` is also required for β.
    constraint, radius :
        A set of :mod:`algorithms.constraints` (projected SGD as in FKT); ``"none"`` is the paper's.
    relation : {"replace_one"}
        The phase sizes use the public n.
    calibration : {"accountant", "paper"}
    accountant : str
        dpcore accountant for the single Gaussian release.
    rng, trace, loss_params :
        As in the other solvers.

    Returns
    -------
    SolverResult
        ``sigma`` is σ₁ of the first phase (σ_i = 4^{1−i}σ₁); ``details["phase_sizes"]``.
    """
    p = check_primal_p(p, low=1.0, high=math.inf, high_open=False, where="phased_dp_sgd (Theorems 8 and 15)")
    check_choice("calibration", calibration, ("accountant", "paper"))
    check_relation_replace_one(relation, "the phase sizes n_i = floor(n/2^i) use the dataset size n")
    s = setup(X, y, loss=loss, alpha=alpha, l1=0.0, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=None,
              loss_params=loss_params, layouts=True)
    n, d = s.data.n, s.data.d
    if s.smoothness is None:
        raise ValueError("data_norm_bound is required: Lemma 14's condition eta <= 1/beta needs the smoothness beta")
    limit = 1.0 / (s.smoothness + s.reg.alpha)
    if learning_rate is None:
        eta = lemma14_step(s.clip, n, d, epsilon, delta)
        if not (eta > 0.0 and math.isfinite(eta)):  # ε or δ so extreme that ε/(2√(d log(1/δ))) under/overflows
            raise ValueError(f"epsilon={epsilon!r}, delta={delta!r} give Lemma 14's default step {eta!r}, outside "
                             "(0, inf) in float64; give learning_rate or use a moderate epsilon / delta")
    else:
        eta = check_positive("learning_rate", learning_rate)
    if eta > limit:
        raise ValueError(
            f"learning_rate eta={eta:.6g} violates Lemma 14's condition eta <= 1/(beta + alpha) = {limit:.6g} "
            "(the stability-based sensitivity needs non-expansive steps); use a larger n or a smaller learning_rate")
    sizes = phase_sizes(n)
    if math.isinf(epsilon):
        z, event = 0.0, NonPrivateEvent("replace_one")
    else:
        if calibration == "paper":
            z = 2.0 * math.sqrt(math.log(1.0 / delta)) / epsilon
        else:
            z = least_noise_multiplier(epsilon, delta, accountant)
        event = GaussianEvent(z, "replace_one")
    privacy = event_epsilon(event, delta, accountant)
    gen = as_generator(rng)
    perm = gen.permutation(n)
    w, outs, releases, evals, clipped = phased_dp_sgd_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, perm, sizes, eta, s.clip, s.reg.alpha,
        s.constraint.kind, s.constraint.radius, z, gen)
    if releases != sizes.shape[0] or int(sizes.sum()) > n:
        raise RuntimeError(f"kernel made {releases} phase releases over {int(sizes.sum())} records; the event "
                           f"accounts one release per record in {sizes.shape[0]} disjoint phases of n={n}")
    sens1 = 2.0 * s.clip * eta / 4.0
    return finish("phased_dp_sgd", s, w, outs, step=eta / 4.0, event=event, privacy=privacy, z=z, sensitivity=sens1,
                  grad_evals=evals, trace=trace,
                  details={"releases": releases, "clipped": clipped, "learning_rate": eta, "eta_limit": limit,
                           "phase_sizes": sizes.tolist(), "p": p, "calibration": calibration,
                           "parallel_composition": True})
