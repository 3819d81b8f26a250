"""``DPMLPClassifier``: a one-hidden-layer tanh network trained privately by DP-SGD, DP-GD, DP-SRM or
RRPSGD — the small non-convex model standing in for the CNNs of wang-jayaraman-evans-gu §7.2.

Every solver releases sums of per-example gradients clipped to ``clip_norm`` C (per-example
gradients from :mod:`algorithms.mlp_kernels`), plus Gaussian noise, and is accounted by dpcore under
replace-one (Δ = 2C for a sum; DP-SRM's later releases Δ = 2(γC₁ + (1 − γ)C₂), §6.1):

* ``"dp_sgd"``: Abadi et al. Alg. 1 with uniform b-subsets (without replacement), T = ⌈epochs·n/b⌉;
  ``SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z), b, n), T)``.
* ``"dp_gd"``: wang-ye-xu-2017 Alg. 4 (full batch, T = ``epochs`` steps, last iterate);
  ``SelfComposedEvent(GaussianEvent(z), T)``.
* ``"dp_srm"``: wang-jayaraman-evans-gu Alg. 1 (``algorithms.dp_srm.dp_srm_event``), uniformly
  random output iterate as in the paper (``output="last"``: θᵀ).
* ``"rrpsgd"``: zhang-zheng-mou-wang-2017 Alg. 2, R uniform on {1..T}, T = ⌈epochs·n/b⌉ accounted.

``"dp_sgd"`` and ``"dp_gd"`` step with Adam on the noisy gradients (DP-Adam; Kingma & Ba 2015,
Alg. 1) and a cosine step schedule by default, or with heavy-ball momentum (``optimizer``,
``heavy_ball``, ``lr_schedule``). Both use only the noisy releases and public quantities (the noise
std σ/b enters Adam's ε), so they are post-processing and the privacy is unchanged — a departure
from the papers' plain steps, which ``optimizer="momentum", heavy_ball=0, lr_schedule="constant"``
restores.
The initial weights are drawn from the estimator's generator (data-independent). ``alpha`` is an L2
weight decay (its gradient is exact and data-independent). The dataset size n is treated as public
(replace-one). Departures from the linear solvers: no ``calibration="paper"`` (the papers' σ
formulas are for the linear experiments), no Poisson sampling.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dpcore._validation import check_choice, check_delta, check_nonnegative, check_positive
from dpcore.events import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from mechanisms.base import least_noise_scale

from ._data import MAX_DENSE_BYTES, validate_features
from ._solver_common import (
    as_generator, calibrated_privacy, check_batch_size, check_counts, check_iterations, iteration_count,
)
from .dp_gd import check_heavy_ball
from .dp_srm import check_momentum, dp_srm_event, dp_srm_sensitivities
from .estimators import NotFittedError, _Base, _ClassifierMixin, _store_params, classifier_labels, dp_estimator_tags
from .mlp_kernels import mlp_dp_srm_kernel, mlp_logits_kernel, mlp_noisy_sgd_kernel, n_parameters
from .result import check_finite_model
from .seeding import warn_if_fixed_seed

__all__ = ["DPMLPClassifier", "MLP_SOLVERS"]

MLP_SOLVERS = ("dp_sgd", "dp_gd", "dp_srm", "rrpsgd")
DEFAULT_BATCH_SIZE = 1024  # capped at n (a public count under replace-one)
MLP_OPTIMIZERS = ("momentum", "adam")
MOMENTUM_LR = 1.5  # η of heavy ball, DP-SRM and RRPSGD when learning_rate is None
ADAM_LR_SCALE = 3.0  # Adam's η = 3/√P when learning_rate is None (P parameters: a step of norm ≈ 3)
DEFAULT_CLIP, ADAM_CLIP = 1.0, 2.0  # C when clip_norm is None (Adam: less clipping bias, benchmarked)
ADAM_BETA2, ADAM_EPS = 0.999, 1e-8  # Kingma & Ba (2015) Alg. 1 defaults; the noise std σ/b is added to ε


class DPMLPClassifier(_ClassifierMixin, _Base):
    """Differentially private one-hidden-layer network classifier (tanh hidden units).

    Parameters
    ----------
    hidden_units : int
        Width h ≥ 1 of the hidden layer.
    solver : {"dp_sgd", "dp_gd", "dp_srm", "rrpsgd"}
    epsilon : float
        Target ε in (0, ∞] (nats); ``math.inf`` = same algorithm without noise (ε = inf reported).
    delta : float
        δ in (0, 1).
    epochs : float
        Data passes (``"dp_gd"``: the number of full-batch steps; ``"rrpsgd"``: the passes of T_max).
    batch_size : int, optional
        b (and DP-SRM's b₀), 1 ≤ b ≤ n; default min(1024, n); ignored by ``"dp_gd"``.
    learning_rate : float, optional
        η > 0 (DP-SRM: its largest step 1/(2n₀L)). Default: 3/√P for Adam (P = h(d + 1) + K(h + 1)
        parameters; each Adam step moves every coordinate by ≈ η, so the step norm stays ≈ 3 whatever
        the width or d), else 1.5.
    optimizer : {"adam", "momentum"}
        Update of ``"dp_sgd"`` / ``"dp_gd"`` from the noisy mean gradient g̃ (ignored by the other
        solvers). ``"adam"``: m ← μm + (1 − μ)g̃, v ← β₂v + (1 − β₂)g̃², θ ← θ − ηₜ m̂/(√v̂ + ε_a)
        with bias-corrected m̂, v̂, β₂ = 0.999 and ε_a = 1e-8 + σ/b, the public noise std of each
        coordinate of g̃ (0 without noise), which damps coordinates whose gradient is below the noise
        (a departure from DP-Adam's fixed ε). ``"momentum"``: heavy ball v ← μv + g̃, θ ← θ − ηₜv.
    heavy_ball : float
        μ in [0, 1) of ``"dp_sgd"`` / ``"dp_gd"``: Adam's β₁, or the heavy-ball momentum (0 = plain
        steps). ``"rrpsgd"`` keeps the paper's plain constant step; ``"dp_srm"`` has its own recursion.
    lr_schedule : {"cosine", "constant"}
        ηₜ = η(1 + cos(πt/T))/2 or η, for ``"dp_sgd"`` / ``"dp_gd"``.

    The defaults (20 passes, b = 1024, Adam with η = 3/√P, μ = 0.9, cosine, C = 2) were chosen on
    a9a and ijcnn1 by ``benchmarks/bench_nonconvex.py`` (RESULTS.md "Non-convex solvers"; heavy ball
    with η = 1.5, C = 1 stopped 0.034 short of scikit-learn on ijcnn1 without noise).
    clip_norm : float, optional
        Per-example gradient clip C (DP-SRM's C₁), gradient units; default 2 for Adam, else 1.
    diff_clip_norm : float, optional
        DP-SRM's gradient-difference clip C₂; default C/10.
    momentum : float, optional
        DP-SRM's γ in (0, 1]; default C₂/C.
    step_bound : float, optional
        DP-SRM's cap ζ/(n₀L) on ‖θᵗ⁺¹ − θᵗ‖; default none.
    output : {"random", "last"}
        DP-SRM's output iterate: uniform on {θ⁰..θᵀ⁻¹} (Alg. 1) or θᵀ (departure).
    alpha : float
        L2 weight decay ≥ 0 (objective units).
    classes : array-like, optional
        Public label set (≥ 2 labels); default ``unique(y)`` (taken from the data, as scikit-learn,
        outside the privacy guarantee: :class:`~algorithms.label_set.PrivacyLeakWarning`).
        Two classes: one logistic output (``classes_[1]`` positive); more: softmax. A label in ``y``
        outside ``classes`` makes ``fit`` raise ``ValueError`` (nothing is dropped or remapped).
    random_state : None, int or numpy.random.Generator
        ``None`` (default): fresh OS entropy. An int seed makes ``fit`` deterministic — for tests only
        (warns :class:`~algorithms.seeding.DeterministicSeedWarning`).
    accountant : str
        dpcore accountant that calibrates the noise multiplier and reports ``privacy_`` (the same one for both);
        default ``"auto"``, dpcore's tightest certified bound (the PLD for the without-replacement batches, the
        exact analytic Gaussian for DP-GD's full batches). ``"rdp"`` (the default before) remains selectable.
        Chosen by ``benchmarks/bench_nonconvex.py --mlp-accountant`` (RESULTS.md "DPMLPClassifier: accountant auto
        vs rdp"): on a9a, ijcnn1, breast_cancer, digits and the held-out wine, at ε ∈ {0.2, 1}, 5 seeds, auto's
        noise multiplier is 0.46–0.92× RDP's and its mean test error lower or equal (within one standard error)
        on every data set for every solver.

    Attributes
    ----------
    coefs_ : list of arrays
        ``[W₁ (d, h), W₂ (h, K)]`` (scikit-learn's layout); ``intercepts_`` likewise.
    privacy_ : dpcore.PrivacyResult
        ε of the event the kernel ran (its release count checked against the event).
    classes_, n_features_in_
    """

    def __init__(self, hidden_units: int = 16, solver: str = "dp_sgd", epsilon: float = 1.0, delta: float = 1e-5,
                 epochs: float = 20.0, batch_size: Optional[int] = None, learning_rate: Optional[float] = None,
                 clip_norm: Optional[float] = None,
                 diff_clip_norm: Optional[float] = None, momentum: Optional[float] = None,
                 step_bound: Optional[float] = None, output: str = "random", alpha: float = 1e-4,
                 heavy_ball: float = 0.9, lr_schedule: str = "cosine", optimizer: str = "adam",
                 classes: Optional[Any] = None, random_state: Any = None, accountant: str = "auto") -> None:
        _store_params(self, locals())

    def __sklearn_tags__(self):
        """Sparse input accepted (densified, up to :data:`algorithms._data.MAX_DENSE_BYTES`), poor score under
        noise (:func:`algorithms.estimators.dp_estimator_tags`)."""
        return dp_estimator_tags(super().__sklearn_tags__(), sparse=True)

    # ------------------------------------------------------------------------------------ fitting
    def fit(self, X: np.ndarray, y: np.ndarray) -> "DPMLPClassifier":
        """Train privately; ``privacy_`` is dpcore's ε for what the kernel ran.

        Raises
        ------
        ValueError
            A bad parameter (named in the message); ``y`` not one label per row; fewer than two
            classes; a label of ``y`` outside ``classes`` ("y must contain only the labels [...]").
        """
        X = validate_features(X)
        n, d = X.shape
        y, classes = classifier_labels(self.classes, y, n, type(self).__name__)
        h = check_iterations("hidden_units", self.hidden_units)  # the kernels index the parameters in int64
        solver = check_choice("solver", self.solver, MLP_SOLVERS)
        eps = check_positive("epsilon", self.epsilon, allow_inf=True)
        delta = check_delta("delta", self.delta)
        optimizer = check_choice("optimizer", self.optimizer, MLP_OPTIMIZERS)
        lr = None if self.learning_rate is None else check_positive("learning_rate", self.learning_rate)
        clip = None if self.clip_norm is None else check_positive("clip_norm", self.clip_norm)
        alpha = check_nonnegative("alpha", self.alpha)
        epochs = check_positive("epochs", self.epochs)
        heavy_ball = check_heavy_ball(self.heavy_ball, "heavy_ball")
        cosine = check_choice("lr_schedule", self.lr_schedule, ("constant", "cosine")) == "cosine"
        if solver == "dp_gd":
            b = n
        else:
            b = min(DEFAULT_BATCH_SIZE, n) if self.batch_size is None else check_batch_size(self.batch_size, n)
        K = 1 if classes.shape[0] == 2 else classes.shape[0]
        if 8 * n_parameters(d, h, K) > MAX_DENSE_BYTES:  # was a MemoryError (hidden_units=10**9: 37 GiB)
            raise ValueError(f"hidden_units={h} gives {n_parameters(d, h, K)} float64 parameters for {d} features, more "
                             f"than {MAX_DENSE_BYTES // 2**30} GiB (algorithms._data.MAX_DENSE_BYTES); use fewer hidden units")
        adam = optimizer == "adam" and solver in ("dp_sgd", "dp_gd")
        if lr is None:
            lr = ADAM_LR_SCALE / math.sqrt(n_parameters(d, h, K)) if adam else MOMENTUM_LR
        if clip is None:
            clip = ADAM_CLIP if adam else DEFAULT_CLIP
        codes = np.searchsorted(classes, y).astype(np.float64)
        yk = np.where(codes == 1.0, 1.0, -1.0) if K == 1 else codes
        warn_if_fixed_seed(self.random_state, type(self).__name__)
        gen = as_generator(self.random_state)
        theta0 = self._init_weights(d, h, K, gen)
        T = iteration_count("epochs", self.epochs, epochs if solver == "dp_gd" else epochs * n / b)
        sens = 2.0 * clip
        if solver == "dp_srm":
            c2 = clip / 10.0 if self.diff_clip_norm is None else check_positive("diff_clip_norm", self.diff_clip_norm)
            gamma = min(1.0, c2 / clip) if self.momentum is None else check_momentum(self.momentum)
            bound = math.inf if self.step_bound is None else check_positive("step_bound", self.step_bound)
            sens0, sens = dp_srm_sensitivities(clip, c2, gamma)

            def event_fn(z: float):
                return dp_srm_event(z, b, b, n, T)
        elif solver == "dp_gd":
            def event_fn(z: float):
                return SelfComposedEvent(GaussianEvent(z, "replace_one"), T)
        else:
            def event_fn(z: float):
                return SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(z, "replace_one"), b, n), T)
        z, event, privacy, _ = calibrated_privacy(event_fn, epsilon=eps, delta=delta, noise_multiplier=None,
                                                  relation="replace_one", accountant=self.accountant)
        X = np.ascontiguousarray(X, dtype=np.float64)
        sigma = least_noise_scale(z, sens)
        if solver == "dp_srm":
            last = check_choice("output", self.output, ("random", "last")) == "last"
            out_index = T if last else int(gen.integers(T))
            theta, releases, _, _ = mlp_dp_srm_kernel(theta0, X, yk, d, h, K, T, b, b, gamma, clip, c2,
                                                      least_noise_scale(z, sens0), sigma, lr, bound, alpha, out_index, gen)
            check_counts(releases, event)
        elif solver == "rrpsgd":
            rounds = int(gen.integers(1, T + 1))
            theta, releases, _ = mlp_noisy_sgd_kernel(theta0, X, yk, d, h, K, rounds, b, lr, clip, sigma, alpha,
                                                      gen)
            if releases != rounds or releases > T:
                raise RuntimeError(f"kernel performed {releases} releases for R={rounds} (event accounts {T})")
        else:
            theta, releases, _ = mlp_noisy_sgd_kernel(theta0, X, yk, d, h, K, T, b, lr, clip, sigma, alpha, gen,
                                                      heavy_ball, cosine, adam, ADAM_BETA2,
                                                      ADAM_EPS + sigma / b)
            check_counts(releases, event)
        check_finite_model(theta, "DPMLPClassifier", "learning_rate or clip_norm")
        self.classes_ = classes
        self.n_features_in_ = d
        self._shape = (d, h, K)
        self._theta = theta
        hd = h * d
        self.coefs_ = [theta[:hd].reshape(h, d).T.copy(), theta[hd + h:hd + h + K * h].reshape(K, h).T.copy()]
        self.intercepts_ = [theta[hd:hd + h].copy(), theta[hd + h + K * h:].copy()]
        self.privacy_ = privacy
        self.noise_multiplier_ = z
        return self

    @staticmethod
    def _init_weights(d: int, h: int, K: int, gen: np.random.Generator) -> np.ndarray:
        """Glorot-uniform weights, zero biases (data-independent)."""
        theta = np.zeros(n_parameters(d, h, K))
        a1, a2 = math.sqrt(6.0 / (d + h)), math.sqrt(6.0 / (h + K))
        theta[:h * d] = gen.uniform(-a1, a1, h * d)
        theta[h * d + h:h * d + h + K * h] = gen.uniform(-a2, a2, K * h)
        return theta

    # --------------------------------------------------------------------------------- prediction
    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Network outputs: shape (n,) for two classes (the logit of ``classes_[1]``), (n, K) otherwise."""
        if not hasattr(self, "_theta"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X = validate_features(X)
        d, h, K = self._shape
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {d} features as "
                             "input (as in fit)")
        out = mlp_logits_kernel(self._theta, np.ascontiguousarray(X, dtype=np.float64), d, h, K)
        return out[:, 0] if K == 1 else out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities (n, n_classes), columns in ``classes_`` order."""
        o = self.decision_function(X)
        if o.ndim == 1:
            p1 = 0.5 * (1.0 + np.tanh(0.5 * o))
            return np.column_stack([1.0 - p1, p1])
        e = np.exp(o - o.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The most likely class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
