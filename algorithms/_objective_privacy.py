"""Privacy profile of Gaussian objective perturbation for GLMs (replace-one), optionally followed by a
Gaussian output perturbation (AMP, App-ObjP).

Derivation (a rigorous version of lecture14 eqs. (14.4)–(14.6)). The released minimiser θ of
``Σᵢ ℓ(θ; zᵢ) + (λ/2)‖θ‖² + ⟨b, θ⟩`` determines b = b_D(θ) = −Σᵢ∇ℓ(θ; zᵢ) − λθ one-to-one, so the
privacy loss at θ is exactly

    log p_D(θ)/p_D′(θ) = (‖b + g‖² − ‖b‖²)/(2σ²) + log(det J_D / det J_D′),

with g = g(θ) = ∇ℓ(θ; z) − ∇ℓ(θ; z′) — a function of θ, hence of b (the lecture treats it as fixed).
For a GLM, g = a(θ)x − a′(θ)x′ with |a|, |a′| ≤ c and ‖x‖, ‖x′‖ ≤ R (L = cR), so pointwise

    ‖g‖² ≤ 4L²,   ⟨b, g⟩ ≤ L(|⟨b, e⟩| + |⟨b, e′⟩|) ≤ 2L·‖P b‖,

P the orthogonal projection onto span{x, x′} (e, e′ unit vectors along x, x′). Under D, b ~ N(0, σ²I)
so ρ = ‖P b‖/σ ~ χ₂ (Rayleigh) whatever x, x′ are (χ₁ ≤ χ₂ stochastically when x ∥ x′). With
μ = L/σ and the Jacobian bound ε_J (lecture14 Thm 14.3), the privacy loss is at most
ε_J + 2μ² + 2μρ. The hockey-stick divergence δ(ε) = E_D[(1 − e^{ε − loss})₊] is increasing in the
loss, hence

    δ(ε) ≤ ∫₀^∞ (1 − e^{ε − ε_J − 2μ² − 2μr})₊ r e^{−r²/2} dr
         = 2μ√(2π) e^{ε′} Φ̄(r₀ + 2μ)                      (ε′ = ε − ε_J ≥ 2μ², r₀ = (ε′ − 2μ²)/(2μ))
         = 1 − e^{ε′}(e^{−2μ²} − 2μ√(2π) Φ̄(2μ))          (ε′ < 2μ²).

A second, Gaussian release of sensitivity Δ₂ and noise σ₂ (μ₂ = Δ₂/σ₂), run given θ, is dominated
by the Gaussian pair, so its conditional hockey-stick at e^{t} is at most the analytic Gaussian
δ_G(t; μ₂) = Φ(−t/μ₂ + μ₂/2) − e^{t}Φ(−t/μ₂ − μ₂/2) (Balle & Wang 2018, Thm 8; valid for every real
t), and the pair satisfies δ(ε) ≤ ∫₀^∞ δ_G(ε − ε_J − 2μ² − 2μr; μ₂) r e^{−r²/2} dr (numerical
quadrature, its error estimate added). Compared with treating g as fixed (analytic Gaussian with
Δ = 2L), this costs about 15–20 % more ε at δ = 1e-5.

Constraint sets: adding a data-independent, twice-differentiable convex penalty r(θ) changes neither
g(θ) nor the Jacobian lower bound λI (the matrix-determinant step of lecture14 Lemma 14.5 only uses
Σ∇²ℓ + λI + ∇²r ⪰ λI), so the same bound holds for it; minimisation over a closed convex set C is
the limit of such penalties, and Kifer, Smith, Thakurta (2012) pass (ε, δ) bounds to that limit —
which is how lecture14 §14.1.1 and Su-Zhao-Wang (Lemma 5) extend objective perturbation to C.

Noise is parametrised like dpcore's ``GaussianEvent``: the objective part's multiplier is
m₁ = σ/(2L) (so μ = 1/(2m₁)); the output part's is m₂ = σ₂/Δ₂ (0: no output part).

The bound is handed to dpcore as the privacy profile of a ``MechanismEvent`` (:func:`objective_event`);
dpcore's ``"profile"`` accountant inverts it (least ε with δ(ε) ≤ δ, safe end of a bisection) and
reports ε. Cost: the two-stage δ(ε) is a quadrature (about a millisecond), and an inversion takes
~50 of them, a calibration ~15 more; both the profile and the calibration are pure functions of
their float arguments and are memoised (``functools.lru_cache``), so repeated solver calls at the
same (ε, δ) — audits, cross-validation — reuse them bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Tuple

from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import log_ndtr

import dpcore
from dpcore.accounting import PROFILE_MAX_EPSILON
from dpcore.events import MechanismEvent
from dpcore.result import PrivacyResult

__all__ = ["objective_delta", "ObjectiveProfile", "objective_event", "calibrate_objective_noise", "objective_privacy"]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TINY = 5e-324  # least positive float: the floor of log δ in the calibration root search
_LOG_S_MAX = 700.0  # e^700 ≈ 1e304: noise multipliers beyond it overflow σ = 2L·m


def _gaussian_delta(t: float, mu2: float) -> float:
    """Analytic Gaussian hockey-stick H_{e^t}(N(0,1) ‖ N(μ₂,1)) for any real t."""
    a = log_ndtr(-t / mu2 + mu2 / 2.0)
    b = t + log_ndtr(-t / mu2 - mu2 / 2.0)
    return max(0.0, math.exp(a) - math.exp(b))


@lru_cache(maxsize=16384)
def objective_delta(epsilon: float, objective_multiplier: float, output_multiplier: float, eps_jacobian: float) -> float:
    """Upper bound on δ(ε) (see the module docstring); multipliers as in ``GaussianEvent``.

    Parameters
    ----------
    epsilon : float
        ε (nats), any real.
    objective_multiplier : float
        m₁ = σ/(2L) > 0 of the objective noise b.
    output_multiplier : float
        m₂ = σ₂/Δ₂ ≥ 0 of the output noise (0: no output part, closed form).
    eps_jacobian : float
        ε_J ≥ 0 (nats), the Jacobian term (lecture14 Thm 14.3).

    Memoised on its float arguments (a pure function; the quadrature costs about a millisecond).
    """
    mu = 1.0 / (2.0 * objective_multiplier)
    ep = epsilon - eps_jacobian
    if output_multiplier == 0.0:
        if ep >= 2.0 * mu * mu:
            r0 = (ep - 2.0 * mu * mu) / (2.0 * mu)
            return min(1.0, math.exp(math.log(2.0 * mu * _SQRT_2PI) + ep + log_ndtr(-(r0 + 2.0 * mu))))
        tail = math.exp(-2.0 * mu * mu) - 2.0 * mu * _SQRT_2PI * math.exp(log_ndtr(-2.0 * mu))
        return min(1.0, max(0.0, 1.0 - math.exp(ep) * tail))
    mu2 = 1.0 / output_multiplier

    def integrand(r: float) -> float:
        return _gaussian_delta(ep - 2.0 * mu * mu - 2.0 * mu * r, mu2) * r * math.exp(-0.5 * r * r)

    # the integrand switches on around r_c where ε′ − 2μ² − 2μr = 0: split the range there so that the
    # quadrature cannot miss a far tail; beyond r_max the Rayleigh mass e^{−r_max²/2} bounds the rest.
    r_c = max(0.0, (ep - 2.0 * mu * mu) / (2.0 * mu))
    r_max = r_c + 40.0
    cuts = sorted({0.0, r_max, *[min(r_max, max(0.0, r_c + k)) for k in (-20, -10, -5, -2, -1, 0, 1, 2, 5, 10, 20)]})
    total = math.exp(-0.5 * r_max * r_max)
    for a, b in zip(cuts[:-1], cuts[1:]):
        val, err = quad(integrand, a, b, epsabs=1e-300, epsrel=1e-10, limit=200)
        total += val + abs(err)
    return min(1.0, total)


@dataclass(frozen=True)
class ObjectiveProfile:
    """δ(ε) of Gaussian objective perturbation (+ optional Gaussian output stage): the privacy profile
    :func:`objective_delta` at fixed noise, as a picklable callable for ``dpcore.MechanismEvent``.

    Parameters
    ----------
    objective_multiplier, output_multiplier, eps_jacobian : float
        As in :func:`objective_delta`.
    """

    objective_multiplier: float
    output_multiplier: float
    eps_jacobian: float

    def __call__(self, epsilon: float) -> float:
        return objective_delta(float(epsilon), self.objective_multiplier, self.output_multiplier, self.eps_jacobian)


def objective_event(objective_multiplier: float, output_multiplier: float, eps_jacobian: float,
                    relation: str = "replace_one") -> MechanismEvent:
    """``dpcore.MechanismEvent`` carrying the privacy profile :class:`ObjectiveProfile` (replace-one:
    the analysis fixes n and replaces one record); dpcore's ``"profile"`` accountant inverts it."""
    profile = ObjectiveProfile(float(objective_multiplier), float(output_multiplier), float(eps_jacobian))
    name = (f"Gaussian objective perturbation (m1={profile.objective_multiplier!r}, "
            f"m2={profile.output_multiplier!r}, eps_J={profile.eps_jacobian!r})")
    return MechanismEvent(name, privacy_profile=profile, relation=relation)


