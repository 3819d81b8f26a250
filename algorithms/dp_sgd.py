"""DP-SGD with per-example clipping — Abadi et al. (2016) Alg. 1; Bassily, Smith, Thakurta (2014).

Step t: draw a batch B_t, release ``g̃ = Σ_{i∈B_t} clip_C(∇ℓ(w; xᵢ, yᵢ)) + N(0, σ²I)`` and move
``w ← Proj_C(prox_{ηr}(w − η·g̃/b))``.

* ``sampling="poisson"``: every record joins B_t independently with probability q (Abadi et al.);
  the normaliser is the public ``batch_size`` b. Accounted under ``add_remove`` (Δ = C):
  ``SelfComposedEvent(PoissonSampledEvent(GaussianEvent(σ/C, "add_remove"), q), T)``.
* ``sampling="without_replacement"``: B_t is b distinct records drawn uniformly (fresh each step);
  accounted under ``replace_one`` (Δ = 2C):
  ``SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(σ/2C, "replace_one"), b, n), T)``.

Under ``add_remove`` the dataset size n = len(X) is private (neighbours differ in it), so the
schedule never reads it (issue 13): q and T come from public arguments only — ``sampling_rate``
and ``steps``, or a public ``dataset_size`` N giving q = b/N and T = ⌈epochs·N/b⌉ — and the
update is normalised by the public b. Under ``replace_one`` (fixed batches) n is public. Abadi et al.
Theorem 1 states σ only up to constants c₁, c₂, so σ is calibrated by the dpcore
accountant. Poisson batches are drawn with geometric skips (O(b) per step, not O(n)); fixed batches
by a partial Fisher–Yates shuffle of a persistent permutation (a uniform b-subset every step).
"""

from __future__ import annotations

import math
import warnings
from typing import Optional

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_choice, check_positive, check_positive_int, check_relation, check_sampling_rate
from dpcore.events import GaussianEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from dpcore.sampling import BatchSampler
from dpcore.seeding import DeterministicSeedWarning
from mechanisms.base import least_noise_scale
from mechanisms.kernels import gaussian_noise_kernel

from ._solver_common import (
    accounted_releases, as_generator, calibrated_privacy, check_batch_size, check_calibration, check_counts,
    check_iterations, default_step, finish, initial_point, iteration_count, noise_off_result, setup,
)
from .clipping import clipped_batch_gradient_sum_kernel, clipped_sum_sensitivity
from .multiclass import softmax_clipped_sum_kernel
from .regularizers import nonconvex_gradient_kernel, prox_gradient_step_kernel
from .result import SolverResult

__all__ = ["dp_sgd", "dp_sgd_kernel", "dp_sgd_batches_kernel", "poisson_batch_kernel", "fixed_batch_kernel",
           "default_batch_size"]

_PAPER = "Abadi et al. (2016) Theorem 1 states sigma only up to unspecified constants c1, c2"
_RELATION = {"poisson": "add_remove", "without_replacement": "replace_one"}
#: b = ⌈BATCH_BASE·min(ε, 1)^(−BATCH_EXPONENT)⌉ (benchmarks/bench_defaults.py): 256 at ε ≥ 1, ≈ 1024 at ε = 0.1.
BATCH_BASE = 256
BATCH_EXPONENT = 0.6


def default_batch_size(epsilon: Optional[float]) -> int:
    """b = ⌈256·min(ε, 1)^(−0.6)⌉ (256 for ε ≥ 1, ε = inf or a given noise multiplier): a public rule of ε.

    On a9a / ijcnn1 (5 epochs, without replacement) b = 256 gave the least test error at ε = 1 and
    b = 1024 at ε = 0.1, where the noise a step adds, ∝ σ/b, dominates and larger batches spend the
    same budget on fewer, less noisy steps (RESULTS.md "Defaults on real data").
    """
    if epsilon is None or not epsilon < 1.0:
        return BATCH_BASE
    return math.ceil(BATCH_BASE * epsilon ** (-BATCH_EXPONENT))


