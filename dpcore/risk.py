"""Attack risk of a run, certified: TPR at given FPRs, attack advantage, μ-GDP, and noise for a risk target.

"What can an attacker do?" in numbers: for every membership-inference test between neighbouring
datasets (either direction), its true-positive rate at a false-positive rate α is at most the
trade-off curve of the run's dominating pairs (Dong, Roth, Su 2022, "Gaussian differential
privacy", Def. 2.1–2.3: TPR = 1 − f(α)). :func:`risk` composes the run's privacy-loss
distributions once (:func:`dpcore.pld.tradeoff.tradeoff_curve`, where the proofs of the bounds
are) and reports

* ``tpr_lower ≤ TPR(α) ≤ tpr_upper`` at the requested FPRs — the upper value a certified bound on
  any attack, the lower value a certified statement that the *dominating pairs* allow an attack
  that strong (the accountant's tightness, not a claim that such an attack exists against the code);
* the attack advantage max_α (TPR − FPR) = total variation = δ(0), with the same two-sided bounds;
* μ-GDP: the tightest μ with TPR(α) ≤ Φ(Φ⁻¹(α) + μ) on FPR ∈ [``fpr_floor``, 1/2] in both
  directions of attack (an upper bound, certified), a μ below which the run is certainly *not*
  μ-GDP, and whether it is exactly Gaussian (a composition of un-sampled Gaussians is, with
  μ² = Σ count/σ², Dong, Roth, Su 2022, Cor. 3.3; a subsampled run is not, and the report
  certifies that when its curve dips below the Gaussian curve of its lower μ somewhere).

:func:`calibrate_risk` finds the least noise multiplier (or the most steps) of a (subsampled)
Gaussian run whose certified TPR at FPR ``at_fpr`` is ≤ ``max_tpr``. :func:`plot_tradeoff` draws
the certified curve against the (ε, δ)-DP and μ-GDP curves.

All numbers hold for the neighbouring relation of the event (``relation`` in every result).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
from scipy import special

from ._validation import check_half_open_unit, check_open_unit, check_positive, check_positive_int, check_sampling_rate
from .events import ComposedEvent, GaussianEvent, NoOpEvent, PrivacyEvent, SelfComposedEvent
from .pld.tradeoff import RISK_SETTINGS, UPPER_SETTINGS, ReflectedCurve, TradeoffCurve, check_fpr, tradeoff_curve
from .result import jsonable, round_down, round_up

__all__ = [
    "DEFAULT_FPRS",
    "RiskReport",
    "RiskCalibration",
    "risk",
    "calibrate_risk",
    "exact_gdp_mu",
    "dp_tpr_bound",
    "gdp_tpr_bound",
    "finish_tradeoff_axes",
    "plot_tradeoff",
]

#: FPRs reported when none are given
DEFAULT_FPRS = (1e-4, 1e-3, 1e-2, 0.1)
#: points per half of the FPR grid on which μ-GDP and the plotted curve are evaluated
_GRID_POINTS = 1500
#: settings of the curves :func:`calibrate_risk` searches with: only their certified upper bound
#: is read (:data:`~dpcore.pld.tradeoff.UPPER_SETTINGS`)
CALIBRATION_SETTINGS = UPPER_SETTINGS
_METHOD = ("trade-off curve of the composed dominating pairs: certified upper bound from the pessimistic "
           "(connect-the-dots) untilted PLD, lower bound from its Scarf second-order optimistic bound made "
           "uniform over intervals of epsilon (dpcore.pld.tradeoff)")


_EXP_FINITE_BELOW = 709.0  # math.exp(x) is finite for x < 709.78


def dp_tpr_bound(fpr: Any, epsilon: float, delta: float) -> np.ndarray:
    """Largest TPR an (ε, δ)-DP mechanism allows at each FPR, either direction.

    ``min(1, e^ε·FPR + δ, 1 − e^{−ε}(1 − δ − FPR))`` (Kairouz, Oh, Viswanath 2015, Thm. 2.1).

    Parameters
    ----------
    fpr : array of float in [0, 1]
    epsilon : float
        ε > 0 (nats); ``inf`` allows everything.
    delta : float
        δ in [0, 1).
    """
    fpr = check_fpr("fpr", fpr)
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_half_open_unit("delta", delta)
    if math.isinf(epsilon):
        return np.ones_like(fpr)
    if epsilon < _EXP_FINITE_BELOW:
        up = math.exp(epsilon) * fpr + delta
    else:  # e^ε overflows, e^ε·FPR need not (FPR subnormal): in logs; log 0 = −inf gives 0
        with np.errstate(divide="ignore", over="ignore"):
            up = np.exp(epsilon + np.log(fpr)) + delta
    return np.minimum.reduce([np.ones_like(fpr), up, 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr)])


def gdp_tpr_bound(fpr: Any, mu: float) -> np.ndarray:
    """Largest TPR a μ-GDP mechanism allows at each FPR: Φ(Φ⁻¹(FPR) + μ) (Dong, Roth, Su 2022, Def. 2.6).

    Parameters
    ----------
    fpr : array of float in [0, 1]
    mu : float
        μ ≥ 0.
    """
    fpr = check_fpr("fpr", fpr)
    mu = float(mu)
    if not mu >= 0.0:
        raise ValueError(f"mu must be in [0, inf]; got {mu!r}")
    return special.ndtr(special.ndtri(fpr) + mu)


def exact_gdp_mu(event: PrivacyEvent) -> Optional[float]:
    """μ of a composition of un-sampled Gaussian mechanisms (exactly μ-GDP), else None.

    A Gaussian mechanism with noise multiplier σ is exactly 1/σ-GDP and a composition of μᵢ-GDP
    mechanisms is exactly sqrt(Σμᵢ²)-GDP (Dong, Roth, Su 2022, Thm 2.7 and Cor. 3.3). The value is
    rounded up.
    """
    total = [0.0]

    def walk(e: PrivacyEvent, mult: int) -> bool:
        if isinstance(e, SelfComposedEvent):
            return walk(e.event, mult * e.count)
        if isinstance(e, ComposedEvent):
            return all(walk(c, mult) for c in e.events)
        if isinstance(e, NoOpEvent):
            return True
        if type(e) is GaussianEvent:
            total[0] += mult / (e.noise_multiplier * e.noise_multiplier)
            return True
        return False

    if not walk(event, 1):
        return None
    return round_up(math.sqrt(total[0]) * (1.0 + 8.0 * 2.0**-53))


@dataclass(frozen=True)
class RiskReport:
    """Certified attack-risk numbers of one run (see the module docstring).

    Attributes
    ----------
    fpr, tpr_lower, tpr_upper : numpy.ndarray
        The requested FPRs and two-sided bounds on the best attack's TPR there.
    advantage : (float, float)
        Bounds on max_α (TPR − FPR), the total variation between neighbouring outputs.
    gdp_mu : (float, float)
        (μ below which the run is certainly not μ-GDP, μ for which it is μ-GDP on FPR ∈
        [``fpr_floor``, 1/2] in both directions of attack — which covers FPRs up to 1 − TPR at
        ``fpr_floor``, see ``gdp_statement``).
    gdp_exact : bool or None
        True: exactly μ-GDP (a composition of un-sampled Gaussians; ``gdp_mu`` is then exact on
        every FPR). False: certified not exactly μ-GDP for any μ. None: undecided.
    gdp_statement : str
        The μ-GDP conclusion in words.
    fpr_floor : float
        Lower end of the FPR range of the μ-GDP upper bound.
    relation : str
        Neighbouring relation of every number.
    curve : TradeoffCurve
        The certified curve (evaluate it at any FPR: ``curve.tpr_upper(fpr)``).
    details : dict
        Grid spacing, orders of neighbours, method.
    """

    fpr: np.ndarray
    tpr_lower: np.ndarray
    tpr_upper: np.ndarray
    advantage: Tuple[float, float]
    gdp_mu: Tuple[float, float]
    gdp_exact: Optional[bool]
    gdp_statement: str
    fpr_floor: float
    relation: str
    curve: TradeoffCurve = field(repr=False, compare=False)
    details: Dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-serialisable record (without the curve object)."""
        return jsonable({
            "fpr": self.fpr.tolist(), "tpr_lower": self.tpr_lower.tolist(), "tpr_upper": self.tpr_upper.tolist(),
            "advantage": list(self.advantage), "gdp_mu": list(self.gdp_mu), "gdp_exact": self.gdp_exact,
            "gdp_statement": self.gdp_statement, "fpr_floor": self.fpr_floor, "relation": self.relation,
            "details": self.details,
        })


