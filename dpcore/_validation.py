"""Input validation shared by every public entry point.

Each checker raises :class:`ValueError` whose message names the argument and the allowed range,
e.g. ``"delta must be in (0, 1); got 1.5"``. Nothing is ever clamped silently.
"""

from __future__ import annotations

import math
import sys
from numbers import Complex, Integral, Number, Real
from typing import Iterable, Optional

import numpy as np

RELATIONS = ("add_remove", "replace_one")


def _as_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the float range (e.g. 10**400): refused, never clamped to inf
        raise ValueError(f"{name} must be a real number within the float range (|x| <= 1.8e308); "
                         f"got an integer of {int(value).bit_length()} bits") from None
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``value`` as float if it is in (0, inf) (or (0, inf] with ``allow_inf``)."""
    x = _as_real(name, value)
    upper = "inf]" if allow_inf else "inf)"
    if not x > 0 or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be in (0, {upper}; got {value!r}")
    return x


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as float if it is finite and in [0, inf)."""
    x = _as_real(name, value)
    if not (0 <= x < math.inf):
        raise ValueError(f"{name} must be in [0, inf); got {value!r}")
    return x + 0.0  # -0.0 → 0.0 (a result echoing it printed "epsilon -0")


def check_open_unit(name: str, value: object) -> float:
    """Return ``value`` as float if it is in the open interval (0, 1) (e.g. δ)."""
    x = _as_real(name, value)
    if not 0 < x < 1:
        raise ValueError(f"{name} must be in (0, 1); got {value!r}")
    return x


def check_half_open_unit(name: str, value: object) -> float:
    """Return ``value`` as float if it is in [0, 1) (e.g. a momentum coefficient)."""
    x = _as_real(name, value)
    if not 0 <= x < 1:
        raise ValueError(f"{name} must be in [0, 1); got {value!r}")
    return x


#: Least nonzero δ accepted by every entry point (Python API and CLI): the smallest normal float64,
#: 2.2250738585072014e-308. Below it nothing is certified honestly: a subnormal δ has lost its relative
#: precision — the decimal a user types is rounded to a multiple of 2⁻¹⁰⁷⁴ ≈ 4.9e-324, so the δ certified
#: can exceed the δ asked for by up to 65 % (``3e-324`` is read as ``4.9e-324``) — and an accountant's
#: error budget, a fraction of δ, underflows (the PLD accountant's tail mass 1e-4·δ already needs
#: δ ≥ 2.2e-304). No application needs such a δ (δ ≪ 1/n for every realisable data set size n).
MIN_DELTA = sys.float_info.min

#: Why a nonzero δ below :data:`MIN_DELTA` is refused; the one wording of the Python API and the CLI.
SUBNORMAL_DELTA_REASON = "a subnormal delta has lost its precision"


def check_delta(name: str, value: object) -> float:
    """δ of an (ε, δ) guarantee: must be in (0, 1) and at least :data:`MIN_DELTA` (subnormals are refused).

    The same rule as the command line's ``--delta`` (:func:`dpcore.cli.delta_type`), so that a δ the
    CLI refuses is refused by ``get_epsilon``, ``calibrate`` and the estimators' ``delta=`` too.
    """
    x = check_open_unit(name, value)
    if x < MIN_DELTA:
        raise ValueError(f"{name} must be in (0, 1) and at least {MIN_DELTA!r} ({SUBNORMAL_DELTA_REASON}); "
                         f"got {value!r}")
    return x


def check_sampling_rate(name: str, value: object) -> float:
    """Sampling probability: must be in (0, 1]."""
    x = _as_real(name, value)
    if not 0 < x <= 1:
        raise ValueError(f"{name} must be in (0, 1]; got {value!r}")
    return x