@jit
def poisson_batch_kernel(rng, n, q, idx):
    """Fill ``idx`` with a Poisson(q) subset of range(n) (independent inclusions, drawn from the
    Generator ``rng`` by geometric skips); returns its size."""
    count = 0
    i = rng.geometric(q) - 1
    while i < n:
        idx[count] = i
        count += 1
        i += rng.geometric(q)
    return count


@jit
def fixed_batch_kernel(rng, perm, b):
    """Partial Fisher–Yates: afterwards ``perm[:b]`` is a uniform b-subset (any prior order of perm)."""
    n = perm.shape[0]
    for k in range(b):
        j = rng.integers(k, n)
        tmp = perm[k]
        perm[k] = perm[j]
        perm[j] = tmp


@jit
def dp_sgd_kernel(kind, param, X, y, row_norms, w0, alpha, l1, ckind, cradius, steps, lr, clip, sigma,
                  poisson, q, batch, denom, snap_every, rng, nonconvex=0.0, classes=None):
    """Run ``steps`` DP-SGD steps. Returns (w, snapshots every ``snap_every`` steps, releases,
    gradient evaluations, clipped count). ``rng``: the caller's ``numpy.random.Generator`` (advanced in place).
    ``nonconvex``: λ of the data-independent penalty λΣⱼwⱼ²/(1 + wⱼ²), whose exact gradient joins the step.
    ``classes`` k: softmax weights (w0 of length k·d, labels are class codes; :mod:`algorithms.multiclass`)."""
    n = X.shape[0]
    d = w0.shape[0]
    w = w0.copy()
    g = np.empty(d)
    idx = np.arange(n)
    snaps = np.empty((steps // snap_every + 1, d))
    snaps[0] = w
    releases = 0
    evals = 0
    clipped = 0
    for t in range(steps):
        if poisson:
            count = poisson_batch_kernel(rng, n, q, idx)
        else:
            fixed_batch_kernel(rng, idx, batch)
            count = batch
        clipped += _noisy_step(kind, param, X, y, row_norms, w, idx, count, clip, g, sigma, rng, nonconvex, denom, lr,
                               alpha, l1, ckind, cradius, classes)
        evals += count
        releases += 1
        if (t + 1) % snap_every == 0:
            snaps[(t + 1) // snap_every] = w
    return w, snaps, releases, evals, clipped


@jit
def _noisy_step(kind, param, X, y, row_norms, w, idx, count, clip, g, sigma, rng, nonconvex, denom, lr, alpha, l1,
                ckind, cradius, classes=None):
    """One DP-SGD step on the batch ``idx[:count]``: clipped gradient sum (softmax weights when
    ``classes`` is given), Gaussian noise of std ``sigma``, the data-independent non-convex penalty,
    the proximal step. Returns the clipped count."""
    if classes is not None:  # None prunes the branch at compile time
        clipped = softmax_clipped_sum_kernel(X, y, row_norms, w, classes, idx, True, count, clip, g)
    else:
        clipped = clipped_batch_gradient_sum_kernel(kind, param, X, y, row_norms, w, idx, count, clip, g)
    if sigma > 0.0:
        g += gaussian_noise_kernel(rng, w.shape[0], sigma)
    nonconvex_gradient_kernel(nonconvex, w, denom, g)
    prox_gradient_step_kernel(w, g, lr / denom, lr, alpha, l1, ckind, cradius)
    return clipped


@jit
def dp_sgd_batches_kernel(kind, param, X, y, row_norms, w, alpha, l1, ckind, cradius, lr, clip, sigma, denom,
                          flat, starts, rng, nonconvex=0.0, classes=None):
    """DP-SGD steps on given batches (batch s is ``flat[starts[s]:starts[s+1]]``), updating ``w``
    in place. Returns (releases, gradient evaluations, clipped count)."""
    g = np.empty(w.shape[0])
    evals = 0
    clipped = 0
    for s in range(starts.shape[0] - 1):
        idx = flat[starts[s]:starts[s + 1]]
        clipped += _noisy_step(kind, param, X, y, row_norms, w, idx, idx.shape[0], clip, g, sigma, rng, nonconvex,
                               denom, lr, alpha, l1, ckind, cradius, classes)
        evals += idx.shape[0]
    return starts.shape[0] - 1, evals, clipped


def _schedule(sampling: str, batch_size: object, epochs: float, steps: Optional[int], sampling_rate: Optional[float],
              dataset_size: Optional[int], n: int) -> tuple:
    """(q, b, T, steps per pass) from public arguments; ``n`` = len(X) is read only without replacement
    (``replace_one``, n public). Poisson sampling (``add_remove``): q = ``sampling_rate`` or b/N,
    T = ``steps`` or ⌈epochs·N/b⌉ with N the public ``dataset_size``; ``ValueError`` if neither is given."""
    N = None if dataset_size is None else check_positive_int("dataset_size", dataset_size)
    if sampling == "poisson":
        b = check_positive_int("batch_size", batch_size)
        for name, value in (("sampling_rate", sampling_rate), ("steps", steps)):
            if value is None and N is None:
                raise ValueError(f"sampling='poisson' (add_remove: len(X) is private) needs {name} or a public "
                                 "dataset_size; the schedule is never derived from len(X)")
        if sampling_rate is not None:
            q = check_sampling_rate("sampling_rate", sampling_rate)
        elif b > N:
            raise ValueError(f"batch_size must be in [1, dataset_size={N}]; got {b}")
        else:
            q = b / N
        per_pass = math.ceil(1.0 / q)  # one expected pass: the trace cadence
    else:
        if sampling_rate is not None:
            raise ValueError("sampling_rate applies to sampling='poisson' only (without replacement uses batch_size/n)")
        if N is not None and N != n:
            raise ValueError(f"dataset_size must equal len(X)={n} without replacement (replace_one); got {N}")
        b = check_batch_size(batch_size, n)
        N, q, per_pass = n, b / n, math.ceil(n / b)
    if steps is not None:
        return q, b, check_iterations("steps", steps), per_pass
    return q, b, iteration_count("epochs", epochs, check_positive("epochs", epochs) * N / b), per_pass


def dp_sgd(
    X: np.ndarray,
    y: np.ndarray,
    *,
    loss: str = "logistic",
    epsilon: Optional[float] = None,
    delta: float = 1e-5,
    alpha: float = 0.0,
    l1: float = 0.0,
    penalty: str = "l2",
    batch_size: Optional[int] = None,
    epochs: float = 5.0,
    steps: Optional[int] = None,
    sampling_rate: Optional[float] = None,
    dataset_size: Optional[int] = None,
    learning_rate: Optional[float] = None,
    clip_norm: Optional[float] = None,
    data_norm_bound: Optional[float] = None,
    sampling: object = "poisson",
    relation: Optional[str] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    calibration: str = "accountant",
    accountant: Optional[str] = None,
    noise_multiplier: Optional[float] = None,
    w0: Optional[np.ndarray] = None,
    rng: object = None,
    trace: bool = False,
    loss_params: Optional[dict] = None,
    tol: Optional[float] = 1e-9,
    classes: Optional[int] = None,
) -> SolverResult:
    """Differentially private minibatch SGD with per-example clipping (Abadi et al. 2016, Alg. 1).

    Parameters
    ----------
    X, y, loss, epsilon, delta, alpha, l1, clip_norm, data_norm_bound, constraint, radius,
    noise_multiplier, w0, rng, trace, loss_params :
        As in :func:`algorithms.dp_gd.dp_gd`.
    penalty : {"l2", "nonconvex"}
        ``"nonconvex"``: ``alpha`` is λ of λΣⱼwⱼ²/(1 + wⱼ²) (wang-jayaraman-evans-gu §7.1) instead of
        (alpha/2)‖w‖²; its exact gradient is added to the noisy step (data-independent).
    batch_size : int, optional
        b ≥ 1: the normaliser of the update (Poisson: a public expected batch size, never compared
        with len(X)); the exact batch size without replacement, 1 ≤ b ≤ n. Default
        :func:`default_batch_size` (⌈256·min(ε, 1)^(−0.6)⌉, a rule of the public ε; without
        replacement capped at the public n).
    epochs : float
        Passes over the data; steps T = ceil(epochs·N/b) unless ``steps`` is given (N =
        ``dataset_size`` for Poisson sampling, n without replacement).
    steps : int, optional
        T directly.
    sampling_rate : float, optional
        Poisson sampling only: q in (0, 1], a public constant; default b/``dataset_size``.
    dataset_size : int, optional
        Public dataset size N ≥ 1 (records). Poisson sampling (``add_remove``, where the true
        n = len(X) is private and never read): needed unless both ``sampling_rate`` and ``steps``
        are given; it is not checked against len(X) (that check would leak n). Without
        replacement n is public and ``dataset_size``, if given, must equal it.
    learning_rate : float, optional
        η; default 1/β (β = c₂·data_norm_bound²).
    sampling : {"poisson", "without_replacement"} or dpcore.sampling.BatchSampler
        A sampler object (:mod:`dpcore.sampling`: Poisson, fixed-size, shuffle, balls-in-bins,
        truncated Poisson, with replacement) supplies the batches *and* the event: T = ``steps``
        or ⌈epochs·(its batches per epoch)⌉ batches are drawn from it, the noise is calibrated on
        ``sampler.event(...)`` for exactly those T batches, and the run is refused if the sampler
        emitted anything else. An epoch sampler (shuffle, balls-in-bins) must be at an epoch
        boundary (a run of T batches is accounted as ⌈T/t⌉ fresh epochs, so a sampler left
        mid-epoch by an earlier run is refused). Its relation is used; ``batch_size`` (the normaliser) defaults to
        its public nominal batch size; ``sampling_rate`` / ``dataset_size`` do not apply.
    relation : {"add_remove", "replace_one"}, optional
        Must match the sampling scheme's analysis (poisson → add_remove, without_replacement →
        replace_one); None picks it.
    calibration : {"accountant"}
    accountant : str, optional
        dpcore accountant for the calibration and the reported ε. Default ``"rdp"`` for
        ``sampling="poisson"`` / ``"without_replacement"``; ``"auto"`` (the tightest valid one) for a
        sampler object, whose events the RDP accountant does not all analyse (sampling with
        replacement) or analyses without their amplification (random allocation).
    tol : float or None
        ``epsilon=inf`` only: F is minimised over C to this gradient-mapping tolerance instead of
        running the T steps (:func:`algorithms._solver_common.noise_off_result`); ``None`` runs
        the T steps with the noise off.
    classes : int, optional
        k ≥ 3: softmax on labels 0..k−1, as :func:`algorithms.dp_gd.dp_gd` (same event as binary).

    Returns
    -------
    SolverResult
        ``details["releases"]`` = T noisy gradients; snapshots (traces) once per (expected) pass.
    """
    check_calibration(calibration, _PAPER)
    if isinstance(sampling, BatchSampler):
        return _dp_sgd_sampler(X, y, sampler=sampling, loss=loss, epsilon=epsilon, delta=delta, alpha=alpha, l1=l1,
                               penalty=penalty, batch_size=batch_size, epochs=epochs, steps=steps,
                               sampling_rate=sampling_rate, dataset_size=dataset_size, learning_rate=learning_rate,
                               clip_norm=clip_norm, data_norm_bound=data_norm_bound, relation=relation,
                               constraint=constraint, radius=radius, accountant=accountant,
                               noise_multiplier=noise_multiplier, w0=w0, rng=rng, trace=trace,
                               loss_params=loss_params, tol=tol, classes=classes)
    check_choice("sampling", sampling, tuple(_RELATION))
    accountant = "rdp" if accountant is None else accountant
    natural = _RELATION[sampling]
    relation = natural if relation is None else check_relation("relation", relation)
    if relation != natural:
        raise ValueError(f"relation must be {natural!r} for sampling={sampling!r} (the analysis dpcore uses); got {relation!r}")
    s = setup(X, y, loss=loss, alpha=alpha, l1=l1, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, penalty=penalty, layouts=True, classes=classes)
    n = s.data.n  # read below only under replace_one (fixed batches), where n is public
    if batch_size is None:
        batch_size = default_batch_size(epsilon)
        if sampling == "without_replacement":
            batch_size = min(batch_size, n)
    q, b, T, per_pass = _schedule(sampling, batch_size, epochs, steps, sampling_rate, dataset_size, n)
    lr = default_step(learning_rate, s, 1.0)
    sens = clipped_sum_sensitivity(s.clip, relation)

    if sampling == "poisson":
        def event_fn(z: float):
            return SelfComposedEvent(PoissonSampledEvent(GaussianEvent(z, relation), q), T)
    else:
        def event_fn(z: float):
            return SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, relation), b, n), T)

    z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                noise_multiplier=noise_multiplier, relation=relation,
                                                accountant=accountant)
    if noise_multiplier is None and math.isinf(epsilon) and tol is not None:
        return noise_off_result("dp_sgd", s, w0, tol=tol, event=event, privacy=privacy, trace=trace,
                                details={"learning_rate": lr, "steps": T, "sampling": sampling})
    gen = as_generator(rng)
    w, snaps, releases, evals, clipped = dp_sgd_kernel(
        s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, initial_point(w0, s), s.reg.alpha,
        s.reg.l1, s.constraint.kind, s.constraint.radius, T, lr, s.clip, least_noise_scale(z, sens),
        sampling == "poisson", q, b, float(b), min(per_pass, T), gen, s.reg.nonconvex, s.classes)
    check_counts(releases, event)
    if T % min(per_pass, T):
        snaps = np.vstack([snaps, w])
    return finish("dp_sgd", s, w, snaps, step=lr, event=event, privacy=privacy, z=z, sensitivity=sens,
                  grad_evals=evals, trace=trace,
                  details={"releases": releases, "clipped": clipped, "learning_rate": lr, "steps": T,
                           "sampling": sampling, "sampling_rate": q, "batch_size": b, "calibration": cal})


