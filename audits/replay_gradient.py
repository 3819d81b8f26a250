"""Coupled replays of the gradient-perturbation and ℓp solvers (:mod:`audits.conformance`).

Every adapter has the signature ``adapter(name, solve, D, D′, relation, seed, settings) -> (checks,
inconsistencies)``: it runs ``solve`` (the library solver, or a planted variant with its signature) on both
datasets from the same seed in a configuration whose first release can be inverted from the output — one step
from ``w0`` with no regulariser and no binding constraint — and measures the released query's change. The
harness's configuration is overridden by ``settings``.

What each adapter checks (and what it does not) is stated in its docstring and collected in
:data:`audits.conformance.COVERAGE`.
"""

from __future__ import annotations

import math
from typing import List

import mpmath
import numpy as np

from .exact_norms import exact, lp_norm, rounded_up
from .replay import (
    ReleaseCheck, close, differing_index, gaussian_consistency, make_check, mirror_difference, require_relation,
    run_pair, step_difference, sum_difference,
)

__all__ = ["ADAPTERS", "geometry"]

_REPLACE = "replace_one"


def _first_step(name, solve, D, D1, relation, seed, kw, scale, *, declared_key="sensitivity",
                release="clipped gradient sum at w0", advance=False):
    """Coupled replay of one noisy step ``w₁ = w₀ − scale·(q + N)``: the change of the released sum q."""
    r0, r1 = run_pair(solve, D, D1, seed, kw, advance_smaller=advance)
    diff, slack = step_difference(kw.get("w0"), r0.weights, r1.weights, scale)
    issues = gaussian_consistency(r0, float(r0.details["sensitivity"]), float(r0.sigma), name)
    check = make_check(name, release, relation, 2.0, diff, slack, float(r0.details[declared_key]), "coupled replay")
    return [check], issues


def _defaults(D, **extra) -> dict:
    kw = dict(loss="logistic", noise_multiplier=2.0, epsilon=None, clip_norm=1.0, w0=np.zeros(D[0].shape[1]))
    kw.update(extra)
    return kw


def dp_gd_replay(name, solve, D, D1, relation, seed, settings):
    """DP-GD (wang-ye-xu-2017 Alg. 4): one step, the clipped gradient sum (Δ = 2C, replace-one) at ``w0``."""
    require_relation(relation, _REPLACE, name)
    kw = _defaults(D, steps=1, learning_rate=1.0, momentum=0.0)
    kw.update(settings)
    return _first_step(name, solve, D, D1, relation, seed, kw, kw["learning_rate"] / len(D[1]))


def dp_sgd_replay(name, solve, D, D1, relation, seed, settings):
    """DP-SGD (Abadi et al. Alg. 1): one step with every record in the batch — Poisson sampling at rate 1 for an
    add/remove pair (Δ = C; the smaller run's generator one draw ahead keeps the noise coupled), a batch of all n
    without replacement for a replace-one pair (Δ = 2C). The sampling itself is not checked here."""
    poisson = relation == "add_remove"
    kw = _defaults(D, steps=1, learning_rate=1.0)
    if poisson:
        kw.update(sampling="poisson", sampling_rate=1.0, batch_size=len(D[1]))
    else:
        kw.update(sampling="without_replacement", batch_size=len(D[1]))
    kw.update(settings)
    return _first_step(name, solve, D, D1, relation, seed, kw, kw["learning_rate"] / kw["batch_size"], advance=poisson)


def rrpsgd_replay(name, solve, D, D1, relation, seed, settings):
    """RRPSGD (zhang-zheng-mou-wang Alg. 2) with T_max = 1 (so R = 1) and the batch = all n: the clipped sum
    (Δ = 2C). The random round count is not checked (it is drawn independently of the data)."""
    require_relation(relation, _REPLACE, name)
    kw = _defaults(D, max_rounds=1, batch_size=len(D[1]), learning_rate=1.0)
    kw.update(settings)
    return _first_step(name, solve, D, D1, relation, seed, kw, kw["learning_rate"] / kw["batch_size"])