def _fpr_grid(floor: float) -> np.ndarray:
    """FPRs from ``floor`` to 1 − ``floor``, geometric towards both ends."""
    half = np.geomspace(floor, 0.5, _GRID_POINTS)
    return np.unique(np.concatenate([half, 1.0 - half]))


def _directions(curve: TradeoffCurve) -> list:
    """Both directions of attack: the curve of each order, and the reflection of a lone order."""
    if len(curve.curves) == 1:
        return [curve.curves[0], ReflectedCurve(curve.curves[0])]
    return list(curve.curves)


def _gdp(curve: TradeoffCurve, event: PrivacyEvent, floor: float) -> Tuple[Tuple[float, float], Optional[bool], str]:
    """μ-GDP bounds. A curve T is μ-GDP on all of (0, 1) iff T and its reflection are on (0, 1/2]
    (the Gaussian curve is its own reflection, and reflection maps FPR > 1/2 into (0, 1/2]), so
    both directions are checked on [``floor``, 1/2], where the certified bounds are far from 1."""
    exact = exact_gdp_mu(event)
    if exact is not None:
        return (exact, exact), True, (f"exactly mu-GDP with mu = {exact:.6g} (a composition of un-sampled Gaussian "
                                      "mechanisms; Dong, Roth, Su 2022, Cor. 3.3)")
    if not curve.curves:
        return (0.0, 0.0), True, "no private release: 0-GDP"
    a = np.geomspace(floor, 0.5, _GRID_POINTS)
    z = special.ndtri(a)
    mu_up, mu_lo, not_exact, at = -math.inf, 0.0, False, math.nan
    for side in _directions(curve):
        up, lo = side.tpr_upper(a), side.tpr_lower(a)
        with np.errstate(invalid="ignore", divide="ignore"):
            # on [a_i, a_{i+1}] the curve is ≤ U(a_{i+1}) and Φ⁻¹(α) ≥ Φ⁻¹(a_i): a sup over the whole range
            mu_up = max(mu_up, float(np.max(special.ndtri(up[1:]) - z[:-1])))
            mu_lo = max(mu_lo, float(np.max(special.ndtri(lo) - z)))
    mu_up = round_up(mu_up + 1e-12 * max(1.0, abs(mu_up))) if math.isfinite(mu_up) else math.inf
    mu_lo = max(0.0, round_down(mu_lo - 1e-12 * max(1.0, abs(mu_lo))))
    for side in _directions(curve):
        below = gdp_tpr_bound(a, mu_lo) - side.tpr_upper(a)
        if np.max(below) > 1e-12 and not not_exact:
            not_exact, at = True, float(a[int(np.argmax(below))])
    text = (f"mu-GDP with mu <= {mu_up:.6g} on FPR in [{floor:g}, 1/2] in both directions, i.e. on [{floor:g}, "
            f"1 - (TPR at {floor:g})] (certified); not mu-GDP for any mu < {mu_lo:.6g} (certified)")
    if not_exact:
        text += (f"; not exactly Gaussian: at FPR {at:.3g} the curve is below the Gaussian curve of mu = "
                 f"{mu_lo:.6g}, so no single mu describes it")
    return (mu_lo, mu_up), (False if not_exact else None), text


