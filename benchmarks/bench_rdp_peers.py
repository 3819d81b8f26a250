"""RDP accounting against dp_accounting and autodp on the cases of issue 14.

Cases: the Gaussian on batches sampled without replacement (b = 600 of n = 60 000, σ = 8.17,
T = 10⁴: ε, and the σ calibrated for ε = 1); the order search at large ε (q = 0.01, σ = 0.1,
T = 100) and at small ε (q = 0.001, σ = 2, T = 1000); 100 unsampled Gaussian steps (σ = 1.1); the
KL → TV rule (q = 1e-6, σ = 5, T = 1000). δ = 1e-5 throughout.

dpcore runs here; the peers run in a throwaway virtual environment whose python is given by
``--peers-python`` (never installed into the project's environment), e.g.::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install dp-accounting autodp
    python benchmarks/bench_rdp_peers.py --peers-python /tmp/peers/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import Dict, Optional

import dpcore
from dpcore.events import GaussianEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent

DELTA = 1e-5
WOR = (60_000, 600, 8.17, 10_000)  # n, b, σ, T
POISSON = {"large-eps": (0.01, 0.1, 100), "small-eps": (0.001, 2.0, 1000), "kl-tv": (1e-6, 5.0, 1000)}

PEERS = r'''
import json, math, sys, warnings
warnings.filterwarnings("ignore")
import dp_accounting
from dp_accounting import rdp
from autodp import rdp_acct, rdp_bank
DELTA = %(delta)r; n, b, sig, T = %(wor)r; POISSON = %(poisson)r
out = {}
def dpa_eps(event, relation=None):
    acc = rdp.RdpAccountant(neighboring_relation=relation) if relation else rdp.RdpAccountant()
    return acc.compose(event).get_epsilon(DELTA)
def wor_event(s):
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.SampledWithoutReplacementDpEvent(n, b, dp_accounting.GaussianDpEvent(s)), T)
R1 = dp_accounting.NeighboringRelation.REPLACE_ONE
out["wor_eps_dp_accounting"] = dpa_eps(wor_event(sig), R1)
def autodp_wor(s):
    acct = rdp_acct.anaRDPacct()
    acct.compose_subsampled_mechanism(lambda x: rdp_bank.RDP_gaussian({"sigma": s}, x), b / n, coeff=T,
                                      improved_bound_flag=True)
    return acct.get_eps(DELTA)
out["wor_eps_autodp"] = autodp_wor(sig)
def bisect(f, lo, hi):  # least sigma with f(sigma) <= 1
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if f(mid) <= 1.0 else (mid, hi)
    return hi
out["wor_sigma_dp_accounting"] = bisect(lambda s: dpa_eps(wor_event(s), R1), 1.0, 1000.0)
out["wor_sigma_autodp"] = bisect(autodp_wor, 1.0, 1000.0)
for name, (q, s, steps) in POISSON.items():
    ev = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), steps)
    out[name + "_dp_accounting"] = dpa_eps(ev)
    acct = rdp_acct.anaRDPacct()
    acct.compose_poisson_subsampled_mechanisms(lambda x: rdp_bank.RDP_gaussian({"sigma": s}, x), q, coeff=steps)
    out[name + "_autodp"] = acct.get_eps(DELTA)
ev = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.1), 100)
out["unsampled_dp_accounting"] = dpa_eps(ev)
acct = rdp_acct.anaRDPacct()
acct.compose_mechanism(lambda x: rdp_bank.RDP_gaussian({"sigma": 1.1}, x), coeff=100)
out["unsampled_autodp"] = acct.get_eps(DELTA)
print(json.dumps(out))
'''


def _timed(fn):
    """(value, seconds of a second call): the first call pays imports and Numba cache loads."""
    fn()
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def dpcore_values() -> Dict[str, tuple]:
    n, b, sig, steps = WOR
    wor = SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(sig, "replace_one"), b, n), steps)
    rows = {
        "wor_eps": _timed(lambda: dpcore.get_epsilon(wor, DELTA).epsilon),
        "wor_sigma": _timed(lambda: dpcore.calibrate_noise_multiplier(
            1.0, DELTA, sampling_rate=b / n, steps=steps, sampling="without_replacement", dataset_size=n).value),
    }
    for name, (q, s, t) in POISSON.items():
        event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(s), q), t)
        rows[name] = _timed(lambda: dpcore.get_epsilon(event, DELTA, accountant="rdp").epsilon)
        rows[name + " (grid only)"] = _timed(lambda: dpcore.get_epsilon(
            event, DELTA, accountant="rdp", optimize_order=False).epsilon)
    unsampled = SelfComposedEvent(GaussianEvent(1.1), 100)
    rows["unsampled"] = _timed(lambda: dpcore.get_epsilon(unsampled, DELTA).epsilon)
    rows["unsampled (rdp)"] = _timed(lambda: dpcore.get_epsilon(unsampled, DELTA, accountant="rdp").epsilon)
    return rows


def peer_values(python: Optional[str]) -> Dict[str, float]:
    if python is None:
        return {}
    script = PEERS % {"delta": DELTA, "wor": WOR, "poisson": POISSON}
    proc = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-python", default=None, help="python of a throwaway venv with dp-accounting, autodp")
    args = parser.parse_args()
    ours = dpcore_values()
    peers = peer_values(args.peers_python)
    print(f"{'case':<26} {'dpcore':>12} {'time s':>8} {'dp_accounting':>14} {'autodp':>10}")
    for key, (value, seconds) in ours.items():
        base = key.split(" ")[0]
        dpa = peers.get(base + "_dp_accounting", float("nan")) if " " not in key else float("nan")
        adp = peers.get(base + "_autodp", float("nan")) if " " not in key else float("nan")
        print(f"{key:<26} {value:>12.6g} {seconds:>8.3f} {dpa:>14.6g} {adp:>10.6g}")


if __name__ == "__main__":
    main()