def dp_accmd_replay(name, solve, D, D1, relation, seed, settings):
    """DP-AccMD (wang-ye-xu-2017 Alg. 3), ℓ2 ball far away: y₁ = x − g/(2κ_y), g = (q + N)/n,
    κ_y = L_C/(2r²): the clipped sum (Δ = 2C). The mirror (z) step does not reach the output after one step."""
    require_relation(relation, _REPLACE, name)
    kw = _defaults(D, steps=1, constraint="l2", radius=1e6, smoothness=1.0)
    kw.update(settings)
    r0 = solve(D[0], D[1], rng=seed, **kw)  # the Minkowski smoothness L_C the y-step divides by
    r2 = kw["radius"] * kw["radius"]
    scale = 1.0 / (2.0 * (float(r0.details["smoothness_minkowski"]) / (2.0 * r2))) / len(D[1])
    checks, issues = _first_step(name, solve, D, D1, relation, seed, kw, scale)
    for w in (r0.weights,):
        if lp_norm(exact(w), 2) >= mpmath.mpf(kw["radius"]) * (1 - 1e-9):
            issues.append(f"{name}: the l2 ball of radius {kw['radius']} binds; the step cannot be inverted")
    return checks, issues


def dp_srm_replay(name, solve, D, D1, relation, seed, settings):
    """DP-SRM (wang-jayaraman-evans-gu Alg. 1): the first release (Δ₀ = 2C₁) by a one-step coupled replay; the
    later releases' query Σ[γ·clip_{C₁}(g) + (1 − γ)·clip_{C₂}(g − g_prev)] (Δ = 2(γC₁ + (1 − γ)C₂), §6.1)
    through the solver's own :func:`algorithms.dp_srm.dp_srm_query` at the same (θ, θ_prev) on D and D′
    (``query_point`` = θ, default w0 + 1; θ_prev = w0), against the Δ the solver's event uses."""
    from algorithms.dp_srm import dp_srm_query

    require_relation(relation, _REPLACE, name)
    n = len(D[1])
    kw = _defaults(D, steps=1, batch_size=n, initial_batch_size=n, extrapolation=0.0, step_bound=math.inf,
                   learning_rate=1.0, diff_clip_norm=0.05, momentum=0.5)
    point = settings.pop("query_point", None)
    kw.update(settings)
    checks, issues = _first_step(name, solve, D, D1, relation, seed, kw,
                                 kw["learning_rate"] / kw["initial_batch_size"], declared_key="initial_sensitivity",
                                 release="first clipped gradient sum at w0")
    declared = float(solve(D[0], D[1], rng=seed, **kw).details["sensitivity"])
    w_prev = np.asarray(kw["w0"], dtype=np.float64)
    w = w_prev + 1.0 if point is None else np.asarray(point, dtype=np.float64)
    qkw = dict(loss=kw["loss"], clip_norm=kw["clip_norm"], diff_clip_norm=kw["diff_clip_norm"],
               momentum=kw["momentum"], loss_params=kw.get("loss_params"))
    q0, q1 = (dp_srm_query(X, y, w, w_prev, **qkw) for X, y in (D, D1))
    diff, slack = sum_difference(q0, q1, n, declared)
    checks.append(make_check(name, "later momentum sum", relation, 2.0, diff, slack, declared, "query kernel"))
    return checks, issues


def dp_svrg_replay(name, solve, D, D1, relation, seed, settings):
    """DP-SVRG (Alg. 1) / DP-SVRG++ (Alg. 2), wang-ye-xu-2017.

    Snapshot release (Δ = 2C; DP-SVRG only — Alg. 2's first epoch takes two inner steps at points that differ
    between the runs): one epoch of one inner step, x₁ = w0 − lr·((q + N₀)/n + N₁/b) (the first inner query,
    a difference at the snapshot point itself, is 0).
    Inner release (Δ = 2C_diff): when the differing records have a zero gradient at w0 = 0 (label 0, squared or
    Huber loss) the snapshot and x₁ coincide on D and D′, and the second inner step's query is taken at the same
    x₁: output = (x₁ + x₂)/2 moves by (lr/2b)·Δq.
    """
    require_relation(relation, _REPLACE, name)
    n = len(D[1])
    pp = name == "dp_svrg_pp"
    kw = _defaults(D, epochs=1, inner_steps=1, batch_size=n, momentum=0.0, learning_rate=1.0)
    kw.update(settings)
    lr, b = kw["learning_rate"], kw["batch_size"]
    checks: List[ReleaseCheck] = []
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    issues = gaussian_consistency(r0, float(r0.details["sensitivity"]), float(r0.sigma), name + " inner")
    sigma_snapshot = float(r0.details["sigma_snapshot"])
    snapshot_sens = 2.0 * float(r0.details["clip_norm"])
    if not close(sigma_snapshot, float(r0.noise_multiplier) * snapshot_sens):
        issues.append(f"{name}: snapshot noise std {sigma_snapshot!r} is not noise_multiplier x 2C")
    i = differing_index(D, D1)
    zero_at_w0 = (kw["loss"] in ("squared", "huber") and not np.any(kw["w0"]) and D[1][i] == 0.0 and D1[1][i] == 0.0)
    if pp and not zero_at_w0:
        raise ValueError("dp_svrg_pp: only its inner release is replayable — give the differing records label 0 with "
                         "loss='squared' or 'huber' and w0 = 0 (zero gradient at w0; see COVERAGE['dp_svrg_pp'])")
    if not pp and not zero_at_w0:
        diff, slack = step_difference(kw["w0"], r0.weights, r1.weights, lr / n)
        checks.append(make_check(name, "snapshot clipped gradient sum at w0", relation, 2.0, diff, slack,
                                 snapshot_sens, "coupled replay"))
    if zero_at_w0:
        two = dict(kw, inner_steps=1 if pp else 2)
        s0, s1 = run_pair(solve, D, D1, seed, two)
        diff, slack = step_difference(None, s0.weights, s1.weights, lr / (2.0 * b))
        slack = [4 * v for v in slack]  # the average adds roundings of |x₁| + |x₂| ≤ 2|output| + |x₂ − x₁|
        checks.append(make_check(name, "inner clipped gradient-difference sum at x1", relation, 2.0, diff, slack,
                                 float(s0.details["sensitivity"]), "coupled replay"))
    return checks, issues