def _advantage(curve: TradeoffCurve) -> Tuple[float, float]:
    """Bounds on max_α (TPR − α) = δ(0) (total variation; the same for both orders)."""
    return curve.curves[0].pld.delta_bounds(0.0) if curve.curves else (0.0, 0.0)


def risk(
    event: PrivacyEvent,
    fpr: Any = DEFAULT_FPRS,
    *,
    fpr_floor: float = 1e-6,
    tail_mass: float = 1e-12,
    settings: Tuple[float, int] = RISK_SETTINGS,
) -> RiskReport:
    """Certified attack risk of ``event``: TPR bounds at ``fpr``, advantage and μ-GDP.

    Parameters
    ----------
    event : PrivacyEvent
        Any event the PLD accountant supports (Gaussian, Laplace, pure / approximate DP leaves,
        Poisson sampling under add_remove, sampling without replacement under replace_one, and
        compositions of these).
    fpr : sequence of float
        False-positive rates in [0, 1] (default :data:`DEFAULT_FPRS`).
    fpr_floor : float
        The μ-GDP upper bound covers FPR ∈ [fpr_floor, 1/2] in both directions of attack, in
        (0, 0.5).
    tail_mass : float
        Mass the PLD truncations may move (> 0), see :func:`dpcore.pld.tradeoff.tradeoff_curve`.
    settings : (float, int)
        Grid settings: (target deficit of the lower bound, longest window), default
        :data:`dpcore.pld.tradeoff.RISK_SETTINGS`.

    Returns
    -------
    RiskReport
    """
    fpr = check_fpr("fpr", fpr)
    floor = check_open_unit("fpr_floor", fpr_floor)
    if floor >= 0.5:
        raise ValueError(f"fpr_floor must be in (0, 0.5); got {fpr_floor!r}")
    curve = _risk_curve(event, tail_mass=tail_mass, settings=settings)
    mu, exact, statement = _gdp(curve, event, floor)
    details = {"method": _METHOD, "discretization": curve.discretization, "orders": len(curve.curves),
               "settings": list(settings), "tail_mass": tail_mass}
    return RiskReport(fpr, curve.tpr_lower(fpr), curve.tpr_upper(fpr), _advantage(curve), mu, exact, statement,
                      floor, event.relation, curve, details)


