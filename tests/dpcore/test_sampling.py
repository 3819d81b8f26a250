"""Samplers that emit their own event: the batches follow the law the event describes.

Statistical checks use fixed seeds; each chi-square / binomial test rejects at p < 1e-4, a
false-alarm rate of 1e-4 per test were the seed random (the seeds are fixed, so the outcome is
deterministic)."""

import math

import numpy as np
import pytest
from scipy import stats

import dpcore
from dpcore import GaussianEvent, RandomAllocationEvent, ShuffledBatchesEvent
from dpcore.sampling import (
    BallsInBinsSampler, FixedSizeSampler, PoissonSampler, ShuffleSampler, TruncatedPoissonSampler,
    WithReplacementSampler, make_sampler,
)

ALPHA = 1e-4
pytestmark = pytest.mark.filterwarnings("ignore::dpcore.seeding.DeterministicSeedWarning")  # seeds: tests only


def _chi2_uniform(counts):
    return stats.chisquare(counts).pvalue


@pytest.mark.parametrize("k", [1, 2])
def test_random_allocation_each_record_in_exactly_k_of_t_steps(k):
    n, t, epochs = 500, 10, 40
    sampler = BallsInBinsSampler(n, t, num_selected=k, rng=3)
    per_step = np.zeros(t)
    for _ in range(epochs):
        batches = sampler.epoch()
        assert len(batches) == t
        hits = np.bincount(np.concatenate(batches), minlength=n)
        assert np.all(hits == k)  # exactly k of the t steps, every record, every epoch
        for s, b in enumerate(batches):
            assert np.unique(b).size == b.size
            per_step[s] += b.size
    assert _chi2_uniform(per_step) > ALPHA  # the steps are uniform
    # one record's steps: uniform over the t steps
    record_steps = np.zeros(t)
    sampler = BallsInBinsSampler(50, t, num_selected=k, rng=4)
    for _ in range(2000):
        for s, b in enumerate(sampler.epoch()):
            record_steps[s] += np.count_nonzero(b == 7)
    assert _chi2_uniform(record_steps) > ALPHA
    assert sampler.privacy_event(GaussianEvent(1.0)) == dpcore.SelfComposedEvent(
        RandomAllocationEvent(GaussianEvent(1.0), t, k), 2000)


def test_poisson_batch_sizes_are_binomial():
    n, q, steps = 400, 0.05, 4000
    sizes = np.array([b.size for b in PoissonSampler(n, q, rng=5).batches(steps)])
    observed = np.bincount(sizes, minlength=61)[:61]
    expected = stats.binom.pmf(np.arange(61), n, q) * steps
    # pool the sparse tails for the chi-square test
    lo, hi = 8, 33
    obs = np.concatenate([[observed[:lo].sum()], observed[lo:hi], [steps - observed[:hi].sum()]])
    exp = np.concatenate([[expected[:lo].sum()], expected[lo:hi], [steps - expected[:hi].sum()]])
    assert stats.chisquare(obs, exp).pvalue > ALPHA


def test_truncated_poisson_caps_and_truncation_rate():
    n, q, cap, steps = 400, 0.05, 22, 4000
    sizes = np.array([b.size for b in TruncatedPoissonSampler(n, q, cap, rng=6).batches(steps)])
    assert sizes.max() <= cap
    at_cap = int(np.count_nonzero(sizes == cap))
    p_cap = stats.binom.sf(cap - 1, n, q)  # P(Bin(n, q) >= cap)
    assert stats.binomtest(at_cap, steps, p_cap).pvalue > ALPHA
    below = sizes[sizes < cap]  # below the cap the law is the binomial's
    assert abs(below.mean() - (stats.binom.expect(lambda k: k, (n, q), ub=cap - 1, conditional=True))) < 0.2


def test_shuffle_each_record_once_per_epoch_and_fixed_sizes():
    sampler = ShuffleSampler(103, 10, rng=7)
    for _ in range(5):
        batches = sampler.epoch()
        assert sorted(np.concatenate(batches).tolist()) == list(range(103))
        assert {b.size for b in batches} <= {10, 11}
    step = GaussianEvent(1.0, relation="replace_one")  # shuffling: replace_one (the split moves under add_remove)
    assert sampler.privacy_event(step) == dpcore.SelfComposedEvent(ShuffledBatchesEvent(step, 10), 5)
    with pytest.raises(ValueError, match="replace_one"):
        sampler.privacy_event(GaussianEvent(1.0))


