"""``dpcore audit`` over a slow fake target catalogue, run as a subprocess by test_results_file.py.

Usage: ``python slow_audit_cli.py PAUSE AUDIT-ARGS...``. Every call of the target's sampler sleeps
PAUSE seconds before drawing N(which, σ²) scores, so an audit lasts long enough to be killed in the
middle; with PAUSE = 0 it draws exactly what ``shift_target("gaussian", ...)`` draws.
"""

import sys
import time
import types
from functools import partial

import numpy as np

import audits.cli as cli
from audits.target import FunctionTarget

SIGMA = 3.73063163481594


def slow_gaussian(which: int, n: int, rng: np.random.Generator, pause: float) -> np.ndarray:
    """Sleep ``pause`` seconds, then ``n`` draws of N(which, SIGMA²)."""
    time.sleep(pause)
    return rng.normal(float(which), SIGMA, n)


def make_target(name, epsilon, delta, planted=None, pause=0.0):
    """The slow Gaussian shift target, named like the catalogue's."""
    return FunctionTarget(name, epsilon, delta, partial(slow_gaussian, pause=pause), noise_family="gaussian",
                          statistic="output")


def main(argv) -> int:
    catalogue = types.ModuleType("audits.targets")
    catalogue.MECHANISM_NAMES = ("gaussian",)
    catalogue.SOLVER_NAMES = ()
    catalogue.PLANTED_BUGS = ()
    catalogue.mechanism_target = partial(make_target, pause=float(argv[0]))
    sys.modules["audits.targets"] = catalogue
    return cli.main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