def _risk_curve(event: PrivacyEvent, **kwargs: Any) -> TradeoffCurve:
    """:func:`~dpcore.pld.tradeoff.tradeoff_curve`, its refusals without the PLD accountant's advice
    to use another accountant (the risk report has only this one)."""
    try:
        return tradeoff_curve(event, **kwargs)
    except ValueError as exc:
        text = re.sub(r"[;,]?\s*\(?use accountant=.*$", "", str(exc))
        if text == str(exc):
            raise
        raise type(exc)(f"{text} (the risk report is the PLD trade-off curve; it has no other accountant)") from None


# ----------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class RiskCalibration:
    """Outcome of :func:`calibrate_risk`.

    Attributes
    ----------
    parameter : str
        ``"noise_multiplier"`` or ``"steps"``.
    value : float or int
        The least noise multiplier (σ/Δ₂) or the most steps meeting the target.
    max_tpr, at_fpr : float
        The target: certified TPR ≤ ``max_tpr`` at FPR ``at_fpr``.
    tpr_upper : float
        The certified TPR bound of the returned value at ``at_fpr`` (≤ ``max_tpr``; the very
        computation the search used).
    event : PrivacyEvent
        The run with the returned value.
    evaluations : int
        Curves composed.
    bracket : (float, float)
        Final search bracket (safe end first).
    """

    parameter: str
    value: float
    max_tpr: float
    at_fpr: float
    tpr_upper: float
    event: PrivacyEvent
    evaluations: int
    bracket: Tuple[float, float]

    @property
    def relation(self) -> str:
        """Neighbouring relation of the guarantee."""
        return self.event.relation


#: relative width of the final noise-multiplier bracket of :func:`calibrate_risk`
SIGMA_TOLERANCE = 1e-4
#: search range of the noise multiplier (σ/Δ₂) and the step count of :func:`calibrate_risk`
SIGMA_RANGE = (1e-3, 1e4)
MAX_RISK_STEPS = 10**7


def _tpr_at(event: PrivacyEvent, at_fpr: float) -> float:
    return float(_risk_curve(event, settings=CALIBRATION_SETTINGS).tpr_upper([at_fpr])[0])