# ------------------------------------------------------------------------------------------ ℓp solvers
def geometry(p: float, d: int):
    """(κ, s, q) of Su–Zhao–Wang's ℓp geometry, computed here from p and d: κ = min(1/(p − 1), 2 ln d), the
    mirror exponent s = (1 + κ)/κ and the dual order q = p/(p − 1)."""
    kappa = min(1.0 / (p - 1.0), 2.0 * math.log(d))
    return kappa, (1.0 + kappa) / kappa, p / (p - 1.0)


def _gg_step_event(event):
    while not hasattr(event, "epsilon") and event.children():
        event = event.children()[0]
    return event


def _gg_mechanism(res, declared_q, kappa, q, d):
    from mechanisms.base import convert_sensitivity
    from mechanisms.generalized_gaussian import GeneralizedGaussian

    r = 1.0 + kappa
    return GeneralizedGaussian(r, float(res.sigma), d, convert_sensitivity(declared_q, q, r, d))


def _gg_consistency(res, declared_q, kappa, q, d, delta_step, what) -> List[str]:
    """The event's (ε, δ) step is Lemma 3's for 𝒢𝒢_{ℓr}(σ) on a query of ℓq sensitivity ``declared_q``."""
    expected = _gg_mechanism(res, declared_q, kappa, q, d).privacy_event("replace_one", delta=delta_step)
    step = _gg_step_event(res.event)
    if not close(float(step.epsilon), float(expected.epsilon), 1e-9):
        return [f"{what}: event step epsilon {step.epsilon!r} is not Lemma 3's {expected.epsilon!r} for sigma "
                f"{res.sigma!r} and the declared sensitivity {declared_q!r}"]
    return []


def _shuffle_consistency(res, declared_q, kappa, q, d, what) -> List[str]:
    """The shuffled event's local ε₀ is Lemma 3's for the local report of ℓq sensitivity ``declared_q``."""
    eps0 = _gg_mechanism(res, declared_q, kappa, q, d).lemma3_epsilon(res.event.delta0)
    if not close(float(res.event.epsilon0), float(eps0), 1e-9):
        return [f"{what}: local epsilon0 {res.event.epsilon0!r} is not Lemma 3's {eps0!r} for the declared "
                "sensitivity"]
    return []


def noisy_mirror_descent_replay(name, solve, D, D1, relation, seed, settings):
    """Noisy mirror descent (Su, Zhao, Wang Alg. 3): one step from w₁ = 0 with C = ℝᵈ, φ-weight 0: θ = −g/μ,
    μ = β/c, w = ∇Φ*(θ), so the noisy mean gradient is −μ∇Φ(w). Δ = 2C/n of the clipped mean, in ℓ2 for
    ``noise="gaussian"``, in the dual ℓq for ``"generalized_gaussian"`` (whose event step must be Lemma 3's for it)."""
    require_relation(relation, _REPLACE, name)
    n, d = D[0].shape
    kw = dict(loss="logistic", p=1.5, steps=1, epsilon=1.0, delta=1e-5, clip_norm=1.0, smoothness=1.0,
              step_scale=1.0, phi_weight=0.0, constraint="none", noise="gaussian")
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    kappa, s, q = geometry(kw["p"], d)
    mu = kw["smoothness"] / kw["step_scale"] + kw["phi_weight"]
    diff, slack = mirror_difference(r1.weights, r0.weights, s, kappa, mu, d)
    gaussian = kw["noise"] == "gaussian"
    order = 2.0 if gaussian else q
    declared = float(r0.details["sensitivity"])
    if gaussian:
        issues = gaussian_consistency(r0, declared, float(r0.sigma), name)
    else:
        issues = _gg_consistency(r0, declared, kappa, q, d, float(r0.details["delta_step"]), name)
    return [make_check(name, f"clipped mean gradient at 0 (l{order:g})", relation, order, diff, slack, declared,
                       "coupled replay")], issues