def _dp_sgd_sampler(X, y, *, sampler: BatchSampler, loss, epsilon, delta, alpha, l1, penalty, batch_size, epochs,
                    steps, sampling_rate, dataset_size, learning_rate, clip_norm, data_norm_bound, relation,
                    constraint, radius, accountant, noise_multiplier, w0, rng, trace, loss_params, tol,
                    classes) -> SolverResult:
    """:func:`dp_sgd` with ``sampling=<BatchSampler>``: batches and event from the same object."""
    if sampling_rate is not None or dataset_size is not None:
        raise ValueError("sampling_rate and dataset_size come from the sampler object; do not pass them with "
                         "sampling=<sampler>")
    if relation is not None and check_relation("relation", relation) != sampler.relation:
        raise ValueError(f"relation must be {sampler.relation!r} for the {sampler.name} sampler; got {relation!r}")
    relation = sampler.relation
    accountant = "auto" if accountant is None else accountant
    if sampler.fixed_seed:
        warnings.warn(f"dp_sgd(sampling={type(sampler).__name__}(rng=<int>)): the seeded sampler's batches are a "
                      "public function of the seed, so the amplification by sampling its event accounts does not "
                      "exist and the run is NOT differentially private as reported (tests only)",
                      DeterministicSeedWarning, stacklevel=3)
    if sampler.steps_emitted % sampler.steps_per_unit:  # the event below starts with a fresh epoch
        raise ValueError(f"the {sampler.name} sampler is {sampler.steps_emitted % sampler.steps_per_unit} batches into "
                         f"an epoch of {sampler.steps_per_unit}: a run starting here would reuse that epoch's records "
                         "unaccounted; pass a sampler at an epoch boundary (a new one, or finish the epoch with "
                         "sampler.batches(...); sampler.privacy_event(...) accounts everything it emitted)")
    s = setup(X, y, loss=loss, alpha=alpha, l1=l1, constraint=constraint, radius=radius, clip_norm=clip_norm,
              data_norm_bound=data_norm_bound, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
              loss_params=loss_params, penalty=penalty, classes=classes)
    if sampler.dataset_size != s.data.n:
        raise ValueError(f"the sampler indexes dataset_size={sampler.dataset_size} records; X has {s.data.n}")
    b = float(sampler.nominal_batch_size if batch_size is None else check_positive("batch_size", batch_size))
    if steps is not None:
        T = check_iterations("steps", steps)
    else:
        T = iteration_count("epochs", epochs, check_positive("epochs", epochs) * sampler.steps_per_epoch)
    lr = default_step(learning_rate, s, 1.0)
    sens = clipped_sum_sensitivity(s.clip, relation)
    emitted_before = sampler.steps_emitted

    def event_fn(z: float):
        return sampler.event(GaussianEvent(z, relation), T)

    z, event, privacy, cal = calibrated_privacy(event_fn, epsilon=epsilon, delta=delta,
                                                noise_multiplier=noise_multiplier, relation=relation,
                                                accountant=accountant)
    details = {"learning_rate": lr, "steps": T, "sampling": sampler.name, "sampler": sampler.describe(),
               "calibration": cal}
    if noise_multiplier is None and math.isinf(epsilon) and tol is not None:
        return noise_off_result("dp_sgd", s, w0, tol=tol, event=event, privacy=privacy, trace=trace, details=details)
    gen = as_generator(rng)
    w = initial_point(w0, s).copy()
    snaps = [w.copy()]
    releases = evals = clipped = 0
    per_chunk = max(1, sampler.steps_per_epoch)
    done = 0
    while done < T:  # one (expected) epoch of batches at a time: bounded memory
        chunk = list(sampler.batches(min(per_chunk, T - done)))
        starts = np.zeros(len(chunk) + 1, dtype=np.int64)
        starts[1:] = np.cumsum([c.size for c in chunk])
        flat = np.concatenate(chunk).astype(np.int64) if chunk else np.zeros(0, dtype=np.int64)
        r, e, c = dp_sgd_batches_kernel(s.loss.kind, s.loss.param, s.data.X, s.data.y, s.data.row_norms, w,
                                        s.reg.alpha, s.reg.l1, s.constraint.kind, s.constraint.radius, lr, s.clip,
                                        least_noise_scale(z, sens), b, flat, starts, gen, s.reg.nonconvex, s.classes)
        releases, evals, clipped = releases + r, evals + e, clipped + c
        done += len(chunk)
        snaps.append(w.copy())
    if sampler.steps_emitted - emitted_before != T:  # the event covers exactly the batches drawn here
        raise RuntimeError(f"the sampler emitted {sampler.steps_emitted - emitted_before} batches during the run; "
                           f"the event accounts {T}")
    if sampler.steps_per_unit == 1:
        check_counts(releases, event)
    elif not releases <= accounted_releases(event) < releases + sampler.steps_per_unit:  # a started epoch in full
        raise RuntimeError(f"kernel performed {releases} noisy releases; the event accounts {accounted_releases(event)}")
    details.update({"releases": releases, "clipped": clipped, "batch_size": b})
    return finish("dp_sgd", s, w, np.array(snaps), step=lr, event=event, privacy=privacy, z=z, sensitivity=sens,
                  grad_evals=evals, trace=trace, details=details)
