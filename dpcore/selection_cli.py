"""``dpcore calibrate --tune-candidates K``: noise calibration with the cost of private tuning included.

The user plans to tune hyper-parameters by repeat-and-select (:mod:`dpcore.selection`): K runs on
average, each ``--steps`` (subsampled) Gaussian steps, only the best released. The total budget
``--epsilon`` is split between training and selection by calibrating the noise of each run so that
the *tuned* run meets it; the record states one run's ε (the training share) and the selection's
share (the difference). Hooked into :mod:`dpcore.cli` by :func:`add_tuning_flags` and
:func:`calibrate_tuned`.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Dict

from .selection import SELECTION_DISTRIBUTIONS, calibrate_selected_noise_multiplier, selection_event

__all__ = ["add_tuning_flags", "tuning_requested", "calibrate_tuned"]

_DISTRIBUTIONS = tuple(name.replace("_", "-") for name in SELECTION_DISTRIBUTIONS)


def add_tuning_flags(p: argparse.ArgumentParser, number: Callable[[str], float]) -> None:
    """The ``--tune-*`` flags of ``dpcore calibrate`` (``number`` parses a positive float)."""
    p.add_argument("--tune-candidates", type=number, default=None,
                   help="mean number K >= 1 of tuning runs (repeat-and-select, Papernot & Steinke 2022): calibrate "
                        "each run's noise so that the tuned run, best run released, meets --epsilon")
    p.add_argument("--tune-distribution", choices=_DISTRIBUTIONS, default=None,
                   help="distribution of the number of runs (default geometric: Liu & Talwar's random stopping)")
    p.add_argument("--tune-shape", type=float, default=None,
                   help="eta in (-1, inf) of --tune-distribution truncated-negative-binomial")


def tuning_requested(args: argparse.Namespace) -> bool:
    """True if ``--tune-candidates`` was given; ``ValueError`` for a ``--tune-*`` flag without it."""
    if args.tune_candidates is not None:
        return True
    for flag, value in (("--tune-distribution", args.tune_distribution), ("--tune-shape", args.tune_shape)):
        if value is not None:
            raise ValueError(f"{flag} needs --tune-candidates (the mean number of tuning runs)")
    return False


def calibrate_tuned(args: argparse.Namespace, sampling: str, accountant: str, certify: bool) -> Dict[str, Any]:
    """The calibration record of the tuned run (see the module docstring)."""
    from .accounting import get_epsilon
    from .calibration import subsampled_gaussian_event

    distribution = (args.tune_distribution or "geometric").replace("-", "_")
    if args.tune_shape is not None and distribution != "truncated_negative_binomial":
        raise ValueError(f"--tune-shape contradicts --tune-distribution {args.tune_distribution or 'geometric'}: "
                         "the shape is only set for truncated-negative-binomial")
    if args.tune_shape is None and distribution == "truncated_negative_binomial":
        raise ValueError("--tune-distribution truncated-negative-binomial needs --tune-shape (eta in (-1, inf))")
    if not args.tune_candidates >= 1.0:
        raise ValueError(f"--tune-candidates must be >= 1 (the mean number of runs); got {args.tune_candidates!r}")
    try:
        cal, one_run = calibrate_selected_noise_multiplier(
            args.epsilon, args.delta, candidates=args.tune_candidates, distribution=distribution,
            shape=args.tune_shape, sampling_rate=args.sampling_rate, steps=args.steps, sampling=sampling,
            dataset_size=args.dataset_size, relation=args.relation, accountant=accountant)
    except ValueError as exc:
        message = str(exc)
        for name, flag in (("shape", "--tune-shape"), ("mean", "--tune-candidates")):
            if message.startswith(f"{name} must"):
                raise ValueError(flag + message[len(name):]) from None
        if "cannot be met" in message:  # the selection's own cost is what makes the target unreachable
            shape = "" if args.tune_shape is None else f", --tune-shape {args.tune_shape!r}"
            raise ValueError(f"{message}: with --tune-candidates {args.tune_candidates!r} (--tune-distribution "
                             f"{distribution.replace('_', '-')}{shape}) the selection alone costs too much; lower "
                             "--tune-candidates or --tune-shape, or raise --epsilon") from None
        raise
    run = subsampled_gaussian_event(cal.value, args.sampling_rate, args.steps, sampling=sampling,
                                    dataset_size=args.dataset_size, relation=args.relation)
    event = selection_event(run, args.tune_candidates, distribution, args.tune_shape)
    privacy = get_epsilon(event, args.delta, accountant=cal.privacy.accountant, certify=certify
                          and cal.privacy.accountant == "rdp")
    record: Dict[str, Any] = {
        "noise_multiplier": cal.value, "target_epsilon": args.epsilon,
        "epsilon": privacy.epsilon, "delta": privacy.delta, "relation": privacy.relation,
        "accountant": privacy.accountant, "method": privacy.method, "order": privacy.order,
        "certified": privacy.certified,
        "one_run_epsilon": one_run.epsilon, "selection_epsilon": privacy.epsilon - one_run.epsilon,
        "tune_candidates": args.tune_candidates, "tune_distribution": distribution.replace("_", "-"),
        "tune_shape": event.shape, "tune_gamma": event.gamma, "evaluations": cal.iterations,
        "selection_analysis": ("Papernot & Steinke 2022, Thm 6 (Poisson)" if distribution == "poisson" else
                               "Papernot & Steinke 2022, Thm 2 (truncated negative binomial)")
                              if privacy.accountant == "rdp" else "(2 + eta)*epsilon (Liu & Talwar 2019, Thm 3.1)",
    }
    if privacy.certified:
        record["certification"] = privacy.details.get("certification", "recomputed with mpmath")
    return record
