"""Replays of the perturbation solvers, AdaSSP and the network (:mod:`audits.conformance`).

Same adapter signature as :mod:`audits.replay_gradient`. What is replayed:

* output perturbation — the released point with coupled noise, whose change is the perturbed minimiser's
  (or GD iterate's) change against its Δ (Chaudhuri et al. 2011 Cor. 8; Zhang et al. 2017 Lemmas 2–3);
* objective perturbation, AMP, App-ObjP — no query is released; the privacy proof (lecture14 Thm 14.3)
  needs ‖∇ℓ(θ; z) − ∇ℓ(θ; z′)‖ ≤ 2L for every θ and ℓ″·‖x‖² ≤ β for the records that ran: the harness's
  own sup|ℓ′|·(‖x‖ + ‖x′‖) and sup ℓ″·‖x‖² against the solver's L and β;
* AdaSSP — the Gaussian releases themselves (``details["released"]``: λ_min + noise, XᵀX̂, Xᵀŷ, or the joint Ĝ)
  with coupled noise against ``details["sensitivities"]`` / ``details["sensitivity"]``;
* ``DPMLPClassifier`` — one full-batch step (DP-GD, DP-SGD with b = n, RRPSGD with R = 1, or DP-SRM's first
  release) with coupled noise, and the kernels' per-example clip (:func:`algorithms.mlp_kernels.mlp_clipped_sum_kernel`,
  :func:`~algorithms.mlp_kernels.mlp_srm_query_kernel`) on D and D′ at chosen weights — extreme weights
  included, where the fused norm of the clip factor may underflow.
"""

from __future__ import annotations

import math
import warnings
from typing import List

import mpmath
import numpy as np

from .exact_norms import exact, lp_norm, rounded_up
from .replay import (
    TINY, U, close, differing_index, gaussian_consistency, gaussian_multipliers, make_check, require_relation,
    run_pair, step_difference, sum_difference,
)

__all__ = ["ADAPTERS", "loss_sups"]

_REPLACE = "replace_one"


def _row_bound(D, D1) -> float:
    """The least float ≥ every row norm of D ∪ D′ (exact arithmetic): the tightest public bound they satisfy."""
    return max(rounded_up(lp_norm(exact(row), 2)) for row in np.vstack([D[0], D1[0]])) or 1.0


def _point_difference(out0, out1):
    """out₀ − out₁ for two releases of one point plus the same noise (one rounding each)."""
    a, b = exact(out0), exact(out1)
    return [x - y for x, y in zip(a, b)], [4 * U * (abs(x) + abs(y)) + TINY for x, y in zip(a, b)]


def output_perturbation_replay(name, solve, D, D1, relation, seed, settings):
    """Output perturbation (Chaudhuri et al. 2011 Alg. 1 / Zhang et al. 2017 Alg. 1): released = point + noise
    with the noise coupled, so the releases differ by the point's change: against Δ (``details["sensitivity"]``:
    2L/(nα) + 2γ/α for the minimiser, Lemma 2/3 for GD)."""
    require_relation(relation, _REPLACE, name)
    kw = dict(loss="logistic", epsilon=1.0, delta=1e-5, alpha=0.1, data_norm_bound=_row_bound(D, D1))
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    diff, slack = _point_difference(r0.weights, r1.weights)
    declared = float(r0.details["sensitivity"])
    issues = gaussian_consistency(r0, declared, float(r0.sigma), name) if kw["delta"] > 0 else []
    if declared != float(r1.details["sensitivity"]):
        issues.append(f"{name}: the sensitivity depends on the data ({declared!r} vs {r1.details['sensitivity']!r})")
    release = f"perturbed point ({r0.details['method']})"
    return [make_check(name, release, relation, 2.0, diff, slack, declared, "coupled replay")], issues


def loss_sups(loss: str, loss_params=None):
    """(sup_z |ℓ′(z)|, sup_z ℓ″(z)) of a generalized linear loss, from its definition (lecture14 Def. 14.2):
    logistic (1, 1/4), Huber with threshold h (h, 1), smoothed hinge with width h (1, 1/(2h)); the squared loss
    has no finite sup|ℓ′| (``inf``)."""
    params = loss_params or {}
    if loss == "logistic":
        return 1.0, 0.25
    if loss == "huber":
        return float(params.get("huber_delta", 1.0)), 1.0
    if loss == "smoothed_hinge":
        return 1.0, 1.0 / (2.0 * float(params.get("smoothing", 0.5)))
    return math.inf, 1.0


