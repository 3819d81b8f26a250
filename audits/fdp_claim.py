"""The claimed trade-off curve of an audit target, and the one-parameter family the f-DP estimators report ε in.

A target that carries its privacy event (``target.event``, the dpcore event its claim was computed
from) claims more than one (ε, δ): every membership test between its neighbouring outputs, in
either direction, has TPR ≤ the event's trade-off curve (Dong, Roth, Su 2022, Def. 2.3). That
curve comes certified from :func:`dpcore.pld.tradeoff.tradeoff_curve` (its upper bound, maximum
over the orders of neighbours), so it holds for subsampled, clipped or composed releases as
well as for single Gaussians — no noise-family label is involved.

:class:`ClaimedCurve` tabulates it for the estimators: ``tpr(a)`` is an upper bound of the claimed
TPR at any FPR a (the tabulated bound at the next table point above a; the curve is
non-decreasing), and :meth:`ClaimedCurve.hull` its least concave majorant, which the one-run
analysis needs.

:class:`CurveFamily` is the family E(s) the estimators report ε in: the claimed event with every
noise scale divided by s (Gaussian and Laplace noise multipliers σ → σ/s), every pure-DP ε and
approximate-DP ε multiplied by s. s = 1 is the claim; s > 1 is a release with less noise than
claimed (a σ/√2 bug is s = √2). An estimator rejects E(s) for all s below some s*; ε_lb is the
certified *lower* PLD bound of ε(E(s*), δ). The rejection of s = 1 (the verdict) holds for any
release; reading s* as an ε needs the release to be in the family (the claimed mechanism with
some noise scale), as the Gaussian-DP estimator needs a Gaussian release (Nasr et al. 2023, §4).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from dpcore.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    UnsupportedEventError,
)
from dpcore.pld.leaves import _lower_hull
from dpcore.pld.tradeoff import TradeoffCurve, tradeoff_curve

__all__ = ["ClaimedCurve", "CurveFamily", "scaled_event", "CURVE_SETTINGS", "SCALE_RANGE"]

#: grid settings of the claimed curves: the accountant's default leaf resolution, float64 FFTs —
#: the certified upper bound, all the estimators use, is as tight as on finer grids
CURVE_SETTINGS = (192, 4096, 1 << 30)
#: table points per half of the FPR range (geometric towards 0 and towards 1), and evenly spaced
#: points on [0, 1] (the middle of the curve, where the geometric points are sparse)
_TABLE_POINTS = 2000
_LINEAR_POINTS = 4000
#: smallest table FPR above 0
_TABLE_FLOOR = 1e-15
#: range of the family parameter s searched by the estimators
SCALE_RANGE = (1.0 / 64.0, 64.0)


def scaled_event(event: PrivacyEvent, s: float) -> PrivacyEvent:
    """``event`` with its noise scaled by 1/s (ε of pure and approximate DP leaves by s).

    Raises :class:`~dpcore.events.UnsupportedEventError` for leaves without a noise scale
    (``MechanismEvent``, shuffling, DP-SRM's paper event).
    """
    if isinstance(event, GaussianEvent):
        return GaussianEvent(event.noise_multiplier / s, event.relation)
    if isinstance(event, LaplaceEvent):
        return LaplaceEvent(event.noise_multiplier / s, event.relation)
    if isinstance(event, PureDpEvent):
        return PureDpEvent(event.epsilon * s, event.relation)
    if isinstance(event, ApproxDpEvent):
        return ApproxDpEvent(event.epsilon * s, event.delta, event.relation)
    if isinstance(event, NoOpEvent):
        return event
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent)):
        return dataclasses.replace(event, event=scaled_event(event.event, s))
    if isinstance(event, ComposedEvent):
        return ComposedEvent(tuple(scaled_event(e, s) for e in event.events))
    raise UnsupportedEventError(f"{type(event).__name__} has no noise scale to vary; the f-DP estimators need "
                                "an event built from Gaussian, Laplace, pure-DP or (epsilon, delta) leaves")


def _table_fprs() -> np.ndarray:
    half = np.geomspace(_TABLE_FLOOR, 0.5, _TABLE_POINTS)
    return np.unique(np.concatenate([[0.0], half, 1.0 - half, np.linspace(0.0, 1.0, _LINEAR_POINTS), [1.0]]))


class ClaimedCurve:
    """Upper bounds on the claimed TPR at any FPR, tabulated from a certified trade-off curve.

    Parameters
    ----------
    curve : TradeoffCurve
        Certified curve of the claim (both orders of neighbours).
    """

    def __init__(self, curve: TradeoffCurve):
        self.x = _table_fprs()
        self.y = np.maximum.accumulate(np.minimum(curve.tpr_upper(self.x), 1.0))
        self.y[-1] = 1.0
        self._hull: Optional[Tuple[np.ndarray, np.ndarray]] = None

    def tpr(self, fpr) -> np.ndarray:
        """Upper bound on the claimed TPR at each FPR in [0, 1] (non-decreasing in the FPR)."""
        a = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
        return self.y[np.searchsorted(self.x, a, side="left")]

    def hull(self) -> Tuple[np.ndarray, np.ndarray]:
        """(x, y) vertices of the least concave majorant B of :meth:`tpr` on [0, 1] (B(1) = 1).

        On (x_i, x_{i+1}] the bound is y_{i+1}, so the majorant is the upper hull of the corners
        (x_i, y_{i+1}) and (0, y_0), (1, 1) — the lower hull of their mirror image (Andrew's monotone
        chain, :func:`dpcore.pld.leaves._lower_hull`).
        """
        if self._hull is None:
            px = self.x
            py = np.concatenate([self.y[1:], [1.0]])
            py[0] = max(py[0], self.y[0])
            idx = _lower_hull(px, -py)
            self._hull = (px[idx].copy(), py[idx].copy())
        return self._hull


class CurveFamily:
    """The claimed curve and its noise-scaled family E(s) (module docstring), memoised by s.

    Parameters
    ----------
    event : PrivacyEvent
        The claim's event.
    settings : (int, int, int)
        Grid settings of :func:`dpcore.pld.tradeoff.tradeoff_curve`.
    """

    def __init__(self, event: PrivacyEvent, settings: Tuple[int, int, int] = CURVE_SETTINGS):
        self.event = event
        self.settings = settings
        self._curves: Dict[float, ClaimedCurve] = {}
        scaled_event(event, 1.0)  # refuse unscalable events up front

    def __call__(self, s: float) -> ClaimedCurve:
        """The (tabulated, certified) curve of E(s)."""
        s = float(s)
        if s not in self._curves:
            self._curves[s] = ClaimedCurve(tradeoff_curve(scaled_event(self.event, s), settings=self.settings))
        return self._curves[s]

    def epsilon_lower(self, s: float, delta: float) -> float:
        """Certified lower bound of ε(E(s), δ) (the PLD's optimistic bound), 0 for s ≤ 0."""
        from dpcore.pld import pld_epsilon

        if not s > 0:
            return 0.0
        return float(pld_epsilon(scaled_event(self.event, s), delta).details["bounds"][0])

    def largest_rejected(self, rejects: Callable[[ClaimedCurve], bool], tolerance: float = 1e-3) -> float:
        """s* = sup{s ∈ :data:`SCALE_RANGE` : ``rejects(E(s))``} by bisection in log s (0 if none).

        ``rejects`` must be monotone (rejecting E(s) implies rejecting E(s′) for s′ < s, whose
        curve lies below). The lower end of the final bracket is returned (relative width
        ``tolerance``).
        """
        lo, hi = SCALE_RANGE
        if not rejects(self(lo)):
            return 0.0
        if rejects(self(hi)):
            return hi
        while hi / lo > 1.0 + tolerance:
            mid = math.sqrt(lo * hi)
            if rejects(self(mid)):
                lo = mid
            else:
                hi = mid
        return lo
