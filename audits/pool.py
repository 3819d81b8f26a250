"""A process pool whose workers die with the audit that started them.

A :class:`concurrent.futures.ProcessPoolExecutor` cleans up on SIGINT (``KeyboardInterrupt``), but
SIGTERM or SIGKILL of the parent ends it without running any Python code, and its workers used to
keep computing for minutes. Each worker of :func:`worker_pool` therefore

* asks the Linux kernel to SIGKILL it when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``
  through :mod:`ctypes`; see ``man 2 prctl``), and
* elsewhere (or if ``prctl`` is unavailable), runs a daemon thread that polls ``os.getppid()``
  every :data:`POLL_SECONDS` and exits the worker once it has been re-parented.

Both are checked against the pid of the process that created the pool, so a parent that died
before the worker finished starting is noticed too. Workers are started with ``fork`` where that
is the platform default and with ``spawn`` otherwise, never through a fork server (whose workers'
parent is the server, not the audit).
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time

__all__ = ["worker_pool", "check_picklable", "POLL_SECONDS"]

#: Period of the parent check of the portable fallback (seconds).
POLL_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _set_pdeathsig() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; True on success (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_SECONDS)
    os._exit(1)


def _die_with_parent(parent_pid: int) -> None:
    """Pool initializer: tie this worker's life to ``parent_pid``'s, and leave Ctrl-C to the parent.

    A terminal's Ctrl-C sends SIGINT to the whole process group; the audit (the parent) handles it
    by cancelling the batches not started and shutting the pool down, so a worker ignores it rather
    than die with a traceback of its own.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _set_pdeathsig():
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="audit-parent-watch", daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the death signal was armed
        os._exit(1)


def worker_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A ``ProcessPoolExecutor(workers)`` whose workers exit when this process dies (any signal).

    Parameters
    ----------
    workers : int
        Number of worker processes (≥ 1).
    """
    method = multiprocessing.get_start_method()
    ctx = multiprocessing.get_context(method if method in ("fork", "spawn") else "spawn")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_die_with_parent,
                                  initargs=(os.getpid(),))


def check_picklable(target: object, workers: object) -> None:
    """Refuse, with a clear ``ValueError``, a target that cannot be sent to worker processes.

    A process pool pickles the target for every batch; a ``lambda`` or a function defined inside
    another function cannot be pickled, and Python's own error (``Can't pickle <function <lambda>>``)
    surfaces from deep inside ``concurrent.futures``. Checked before any batch runs.

    Parameters
    ----------
    target : object
        The audit target.
    workers : object
        What asked for processes (``workers=2`` or the executor), for the message.
    """
    try:
        pickle.dumps(target)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        name = getattr(target, "name", type(target).__name__)
        raise ValueError(
            f"target {name!r} cannot be sent to worker processes ({workers}): {exc}. Define its sampler at module "
            "level (or as a functools.partial of a module-level function) instead of a lambda or a nested "
            "function, or run in-process (workers=None)") from None
