"""Run an audit: trials in batches, on any executor, reproducibly and resumably.

The trials are cut into batches whose sizes depend only on ``trials`` and ``batch_size``; batch
``i`` draws from ``numpy.random.default_rng(SeedSequence(seed).spawn(k)[i])``. Batches are put back
in index order before the statistics run, so the result does not depend on the executor, the
number of workers or the order in which batches finish.

Executors: none (in-process), a :class:`concurrent.futures.ProcessPoolExecutor` (default when
``workers > 1``), any other :class:`concurrent.futures.Executor`, or a Dask ``distributed.Client``
(wrapped with ``client.get_executor()``). Targets must then be picklable (cloudpickle for Dask).

Resuming: with ``results_path``, finished batches are appended to a locked, checksummed results
file (:mod:`audits.results_file`) as they arrive; a rerun with the same target, trials, batch size
and seed reuses the batches already there and runs only the missing ones. A kill loses at most the
batches in flight, which is why batches are small by default (:data:`DEFAULT_BATCH_SIZE`). A path
that is not a results file of the same audit is refused, never overwritten.

Worker processes of the pool started for ``workers > 1`` die with the audit, whatever signal ends
it (:mod:`audits.pool`). Ctrl-C stops the audit after the batches in flight (a second one at once):
the batches not started are cancelled, the finished ones are in the results file, and
:class:`AuditInterrupted` says how many there are.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from typing import Any, Dict, List, Optional

import numpy as np

from dpcore._progress import progress_bar
from dpcore._validation import check_choice, check_open_unit, check_positive_int, check_real_array

from .fdp import CURVE_ESTIMATORS, claimed_event, estimate_against_curve
from .pool import check_picklable, worker_pool
from .power import label_power
from .report import AuditResult
from .results_file import ResultsFile, results_fields
from .statistics import ESTIMATORS, estimate
from .target import AuditTarget, check_target, one_run_from_sample

__all__ = ["run_audit", "AuditInterrupted", "ALL_ESTIMATORS", "DEFAULT_BATCH_SIZE", "MAX_TRIALS", "MAX_WORKERS",
           "batch_sizes"]

#: every estimator :func:`run_audit` accepts: those of :mod:`audits.statistics` and the two that test
#: the target's claimed trade-off curve (:mod:`audits.fdp`)
ALL_ESTIMATORS = ESTIMATORS + CURVE_ESTIMATORS

#: Trials per batch when ``batch_size`` is not given: the unit of work of a worker and of resuming
#: (a kill loses at most the batches in flight). 1000 trials are about 0.1–4 s of solver runs and
#: under a millisecond of vectorised mechanism draws, and a 16 KB line of the results file; the
#: per-batch overhead (a seed, a task, an fsync) stays negligible. Part of the reproducibility key.
DEFAULT_BATCH_SIZE = 1000
#: Largest ``trials`` accepted: the scores are kept in memory (16 bytes per trial), 1.6 GB here.
MAX_TRIALS = 10**8
#: Largest ``workers`` accepted (a pool never has more workers than batches to run).
MAX_WORKERS = 1024


class AuditInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_audit`; the finished batches are kept in the results file (if any).

    Attributes
    ----------
    saved : int
        Batches in the results file when the audit stopped (0 without one).
    batches : int
        Batches of the whole audit.
    """

    def __init__(self, saved: int, batches: int):
        super().__init__(f"{saved} of {batches} batches saved")
        self.saved = saved
        self.batches = batches