def calibrate_risk(
    max_tpr: float,
    at_fpr: float,
    *,
    sampling_rate: float,
    steps: Optional[int] = None,
    noise_multiplier: Optional[float] = None,
    sampling: str = "poisson",
    dataset_size: Optional[int] = None,
    relation: Optional[str] = None,
) -> RiskCalibration:
    """Least noise multiplier (given ``steps``) or most steps (given ``noise_multiplier``) of a
    (subsampled) Gaussian run whose certified TPR at FPR ``at_fpr`` is at most ``max_tpr``.

    The check is the certified upper bound of :func:`dpcore.pld.tradeoff.tradeoff_curve` (either
    direction of attack) on the upper-bound grid (:data:`CALIBRATION_SETTINGS`); the
    returned value passed it, and ``tpr_upper`` is that very bound. σ is found by bisection in
    log σ to a relative :data:`SIGMA_TOLERANCE` (the safe end returned), steps by an exact integer
    search.

    Parameters
    ----------
    max_tpr : float
        Largest allowed TPR, in (``at_fpr``, 1) (no mechanism has TPR below the FPR: a coin flip
        reaches it).
    at_fpr : float
        The FPR of the target, in (0, 1).
    sampling_rate : float
        q in (0, 1].
    steps : int, optional
        T ≥ 1; give exactly one of ``steps`` and ``noise_multiplier``.
    noise_multiplier : float, optional
        σ/Δ₂ > 0 (Δ₂ under ``relation``).
    sampling, dataset_size, relation
        As in :func:`dpcore.subsampled_gaussian_event`.

    Returns
    -------
    RiskCalibration
    """
    from .calibration import subsampled_gaussian_event

    at_fpr = check_open_unit("at_fpr", at_fpr)
    max_tpr = check_open_unit("max_tpr", max_tpr)
    if not max_tpr > at_fpr:
        raise ValueError(f"max_tpr must be in (at_fpr, 1) = ({at_fpr!r}, 1): every mechanism allows TPR = FPR "
                         f"(a coin flip); got {max_tpr!r}")
    check_sampling_rate("sampling_rate", sampling_rate)
    if (steps is None) == (noise_multiplier is None):
        raise ValueError("give exactly one of steps (to calibrate noise_multiplier) and noise_multiplier "
                         "(to calibrate steps)")

    def make(sigma: float, t: int) -> PrivacyEvent:
        return subsampled_gaussian_event(sigma, sampling_rate, t, sampling=sampling, dataset_size=dataset_size,
                                         relation=relation)

    if noise_multiplier is None:
        steps = check_positive_int("steps", steps)
        make(1.0, steps)  # validates the schedule before any search
        return _calibrate_sigma(lambda s: make(s, steps), max_tpr, at_fpr)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    make(sigma, 1)
    return _calibrate_steps(lambda t: make(sigma, t), max_tpr, at_fpr)


def _calibrate_sigma(event_fn: Callable[[float], PrivacyEvent], max_tpr: float, at_fpr: float) -> RiskCalibration:
    count = [0]

    def ok(sigma: float) -> Tuple[bool, float]:
        count[0] += 1
        tpr = _tpr_at(event_fn(sigma), at_fpr)
        return tpr <= max_tpr, tpr

    lo, hi = SIGMA_RANGE
    good, tpr_hi = ok(hi)
    if not good:
        raise ValueError(f"max_tpr={max_tpr!r} at at_fpr={at_fpr!r} is not reached even at noise multiplier "
                         f"{hi:g} (certified TPR there {tpr_hi:.6g}); raise max_tpr")
    bad, _ = ok(lo)
    if bad:
        return RiskCalibration("noise_multiplier", lo, max_tpr, at_fpr, _tpr_at(event_fn(lo), at_fpr), event_fn(lo),
                               count[0], (lo, lo))
    while hi / lo > 1.0 + SIGMA_TOLERANCE:
        mid = math.sqrt(lo * hi)
        good, tpr = ok(mid)
        if good:
            hi, tpr_hi = mid, tpr
        else:
            lo = mid
    return RiskCalibration("noise_multiplier", hi, max_tpr, at_fpr, tpr_hi, event_fn(hi), count[0], (hi, lo))


