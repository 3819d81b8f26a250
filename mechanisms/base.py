"""The plug every noise mechanism implements.

A :class:`Mechanism` is a sampler plus its privacy description. dpcore never needs to know the
concrete class: it only sees the :mod:`dpcore.events` event returned by :meth:`privacy_event`. A
mechanism written by a user therefore composes with the built-ins and is subsampled by the
accountant without any change to dpcore, as long as it states at least one of its curves
(:meth:`Mechanism.rdp`, :meth:`Mechanism.privacy_profile`, :attr:`Mechanism.pure_epsilon`).

Neighbouring relation. A mechanism is constructed with a ``sensitivity``: the caller's bound on the
change of the query between neighbours *under the relation they pass to*
:meth:`Mechanism.privacy_event` (``"add_remove"`` or ``"replace_one"``). The mechanism itself is the
same object under both relations; only the sensitivity the caller proves differs (a sum of
per-example gradients clipped to C has Δ₂ = C under add/remove and 2C under replace-one).
"""

from __future__ import annotations

import math
import sys
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Callable, ClassVar, Optional, Tuple, Union

import numpy as np

import dpcore
from dpcore import events as ev
from dpcore._validation import check_delta, check_dimension, check_positive, check_real_array, check_relation
from dpcore.result import round_up

from ._int64 import INT64_SAFE, in_int64_safe_range, integer_array

__all__ = [
    "Mechanism",
    "VALUE_BOUND_FACTOR",
    "MAX_SCALE",
    "check_calibrated_scale",
    "as_generator",
    "check_finite_array",
    "check_integer_array",
    "clamp_to_bound",
    "value_bound",
    "check_approx_target",
    "check_norm_order",
    "least_noise_scale",
    "greatest_noise_multiplier",
    "convert_sensitivity",
    "least_passing",
]

RngLike = Union[None, int, np.integer, np.random.Generator]

#: A float sampler with noise scale s clamps every entry of the value to ±VALUE_BOUND_FACTOR·s.
#: Below that bound the float spacing is ≤ 2⁻¹²·s, so the noise is never rounded away; beyond it a
#: float sum value + noise saturates (e.g. 1e308 + N(0, 1) == 1e308 releases the value itself).
VALUE_BOUND_FACTOR = 2.0**40
#: Largest noise scale a calibration returns (≈ 2⁹⁸⁴): beyond it the value bound of a float
#: sampler, VALUE_BOUND_FACTOR·scale, overflows.
MAX_SCALE = sys.float_info.max / VALUE_BOUND_FACTOR


def as_generator(rng: RngLike) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from ``None`` (fresh entropy), a seed or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be None, a non-negative integer seed or a numpy.random.Generator; got {rng!r}")


def check_finite_array(name: str, value: object, *, last_axis: Optional[int] = None) -> np.ndarray:
    """``value`` as a float64 array with only finite, real entries (complex, strings refused).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    value : scalar or array_like
        The query answer(s).
    last_axis : int, optional
        Required length of the last axis (the dimension of one output); ``None`` accepts any shape.
    """
    arr = check_real_array(name, value)  # complex and strings are refused, never made real
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    if last_axis is not None and (arr.ndim == 0 or arr.shape[-1] != last_axis):
        raise ValueError(
            f"{name} must have last axis of length dimension={last_axis}; got shape {arr.shape}"
        )
    return arr


def check_integer_array(name: str, value: object) -> np.ndarray:
    """``value`` as an array of integers of any magnitude: int64, or dtype object (Python ints) when
    some entry has magnitude ≥ 2⁶².

    Accepts integer arrays, Python integers and integer-valued finite floats (every float of
    magnitude ≥ 2⁵³ is an integer, so no magnitude is refused).
    """
    try:
        arr = np.asarray(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer scalar or a rectangular array of integers; got a ragged "
                         "sequence") from None
    if arr.dtype.kind == "O":
        return integer_array([_as_integer(name, x) for x in arr.ravel()]).reshape(arr.shape)
    if arr.dtype.kind in "iu":
        if not in_int64_safe_range(arr):
            return np.array([int(x) for x in arr.ravel()], dtype=object).reshape(arr.shape)
        return arr.astype(np.int64)
    arr = check_finite_array(name, arr)
    if not np.all(arr == np.round(arr)):
        raise ValueError(f"{name} must contain only integers")
    if arr.size and float(np.max(np.abs(arr))) >= INT64_SAFE:
        return np.array([int(x) for x in arr.ravel()], dtype=object).reshape(arr.shape)
    return arr.astype(np.int64)


