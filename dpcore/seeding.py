"""The warning for randomness that is made deterministic where privacy needs it to be secret.

A private release must use randomness the adversary cannot reproduce: with a fixed seed the
output is a deterministic function of the data, so re-running with that seed identifies the data
set (ε = ∞), and two runs on neighbouring data sets reuse the same noise. For a batch sampler the
seed fixes the batches: the allocation is then public and the amplification by sampling that its
event accounts does not exist. An integer seed is accepted for tests and reproducible experiments
only, and emits :class:`DeterministicSeedWarning` (a ``UserWarning``, so a test suite can filter
it); ``None`` (fresh OS entropy) and a caller-owned ``numpy.random.Generator`` pass silently.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["DeterministicSeedWarning", "is_fixed_seed", "warn_if_fixed_seed"]


class DeterministicSeedWarning(UserWarning):
    """A fixed integer seed makes a private release reproducible, hence not private (testing only)."""


def is_fixed_seed(seed: object) -> bool:
    """Whether ``seed`` is an integer seed (``bool`` excluded)."""
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)


def warn_if_fixed_seed(seed: object, where: str, argument: str = "random_state",
                       what: str = "the fit a deterministic function of the data", stacklevel: int = 3) -> None:
    """Warn with :class:`DeterministicSeedWarning` when ``seed`` is an integer seed.

    Parameters
    ----------
    seed : object
        The seed argument as given (validated by the caller).
    where : str
        The class or function that takes it, for the message.
    argument : str
        The argument's name.
    what : str
        What the seed makes of the release ("a fixed seed makes <what>, so its output is NOT …").
    stacklevel : int
        As for :func:`warnings.warn`, counted from the caller of this function.
    """
    if is_fixed_seed(seed):
        warnings.warn(
            f"{where}({argument}={seed!r}): a fixed seed makes {what}, "
            f"so its output is NOT differentially private (use it for tests only; leave {argument}=None for a "
            "private release)",
            DeterministicSeedWarning, stacklevel=stacklevel,
        )
