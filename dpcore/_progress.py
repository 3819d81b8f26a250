"""Progress on stderr for work that can take more than a few seconds.

Two reporters, both writing plain lines prefixed ``dpcore:`` to a stream (default ``sys.stderr``):

* :class:`Stages` — work without a known amount (a calibration's search, a long PLD composition):
  a stage that is still running after :data:`STAGE_DELAY` seconds gets one line when it starts
  being slow and one when it ends, with its duration; quick stages print nothing.
* :func:`progress_bar` — work counted in units (an audit's trials): a ``tqdm`` bar on a terminal,
  otherwise (or without the optional ``tqdm``) a :class:`LineProgress` that writes at most one line
  every :data:`LINE_INTERVAL` seconds, so logs stay readable.

The command line turns both off with ``--quiet``.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional, TextIO

__all__ = ["Stages", "LineProgress", "progress_bar", "STAGE_DELAY", "LINE_INTERVAL"]

#: Seconds a stage runs silently before its line is written (quick commands print nothing).
STAGE_DELAY = 2.0
#: Least seconds between two lines of a :class:`LineProgress`.
LINE_INTERVAL = 10.0


def _write(stream: Optional[TextIO], text: str) -> None:
    out = sys.stderr if stream is None else stream
    out.write(f"dpcore: {text}\n")
    out.flush()


class Stages:
    """Lines on ``stream`` for the stages of a command that turn out to be slow.

    Parameters
    ----------
    enabled : bool
        False prints nothing (``--quiet``).
    stream : text stream, optional
        Where lines go; default ``sys.stderr`` at the time of writing.
    delay : float, optional
        Seconds before a running stage gets its line; default :data:`STAGE_DELAY`.
    """

    def __init__(self, enabled: bool, stream: Optional[TextIO] = None, delay: Optional[float] = None):
        self.enabled = bool(enabled)
        self.stream = stream
        self.delay = STAGE_DELAY if delay is None else float(delay)

    @contextmanager
    def stage(self, text: str) -> Iterator[None]:
        """Run the body as the stage ``text`` (e.g. ``"calibrating sigma"``)."""
        if not self.enabled:
            yield
            return
        start = time.monotonic()
        done, announced, lock = threading.Event(), threading.Event(), threading.Lock()

        def announce() -> None:
            with lock:  # never a start line after the end line
                if not done.is_set():
                    _write(self.stream, f"{text} ...")
                    announced.set()

        timer = threading.Timer(self.delay, announce)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            with lock:
                done.set()
            timer.cancel()
            if announced.is_set():
                _write(self.stream, f"{text}: done in {time.monotonic() - start:.1f} s")


class LineProgress:
    """A counter that writes ``dpcore: <desc>: k of n <unit> (p %)`` at most every ``interval`` seconds.

    Parameters
    ----------
    total : int
        Units of work in all.
    desc : str
        What is being done.
    unit : str
        Name of one unit (``"trials"``).
    stream : text stream, optional
        Default ``sys.stderr``.
    interval : float, optional
        Least seconds between lines; default :data:`LINE_INTERVAL`.
    """

    def __init__(self, total: int, desc: str, unit: str, stream: Optional[TextIO] = None,
                 interval: Optional[float] = None):
        self.total = int(total)
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self.interval = LINE_INTERVAL if interval is None else float(interval)
        self.n = 0
        self._last = time.monotonic()
        self._written = False

    def _line(self) -> None:
        share = 100.0 * self.n / self.total if self.total else 100.0
        _write(self.stream, f"{self.desc}: {self.n} of {self.total} {self.unit} ({share:.0f} %)")
        self._last = time.monotonic()
        self._written = True

    def update(self, n: int) -> None:
        """Count ``n`` more units done."""
        self.n += int(n)
        if time.monotonic() - self._last >= self.interval:
            self._line()

    def close(self) -> None:
        """Write the final count if any line was written (a quick run prints nothing)."""
        if self._written:
            self._line()


def progress_bar(total: int, desc: str, unit: str, stream: Optional[TextIO] = None) -> Any:
    """A bar with ``update(n)`` and ``close()``: ``tqdm`` on a terminal, else :class:`LineProgress`."""
    out = sys.stderr if stream is None else stream
    if getattr(out, "isatty", lambda: False)():
        try:
            from tqdm.auto import tqdm
        except ImportError:  # the optional dependency dpcore[progress]
            pass
        else:
            return tqdm(total=total, desc=desc, unit=unit.rstrip("s"), file=out)
    return LineProgress(total, desc, unit, stream)
