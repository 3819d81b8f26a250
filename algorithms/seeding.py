"""Where the estimators' noise comes from, and the warning when it is made deterministic.

A private release must use randomness the adversary cannot reproduce: with a fixed seed the fit is
a deterministic function of the data, so re-running it with that seed identifies the data set
(ε = ∞), and two fits on neighbouring data sets reuse the same noise. The estimators therefore draw
fresh OS entropy by default (``random_state=None`` → ``numpy.random.default_rng()``); an integer
seed is accepted for tests and reproducible experiments only, and emits
:class:`DeterministicSeedWarning` (a ``UserWarning``, so a test suite can filter it).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["DeterministicSeedWarning", "warn_if_fixed_seed"]


class DeterministicSeedWarning(UserWarning):
    """A fixed integer seed makes a private release reproducible, hence not private (testing only)."""


def warn_if_fixed_seed(random_state: object, where: str) -> None:
    """Warn with :class:`DeterministicSeedWarning` when ``random_state`` is an integer seed.

    ``None`` (fresh OS entropy) and a caller-owned ``numpy.random.Generator`` pass silently; the
    solver validates the value itself.

    Parameters
    ----------
    random_state : object
        The estimator's ``random_state``.
    where : str
        Name of the estimator, for the message.
    """
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        warnings.warn(
            f"{where}(random_state={random_state!r}): a fixed seed makes the fit a deterministic function of "
            "the data, so its output is NOT differentially private (use it for tests only; leave "
            "random_state=None for a private release)",
            DeterministicSeedWarning, stacklevel=3,
        )