def test_fixed_size_and_with_replacement():
    for b in FixedSizeSampler(50, 7, rng=8).batches(100):
        assert b.size == 7 and np.unique(b).size == 7
    n, size, steps = 20, 8, 5000
    mult = np.array([np.count_nonzero(b == 3) for b in WithReplacementSampler(n, size, rng=9).batches(steps)])
    observed = np.bincount(mult, minlength=4)[:4].astype(float)
    observed[3] = steps - observed[:3].sum()
    expected = stats.binom.pmf(np.arange(4), size, 1 / n) * steps
    expected[3] = steps - expected[:3].sum()
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def _law_violations(sampler, epochs=30):
    """Replays a sampler's batches against the law its own event states (the check a planted bug
    must fail): RandomAllocation → every record exactly k times per epoch; ShuffledBatches → once;
    Poisson → binomial batch sizes."""
    unit = sampler.event(GaussianEvent(1.0, relation=sampler.relation), 1).event
    n = sampler.dataset_size
    if isinstance(unit, (RandomAllocationEvent, ShuffledBatchesEvent)):
        k = unit.num_selected if isinstance(unit, RandomAllocationEvent) else 1
        return sum(int(np.any(np.bincount(np.concatenate(sampler.epoch()), minlength=n) != k)) for _ in range(epochs))
    sizes = np.array([b.size for b in sampler.batches(epochs * 20)])
    mean, sd = n * unit.sampling_rate, math.sqrt(n * unit.sampling_rate * (1 - unit.sampling_rate))
    return int(abs(sizes.mean() - mean) > 5 * sd / math.sqrt(sizes.size)) + int(abs(sizes.std() - sd) > 0.5 * sd)


def test_event_matches_batches_and_a_mislabelled_sampler_is_caught():
    for sampler in (BallsInBinsSampler(60, 6, rng=1), ShuffleSampler(60, 6, rng=2), PoissonSampler(600, 0.1, rng=3)):
        assert _law_violations(sampler) == 0

    class ShuffleClaimingPoisson(ShuffleSampler):  # planted bug: shuffled batches, Poisson event
        def _unit_event(self, step_event):
            return dpcore.PoissonSampledEvent(step_event, 1.0 / self.num_batches)

        def event(self, step_event, steps):
            return dpcore.SelfComposedEvent(self._unit_event(step_event), steps)

    assert _law_violations(ShuffleClaimingPoisson(600, 10, rng=4)) > 0


def test_public_api_accounts_the_sampler_that_ran():
    from algorithms import dp_sgd
    from algorithms.synthetic import make_classification

    X, y, _ = make_classification(300, 3, seed=0)
    sampler = ShuffleSampler(300, 10, rng=0)
    res = dp_sgd(X, y, noise_multiplier=1.0, sampling=sampler, epochs=2, data_norm_bound=1.0, rng=0)
    assert res.event == dpcore.SelfComposedEvent(ShuffledBatchesEvent(GaussianEvent(1.0, "replace_one"), 10), 2)
    assert sampler.steps_emitted == 20 and res.details["releases"] == 20
    with pytest.raises(TypeError):  # there is no way to hand the solver an event of another sampler
        dp_sgd(X, y, noise_multiplier=1.0, sampling=sampler, event=dpcore.PoissonSampledEvent(GaussianEvent(1.0), 0.1))
    with pytest.raises(ValueError, match="sampling_rate"):
        dp_sgd(X, y, noise_multiplier=1.0, sampling=sampler, sampling_rate=0.1, data_norm_bound=1.0)
    with pytest.raises(ValueError, match="relation"):
        dp_sgd(X, y, noise_multiplier=1.0, sampling=sampler, relation="add_remove", data_norm_bound=1.0)
    with pytest.raises(ValueError, match="dataset_size"):
        dp_sgd(X, y, noise_multiplier=1.0, sampling=ShuffleSampler(299, 10), data_norm_bound=1.0)
    with pytest.raises(ValueError, match="relation"):
        sampler.event(GaussianEvent(1.0, relation="add_remove"), 3)


