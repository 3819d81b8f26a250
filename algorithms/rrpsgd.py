"""RRPSGD: random-round private SGD — zhang-zheng-mou-wang-2017 Algorithm 2.

Draw the number of rounds R from P (Alg. 2 line 1), then run R steps
``w ← w − η(∇f(w; ξ) + z)`` with ξ uniform on S and z Gaussian (lines 2–6); output w_R. With the
constant step η of Theorem 5 (η_k = η for all k) P(R = k + 1) ∝ 2η_k − βη_k² is uniform on
{1, …, T_max}. The paper's T_max is n² — n² releases of a sample each (10⁹ on a9a) is impractical,
so the default here is T_max = ⌈10n/b⌉ (ten data passes, E[R] ≈ 5 passes; public n and b only);
``max_rounds=n**2`` (or ``calibration="paper"``, whose Theorem 4 needs it) gives the paper's.
The default batch is DP-SGD's public rule :func:`algorithms.dp_sgd.default_batch_size` (capped at n),
not the paper's single sample: on a9a (3 seeds, through ``DPLogisticRegression``) batch 1 gave test
error 0.297 at ε = 0.1 and 0.289 at ε = 1 — worse than the majority class, 0.236 — and the rule 0.211
and 0.158 (non-private 0.150). ``batch_size=1`` (implied by ``calibration="paper"``) is the paper's.

Each step is one Gaussian release of a clipped sum over a batch drawn without replacement (the
paper's single sample is ``batch_size=1``; larger batches are the mini-batch variant its experiments
use for the private-SGD baseline). The step is exactly the DP-SGD step, so the kernel is
:func:`algorithms.dp_sgd.dp_sgd_kernel` with R steps.

Privacy. R is drawn independently of the data and w_R is a post-processing of the first R ≤ T_max
releases, so the guarantee is that of T_max releases:
``SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), b, n), T_max)``
(the kernel's R releases are checked against R ≤ T_max). ``calibration="accountant"`` (default):
dpcore calibrates z. ``calibration="paper"``: the density of line 4,
``exp(−ε²‖z‖²/(8L²·log(3n/δ)·log(2/δ)))``, i.e. per-coordinate std
``σ = 2L·√(log(3n/δ)·log(2/δ))/ε`` on one example's gradient (Theorem 4, stated for ε ≤ 1 and
T_max = n², batch 1 — the conditions are checked and the run refused otherwise); its ε is still
reported by dpcore for the event.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

import dpcore
from dpcore._validation import check_choice, check_positive, check_positive_int
from dpcore.events import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale

from ._solver_common import (
    accounted_releases, as_generator, calibrated_privacy, check_batch_size, check_iterations, check_relation_replace_one,
    default_step, iteration_count, finish, initial_point, setup,
)
from .clipping import clipped_sum_sensitivity
from .dp_sgd import default_batch_size, dp_sgd_kernel
from .result import SolverResult

__all__ = ["rrpsgd", "rrpsgd_paper_sigma", "DEFAULT_MAX_EPOCHS"]

DEFAULT_MAX_EPOCHS = 10.0  # default T_max = ⌈10n/b⌉ (E[R] ≈ 5 passes) instead of the paper's n²


def rrpsgd_paper_sigma(epsilon: float, delta: float, *, n: int, lipschitz: float) -> float:
    """Per-coordinate noise std of zhang-zheng-mou-wang-2017 Alg. 2 line 4 (gradient units).

    The density ∝ exp(−ε²‖z‖²/(8L² log(3n/δ) log(2/δ))) is N(0, σ²I) with
    σ² = 4L²·log(3n/δ)·log(2/δ)/ε². Theorem 4 states (ε, δ)-DP for ε in (0, 1] and δ in (0, 1).
    """
    eps = check_positive("epsilon", epsilon)
    if not eps <= 1.0:
        raise ValueError(f"calibration='paper' needs epsilon in (0, 1] (Theorem 4); got {epsilon!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {delta!r}")
    n = check_positive_int("n", n)
    L = check_positive("lipschitz", lipschitz)
    return 2.0 * L * math.sqrt(math.log(3.0 * n / delta) * math.log(2.0 / delta)) / eps


def rrpsgd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: Optional[float] = None,
    delta: float = 1e-5,
    alpha: float = 0.0,
    penalty: str = "l2",
    batch_size: Optional[int] = None,
    max_rounds: Optional[int] = None,
    max_epochs: Optional[float] = None,
    learning_rate: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    relation: str = "replace_one",
    calibration: str = "accountant",
    accountant: str = "rdp",
    noise_multiplier: Optional[float] = None,
    w0: Optional[np.ndarray] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
) -> SolverResult:
    """Random-round private SGD (zhang-zheng-mou-wang-2017 Alg. 2).

    Parameters
    ----------
    X, y, loss, delta, clip_norm, data_norm_bound, w0, rng, loss_params :
        As in :func:`algorithms.dp_gd.dp_gd`.
    epsilon : float
        Target ε in (0, ∞] (nats); ``inf`` switches the noise off.
    alpha, penalty :
        Regulariser, as in :func:`algorithms.dp_srm.dp_srm` (its exact gradient joins each step).
    batch_size : int, optional
        Records per round (1 = the paper's single sample ξ). Default: 1 under ``calibration="paper"``,
        else ``min(n, default_batch_size(epsilon))`` (module docstring).
    max_rounds : int, optional
        T_max: R is uniform on {1, …, T_max}. ``n**2`` is the paper's [n²].
    max_epochs : float, optional
        T_max = ceil(max_epochs·n/b) instead (the expected number of passes is about half of it).
        Without either: ``max_epochs=10`` (departure from the paper's n², documented above), except
        under ``calibration="paper"``, where T_max = n² (Theorem 4's setting).
    learning_rate : float, optional
        Constant η < 2/β (Theorem 5); default 1/β, β = loss smoothness for ``data_norm_bound``.
    relation : {"replace_one"}
        Fixed-size batches are analysed under replace-one (``"add_remove"`` is refused).
    calibration : {"accountant", "paper"}
        dpcore calibration of z, or the noise of Alg. 2 line 4 (needs ε ≤ 1, batch 1, T_max = n²).
    accountant, noise_multiplier :
        As in :func:`algorithms.dp_sgd.dp_sgd`.
    trace : bool
        Objective / gradient-norm traces over the iterates (non-private diagnostics); default off.

    Returns
    -------
    SolverResult
        ``details["rounds"]`` = R, ``details["max_rounds"]`` = T_max (what the event accounts).
    """
    check_relation_replace_one(relation, "RRPSGD draws fixed-size batches and the paper's T_max = n^2")
    check_choice("calibration", calibration, ("accountant", "paper"))
    s = setup(X, y, loss=loss, alpha=alpha, l1=0.0, constraint="none", radius=None, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, penalty=penalty, layouts=True)
    n = s.data.n
    if batch_size is None:
        b = 1 if calibration == "paper" else min(n, default_batch_size(epsilon if noise_multiplier is None else None))
    else:
        b = check_batch_size(batch_size, n)
    if max_rounds is not None and max_epochs is not None:
        raise ValueError("give max_rounds or max_epochs, not both")
    if max_rounds is not None:
        t_max = check_iterations("max_rounds", max_rounds)
    elif max_epochs is not None:
        t_max = iteration_count("max_epochs", max_epochs, check_positive("max_epochs", max_epochs) * n / b)
    elif calibration == "paper":
        t_max = iteration_count("calibration", calibration, n * n)  # Theorem 4's T = n²: n ≤ 46 340
    else:
        t_max = max(1, math.ceil(DEFAULT_MAX_EPOCHS * n / b))
    lr = default_step(learning_rate, s, 1.0)
    sens = clipped_sum_sensitivity(s.clip, relation)

    def event_fn(z: float):
        return SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, relation), b, n), t_max)

    if calibration == "paper":
        if epsilon is None or noise_multiplier is not None:
            raise ValueError("calibration='paper' needs epsilon (and no noise_multiplier)")
        if b != 1 or t_max != n * n:
            raise ValueError("calibration='paper' needs batch_size=1 and max_rounds=n^2 (Theorem 4's setting)")
        sigma = rrpsgd_paper_sigma(epsilon, delta, n=n, lipschitz=s.clip)
        z = sigma / sens
        event = event_fn(z)
        privacy = dpcore.get_epsilon(event, delta, accountant=accountant)
        cal = {"route": "paper", "sigma": sigma, "noise_multiplier": z}
    else:
        z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                    noise_multiplier=noise_multiplier, relation=relation,
                                                    accountant=accountant)
    gen = as_generator(rng)
    rounds = int(gen.integers(1, t_max + 1))
    snap_every = max(1, math.ceil(n / b))
    w, snaps, releases, evals, clipped = dp_sgd_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, initial_point(w0, s), s.reg.alpha, 0.0,
        s.constraint.kind, s.constraint.radius, rounds, lr, s.clip, least_noise_scale(z, sens), False, 1.0, b, float(b),
        min(snap_every, rounds), gen, s.reg.nonconvex)
    accounted = accounted_releases(event)
    if releases != rounds or (accounted is not None and releases > accounted):
        raise RuntimeError(f"kernel performed {releases} releases for R={rounds}; the event accounts {accounted}")
    if rounds % min(snap_every, rounds):
        snaps = np.vstack([snaps, w])
    return finish("rrpsgd", s, w, snaps, step=lr, event=event, privacy=privacy, z=z, sensitivity=sens,
                  grad_evals=evals, trace=trace,
                  details={"releases": releases, "rounds": rounds, "max_rounds": t_max, "batch_size": b,
                           "clipped": clipped, "learning_rate": lr, "calibration": cal,
                           "calibration_route": calibration, "penalty": penalty})