def _profile_epsilon(objective_multiplier: float, output_multiplier: float, eps_jacobian: float, delta: float) -> float:
    event = objective_event(objective_multiplier, output_multiplier, eps_jacobian)
    return dpcore.get_epsilon(event, delta, accountant="profile").epsilon


@lru_cache(maxsize=1024)
def calibrate_objective_noise(epsilon: float, delta: float, eps_jacobian: float, output_share: float = 0.0
                              ) -> Tuple[float, float]:
    """Least noise (m₁, m₂) with dpcore's ε ≤ ``epsilon`` at ``delta`` for :func:`objective_event`.

    The output part gets ``output_share`` of the μ²-budget (m₁ = s/√(1 − share), m₂ = s/√share;
    share 0: no output part, m₂ = 0). s is the exact root (Brent, on log s) of
    δ(epsilon; s) = delta — ε is decreasing in s, so this is the root of dpcore's ε(s) = epsilon —
    then s is raised by relative steps of 1e-12 until dpcore's ``"profile"`` accountant reports
    ε ≤ ``epsilon`` (the final, safe-side check). Memoised on its float arguments.

    Parameters
    ----------
    epsilon : float
        Target ε (nats), > ``eps_jacobian``.
    delta : float
        Target δ in (0, 1).
    eps_jacobian : float
        ε_J ≥ 0 (nats).
    output_share : float
        Share in [0, 1) of μ² given to the output part.
    """
    if not epsilon > eps_jacobian:
        raise ValueError(f"epsilon={epsilon} leaves no budget after the Jacobian term {eps_jacobian}")
    if epsilon > PROFILE_MAX_EPSILON:
        raise ValueError(f"epsilon must be in (0, {PROFILE_MAX_EPSILON:g}] (the range dpcore's 'profile' accountant "
                         f"reports), or inf for noise off; got {epsilon!r}")
    w1 = 1.0 / math.sqrt(1.0 - output_share)
    w2 = 0.0 if output_share == 0.0 else 1.0 / math.sqrt(output_share)

    def f(log_s: float) -> float:
        s = math.exp(log_s)
        return math.log(max(objective_delta(epsilon, s * w1, s * w2, eps_jacobian), _TINY)) - math.log(delta)

    lo, hi = -5.0, 5.0
    while f(lo) < 0.0:
        lo -= 5.0
    while f(hi) > 0.0:
        hi += 5.0
        if hi > _LOG_S_MAX:  # δ(ε; s) has no root below an overflowing noise scale
            raise ValueError(f"delta={delta!r} is too small to calibrate at epsilon={epsilon!r}: the noise scale "
                             "would overflow float64; delta must be above about 1e-300")
    s = math.exp(brentq(f, lo, hi, xtol=1e-12))
    while objective_delta(epsilon, s * w1, s * w2, eps_jacobian) > delta:
        s *= 1.0 + 1e-12
    while _profile_epsilon(s * w1, s * w2, eps_jacobian, delta) > epsilon:
        s *= 1.0 + 1e-12
    return s * w1, s * w2


def objective_privacy(objective_multiplier: float, output_multiplier: float, eps_jacobian: float, delta: float,
                      relation: str) -> Tuple[MechanismEvent, PrivacyResult]:
    """:func:`objective_event` and dpcore's report of it (``get_epsilon(event, delta, accountant="profile")``)."""
    event = objective_event(objective_multiplier, output_multiplier, eps_jacobian, relation)
    return event, dpcore.get_epsilon(event, delta, accountant="profile")