def record_bound_replay(name, solve, D, D1, relation, seed, settings):
    """Objective perturbation (lecture14 Alg. 1), AMP, App-ObjP: the solver runs on D and D′ (both accepted), then
    for the differing records x, x′: sup_θ‖∇ℓ(θ; x) − ∇ℓ(θ; x′)‖ ≤ sup|ℓ′|·(‖x‖ + ‖x′‖) against 2L (the noise
    b's sensitivity) and sup ℓ″·‖x‖² against β (the Jacobian term), with the solver's L and β. The residual
    (output) stage and the exact-minimiser argument are not replayed."""
    require_relation(relation, _REPLACE, name)
    kw = dict(loss="logistic", epsilon=1.0, delta=1e-5, alpha=0.1, data_norm_bound=_row_bound(D, D1))
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    L, beta = float(r0.details["L"]), float(r0.details["beta"])
    issues = []
    if (L, beta) != (float(r1.details["L"]), float(r1.details["beta"])):
        issues.append(f"{name}: L, beta depend on the data: {(L, beta)} vs {(r1.details['L'], r1.details['beta'])}")
    G, H = loss_sups(kw["loss"], kw.get("loss_params"))
    i = differing_index(D, D1)
    n0, n1 = lp_norm(exact(D[0][i]), 2), lp_norm(exact(D1[0][i]), 2)
    checks = [make_check(name, "gradient difference of the differing records (sup over theta)", relation, 2.0,
                         [mpmath.mpf(G) * (n0 + n1)], [], 2.0 * L, "record bound"),
              make_check(name, "curvature of the differing records (Jacobian term)", relation, 2.0,
                         [mpmath.mpf(H) * max(n0, n1) ** 2], [], beta, "record bound")]
    return checks, issues


def _gram_slack(Z: np.ndarray):
    """Per-entry rounding bound of the float sums Zᵀ Z over n rows (Higham 2002 §4.2, |zᵢⱼzᵢₖ| ≤ ‖zᵢ‖²):
    (n + 4)·u·Σ‖zᵢ‖²."""
    return (Z.shape[0] + 4) * U * mpmath.fsum(lp_norm(exact(r), 2) ** 2 for r in Z)


def adassp_replay(name, solve, D, D1, relation, seed, settings):
    """AdaSSP (Wang 2018 Alg. 2, ``variant="alg2"``) and its joint variant: the Gaussian releases with coupled
    noise — λ_min(XᵀX) + σ₁Z (Δ = X²; the eigensolver's backward error ≤ (n + d)·u·Σ‖xᵢ‖² allowed, as the
    solver's docstring states it is not charged to Δ), the upper triangle of XᵀX̂ (Δ = √2X² / X²), Xᵀŷ
    (Δ = 2XY / XY); ``variant="joint"``: v(Ĝ) = (diagonal, √2 × upper triangle), i.e. the Frobenius norm of
    Ĝ's change (Δ = √2B² / B²). Both relations."""
    n, d = D[0].shape
    variant = settings.get("variant", "joint" if name == "adassp_joint" else "alg2")
    B = float(np.max(np.abs(np.concatenate([D[1], D1[1]])))) or 1.0
    kw = dict(loss="squared", epsilon=1.0, delta=1e-5, data_norm_bound=_row_bound(D, D1), target_bound=B,
              relation=relation, variant=variant)
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    z = float(r0.noise_multiplier)
    a, b = r0.details["released"], r1.details["released"]
    slack_scale = max(_gram_slack(D[0]), _gram_slack(D1[0]))
    issues: List[str] = []
    checks = []
    if variant == "joint":
        k = float(r0.details["target_weight"])
        gram_slack = max(_gram_slack(np.column_stack([X, k * y])) for X, y in (D, D1))
        diff, slack = _point_difference(a["gram"], b["gram"])
        slack = [s + 2 * gram_slack for s in slack]
        declared = float(r0.details["sensitivity"])
        issues += gaussian_consistency(r0, declared, float(r0.details["sigma"]), name)
        checks.append(make_check(name, "joint second-moment matrix (Frobenius)", relation, 2.0, diff, slack, declared,
                                 "coupled replay"))
        return checks, issues
    sens = [float(v) for v in r0.details["sensitivities"]]
    split = r0.details["budget_split"]
    expected = [z / math.sqrt(w) for w in split]
    if sorted(gaussian_multipliers(r0.event)) != sorted(expected) or not all(
            close(s, m * v) for s, m, v in zip(r0.details["sigmas"], expected, sens)):
        issues.append(f"{name}: sigmas {r0.details['sigmas']} / event multipliers {gaussian_multipliers(r0.event)} are "
                      f"not z/sqrt(w_i) x the declared sensitivities {sens}")
    lam = [exact([a["lambda_min"]])[0] - exact([b["lambda_min"]])[0]]
    checks.append(make_check(name, "lambda_min(X^T X) + noise", relation, 2.0, lam,
                             [4 * (d + 4) * slack_scale + 4 * U * (abs(a["lambda_min"]) + abs(b["lambda_min"]))],
                             sens[0], "coupled replay"))
    iu = np.triu_indices(d)
    diff, slack = _point_difference(np.asarray(a["XtX"])[iu], np.asarray(b["XtX"])[iu])
    checks.append(make_check(name, "upper triangle of X^T X + noise", relation, 2.0, diff,
                             [s + 2 * slack_scale for s in slack], sens[1], "coupled replay"))
    xy_slack = max(_gram_slack(np.column_stack([X, y])) for X, y in (D, D1))
    diff, slack = _point_difference(a["Xty"], b["Xty"])
    checks.append(make_check(name, "X^T y + noise", relation, 2.0, diff, [s + 2 * xy_slack for s in slack], sens[2],
                             "coupled replay"))
    return checks, issues