def _as_integer(name: str, x: object) -> int:
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    f = float(check_finite_array(name, x))
    if not f.is_integer():
        raise ValueError(f"{name} must contain only integers")
    return int(f)


def value_bound(name: str, scale: float) -> float:
    """Public bound VALUE_BOUND_FACTOR·``scale`` on the entries a float sampler adds noise to.

    Raises ``ValueError`` naming ``name`` when it is not a finite float (scale ≥ 2⁹⁸⁴): such noise
    would itself overflow.
    """
    bound = VALUE_BOUND_FACTOR * scale
    if not math.isfinite(bound):
        raise ValueError(f"{name} must be in (0, 2**984) so that noise and values stay finite; got {scale!r}")
    return bound


def check_calibrated_scale(what: str, scale: object, **inputs: object) -> object:
    """``scale``, a calibration's result (a float or an exact ``Fraction``), if it is below :data:`MAX_SCALE`.

    Raises ``ValueError`` naming ``inputs`` (the arguments that made it too large, e.g.
    ``epsilon=1e-320, sensitivity=1.0``) otherwise, instead of an overflow deep in the arithmetic.
    """
    if not scale < MAX_SCALE:  # type: ignore[operator]
        try:
            size = f"{float(scale):.6g}"  # type: ignore[arg-type]
        except OverflowError:
            size = "above 1.8e308"
        given = ", ".join(f"{k}={v!r}" for k, v in inputs.items())
        raise ValueError(f"the least {what} for {given} is {size}, beyond 2**984, the largest noise scale a float "
                         f"sampler can carry; raise epsilon{' (or delta)' if 'delta' in inputs else ''} or lower the "
                         "sensitivity")
    return scale


def clamp_to_bound(arr: np.ndarray, bound: float) -> np.ndarray:
    """Entries of ``arr`` clamped to [−bound, bound].

    Clamping to a public bound is 1-Lipschitz in every coordinate, so it never increases any ℓp
    distance between neighbours' values: the sensitivity, and the guarantee, are unchanged for
    every finite input, and no error depends on the data.
    """
    return np.clip(arr, -bound, bound)


def check_approx_target(epsilon: object, delta: object, mechanism: str) -> Tuple[float, float]:
    """Validated (ε, δ) target of an approximate-DP calibration: ε in (0, ∞), δ in (0, 1) (not None)."""
    eps = check_positive("epsilon", epsilon)
    if delta is None:
        raise ValueError(f"delta must be in (0, 1) for the {mechanism} mechanism; got None")
    return eps, check_delta("delta", delta)


def check_norm_order(name: str, p: object) -> float:
    """p of an ℓp norm: a real in [1, ∞] (p < 1 is not a norm)."""
    x = check_positive(name, p, allow_inf=True)
    if x < 1:
        raise ValueError(f"{name} must be in [1, inf] (l_q is a norm only for q >= 1); got {p!r}")
    return x


def convert_sensitivity(sensitivity: float, norm: object, target: float, dimension: Optional[int]) -> float:
    """An upper bound on the ℓ_target sensitivity from a bound measured in ℓ_norm, in ℝ^dimension.

    ‖x‖_t ≤ ‖x‖_q for q ≤ t, and ‖x‖_t ≤ d^{1/t − 1/q} ‖x‖_q for q > t (Hölder), so the factor
    is 1 or d^{1/t − 1/q} (rounded up; needs ``dimension`` in the second case).
    """
    q = check_norm_order("norm", norm)
    if q <= target:
        return sensitivity
    if dimension is None:
        raise ValueError(f"dimension is required to convert a sensitivity in l_{q} to l_{target}")
    d = check_dimension("dimension", dimension)
    exponent = 1.0 / target - (0.0 if math.isinf(q) else 1.0 / q)
    return round_up(sensitivity * d**exponent * (1 + 2**-48))


def least_noise_scale(multiplier: float, sensitivity: float) -> float:
    """The least float64 σ ≥ ``multiplier``·``sensitivity`` (exact product), so that noise drawn with σ has
    at least the multiplier an event was calibrated with: ``σ/Δ ≥ m`` holds exactly, not only to rounding.

    Parameters
    ----------
    multiplier : float
        Noise multiplier m ≥ 0 (noise std per unit of sensitivity; 0: noise off).
    sensitivity : float
        Δ > 0 (query units).

    Returns
    -------
    float
        σ in query units (``inf`` when m·Δ exceeds the float range).
    """
    s = multiplier * sensitivity
    if 0.0 < s < math.inf and Fraction(s) < Fraction(multiplier) * Fraction(sensitivity):
        s = math.nextafter(s, math.inf)
    return s