def _calibrate_steps(event_fn: Callable[[int], PrivacyEvent], max_tpr: float, at_fpr: float) -> RiskCalibration:
    count = [0]

    def tpr_of(t: int) -> float:
        count[0] += 1
        return _tpr_at(event_fn(t), at_fpr)

    tpr_lo = tpr_of(1)
    if tpr_lo > max_tpr:
        raise ValueError(f"max_tpr={max_tpr!r} at at_fpr={at_fpr!r} is exceeded by a single step (certified TPR "
                         f"{tpr_lo:.6g}); raise noise_multiplier or max_tpr")
    lo, hi = 1, 2
    while hi <= MAX_RISK_STEPS:
        tpr = tpr_of(hi)
        if tpr > max_tpr:
            break
        lo, tpr_lo, hi = hi, tpr, 2 * hi
    else:
        raise ValueError(f"max_tpr={max_tpr!r} at at_fpr={at_fpr!r} still holds after {MAX_RISK_STEPS} steps "
                         "(the search limit); lower noise_multiplier or max_tpr, or raise sampling_rate")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        tpr = tpr_of(mid)
        if tpr <= max_tpr:
            lo, tpr_lo = mid, tpr
        else:
            hi = mid
    return RiskCalibration("steps", lo, max_tpr, at_fpr, tpr_lo, event_fn(lo), count[0], (lo, hi))


# ----------------------------------------------------------------------------- plot
def plot_tradeoff(
    report: RiskReport,
    *,
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    ax: Any = None,
    log: bool = True,
) -> Any:
    """Draw the certified TPR band against the (ε, δ)-DP bound and the μ-GDP curve.

    Parameters
    ----------
    report : RiskReport
        From :func:`risk`.
    epsilon, delta : float, optional
        An (ε, δ) guarantee of the same run (e.g. ``dpcore.get_epsilon(event, delta)``) whose
        TPR bound :func:`dp_tpr_bound` is drawn too.
    ax : matplotlib Axes, optional
        Where to draw (default: a new ``matplotlib.figure.Figure``; no pyplot state).
    log : bool
        Logarithmic FPR axis (where the low-FPR attacks that matter are visible).

    Returns
    -------
    matplotlib Axes
    """
    if ax is None:
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:  # optional dependency
            raise ImportError("plot_tradeoff needs matplotlib: pip install dpcore[plot]") from exc
        ax = Figure(figsize=(5.5, 4.5)).add_subplot()
    a = _fpr_grid(report.fpr_floor)
    lower, upper = report.curve.tpr_lower(a), report.curve.tpr_upper(a)
    ax.fill_between(a, lower, upper, color="C0", alpha=0.35, lw=0, label="certified TPR (lower-upper)")
    ax.plot(a, upper, color="C0", lw=1.2)
    if epsilon is not None and delta is not None:
        ax.plot(a, dp_tpr_bound(a, epsilon, delta), "C3--", lw=1.2, label=f"({epsilon:.3g}, {delta:.2g})-DP bound")
    mu = report.gdp_mu[1]
    if math.isfinite(mu):
        ax.plot(a, gdp_tpr_bound(a, mu), "C2:", lw=1.5, label=f"{mu:.3g}-GDP curve")
    ax.plot(a, a, color="0.6", lw=0.8, label="coin flip (TPR = FPR)")
    return finish_tradeoff_axes(ax, floor=report.fpr_floor, log=log, ylabel="true-positive rate of the best attack",
                                title=f"attack risk ({report.relation})")


def finish_tradeoff_axes(ax: Any, *, floor: float, log: bool, ylabel: str, title: str) -> Any:
    """Axes of a trade-off plot (FPR from ``floor`` to 1, logarithmic if ``log``; TPR in [0, 1]),
    labels, title and legend; returns ``ax``. Shared by :func:`plot_tradeoff` and the audits' plots."""
    if log:
        ax.set_xscale("log")
        ax.set_xlim(floor, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    return ax