def check_positive_int(name: str, value: object, *, minimum: int = 1, maximum: Optional[int] = None) -> int:
    """Return ``value`` as int if it is an integer ≥ ``minimum`` (and ≤ ``maximum`` when given)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if isinstance(value, (Integral, np.integer)):
        n = int(value)
    elif isinstance(value, (Real, np.floating)) and float(value).is_integer():
        n = int(value)
    else:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if maximum is not None and n > maximum:
        shown = f"{n}" if n < 10**20 else f"an integer of {len(str(n))} digits"
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum:.4g}]; got {shown}")
    return n


def check_bool(name: str, value: object) -> bool:
    """A flag: ``True`` or ``False`` (NumPy bools too); anything else — ``"no"``, ``1``, ``None`` — is refused rather
    than read by its truth value (``"no"`` is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


#: the largest dimension an array can have (NumPy's index type)
MAX_DIMENSION = int(np.iinfo(np.intp).max)


def check_dimension(name: str, value: object, *, minimum: int = 1) -> int:
    """A vector dimension: an integer in [``minimum``, :data:`MAX_DIMENSION`] (10**400 was stored as given)."""
    return check_positive_int(name, value, minimum=minimum, maximum=MAX_DIMENSION)


def check_relation(name: str, value: object) -> str:
    """Neighbouring relation: ``"add_remove"`` or ``"replace_one"``."""
    if value not in RELATIONS:
        raise ValueError(f"{name} must be one of {RELATIONS}; got {value!r}")
    return str(value)


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """``value`` must be one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return str(value)


#: Largest Rényi order accepted where a bound is a sum over the integers up to the order
#: (subsampling bounds): 10⁶ (the default grid stops at 8192).
MAX_SUMMED_ORDER = 1e6


def check_orders(name: str, orders: object, *, maximum: float = math.inf) -> np.ndarray:
    """Rényi orders: a non-empty 1-D array of finite reals in (1, ``maximum``], returned as float64."""
    arr = np.atleast_1d(check_real_array(name, orders))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of orders in (1, inf); got {orders!r}")
    if not np.all(np.isfinite(arr)) or not np.all(arr > 1):
        raise ValueError(f"{name} must contain only finite orders in (1, inf); got {orders!r}")
    if np.any(arr > maximum):
        raise ValueError(f"{name} must be in (1, {maximum:g}] for this bound (a sum over the integer orders "
                         f"up to each order); got {float(np.max(arr)):g}")
    return arr


#: dtype kinds of arrays of real numbers: bool, signed and unsigned integers, floats.
_REAL_KINDS = "biuf"


def _is_real_number(x: object) -> bool:
    return isinstance(x, Number) and (isinstance(x, Real) or not isinstance(x, Complex))


def check_real_array(name: str, value: object) -> np.ndarray:
    """``value`` (a scalar or array_like of real numbers) as a float64 ndarray.

    ``np.asarray(value, dtype=float)`` alone would silently drop the imaginary part of complex
    input and parse strings such as ``"1.5"``; both are refused here, as are ragged nestings and
    object arrays holding anything but real numbers. Finiteness is the caller's check.

    Raises
    ------
    ValueError
        Naming ``name`` and the offending dtype.
    """
    try:
        arr = np.asarray(value)
    except ValueError:  # a ragged nesting
        raise ValueError(f"{name} must be a real scalar or a rectangular array of real numbers; "
                         f"got a ragged sequence") from None
    if arr.dtype.kind == "O":  # Python objects: real numbers only (ints of any size, floats, Fractions, Decimals)
        bad = next((x for x in arr.flat if not _is_real_number(x)), None)
        if bad is not None:
            raise ValueError(f"{name} must contain only real numbers; got an element {bad!r} "
                             f"of type {type(bad).__name__}")
    elif arr.dtype.kind not in _REAL_KINDS:
        what = {"c": "complex numbers (the imaginary part is never dropped silently)",
                "U": "strings", "S": "bytes"}.get(arr.dtype.kind, f"dtype {arr.dtype}")
        raise ValueError(f"{name} must contain only real numbers; got {what}")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must contain only real numbers representable as float64; {exc}") from None


def check_rdp_only_options(accountant: str, orders: object, optimize_order: Optional[bool]) -> None:
    """Refuse ``orders`` / ``optimize_order`` for an accountant that would ignore them.

    They select the Rényi orders of the RDP accountant; ``"auto"`` passes them to its RDP part.
    Any other accountant (``"pld"``, ``"moments"``, ``"analytic_gaussian"`` …) never reads them,
    so giving them there is refused rather than silently ignored.
    """
    if accountant in ("rdp", "auto"):
        return
    for name, value in (("orders", orders), ("optimize_order", optimize_order)):
        if value is not None:
            raise ValueError(f"{name} applies only to accountant='rdp' or 'auto' (the Renyi orders of the RDP "
                             f"accountant); accountant={accountant!r} would ignore it")