def greatest_noise_multiplier(scale: float, sensitivity: float) -> float:
    """The greatest float64 m ≤ ``scale``/``sensitivity`` (exact quotient): the noise multiplier an event may
    claim for noise of std ``scale`` (query units) on a query of sensitivity Δ > 0 (never rounded up)."""
    m = scale / sensitivity
    if 0.0 < m < math.inf and Fraction(m) * Fraction(sensitivity) > Fraction(scale):
        m = math.nextafter(m, 0.0)
    return m


def least_passing(value: float, passes: Callable[[float], bool], *, max_steps: int = 64) -> float:
    """A float ≥ ``value``, close to the least, for which ``passes`` holds.

    Tries ``value``, then ``value`` plus 1, 2, 4, … ulps. Used after a calibration so that float
    rounding in the accountant (e.g. it recomputes ε from σ/Δ, or inverts a profile with its own
    rounding margins) can never leave the result a hair above the target. The step that passes
    is at most twice the needed one, so the result stays within a few ulps-times-the-gap of the
    least passing value.
    """
    x0 = float(value)
    if passes(x0):
        return x0
    step = math.ulp(x0)
    for _ in range(max_steps):
        candidate = x0 + step
        if passes(candidate):
            return candidate
        step *= 2.0
    raise ArithmeticError(f"calibrated value {value!r} does not meet the target even {step:g} above it")


class Mechanism(ABC):
    """Abstract base class of a noise mechanism.

    Subclasses implement

    * ``calibrate(epsilon, delta=None, sensitivity=1.0, **kw)`` — class method returning the
      mechanism with the least noise meeting (ε, δ) according to dpcore;
    * ``randomize(value, rng=None)`` — vectorised over a batch of outputs;
    * at least one privacy curve: :meth:`rdp`, :meth:`privacy_profile` or :attr:`pure_epsilon`.

    Built-in mechanisms override :meth:`privacy_event` to return the specific dpcore leaf event
    (``GaussianEvent``, ``LaplaceEvent`` …); the default wraps the curves the subclass defines in a
    :class:`dpcore.events.MechanismEvent`, which is how a user-defined mechanism enters the
    accountant.

    Attributes
    ----------
    noise_parameter : str
        Name of the attribute holding the noise parameter (``"sigma"``, ``"scale"``, …).
    """

    noise_parameter: ClassVar[str]

    @classmethod
    @abstractmethod
    def calibrate(cls, epsilon: float, delta: Optional[float] = None, sensitivity: float = 1.0, **kwargs):
        """Mechanism with the least noise that is (ε, δ)-DP for the given sensitivity."""

    @abstractmethod
    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """Noisy release of ``value`` (a scalar, one output, or a batch of outputs)."""

    # ------------------------------------------------------------------ privacy curves (optional)

    def rdp(self, orders: object) -> np.ndarray:
        """Rényi-DP curve ε(α) in nats at orders α > 1 (worst case over neighbours)."""
        raise NotImplementedError(f"{type(self).__name__} has no RDP curve")

    def privacy_profile(self, epsilon: float) -> float:
        """Privacy profile δ(ε): the least δ for which the mechanism is (ε, δ)-DP (or an upper bound)."""
        raise NotImplementedError(f"{type(self).__name__} has no privacy profile")

    @property
    def pure_epsilon(self) -> Optional[float]:
        """ε if the mechanism is pure ε-DP, else ``None``."""
        return None

    @property
    def name(self) -> str:
        """Name used in privacy reports."""
        return type(self).__name__

    def _defines(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(Mechanism, method)

    def privacy_event(self, relation: str = "add_remove") -> ev.PrivacyEvent:
        """The dpcore event describing one release, with ``sensitivity`` valid under ``relation``.

        The default wraps the curves the subclass defines in a
        :class:`dpcore.events.MechanismEvent`.
        """
        check_relation("relation", relation)
        rdp = self.rdp if self._defines("rdp") else None
        profile = self.privacy_profile if self._defines("privacy_profile") else None
        return ev.MechanismEvent(
            name=self.name,
            rdp=rdp,
            privacy_profile=profile,
            pure_epsilon=self.pure_epsilon,
            relation=relation,
        )

    def epsilon(self, delta: float, relation: str = "add_remove", **kwargs):
        """ε of one release at ``delta`` as computed by ``dpcore.get_epsilon`` (a PrivacyResult)."""
        return dpcore.get_epsilon(self.privacy_event(relation), delta, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.noise_parameter}={getattr(self, self.noise_parameter)!r})"
