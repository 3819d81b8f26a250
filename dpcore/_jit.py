"""The one Numba decorator of the project: ``numba.njit`` with an on-disk cache where one can be kept.

Numba's ``cache=True`` needs a writable cache location: ``NUMBA_CACHE_DIR`` if set, else the
``__pycache__`` folder beside the source file, else a folder in the user's home (``~/.cache``).
Where none is writable — a read-only site-packages with an unwritable home, e.g. a system-wide or
container install — ``numba.njit(cache=True)`` raises ``RuntimeError: cannot cache function …: no
locator available`` at import. :func:`jit` then compiles the kernel in memory instead (compiled on
its first call in every process) and logs one line, once per process, on the ``dpcore`` logger.
Every compiled kernel in dpcore, mechanisms and algorithms uses it.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

import numba

__all__ = ["jit"]

_NOTICE = ("dpcore: no writable Numba cache location; kernels are compiled in memory in every process "
           "(set NUMBA_CACHE_DIR to a writable folder to keep them on disk)")
_noticed = False


def _notice() -> None:
    global _noticed
    if not _noticed:
        _noticed = True
        logging.getLogger("dpcore").warning(_NOTICE)


def _compile(func: Callable, options: dict) -> Callable:
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError as exc:  # raised while enabling the cache, before any compilation
        if "no locator available" not in str(exc):
            raise
        _notice()
        return numba.njit(**options)(func)


def jit(func: Optional[Callable] = None, **options) -> Callable:
    """``numba.njit(cache=True, **options)``, falling back to no on-disk cache where none can be written.

    Use as ``@jit`` or ``@jit(parallel=True, fastmath=...)``; ``options`` go to ``numba.njit``
    (``cache`` is set here and must not be passed). Compilation stays lazy: nothing is compiled at
    import, each kernel on its first call (or loaded from the cache).
    """
    if "cache" in options:
        raise TypeError("jit sets cache itself; do not pass cache=")
    if func is not None:
        return _compile(func, options)
    return lambda f: _compile(f, options)
