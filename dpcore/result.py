"""Result records returned by accountants and calibration: the number plus how it was obtained."""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Optional, Tuple

__all__ = ["PrivacyResult", "CalibrationResult", "CertificationError", "NONFINITE_JSON", "jsonable", "round_up",
           "round_down"]


class CertificationError(ArithmeticError):
    """The fast result could not be confirmed as an upper bound by the high-precision recomputation."""


def round_up(x: Any) -> float:
    """Smallest float64 ≥ ``x`` (``x`` may be an mpmath ``mpf``, a Fraction or a float); ``inf`` above
    the float range."""
    try:
        f = float(x)
    except OverflowError:  # a Fraction or int beyond the float range (float(mpf) gives ±inf itself)
        return math.inf if x > 0 else -sys.float_info.max
    if math.isfinite(f) and f < x:
        f = math.nextafter(f, math.inf)
    return f


def round_down(x: Any) -> float:
    """Largest float64 ≤ ``x``."""
    f = float(x)
    if math.isfinite(f) and f > x:
        f = math.nextafter(f, -math.inf)
    return f


@dataclass(frozen=True)
class PrivacyResult:
    """An (ε, δ) guarantee with its provenance.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee; ε is an upper bound (rounded up), in nats.
    relation : str
        Neighbouring relation the guarantee is for.
    accountant : str
        ``"rdp"``, ``"moments"``, ``"analytic_gaussian"``, ``"composition"``, ``"shuffle"`` …
    method : str
        The conversion / theorem that produced the number (e.g. ``"rdp->dp:balle2020"``).
    order : float or None
        Optimal Rényi order / moment λ, when an order search was involved.
    precision : str
        ``"float64"`` or ``"mpmath:<dps> digits"``.
    certified : bool
        Whether an independent high-precision recomputation confirmed the number.
    details : dict
        Extra, method-specific information (e.g. RDP values, certification gap).
    """

    epsilon: float
    delta: float
    relation: str
    accountant: str
    method: str
    order: Optional[float] = None
    precision: str = "float64"
    certified: bool = False
    details: Dict[str, Any] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        """The guarantee and its provenance; ``details`` summarised by its keys (it may hold long
        arrays, e.g. the RDP curve over 159 orders — read ``.details`` or ``to_dict()`` for them)."""
        head = ", ".join(f"{k}={getattr(self, k)!r}" for k in
                         ("epsilon", "delta", "relation", "accountant", "method", "order", "precision", "certified"))
        return f"PrivacyResult({head}, details=<keys: {', '.join(map(str, self.details)) or 'none'}>)"

    def to_dict(self) -> Dict[str, Any]:
        """JSON-serialisable dictionary (:func:`jsonable`: ``inf`` is written as ``"inf"``)."""
        return jsonable(asdict(self))


@dataclass(frozen=True)
class CalibrationResult:
    """A calibrated parameter and the guarantee it achieves (checked: ``privacy.epsilon ≤ target``).

    ``iterations`` counts the accountant evaluations; ``bracket`` is the *initial* search bracket
    (``lower``, ``upper``) of :func:`dpcore.calibrate`, which the search widens geometrically within
    its bounds — ``value`` may lie outside it (σ = 3.81 from the default (0.5, 2.0) for DP-SGD at ε = 1).
    """

    parameter: str
    value: float
    target_epsilon: float
    target_delta: float
    privacy: PrivacyResult
    iterations: int
    bracket: Tuple[float, float]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "parameter": self.parameter,
            "value": self.value,
            "target_epsilon": self.target_epsilon,
            "target_delta": self.target_delta,
            "iterations": self.iterations,
            "bracket": list(self.bracket),
            "privacy": self.privacy.to_dict(),
        }


#: How a non-finite float is written in JSON: strict JSON (RFC 8259) has no Infinity or NaN.
NONFINITE_JSON = {math.inf: "inf", -math.inf: "-inf"}


def jsonable(obj: Any) -> Any:
    """``obj`` as strict-JSON-ready data: arrays and NumPy scalars as Python lists and numbers, dict
    keys as strings, ``±inf`` as the strings ``"inf"`` / ``"-inf"`` (NaN as ``"nan"``) and anything
    unknown as its repr. ``json.dumps(jsonable(x), allow_nan=False)`` never fails on a float."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):  # ndarray or NumPy scalar
        return jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return NONFINITE_JSON.get(obj, "nan")
    if isinstance(obj, (int, float, str, bool)) or obj is None:
        return obj
    return repr(obj)
