"""Samples per second of each mechanism against the NumPy / SciPy code a user would write.

One *sample* is one d-dimensional noisy output (one vector of d coordinates; for the exponential
mechanism one selection among d candidates). "Laplace (float)" is ``Laplace(secure=False)``, the
fast path that is not floating-point safe; "Laplace secure" is the default exact lattice release
(Mironov 2012 / CKS20; see :class:`mechanisms.Laplace`). For each mechanism and
d ∈ {10, 1 000, 100 000} the table lists: ``randomize`` (the validating NumPy path), the Numba kernel called from Python (where
the mechanism has one), and the baseline a user would write by hand. Timings are the best of
several repetitions of a loop lasting ≥ ``--min-time`` seconds.

Run: ``python benchmarks/bench_mechanisms.py [--min-time 0.2] [--dims 10 1000 100000]``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Callable, List, Optional, Tuple

import numpy as np
from scipy import stats

from mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    GeneralizedGaussian,
    L2Laplace,
    Laplace,
    RandomizedResponse,
    kernels,
)


def rate(fn: Callable[[], object], min_time: float, repeats: int = 3) -> float:
    """Calls per second of ``fn`` (best of ``repeats`` loops of ≥ ``min_time`` seconds)."""
    fn()  # warm-up (compilation, caches)
    best = math.inf
    for _ in range(repeats):
        n, start = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / n)
    return 1.0 / best


def rows(d: int, rng: np.random.Generator) -> List[Tuple[str, Callable, Optional[Callable], str, Callable]]:
    """(mechanism, randomize call, kernel call or None, baseline name, baseline call) for dimension d."""
    zeros, ints = np.zeros(d), np.zeros(d, dtype=np.int64)
    g, lap, l2 = Gaussian(1.0), Laplace(1.0, secure=False), L2Laplace(1.0)
    lap_secure = Laplace(1.0)
    gg = GeneralizedGaussian(p=3.0, sigma=1.0, dimension=d)
    dg, dl = DiscreteGaussian(3.0), DiscreteLaplace(1.5)
    rr = RandomizedResponse(1.0, k=10)
    em = ExponentialMechanism(1.0)
    utilities = rng.standard_normal(d)
    keep = rr.keep_probability
    q = math.exp(-1 / 1.5)

    def l2_baseline():
        z = rng.standard_normal(d)
        return z / np.linalg.norm(z) * rng.gamma(d, 1.0)

    def rr_baseline():
        return np.where(rng.random(d) < keep, ints, (ints + rng.integers(1, 10, d)) % 10)

    def em_baseline():
        w = np.exp((utilities - utilities.max()) / 2.0)
        return rng.choice(d, p=w / w.sum())

    return [
        ("Gaussian", lambda: g.randomize(zeros, rng), lambda: kernels.gaussian_noise_kernel(rng, d, 1.0),
         "rng.normal", lambda: rng.normal(0.0, 1.0, d)),
        ("Laplace (float)", lambda: lap.randomize(zeros, rng), lambda: kernels.laplace_noise_kernel(rng, d, 1.0),
         "rng.laplace", lambda: rng.laplace(0.0, 1.0, d)),
        ("Laplace secure", lambda: lap_secure.randomize(zeros, rng), None,
         "rng.laplace (not FP-safe)", lambda: rng.laplace(0.0, 1.0, d)),
        ("L2Laplace", lambda: l2.randomize(zeros, rng), lambda: kernels.l2_laplace_noise_kernel(rng, d, 1.0),
         "normal/‖·‖·gamma", l2_baseline),
        ("GeneralizedGaussian p=3", lambda: gg.randomize(zeros, rng),
         lambda: kernels.generalized_gaussian_noise_kernel(rng, d, 3.0, 1.0),
         "stats.gennorm.rvs (iid, other law)", lambda: stats.gennorm.rvs(3.0, size=d, random_state=rng)),
        ("DiscreteGaussian (exact)", lambda: dg.randomize(ints, rng), None,
         "np.rint(rng.normal) (inexact)", lambda: np.rint(rng.normal(0.0, 3.0, d))),
        ("DiscreteLaplace (exact)", lambda: dl.randomize(ints, rng), None,
         "geometric difference (float)", lambda: rng.geometric(1 - q, d) - rng.geometric(1 - q, d)),
        ("RandomizedResponse k=10", lambda: rr.randomize(ints, rng), lambda: rr.kernel(rng, ints, *rr.kernel_args()),
         "np.where", rr_baseline),
        ("ExponentialMechanism (exact)", lambda: em.randomize(utilities, rng), None,
         "rng.choice(p=softmax)", em_baseline),
    ]


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per timing loop")
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 1_000, 100_000])
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    header = f"{'mechanism':<26}{'d':>8}{'randomize/s':>14}{'kernel/s':>12}{'baseline/s':>13}  baseline"
    print(header)
    print("-" * len(header))
    for d in args.dims:
        for name, ours, kernel, base_name, base in rows(d, rng):
            r_ours = rate(ours, args.min_time)
            r_kernel = f"{rate(kernel, args.min_time):12.3g}" if kernel else f"{'-':>12}"
            r_base = rate(base, args.min_time)
            print(f"{name:<26}{d:>8}{r_ours:14.3g}{r_kernel}{r_base:13.3g}  {base_name}")
    ms = 1e3 / rate(lambda: GeneralizedGaussian(p=3.0, sigma=1.0, dimension=10_000).randomize(np.zeros(10_000), rng),
                    args.min_time)
    ms_kernel = 1e3 / rate(lambda: kernels.generalized_gaussian_noise_kernel(rng, 10_000, 3.0, 1.0), args.min_time)
    print(f"\nGeneralizedGaussian p=3, d=10 000: {ms:.3f} ms per sample (NumPy path), {ms_kernel:.3f} ms (Numba kernel)")


if __name__ == "__main__":
    main()
