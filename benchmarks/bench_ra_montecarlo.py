"""Random allocation (balls-in-bins): dpcore's certified δ(ε) against jax_privacy's Monte-Carlo estimate.

jax_privacy (2.0) estimates balls-in-bins DP-SGD by sampling its dominating pair's privacy loss
(`jax_privacy.experimental.monte_carlo`): an unbiased estimate of δ(ε) = E_P[(1 − e^{ε − L})₊] from
n samples, uncertified (here with a 95 % normal interval from the samples' standard deviation). dpcore
gives certified [lower, upper] bounds from its PLD (`dpcore.RandomAllocationEvent`). The two should
agree within the Monte-Carlo interval; the table also shows what each costs. δ ≈ 1e-5 would need ~10⁷
samples per ε for a ±10 % Monte-Carlo estimate, so the comparison is made at larger δ. One epoch only:
jax_privacy's ``BallsInBinsSampling(iterations=k·t, cycle_length=t)`` keeps each example's bin for every
cycle (one allocation repeated), while dpcore's ``SelfComposedEvent(RandomAllocationEvent(·, t), k)`` is a
fresh allocation per epoch — different samplers beyond one epoch.

jax_privacy needs JAX; install it apart from the project, e.g.
``python -m venv --system-site-packages /tmp/jpvenv && /tmp/jpvenv/bin/pip install jax-privacy``, then
``PYTHONPATH=. /tmp/jpvenv/bin/python benchmarks/bench_ra_montecarlo.py [--samples 200000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpcore

SIGMA, STEPS = 1.0, 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000, help="Monte-Carlo samples at one epoch")
    args = parser.parse_args()
    try:
        from jax_privacy import batch_selection
        from jax_privacy.experimental.monte_carlo import delta_calculation, sample_generation
    except ImportError:
        raise SystemExit("jax_privacy is not installed in this interpreter (see the module docstring)")
    print(f"DP-SGD sigma={SIGMA}, {STEPS} steps, one epoch of balls-in-bins, add_remove")
    print("| epochs | epsilon | dpcore certified delta [lower, upper] | CPU s | jax_privacy MC delta (95 % interval) "
          "| samples | CPU s |")
    print("|---|---|---|---|---|---|---|")
    strategy = batch_selection.BallsInBinsSampling(iterations=STEPS, cycle_length=STEPS)
    c_col = np.array([1.0])
    start = time.process_time()
    losses = {}  # L = log P(x)/Q(x), x drawn from P (positive) or from Q
    for positive in (True, False):
        x = sample_generation.generate_sample(strategy, SIGMA, c_col, seed=1 + int(positive),
                                              positive_sample=positive, num_samples=args.samples)
        losses[positive] = np.asarray(sample_generation.compute_privacy_loss(strategy, x, SIGMA, c_col)).ravel()
    mc_seconds = time.process_time() - start
    event = dpcore.RandomAllocationEvent(dpcore.GaussianEvent(SIGMA), STEPS)
    for eps in (0.2, 0.35, 0.5):
        start = time.process_time()
        result = dpcore.get_delta(event, eps, accountant="pld")
        seconds = time.process_time() - start
        lower, upper = result.details["bounds"]
        cells = []
        for positive, loss in losses.items():  # δ_{P‖Q}(ε) = E_P[(1 − e^{ε−L})₊], δ_{Q‖P}(ε) = E_Q[(1 − e^{ε+L})₊]
            terms = -np.expm1(np.minimum(eps - loss if positive else eps + loss, 0.0))
            cells.append((terms.mean(), 1.96 * terms.std(ddof=1) / np.sqrt(terms.size)))
        mean, half = max(cells)  # dpcore's δ is the larger of the two orders
        print(f"| 1 | {eps} | [{lower:.4e}, {upper:.4e}] | {seconds:.2f} | {mean:.4e} ± {half:.1e} | "
              f"{args.samples} × 2 | {mc_seconds:.1f} (both orders) |")

if __name__ == "__main__":
    main()