# ---------------------------------------------------------------------------------------------- network
def _flat(est) -> np.ndarray:
    """θ of a fitted ``DPMLPClassifier`` in the kernels' layout [W₁ (h×d), b₁, W₂ (K×h), b₂]."""
    return np.concatenate([est.coefs_[0].T.ravel(), est.intercepts_[0], est.coefs_[1].T.ravel(), est.intercepts_[1]])


def _codes(y: np.ndarray, classes: np.ndarray):
    codes = np.searchsorted(classes, y).astype(np.float64)
    return np.where(codes == 1.0, 1.0, -1.0) if classes.size == 2 else codes


def mlp_replay(name, solve, D, D1, relation, seed, settings):
    """``DPMLPClassifier``: one full-batch step with coupled noise — θ₁ = θ₀ − η·(q + N)/n — for ``solver`` DP-GD,
    DP-SGD (b = n), RRPSGD (R = 1) or DP-SRM (its first release), Δ = 2C; then the kernels' clipped sum (Δ = 2C)
    and DP-SRM's later query (Δ = 2(γC₁ + (1 − γ)C₂)) on D and D′ at the weights ``theta`` / ``theta_prev``
    (default: the initial weights and 0.9 times them). ``solve`` is the estimator class. The network's event is
    not exposed by the estimator, so only σ's rule is the documented one (not checked against an event)."""
    from algorithms.mlp import DPMLPClassifier
    from algorithms.mlp_kernels import mlp_clipped_sum_kernel, mlp_srm_query_kernel

    require_relation(relation, _REPLACE, name)
    n, d = D[0].shape
    theta = settings.pop("theta", None)
    theta_prev = settings.pop("theta_prev", None)
    classes = settings.pop("classes", None)  # the public label set; default: the labels of D ∪ D′ (and ±1)
    classes = np.unique(np.concatenate([D[1], D1[1]])) if classes is None else np.asarray(classes, dtype=np.float64)
    if classes.size < 2:
        classes = np.array([-1.0, 1.0])
    kw = dict(hidden_units=3, solver="dp_gd", epochs=1, optimizer="momentum", heavy_ball=0.0, lr_schedule="constant",
              alpha=0.0, clip_norm=1.0, learning_rate=1.0, epsilon=1.0, delta=1e-5, output="last", batch_size=n)
    kw.update(settings)
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixed seed that couples the runs (DeterministicSeedWarning)
        for X, y in (D, D1):
            fits.append(solve(**kw, classes=classes, random_state=seed).fit(X, y))
    h, K = kw["hidden_units"], 1 if classes.size == 2 else classes.size
    theta0 = DPMLPClassifier._init_weights(d, h, K, np.random.default_rng(seed))
    clip = float(kw["clip_norm"])
    diff, slack = step_difference(theta0, _flat(fits[0]), _flat(fits[1]), kw["learning_rate"] / n)
    checks = [make_check(name, f"clipped gradient sum at theta0 ({kw['solver']})", relation, 2.0, diff, slack,
                         2.0 * clip, "coupled replay")]
    point = theta0 if theta is None else np.ascontiguousarray(theta, dtype=np.float64)
    prev = 0.9 * point if theta_prev is None else np.ascontiguousarray(theta_prev, dtype=np.float64)
    idx = np.arange(n)
    outs = []
    for X, y in (D, D1):
        out = np.empty(point.size)
        mlp_clipped_sum_kernel(point, np.ascontiguousarray(X), _codes(y, classes), idx, n, clip, d, h, K, out)
        outs.append(out)
    diff, slack = sum_difference(outs[0], outs[1], n, clip)
    checks.append(make_check(name, "kernel clipped sum at theta", relation, 2.0, diff, slack, 2.0 * clip,
                             "query kernel"))
    c2 = float(kw.get("diff_clip_norm") or clip / 10.0)
    gamma = float(kw.get("momentum") or min(1.0, c2 / clip))
    declared = 2.0 * (gamma * clip + (1.0 - gamma) * c2)
    outs = []
    for X, y in (D, D1):
        out = np.empty(point.size)
        mlp_srm_query_kernel(point, prev, np.ascontiguousarray(X), _codes(y, classes), idx, n, gamma, clip, c2, d, h,
                             K, out)
        outs.append(out)
    diff, slack = sum_difference(outs[0], outs[1], n, declared)
    checks.append(make_check(name, "kernel DP-SRM later query at (theta, theta_prev)", relation, 2.0, diff, slack,
                             declared, "query kernel"))
    return checks, []


ADAPTERS = {
    "output_perturbation_gd": output_perturbation_replay,
    "objective_perturbation": record_bound_replay,
    "approximate_minima_perturbation": record_bound_replay,
    "approx_objective_perturbation": record_bound_replay,
    "adassp": adassp_replay,
    "adassp_joint": adassp_replay,
    "DPMLPClassifier": mlp_replay,
}
