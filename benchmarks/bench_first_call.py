"""First-call cost: CPU and wall time of fresh processes with an empty and then a filled Numba cache.

Each row is one new Python process (so imports are included) run twice with the same fresh
``NUMBA_CACHE_DIR``: first with the cache empty (every kernel it calls is compiled), then with the
cache the first run left (kernels loaded from disk). ``import mechanisms`` compiles nothing.
CPU time (user + system of the child) is the figure to compare on a shared machine; wall time
also counts waiting for a core.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Tuple

FIT = ("from algorithms import DPLogisticRegression; from algorithms.synthetic import make_classification; "
       "X, y, _ = make_classification(2000, 10, seed=0); "
       "DPLogisticRegression(epsilon=1.0, delta=1e-5).fit(X, y)")
CASES = [
    ("import mechanisms", [sys.executable, "-c", "import mechanisms"]),
    ("dpcore epsilon (q=0.01, T=1000)", [sys.executable, "-m", "dpcore.cli", "epsilon", "--noise-multiplier", "1.1",
                                         "--sampling-rate", "0.01", "--steps", "1000", "--delta", "1e-5"]),
    ("first DPLogisticRegression().fit", [sys.executable, "-c", FIT]),
]


def _cost(cmd: List[str], cache: str) -> Tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main(argv: Optional[List[str]] = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    print(f"{'process':<34}{'empty cache: CPU / wall [s]':>29}{'cached: CPU / wall [s]':>25}")
    for name, cmd in CASES:
        with tempfile.TemporaryDirectory() as cache:
            cold = _cost(cmd, cache)
            warm = _cost(cmd, cache)
        print(f"{name:<34}{cold[0]:>20.1f} / {cold[1]:<6.1f}{warm[0]:>16.1f} / {warm[1]:<6.1f}")


if __name__ == "__main__":
    main()
