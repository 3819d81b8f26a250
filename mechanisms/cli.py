"""``dpcore calibrate --mechanism NAME`` for the mechanisms of this package that have a noise scale.

Registered through the entry-point group ``dpcore.calibrations`` (``mechanisms =
"mechanisms.cli:calibrations"``), so that ``dpcore`` imports nothing above itself::

    dpcore calibrate --mechanism laplace --epsilon E --sensitivity S [--sensitivity-norm Q --dimension D]
    dpcore calibrate --mechanism l2-laplace --epsilon E --sensitivity S [--dimension D] [--sensitivity-norm Q]
    dpcore calibrate --mechanism discrete-laplace --epsilon E --sensitivity K
    dpcore calibrate --mechanism discrete-gaussian --epsilon E --delta D --sensitivity K [--accountant A]
    dpcore calibrate --mechanism generalized-gaussian --epsilon E --delta D --sensitivity S --p P --dimension D
                     [--sensitivity-norm Q]

Each runs the mechanism's own ``calibrate`` (the library's calibration, not a copy) and then
re-checks the guarantee of the returned mechanism independently of how it was found: the pure ε of
``Laplace`` / ``L2Laplace`` / ``DiscreteLaplace`` (Δ/scale, rounded up), or dpcore's ε at δ of the
mechanism's privacy event for the discrete and generalized Gaussians. A result whose re-checked ε
exceeds the target is never printed (``ArithmeticError``, exit 1). The guarantee holds for the
neighbouring relation under which ``--sensitivity`` is a bound: the mechanisms are the same under
add/remove and replace-one, only the sensitivity a query has differs.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List, Tuple

from dpcore.cli import Calibration, conflict, integer_type, real_type, stages

from .base import Mechanism
from .discrete import DiscreteGaussian, DiscreteLaplace
from .generalized_gaussian import GeneralizedGaussian
from .laplace import L2Laplace, Laplace

__all__ = ["calibrations"]

_RELATION = "the one --sensitivity holds under"


def _record(args: argparse.Namespace, mech: Mechanism, epsilon: float, delta: float, method: str,
            extra: Dict[str, Any]) -> Dict[str, Any]:
    """The printed record, after checking that the re-computed ``epsilon`` meets the target."""
    if not epsilon <= args.epsilon:  # never report an unchecked claim
        raise ArithmeticError(f"{mech!r} re-checks to epsilon={epsilon!r} > --epsilon {args.epsilon!r}")
    parameter = mech.noise_parameter
    return {"mechanism": args.mechanism, parameter: getattr(mech, parameter), "target_epsilon": args.epsilon,
            "epsilon": epsilon, "delta": delta, **extra, "relation": _RELATION, "method": method,
            "certified": f"epsilon of the returned {parameter} re-computed: {epsilon:.12g} <= {args.epsilon:g}"}


def _norm(args: argparse.Namespace, target: float) -> float:
    """The norm order of --sensitivity (default ``target``, the mechanism's own), refusing a
    --dimension that the conversion to l_target would not use."""
    q = target if args.sensitivity_norm is None else args.sensitivity_norm
    if args.dimension is not None and q <= target:
        raise conflict("--dimension", f"--sensitivity-norm {q:g}", f"a sensitivity in l{q:g} bounds the "
                       f"l{target:g} sensitivity without a dimension factor (give --sensitivity-norm > {target:g} "
                       "or drop --dimension)")
    return q


def _laplace(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    norm = _norm(args, 1.0)
    mech = Laplace.calibrate(args.epsilon, sensitivity=args.sensitivity, norm=norm, dimension=args.dimension)
    method = ("Laplace, secure lattice release (exact discrete Laplace on a 2^-k grid; Mironov 2012's "
              "floating-point attack fails): scale = l1 sensitivity * (1 + 2^-20) / epsilon")
    extra = {"sensitivity": args.sensitivity, "sensitivity_norm": norm,
             "accounted_l1_sensitivity": mech.accounted_sensitivity}
    return "Laplace mechanism calibration", _record(args, mech, mech.pure_epsilon, 0.0, method, extra)


def _l2_laplace(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    norm = _norm(args, 2.0)
    mech = L2Laplace.calibrate(args.epsilon, sensitivity=args.sensitivity, norm=norm, dimension=args.dimension)
    method = "l2-Laplace (Gamma-norm) noise, density ~ exp(-||z||_2/scale): scale = l2 sensitivity / epsilon"
    extra = {"sensitivity": args.sensitivity, "sensitivity_norm": norm, "l2_sensitivity": mech.sensitivity}
    return "l2-Laplace mechanism calibration", _record(args, mech, mech.pure_epsilon, 0.0, method, extra)


def _discrete_laplace(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    mech = DiscreteLaplace.calibrate(args.epsilon, sensitivity=args.sensitivity)
    method = "discrete Laplace on the integers (Canonne, Kamath, Steinke 2020): scale = sensitivity / epsilon"
    return ("Discrete Laplace mechanism calibration",
            _record(args, mech, mech.pure_epsilon, 0.0, method, {"sensitivity": mech.sensitivity}))


def _discrete_gaussian(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    accountant = args.accountant or "auto"
    with stages(args).stage(f"calibrating the discrete Gaussian ({accountant} accountant)"):
        mech = DiscreteGaussian.calibrate(args.epsilon, args.delta, sensitivity=args.sensitivity,
                                          accountant=accountant)
        checked = mech.epsilon(args.delta, accountant=accountant)
    method = (f"discrete Gaussian on the integers: least sigma by the {checked.accountant} accountant of its exact "
              "privacy profile (Canonne, Kamath, Steinke 2020, Thm 7) and zCDP curve (Thm 4)")
    extra = {"sensitivity": mech.sensitivity, "accountant": checked.accountant}
    return "Discrete Gaussian mechanism calibration", _record(args, mech, checked.epsilon, args.delta, method, extra)


def _generalized_gaussian(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    with stages(args).stage("calibrating the generalized Gaussian"):
        mech = GeneralizedGaussian.calibrate(args.epsilon, args.delta, sensitivity=args.sensitivity, p=args.p,
                                             dimension=args.dimension, norm=args.sensitivity_norm)
        checked = mech.epsilon(args.delta)
    method = ("generalized Gaussian in l_p, density ~ exp(-||z||_p^2/(2 sigma^2)): p = 2 the exact analytic "
              "Gaussian, p > 2 sigma = s sqrt(2 (p-1) ln(1/delta))/epsilon (Su, Zhao, Wang, Lemma 3; "
              "epsilon <= 1, delta <= 1/2)")
    extra = {"p": mech.p, "dimension": mech.dimension, "sensitivity": args.sensitivity,
             "sensitivity_norm": mech.p if args.sensitivity_norm is None else args.sensitivity_norm,
             "lp_sensitivity": mech.sensitivity}
    return ("Generalized Gaussian mechanism calibration",
            _record(args, mech, checked.epsilon, args.delta, method, extra))


def calibrations(parser: argparse.ArgumentParser) -> List[Calibration]:
    """Add this package's ``calibrate`` options to ``parser``; return its :class:`dpcore.cli.Calibration` list."""
    parser.add_argument("--dimension", type=integer_type, default=None,
                        help="d >= 1, entries of one release (l2-laplace, generalized-gaussian; laplace with "
                             "--sensitivity-norm > 1)")
    parser.add_argument("--sensitivity-norm", type=real_type, default=None,
                        help="order q in [1, inf] of the norm --sensitivity is measured in (default: laplace 1, "
                             "l2-laplace 2, generalized-gaussian p); converted with the factor d^(1/t - 1/q)")
    parser.add_argument("--p", type=real_type, default=None,
                        help="generalized-gaussian: order p in [2, inf) of the noise norm")
    norm = {"norm": "--sensitivity-norm"}
    return [
        Calibration("laplace", "pure epsilon-DP Laplace noise, least scale for an l1 --sensitivity",
                    ("--sensitivity", "--sensitivity-norm", "--dimension"), ("--sensitivity",), _laplace, norm),
        Calibration("l2-laplace", "pure epsilon-DP Gamma-norm noise, least scale for an l2 --sensitivity",
                    ("--sensitivity", "--sensitivity-norm", "--dimension"), ("--sensitivity",), _l2_laplace, norm),
        Calibration("discrete-laplace", "pure epsilon-DP discrete Laplace, least scale for an integer --sensitivity",
                    ("--sensitivity",), ("--sensitivity",), _discrete_laplace),
        Calibration("discrete-gaussian", "(epsilon, delta) discrete Gaussian, least sigma for an integer "
                    "--sensitivity", ("--delta", "--sensitivity", "--accountant"), ("--delta", "--sensitivity"),
                    _discrete_gaussian),
        Calibration("generalized-gaussian", "(epsilon, delta) generalized Gaussian in l_p (Su, Zhao, Wang), "
                    "least sigma", ("--delta", "--sensitivity", "--p", "--dimension", "--sensitivity-norm"),
                    ("--delta", "--sensitivity", "--p", "--dimension"), _generalized_gaussian, norm),
    ]
