"""DP-SGD: batch samplers, the event per sampling scheme, convergence with the noise off, utility vs ε."""

import math

import numpy as np
import pytest

from algorithms.dp_gd import dp_gd
from algorithms.dp_sgd import dp_sgd, fixed_batch_kernel, poisson_batch_kernel
from algorithms.losses import get_loss
from algorithms.objective import objective_value, reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification
from dpcore.events import PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent

X, Y, _ = make_classification(400, 5, seed=7)


def test_poisson_batches_include_each_record_with_probability_q():
    """2000 draws, n = 100, q = 0.1: the mean batch size is within 0.4 of 10 (≈ 6 standard errors) and
    every record's inclusion frequency within 0.04 of 0.1 (≈ 6 s.e.; false alarm < 1e-6 overall)."""
    rng = np.random.default_rng(123)
    idx = np.empty(100, dtype=np.int64)
    counts = np.zeros(100)
    sizes = []
    for _ in range(2000):
        k = poisson_batch_kernel(rng, 100, 0.1, idx)
        assert len(set(idx[:k].tolist())) == k
        counts[idx[:k]] += 1
        sizes.append(k)
    assert abs(np.mean(sizes) - 10) < 0.4
    assert np.abs(counts / 2000 - 0.1).max() < 0.04


def test_fixed_batches_are_uniform_subsets():
    """Each record is in a b = 20 of n = 100 batch with probability 0.2: frequency within 0.054 over
    2000 draws (6 s.e.; false alarm < 1e-6)."""
    rng = np.random.default_rng(321)
    perm = np.arange(100)
    counts = np.zeros(100)
    for _ in range(2000):
        fixed_batch_kernel(rng, perm, 20)
        assert len(set(perm[:20].tolist())) == 20
        counts[perm[:20]] += 1
    assert np.abs(counts / 2000 - 0.2).max() < 0.054


def test_batch_kernels_draw_numpys_stream_from_the_callers_generator():
    """The Poisson batch is the geometric skips NumPy draws from the same Generator."""
    rng, ref = np.random.default_rng(9), np.random.default_rng(9)
    idx = np.empty(100, dtype=np.int64)
    k = poisson_batch_kernel(rng, 100, 0.1, idx)
    skips = []
    while sum(skips) - 1 < 100:
        skips.append(int(ref.geometric(0.1)))
    np.testing.assert_array_equal(idx[:k], np.cumsum(skips)[:-1] - 1)
    assert rng.random() == ref.random()


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_runs_are_reproducible_from_the_callers_generator(sampling):
    """The solver passes its Generator into the compiled kernel: equal seeds give identical runs, and a
    reused Generator has advanced (the second run differs)."""
    def run(rng):
        return dp_sgd(X, Y, epsilon=1.0, batch_size=40, steps=20, dataset_size=400, data_norm_bound=1.0,
                      sampling=sampling, rng=rng, trace=False).weights

    gen = np.random.default_rng(3)
    first, second = run(gen), run(gen)
    np.testing.assert_array_equal(first, run(np.random.default_rng(3)))
    np.testing.assert_array_equal(first, run(3))
    assert not np.array_equal(first, second)


def test_events_follow_the_sampling_scheme():
    p = dp_sgd(X, Y, epsilon=1.0, batch_size=40, steps=25, dataset_size=400, data_norm_bound=1.0, trace=False)
    assert p.event == SelfComposedEvent(PoissonSampledEvent(p.event.event.event, 0.1), 25)
    assert p.event.relation == "add_remove" and p.sigma == pytest.approx(p.noise_multiplier * 1.0)  # Δ = C = G = 1
    w = dp_sgd(X, Y, epsilon=1.0, batch_size=40, steps=25, data_norm_bound=1.0, sampling="without_replacement",
               trace=False)
    assert w.event == SelfComposedEvent(SampledWithoutReplacementEvent(w.event.event.event, 40, 400), 25)
    assert w.event.relation == "replace_one" and w.sigma == pytest.approx(w.noise_multiplier * 2.0)  # Δ = 2C
    with pytest.raises(ValueError, match="relation must be 'add_remove'"):
        dp_sgd(X, Y, epsilon=1.0, data_norm_bound=1.0, relation="replace_one")
    with pytest.raises(ValueError, match="batch_size"):
        dp_sgd(X, Y, epsilon=1.0, data_norm_bound=1.0, batch_size=401, sampling="without_replacement")
    with pytest.raises(ValueError, match="batch_size"):
        dp_sgd(X, Y, epsilon=1.0, data_norm_bound=1.0, batch_size=401, dataset_size=400)
    with pytest.raises(ValueError, match="dataset_size"):
        dp_sgd(X, Y, epsilon=1.0, data_norm_bound=1.0, batch_size=40, dataset_size=300, sampling="without_replacement")


def test_full_batch_without_replacement_is_gradient_descent():
    a = dp_sgd(X, Y, epsilon=math.inf, alpha=0.01, batch_size=400, steps=50, data_norm_bound=1.0,
               sampling="without_replacement", trace=False)
    b = dp_gd(X, Y, epsilon=math.inf, alpha=0.01, steps=50, data_norm_bound=1.0, trace=False)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-12)


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_noise_off_reaches_the_optimum_neighbourhood(sampling):
    """Constant-step SGD converges to a neighbourhood of size O(η): objective within 1e-3 of the optimum
    at η = 0.25, 40 epochs, b = 20."""
    lobj, reg = get_loss("logistic"), Regularizer(0.01)
    best = objective_value(reference_minimizer(X, Y, lobj, reg), X, Y, lobj, reg)
    res = dp_sgd(X, Y, epsilon=math.inf, alpha=0.01, batch_size=20, epochs=40, learning_rate=0.25,
                 data_norm_bound=1.0, sampling=sampling, dataset_size=400, rng=1, trace=True, tol=None)
    assert res.objective_trace[-1] - best < 1e-3
    assert len(res.objective_trace) == 41