def test_make_sampler_and_bad_input():
    assert make_sampler("shuffle", dataset_size=1000, batch_size=100).num_batches == 10
    assert make_sampler("truncated-poisson", dataset_size=1000, batch_size=100).max_batch_size == 120
    assert make_sampler("random-allocation", dataset_size=1000, batch_size=300).steps_per_epoch == 4
    with pytest.raises(ValueError, match="sampling"):
        make_sampler("bogus", dataset_size=10, batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        make_sampler("poisson", dataset_size=10, batch_size=20)
    with pytest.raises(ValueError, match="rng"):
        PoissonSampler(10, 0.5, rng="seed")
    with pytest.raises(ValueError, match="sampling_rate"):
        PoissonSampler(10, float("nan"))
    with pytest.raises(ValueError, match="num_selected"):
        BallsInBinsSampler(10, 3, num_selected=4)
    assert PoissonSampler(10, 0.5).privacy_event(GaussianEvent(1.0)) == dpcore.NoOpEvent()


@pytest.mark.filterwarnings("error::dpcore.seeding.DeterministicSeedWarning")
def test_a_seeded_sampler_warns_and_so_does_dp_sgd_on_it():
    """A fixed seed makes the batches public: the accounted amplification does not exist (issue 23
    review, item 5). Samplers and dp_sgd(sampling=<seeded sampler>) warn; None / a Generator do not."""
    from algorithms import dp_sgd
    from algorithms.synthetic import make_classification
    from dpcore.seeding import DeterministicSeedWarning

    for make in (lambda rng: BallsInBinsSampler(100, 10, rng=rng), lambda rng: ShuffleSampler(100, 10, rng=rng),
                 lambda rng: PoissonSampler(100, 0.1, rng=rng), lambda rng: WithReplacementSampler(100, 10, rng=rng)):
        with pytest.warns(DeterministicSeedWarning, match="rng=0.*NOT differentially private"):
            make(0)
        make(None), make(np.random.default_rng(0))  # silent (the error filter above would raise)
    X, y, _ = make_classification(100, 3, seed=0)
    with pytest.warns(DeterministicSeedWarning):
        sampler = BallsInBinsSampler(100, 10, rng=0)
    with pytest.warns(DeterministicSeedWarning, match="dp_sgd"):
        dp_sgd(X, y, noise_multiplier=1.0, sampling=sampler, epochs=1, data_norm_bound=1.0)


def test_huge_schedules_are_refused_naming_the_argument():
    """Issue 23 review, item 7: OverflowError / 'Python int too large' instead of a refusal."""
    from dpcore.sampling import planned_steps

    with pytest.raises(ValueError, match="epochs"):
        planned_steps(PoissonSampler(10, 0.1), epochs=1e308)
    with pytest.raises(ValueError, match="epochs"):
        planned_steps(TruncatedPoissonSampler(1000, 0.01, 12), epochs=1e300)
    with pytest.raises(ValueError, match="sampling_rate"):
        PoissonSampler(10, 1e-320).steps_per_epoch
    assert PoissonSampler(10, 1e-300).steps_per_epoch == math.ceil(1.0 / 1e-300)  # large but finite


def test_sampler_memory_is_of_the_batches_not_of_n_times_t():
    """Issue 23 review, item 8: BallsInBins with num_selected > 1 built an n x t array (74.5 GiB at
    n = 1e6, t = 1e4) and Poisson an n-array per batch (8 GB at n = 1e9). Peak memory now follows the
    output: O(n·k) per epoch, O(batch) per Poisson step (tracemalloc; before: ~160 MB and ~90 MB here)."""
    import tracemalloc

    def peak(draw):
        tracemalloc.start()
        try:
            out = draw()
            return tracemalloc.get_traced_memory()[1], out
        finally:
            tracemalloc.stop()

    n, t, k = 20_000, 500, 2
    used, batches = peak(lambda: BallsInBinsSampler(n, t, num_selected=k).epoch())
    assert used < 8 * 1024**2
    counts = np.bincount(np.concatenate(batches), minlength=n)
    assert np.all(counts == k) and all(np.unique(b).size == b.size for b in batches)
    used, batch = peak(lambda: next(PoissonSampler(10**7, 1e-6).batches(1)))
    assert used < 1024**2 and batch.size < 100 and np.all(np.diff(batch) > 0)


@pytest.mark.parametrize("floyd_max_k", [32, 0])  # Floyd's algorithm / the random-key row blocks
@pytest.mark.parametrize("t,k", [(5, 2), (6, 3)])
def test_every_k_subset_of_the_steps_is_equally_likely(monkeypatch, floyd_max_k, t, k):
    """The subsets themselves, not only each step's frequency, are uniform (chi-square over all
    C(t, k) subsets, p > 1e-4; a biased draw
    shifts the subset counts: drawing r in [0, j) instead of [0, j] fails both Floyd cases)."""
    from itertools import combinations

    from dpcore import sampling

    monkeypatch.setattr(sampling, "_FLOYD_MAX_K", floyd_max_k)
    monkeypatch.setattr(sampling, "_BLOCK_KEYS", 64)  # several row blocks
    rows = sampling._uniform_subsets(np.random.default_rng(11), 30_000, t, k)
    assert np.all(np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1])
    index = {c: i for i, c in enumerate(combinations(range(t), k))}
    counts = np.bincount([index[tuple(r)] for r in np.sort(rows, axis=1).tolist()], minlength=len(index))
    assert _chi2_uniform(counts) > ALPHA