def truncated_replay(name, solve, D, D1, relation, seed, settings):
    """Truncated mirror descent (Su, Zhao, Wang Alg. 7 batched / Alg. 4 shuffled): one batch (T = 1, b = n) over
    the ball ‖w‖_s ≤ R with R far away, from w₀ = 0: θ = −ḡ/γ, w = ∇Φ*(θ), ḡ = (1/b)(Σ truncated gradients +
    noise). Δ in ℓq: 2τ/b on the batch mean (Alg. 7), 2τ on a record's local report (Alg. 4); the events must
    be Lemma 3's for them. The shuffle's amplification is not checked."""
    require_relation(relation, _REPLACE, name)
    n, d = D[0].shape
    shuffled = name.startswith("shuffled")
    kw = dict(loss="logistic", p=1.5, steps=1, epsilon=0.5 if shuffled else 1.0, delta=1e-5, truncation=1.0,
              gamma=1.0, smoothness=1.0, clip_norm=1.0, constraint="lp", radius=1e200)
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    kappa, s, q = geometry(kw["p"], d)
    mu = kw["gamma"] * ((n // kw["steps"]) if shuffled else 1.0)
    diff, slack = mirror_difference(r1.weights, r0.weights, s, kappa, mu, d)
    declared = float(r0.details["sensitivity"])
    issues = []
    for r in (r0, r1):
        if lp_norm(exact(r.weights), s) >= mpmath.mpf(kw["radius"]) * (1 - 1e-9):
            issues.append(f"{name}: the ball of radius {kw['radius']} binds; the step cannot be inverted")
    if shuffled:
        issues += _shuffle_consistency(r0, declared, kappa, q, d, name)
    else:
        issues += _gg_consistency(r0, declared, kappa, q, d, kw["delta"], name)
    release = "a record's truncated report" if shuffled else "truncated batch mean"
    return [make_check(name, f"{release} (l{q:g})", relation, q, diff, slack, declared, "coupled replay")], issues


def phased_dp_sgd_replay(name, solve, D, D1, relation, seed, settings):
    """Phased DP-SGD (Su, Zhao, Wang Alg. 6 = FKT20): phase i releases w̄ᵢ + N(0, σᵢ²), σᵢ = z·2Cηᵢ. The phase
    holding the differing record moves w̄ᵢ by ≤ 2Cηᵢ ≤ 2Cη₁ (non-expansive SGD steps, η ≤ 1/β), and the later
    phases are non-expansive with coupled noise, so the output moves by ≤ 2Cη₁ = ``details["sensitivity"]``.
    Default step 1/R² (≤ 1/β for every loss here)."""
    require_relation(relation, _REPLACE, name)
    R = max(rounded_up(lp_norm(exact(row), 2)) for row in np.vstack([D[0], D1[0]])) or 1.0
    kw = dict(loss="logistic", p=2.0, epsilon=1.0, delta=1e-5, clip_norm=1.0, data_norm_bound=R,
              learning_rate=1.0 / (R * R) if 1e-150 < R < 1e150 else 1.0)
    kw.update(settings)
    r0, r1 = run_pair(solve, D, D1, seed, kw)
    diff, slack = step_difference(None, r0.weights, r1.weights, 1.0)
    slack = [v * 2 * len(D[1]) for v in slack]  # the phase averages: one rounding per averaged iterate
    declared = float(r0.details["sensitivity"])
    issues = gaussian_consistency(r0, declared, float(r0.sigma), name)
    return [make_check(name, "released output (stability bound 2C*eta_1)", relation, 2.0, diff, slack, declared,
                       "coupled replay")], issues


ADAPTERS = {
    "dp_gd": dp_gd_replay,
    "dp_sgd": dp_sgd_replay,
    "dp_svrg": dp_svrg_replay,
    "dp_svrg_pp": dp_svrg_replay,
    "dp_accmd": dp_accmd_replay,
    "dp_srm": dp_srm_replay,
    "rrpsgd": rrpsgd_replay,
    "noisy_mirror_descent": noisy_mirror_descent_replay,
    "phased_dp_sgd": phased_dp_sgd_replay,
    "batched_truncated_mirror_descent": truncated_replay,
    "shuffled_truncated_mirror_descent": truncated_replay,
}