def batch_sizes(trials: int, batch_size: int) -> List[int]:
    """Sizes of the batches ``trials`` is cut into (all ``batch_size`` but a smaller last one)."""
    full, rest = divmod(trials, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


#: Seconds between two looks at a Ctrl-C request while the batches of a pool run.
_POLL_SECONDS = 0.2


class _GracefulCtrlC:
    """While active (in the main thread): the first Ctrl-C asks the audit to stop after the batches
    in flight, which are kept, so that the batches saved are exactly those reported; a second Ctrl-C
    interrupts at once. The previous SIGINT handler is restored on exit."""

    def __enter__(self) -> "_GracefulCtrlC":
        self.requested = False
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _run_batch(target: AuditTarget, one_run: bool, n: int, seed_seq: np.random.SeedSequence) -> Dict[str, np.ndarray]:
    """One batch: ``n`` runs on each of D and D′ (or ``n`` one-run canaries), from its own seed."""
    rng = np.random.default_rng(seed_seq)
    if one_run:
        sampler = getattr(target, "sample_one_run", None)
        if sampler is None:
            included, scores = one_run_from_sample(target, n, rng)
        else:
            included, scores = sampler(n, rng)
        return {"included": np.asarray(included, dtype=bool), "scores": check_real_array("scores", scores)}
    s0 = check_real_array("target.sample(0, ...)", target.sample(0, n, rng)).reshape(-1)
    s1 = check_real_array("target.sample(1, ...)", target.sample(1, n, rng)).reshape(-1)
    if s0.shape != (n,) or s1.shape != (n,):
        raise ValueError(f"target.sample must return {n} scores; got shapes {s0.shape} and {s1.shape}")
    return {"scores0": s0, "scores1": s1}


def _run_batches(
    target: AuditTarget,
    one_run: bool,
    sizes: List[int],
    seeds: List[np.random.SeedSequence],
    store: Optional[ResultsFile],
    executor: Optional[Any],
    workers: Optional[int],
    progress: bool,
) -> Dict[int, Dict[str, np.ndarray]]:
    """Run every batch not already in ``store``; return all batches by index."""
    done: Dict[int, Dict[str, np.ndarray]] = dict(store.batches) if store is not None else {}
    todo = [i for i in range(len(sizes)) if i not in done]
    bar = progress_bar(sum(sizes), f"audit of {target.name}", "trials") if progress else None
    if bar is not None:
        bar.update(sum(sizes[i] for i in done))

    def finish(i: int, data: Dict[str, np.ndarray]) -> None:
        if store is not None:
            store.add(i, data)
        done[i] = data
        if bar is not None:
            bar.update(sizes[i])

    own_pool = None
    if executor is None and workers is not None and workers > 1:
        check_picklable(target, f"workers={workers}")  # whatever the batch count: a one-batch run used to pass
        if len(todo) > 1:
            executor = own_pool = worker_pool(min(workers, len(todo)))
    elif isinstance(executor, cf.ProcessPoolExecutor):
        check_picklable(target, type(executor).__name__)
    elif executor is not None and not isinstance(executor, cf.Executor) and hasattr(executor, "get_executor"):
        executor = executor.get_executor()  # Dask distributed.Client
    try:
        with _GracefulCtrlC() as ctrl_c:
            if executor is None:
                for i in todo:
                    if ctrl_c.requested:
                        break
                    finish(i, _run_batch(target, one_run, sizes[i], seeds[i]))
            else:
                futures = {executor.submit(_run_batch, target, one_run, sizes[i], seeds[i]): i for i in todo}
                try:
                    pending = set(futures)
                    while pending and not ctrl_c.requested:
                        finished, pending = cf.wait(pending, timeout=_POLL_SECONDS, return_when=cf.FIRST_COMPLETED)
                        for fut in finished:
                            finish(futures[fut], fut.result())
                    for fut in pending:  # Ctrl-C: start nothing new, keep what is running
                        fut.cancel()
                    for fut in cf.as_completed([f for f in pending if not f.cancelled()]):
                        finish(futures[fut], fut.result())
                finally:
                    for fut in futures:
                        fut.cancel()
            if ctrl_c.requested:
                raise KeyboardInterrupt
    finally:
        if own_pool is not None:
            own_pool.shutdown(cancel_futures=True)
        if bar is not None:
            bar.close()
    return done


def run_audit(
    target: AuditTarget,
    trials: int,
    *,
    estimator: str = "clopper-pearson",
    confidence: float = 0.95,
    executor: Optional[Any] = None,
    workers: Optional[int] = None,
    seed: int = 0,
    progress: bool = False,
    results_path: "Optional[str | os.PathLike[str]]" = None,
    batch_size: Optional[int] = None,
    targeted: bool = False,
) -> AuditResult:
    """Audit ``target``'s claimed (ε, δ) with ``trials`` runs per side (or canaries, one-run).

    The verdict is ``"violated"`` when the estimator rejects the claim, ``"pass"`` when it does not *and* the
    audit had evidence, ``"no power"`` otherwise (:func:`audits.power.label_power`: ε_lb = 0, or a predicted
    power below :data:`audits.power.POWER_THRESHOLD` against half the claimed noise) — a pass of an audit
    that could not have seen a violation is not evidence.

    Parameters
    ----------
    target : AuditTarget
        Claim plus batched score sampler.
    trials : int
        Runs on each of ``D`` and ``D′`` (4 to :data:`MAX_TRIALS`) for ``"clopper-pearson"`` and
        ``"gdp"``; number of canaries m for ``"one-run"``.
    estimator : str
        ``"clopper-pearson"`` (Jagielski et al. 2020), ``"gdp"`` (Nasr et al. 2023; Gaussian
        claims only) or ``"one-run"`` (Steinke et al. 2023), see :mod:`audits.statistics`; or,
        for a target with a privacy event (``target.event``), ``"curve"`` (several thresholds
        against the event's certified trade-off curve) or ``"fdp-one-run"`` (Mahloujifar et al.
        2024), see :mod:`audits.fdp`, whose verdict is the rejection of that curve.
    confidence : float
        Confidence level of the ε lower bound, in [0.5, 1).
    executor : concurrent.futures.Executor or distributed.Client, optional
        Where batches run. Not closed by this function.
    workers : int, optional
        Without ``executor``: ``None``/1 runs in-process, ``k > 1`` (at most :data:`MAX_WORKERS`)
        uses a process pool of ``min(k, batches to run)`` workers for the duration of the call,
        whose workers die with this process (:func:`audits.pool.worker_pool`).
    seed : int
        Root seed (≥ 0) of ``numpy.random.SeedSequence``; batch seeds are its ``spawn``.
    progress : bool
        Show progress on stderr: a ``tqdm`` bar on a terminal (needs the optional ``tqdm``), else a
        line every few seconds (:func:`dpcore._progress.progress_bar`).
    results_path : path, optional
        Results file (:class:`audits.results_file.ResultsFile`) where batches are appended as they
        finish, and reused on a rerun of the same audit. Its directory must exist; an existing file
        must be empty or a results file of this very configuration (target, claim, design,
        trials, batch size, seed), anything else is refused (``ValueError``), never overwritten. It
        is locked while the audit runs: a second audit on it is refused.
    batch_size : int, optional
        Trials per batch (default :data:`DEFAULT_BATCH_SIZE`): the unit of parallel work and of
        resuming. Part of the reproducibility key.
    targeted : bool
        ``target`` is one specific attack whose correct outcome is ε_lb = 0 and whose power a planted
        variant shows (the norm-stress and robustness rows): exempt from the power rule.

    Returns
    -------
    AuditResult

    Raises
    ------
    AuditInterrupted
        On Ctrl-C, after the finished batches are on disk; rerunning the same audit resumes.
    """
    check_target(target)
    estimator = check_choice("estimator", estimator, ALL_ESTIMATORS)
    event = claimed_event(target, estimator) if estimator in CURVE_ESTIMATORS else None
    if estimator == "gdp" and target.noise_family != "gaussian":
        raise ValueError(
            f"estimator 'gdp' requires a Gaussian-noise claim (noise_family='gaussian'); target {target.name!r} has "
            f"noise_family={target.noise_family!r}: use "
            + ("'curve' (its privacy event's certified trade-off curve), 'fdp-one-run', " if getattr(target, "event", None) is not None else "")
            + "'clopper-pearson' or 'one-run'"
        )
    trials = check_positive_int("trials", trials, minimum=4)
    if trials > MAX_TRIALS:
        raise ValueError(f"trials must be in [4, {MAX_TRIALS}] (scores are kept in memory); got {trials}")
    confidence = check_open_unit("confidence", confidence)
    if confidence < 0.5:
        raise ValueError(f"confidence must be in [0.5, 1) (below 1/2 a lower bound says nothing); got {confidence!r}")
    seed = check_positive_int("seed", seed, minimum=0)
    batch_size = check_positive_int("batch_size", DEFAULT_BATCH_SIZE if batch_size is None else batch_size)
    if workers is not None:
        workers = check_positive_int("workers", workers)
        if workers > MAX_WORKERS:
            raise ValueError(f"workers must be in [1, {MAX_WORKERS}]; got {workers}")
        if executor is not None:
            raise ValueError("give either executor or workers, not both")

    one_run = estimator in ("one-run", "fdp-one-run")
    sizes = batch_sizes(trials, batch_size)
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    config = {
        "target": str(target.name),
        "claimed_epsilon": repr(float(target.claimed_epsilon)),
        "delta": float(target.delta),
        "relation": target.relation,
        "design": "one-run" if one_run else "two-sample",
        "trials": trials,
        "batch_size": batch_size,
        "seed": seed,
    }
    start = time.perf_counter()
    store = ResultsFile(results_path, config, sizes, results_fields(one_run)) if results_path is not None else None
    try:
        done = _run_batches(target, one_run, sizes, seeds, store, executor, workers, progress)
    except KeyboardInterrupt:
        raise AuditInterrupted(len(store.batches) if store is not None else 0, len(sizes)) from None
    finally:
        if store is not None:
            store.close()

    data = tuple(np.concatenate([done[i][k] for i in range(len(sizes))]) for k in results_fields(one_run))
    if one_run:
        data = (data[0].astype(bool), data[1])
    claimed = float(target.claimed_epsilon)
    if event is not None:
        est = estimate_against_curve(estimator, data, event, delta=target.delta, confidence=confidence)
        verdict = "violated" if est.details["rejected"] else "pass"
    else:
        est = estimate(estimator, data, delta=target.delta, confidence=confidence, claimed_epsilon=claimed,
                       noise_family=target.noise_family)
        verdict = "violated" if est.eps_lower > claimed else "pass"
    return label_power(AuditResult(
        target=str(target.name),
        claimed_epsilon=claimed,
        delta=float(target.delta),
        relation=target.relation,
        noise_family=target.noise_family,
        statistic=str(getattr(target, "statistic", "score")),
        estimator=estimator,
        confidence=confidence,
        eps_lower=est.eps_lower,
        p_value=est.p_value,
        verdict=verdict,
        trials=trials,
        seed=seed,
        wall_time=time.perf_counter() - start,
        details=dict(est.details, batches=len(sizes), batch_size=batch_size),
        samples=data,
    ), target, targeted=bool(targeted))
