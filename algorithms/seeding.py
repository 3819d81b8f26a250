"""Where the estimators' noise comes from, and the warning when it is made deterministic.

A private release must use randomness the adversary cannot reproduce: with a fixed seed the fit is
a deterministic function of the data, so re-running it with that seed identifies the data set
(ε = ∞), and two fits on neighbouring data sets reuse the same noise. The estimators therefore draw
fresh OS entropy by default (``random_state=None`` → ``numpy.random.default_rng()``); an integer
seed is accepted for tests and reproducible experiments only, and emits
:class:`DeterministicSeedWarning` (a ``UserWarning``, so a test suite can filter it). The warning
and its check live in :mod:`dpcore.seeding` (the batch samplers warn too).
"""

from __future__ import annotations

from dpcore.seeding import DeterministicSeedWarning, warn_if_fixed_seed

__all__ = ["DeterministicSeedWarning", "warn_if_fixed_seed"]
