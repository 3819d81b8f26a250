"""The estimators that test a target's claimed trade-off curve (its privacy event), one entry point.

``"curve"`` — two-sample, several thresholds with family-wise validity (:mod:`audits.fdp_curve`);
``"fdp-one-run"`` — f-DP auditing in one run, Mahloujifar, Melis, Chaudhuri 2024
(:mod:`audits.fdp_one_run`). Both need ``target.event`` (:mod:`audits.fdp_claim`); their verdict is
the rejection of that claim, and ε_lb is read in the claim's noise-scaled family.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

from dpcore.events import PrivacyEvent

from .fdp_claim import CurveFamily
from .fdp_curve import curve_test_estimate
from .fdp_one_run import fdp_one_run_estimate
from .statistics import Estimate

__all__ = ["CURVE_ESTIMATORS", "estimate_against_curve", "claimed_event"]

CURVE_ESTIMATORS = ("curve", "fdp-one-run")


def claimed_event(target: object, estimator: str) -> PrivacyEvent:
    """The target's privacy event, or a ``ValueError`` saying why ``estimator`` needs it."""
    event = getattr(target, "event", None)
    if event is None:
        raise ValueError(f"estimator {estimator!r} tests the target's claimed trade-off curve and needs its privacy "
                         f"event (target.event, e.g. FunctionTarget(..., event=...)); target "
                         f"{getattr(target, 'name', target)!r} has none: use 'clopper-pearson' or 'one-run'")
    return event


def estimate_against_curve(estimator: str, data: Tuple[np.ndarray, np.ndarray], event: PrivacyEvent, *,
                           delta: float, confidence: float) -> Estimate:
    """Run ``"curve"`` on (scores0, scores1) or ``"fdp-one-run"`` on (included, scores) against ``event``."""
    family = CurveFamily(event)
    if estimator == "curve":
        return curve_test_estimate(data[0], data[1], family, delta, confidence)
    return fdp_one_run_estimate(data[0], data[1], family, delta, confidence)
