"""dpcore — high-precision differential-privacy accounting.

The accounting core of the dpcore distribution: privacy events, Rényi-DP and moments accountants,
composition theorems, subsampling and shuffling amplification, conversions, calibration and
certification. It imports none of ``mechanisms``, ``algorithms`` or ``audits``.

Quick start
-----------
>>> import dpcore
>>> event = dpcore.SelfComposedEvent(
...     dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.1), 0.01), 10_000)
>>> round(dpcore.get_epsilon(event, 1e-5).epsilon, 3)  # doctest: +SKIP
5.632
"""

from importlib import import_module
from typing import Any

from .events import *  # noqa: F401,F403
from .events import __all__ as _event_names
from .result import CalibrationResult, CertificationError, PrivacyResult

__version__ = "0.1.0"

# Public functions live in single-purpose submodules and are loaded on first use (PEP 562), which
# keeps ``import dpcore`` fast for the command line.
_LAZY = {
    "get_epsilon": "accounting",
    "get_delta": "accounting",
    "ACCOUNTANTS": "accounting",
    "compute_rdp": "rdp_accountant",
    "calibrate": "calibration",
    "calibrate_noise_multiplier": "calibration",
    "calibrate_steps": "calibration",
    "calibrate_sampling_rate": "calibration",
    "subsampled_gaussian_event": "calibration",
    "classic_gaussian_sigma": "gaussian_mechanism",
    "analytic_gaussian_delta": "gaussian_mechanism",
    "analytic_gaussian_epsilon": "gaussian_mechanism",
    "analytic_gaussian_sigma": "gaussian_mechanism",
    "gaussian_privacy_profile": "gaussian_mechanism",
    "basic_composition": "composition",
    "advanced_composition": "composition",
    "optimal_composition_epsilon": "composition",
    "optimal_composition_delta": "composition",
    "shuffle_epsilon": "shuffling",
    "shuffle_delta": "shuffling",
    "shuffle_closed_form_epsilon": "shuffling",
    "shuffle_numeric_epsilon": "shuffling",
    "rdp_to_epsilon": "conversions",
    "rdp_to_delta": "conversions",
    "DEFAULT_ORDERS": "orders",
    "RepeatAndSelectEvent": "selection",
    "selection_event": "selection",
    "liu_talwar_selection": "selection",
    "calibrate_selected_noise_multiplier": "selection",
}

__all__ = [*_event_names, "PrivacyResult", "CalibrationResult", "CertificationError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpcore' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(__all__)
