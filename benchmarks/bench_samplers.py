"""Samplers side by side: balls-in-bins (random allocation), shuffling, truncated Poisson.

    python benchmarks/bench_samplers.py

DP-SGD with σ = 1, 100 steps per epoch (N = 60 000, b = 600), δ = 1e-5, 1 / 10 / 100 epochs:

1. balls-in-bins: dpcore's certified [lower, upper] and its time (first evaluation builds the
   epoch's pair; the epoch counts reuse it), against Poisson at the same expected batch (q = 0.01,
   100·E steps) by dpcore and by dp_accounting's PLD, and dp_accounting's random-allocation
   accounting / jax_privacy's Monte-Carlo estimate where they install (they do not here:
   dp_accounting 0.6.0 has no random allocation, jax_privacy is not installed — skipped);
   calibration of σ for ε = 1 at 10 epochs;
2. shuffling: the certified lower bound, the valid upper bound (no amplification) and the Poisson
   number (not a guarantee), labelled;
3. truncated Poisson, q = 0.01, B = 720 = 1.2 × the expected batch: dpcore against untruncated
   Poisson and dp_accounting's ``TruncatedSubsampledGaussianDpEvent``.

Every row is measured in this one run; times are wall-clock seconds on a shared machine (see the
CPU seconds column for the process's own time).
"""

import time

import dpcore
from dpcore import (
    GaussianEvent, PoissonSampledEvent, RandomAllocationEvent, SelfComposedEvent, TruncatedPoissonSampledEvent,
)
from dpcore.sampling import calibrate_sampler_noise
from dpcore.shuffle_bounds import shuffle_bounds

SIGMA, STEPS, DELTA, N, B = 1.0, 100, 1e-5, 60_000, 600

try:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
except ImportError:  # pragma: no cover
    dp_accounting = None


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def dp_accounting_epsilon(event) -> str:
    if dp_accounting is None:
        return "not installed"
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    return f"{acc.get_epsilon(DELTA):.4f}"


def main() -> None:
    print(f"DP-SGD sigma={SIGMA}, {STEPS} steps/epoch (N={N}, b={B}), delta={DELTA}")
    print("\n1. balls-in-bins (random allocation), certified; Poisson at the same expected batch (q=0.01)")
    print(f"{'epochs':>6}  {'RA [lower, upper]':>24} {'s (wall/cpu)':>14}  {'Poisson dpcore upper':>20} "
          f"{'s':>6}  {'Poisson dp_accounting':>21} {'s':>6}  {'RA dp_accounting / jax MC':>26}")
    for epochs in (1, 10, 100):
        ra = SelfComposedEvent(RandomAllocationEvent(GaussianEvent(SIGMA), STEPS), epochs)
        r, w_ra, c_ra = timed(lambda: dpcore.get_epsilon(ra, DELTA, accountant="pld"))
        po = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(SIGMA), 1.0 / STEPS), STEPS * epochs)
        p, w_po, _ = timed(lambda: dpcore.get_epsilon(po, DELTA, accountant="pld"))
        if dp_accounting is not None:
            dpa_event = dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(1.0 / STEPS, dp_accounting.GaussianDpEvent(SIGMA)), STEPS * epochs)
            d, w_d, _ = timed(lambda: dp_accounting_epsilon(dpa_event))
        else:
            d, w_d = "not installed", 0.0
        lo, up = r.details["bounds"]
        print(f"{epochs:>6}  [{lo:>10.4f}, {up:>10.4f}] {w_ra:>6.2f}/{c_ra:<6.2f}  {p.epsilon:>20.4f} {w_po:>6.2f}  "
              f"{d:>21} {w_d:>6.2f}  {'not available':>26}")
    cal, w_cal, c_cal = timed(lambda: calibrate_sampler_noise("random-allocation", 1.0, DELTA, dataset_size=N,
                                                              batch_size=B, epochs=10))
    cal_p, w_calp, _ = timed(lambda: calibrate_sampler_noise("poisson", 1.0, DELTA, dataset_size=N, batch_size=B,
                                                             epochs=10))
    print(f"calibration, epsilon=1 at 10 epochs: balls-in-bins sigma={cal.value:.4f} ({w_cal:.2f} s wall, "
          f"{c_cal:.2f} s cpu); Poisson sigma={cal_p.value:.4f} ({w_calp:.2f} s)")

    print("\n2. shuffling: three numbers with different meanings")
    print(f"{'epochs':>6}  {'lower bound (true eps >=)':>26}  {'valid upper (no ampl.)':>23}  "
          f"{'Poisson (NOT a guarantee)':>26} {'s':>6}")
    for epochs in (1, 10, 100):
        b, w, _ = timed(lambda: shuffle_bounds(SIGMA / 2, STEPS, epochs, DELTA))  # replace_one: sigma relative to 2C
        print(f"{epochs:>6}  {b.lower:>26.4f}  {b.upper:>23.4f}  {b.poisson:>26.4f} {w:>6.2f}")

    print("\n3. truncated Poisson, q=0.01, cap B=720 (1.2x the expected batch), N=60000")
    print(f"{'epochs':>6}  {'truncated dpcore':>17} {'s':>6}  {'untruncated dpcore':>19}  "
          f"{'truncated dp_accounting':>24} {'s':>6}  {'cost vs untruncated':>20}")
    for epochs in (1, 10, 100):
        tr = SelfComposedEvent(TruncatedPoissonSampledEvent(GaussianEvent(SIGMA), 0.01, 720, N), STEPS * epochs)
        t, w_t, _ = timed(lambda: dpcore.get_epsilon(tr, DELTA, accountant="pld"))
        po = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(SIGMA), 0.01), STEPS * epochs)
        p = dpcore.get_epsilon(po, DELTA, accountant="pld")
        if dp_accounting is not None:
            dpa = dp_accounting.SelfComposedDpEvent(
                dp_accounting.TruncatedSubsampledGaussianDpEvent(N, 0.01, 720, SIGMA), STEPS * epochs)
            d, w_d, _ = timed(lambda: dp_accounting_epsilon(dpa))
        else:
            d, w_d = "not installed", 0.0
        print(f"{epochs:>6}  {t.epsilon:>17.4f} {w_t:>6.2f}  {p.epsilon:>19.4f}  {d:>24} {w_d:>6.2f}  "
              f"{(t.epsilon / p.epsilon - 1) * 100:>19.4f}%")


if __name__ == "__main__":
    main()