def test_excess_risk_decreases_as_epsilon_grows():
    """Mean excess empirical risk over 6 seeds at ε = 0.1, 1, 10 (Poisson, δ = 1e-5)."""
    Xs, Ys, _ = make_classification(2000, 5, seed=3)
    lobj, reg = get_loss("logistic"), Regularizer(0.01)
    best = objective_value(reference_minimizer(Xs, Ys, lobj, reg), Xs, Ys, lobj, reg)
    risks = []
    for eps in (0.1, 1.0, 10.0):
        r = [dp_sgd(Xs, Ys, epsilon=eps, alpha=0.01, batch_size=200, epochs=5, dataset_size=2000,
                    data_norm_bound=1.0, rng=s, trace=False).weights for s in range(6)]
        risks.append(np.mean([objective_value(w, Xs, Ys, lobj, reg) - best for w in r]))
    assert risks[0] > risks[1] > risks[2] > 0


def test_add_remove_schedule_never_reads_the_private_n():
    """The attack (issue 13): on 10 vs 11 zero records the default schedule q = b/n, T = ⌈epochs·n/b⌉
    differed, and so did the released event (ε ≥ 6.29 vs a claim of 1). Now the schedule must be
    public: without it dp_sgd refuses; with it the neighbours get identical events and schedules."""
    Z10, Z11 = np.zeros((10, 3)), np.zeros((11, 3))
    y10, y11 = np.ones(10), np.ones(11)
    for kwargs in ({}, {"sampling_rate": 0.2}, {"steps": 5}, {"epochs": 2.0}):
        with pytest.raises(ValueError, match="dataset_size"):
            dp_sgd(Z10, y10, epsilon=1.0, data_norm_bound=1.0, batch_size=2, **kwargs)
    for kwargs in ({"sampling_rate": 0.2, "steps": 5}, {"dataset_size": 20, "epochs": 2.0},
                   {"dataset_size": 20, "sampling_rate": 0.3}):
        a = dp_sgd(Z10, y10, epsilon=1.0, data_norm_bound=1.0, batch_size=2, **kwargs)
        b = dp_sgd(Z11, y11, epsilon=1.0, data_norm_bound=1.0, batch_size=2, **kwargs)
        assert a.event == b.event and a.privacy == b.privacy and a.noise_multiplier == b.noise_multiplier
        for key in ("steps", "sampling_rate", "batch_size", "releases"):
            assert a.details[key] == b.details[key]
    c = dp_sgd(Z10, y10, epsilon=1.0, data_norm_bound=1.0, batch_size=2, dataset_size=20, epochs=2.0)
    assert c.details["steps"] == 20 and c.details["sampling_rate"] == 0.1  # T = ⌈2·20/2⌉, q = 2/20


def test_default_batch_size_is_a_rule_of_epsilon():
    """b = ⌈256·min(ε, 1)^(−0.6)⌉ (benchmarks/bench_defaults.py), capped at the public n without
    replacement; Poisson sampling keeps the uncapped public b (n is private there)."""
    from algorithms.dp_sgd import default_batch_size

    assert default_batch_size(1.0) == default_batch_size(5.0) == default_batch_size(math.inf) == 256
    assert default_batch_size(None) == 256 and default_batch_size(0.1) == math.ceil(256 * 0.1 ** -0.6) == 1020
    Xb, Yb, _ = make_classification(2000, 4, seed=9)
    wor = dp_sgd(Xb, Yb, epsilon=0.1, data_norm_bound=1.0, sampling="without_replacement", steps=2, rng=0)
    assert wor.details["batch_size"] == 1020
    small = dp_sgd(Xb[:300], Yb[:300], epsilon=0.1, data_norm_bound=1.0, sampling="without_replacement", steps=2,
                   rng=0)
    assert small.details["batch_size"] == 300
    poisson = dp_sgd(Xb[:300], Yb[:300], epsilon=0.1, data_norm_bound=1.0, sampling_rate=0.5, steps=2, rng=0)
    assert poisson.details["batch_size"] == 1020


def test_sampler_path_runs_the_softmax_step_of_the_batches_it_draws():
    """dp_sgd(sampling=<sampler>, classes=k) shares the fixed-schedule kernels' step (the merge of issues 23 and 26):
    one balls-in-bins epoch of one step is a full batch, so with the noise negligible it equals DP-GD's softmax step
    (a sampler path that dropped ``classes`` would take the binary kernel and fail here)."""
    import warnings

    from dpcore.sampling import BallsInBinsSampler

    rng = np.random.default_rng(0)
    n, d = 200, 4
    Xm = rng.normal(size=(n, d))
    Xm /= np.maximum(1.0, np.linalg.norm(Xm, axis=1, keepdims=True))
    ym = rng.integers(0, 3, n)
    kw = dict(noise_multiplier=1e-12, classes=3, clip_norm=0.5, learning_rate=0.7, steps=1, alpha=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampled = dp_sgd(Xm, ym, sampling=BallsInBinsSampler(n, 1), accountant="rdp", **kw)
        full = dp_gd(Xm, ym, momentum=0.0, **kw)
    assert sampled.weights.shape == full.weights.shape == (3, d)
    np.testing.assert_allclose(sampled.weights, full.weights, rtol=1e-9, atol=1e-14)
    assert np.max(np.abs(full.weights)) > 1e-3  # the step moved the weights
