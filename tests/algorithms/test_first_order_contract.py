"""Contract every gradient-perturbation solver keeps (DP-GD, DP-SGD, DP-SVRG, DP-SVRG++, DP-AccMD):
the ε it reports bounds the ε of the releases it ran (exact for unsampled Gaussians, not below the PLD
accountant's certified lower bound with sampling), the event accounts for every noisy release the kernel
made, each release moves by at most the sensitivity the event was built with (sensitivity-conformance
replay, :mod:`audits.conformance`), the noise it adds has the calibrated scale, runs are reproducible from
a seed, and bad input raises ValueError."""

import importlib
import math

import numpy as np
import pytest

import dpcore
from algorithms._solver_common import accounted_releases, check_counts
from algorithms.dp_accmd import dp_accmd
from algorithms.dp_gd import dp_gd
from algorithms.dp_sgd import dp_sgd
from algorithms.dp_svrg import dp_svrg, dp_svrg_pp
from algorithms.synthetic import make_classification
from audits.conformance import check_solver
from dpcore.events import PoissonSampledEvent, SampledWithoutReplacementEvent

X, Y, _ = make_classification(300, 4, seed=11)
DELTA = 1e-5

SOLVERS = {
    "dp_gd": (dp_gd, dict(steps=20)),
    "dp_sgd_poisson": (dp_sgd, dict(batch_size=50, epochs=2, dataset_size=300, sampling="poisson")),
    "dp_sgd_wor": (dp_sgd, dict(batch_size=50, epochs=2, sampling="without_replacement")),
    "dp_svrg": (dp_svrg, dict(epochs=3, batch_size=30, inner_steps=5)),
    "dp_svrg_pp": (dp_svrg_pp, dict(epochs=3, batch_size=30, inner_steps=2)),
    "dp_accmd": (dp_accmd, dict(steps=15, constraint="l1", radius=2.0)),
}


def _run(name, **kw):
    fn, base = SOLVERS[name]
    args = dict(base, alpha=0.01, data_norm_bound=1.0, delta=DELTA, rng=0, trace=False)
    args.update(kw)
    return fn(X, Y, **args)


def _releases(details):
    r = details["releases"]
    return sum(r.values()) if isinstance(r, dict) else r


def _assert_bounds_the_releases(res, independent):
    """Unsampled Gaussian releases: their exact ε (Balle–Wang, μ = √(T)/z, mpmath) ≤ the reported RDP ε ≤ 1.1×
    it; with sampling: the PLD accountant's certified lower bound ≤ the reported ε."""
    if not any(isinstance(e, (PoissonSampledEvent, SampledWithoutReplacementEvent)) for e in _walk(res.event)):
        exact = independent.gaussian_epsilon(math.sqrt(accounted_releases(res.event)) / res.noise_multiplier, DELTA)
        assert exact <= res.privacy.epsilon <= 1.1 * exact
    else:
        assert independent.pld_bounds(res.event, DELTA)[0] <= res.privacy.epsilon


def _walk(event):
    yield event
    for child in event.children():
        yield from _walk(child)


@pytest.mark.parametrize("name", SOLVERS)
def test_reported_epsilon_bounds_the_releases_run_and_counts_match(name, independent):
    res = _run(name, epsilon=1.0)
    assert res.privacy.epsilon <= 1.0
    _assert_bounds_the_releases(res, independent)
    assert res.privacy.relation == res.event.relation
    assert res.noise_multiplier > 0
    assert _releases(res.details) == accounted_releases(res.event)


@pytest.mark.parametrize("name", SOLVERS)
def test_given_noise_multiplier_reports_an_upper_bound_of_its_epsilon(name, independent):
    res = _run(name, noise_multiplier=2.0)
    assert res.noise_multiplier == 2.0
    _assert_bounds_the_releases(res, independent)


@pytest.mark.parametrize("name", ["dp_gd", "dp_sgd", "dp_svrg", "dp_accmd"])
def test_each_release_moves_by_at_most_the_events_sensitivity(name):
    """The replay harness (coupled noise, one step from w0, norms in mpmath) on a pair at the clip: the
    recovered change of the released sum equals its Δ = 2C (replace-one) up to rounding, never more."""
    Xp = X[:6] / np.linalg.norm(X[:6], axis=1, keepdims=True)
    y0, y1 = Y[:6].copy(), Y[:6].copy()
    y1[0] = -y1[0]
    report = check_solver(name, (Xp, y0), (Xp, y1), seed=5, clip_norm=0.1, w0=np.full(X.shape[1], 0.2))
    assert report.verdict == "conforms", report.to_dict()
    assert report.worst.ratio == pytest.approx(1.0, rel=1e-9)


def test_running_more_steps_than_accounted_is_refused():
    res = _run("dp_svrg", epsilon=1.0)
    n = accounted_releases(res.event)
    check_counts(n, res.event)
    with pytest.raises(RuntimeError, match="accounts"):
        check_counts(n + 1, res.event)


def test_a_kernel_running_an_extra_step_is_caught(monkeypatch):
    """Plant a DP-GD kernel that runs one step more than it is asked for: the solver must refuse."""
    mod = importlib.import_module("algorithms.dp_gd")  # the module, not the function of that name

    real = mod.dp_gd_kernel

    def one_more(*args):
        args = list(args)
        args[10] += 1  # steps
        return real(*args)

    monkeypatch.setattr(mod, "dp_gd_kernel", one_more)
    with pytest.raises(RuntimeError, match="noisy releases"):
        _run("dp_gd", epsilon=1.0)


@pytest.mark.parametrize("name", SOLVERS)
def test_noise_off_reports_infinite_epsilon(name):
    res = _run(name, epsilon=math.inf)
    assert math.isinf(res.privacy.epsilon)
    assert res.noise_multiplier == 0.0 and res.sigma == 0.0
    assert isinstance(res.event, dpcore.NonPrivateEvent)


@pytest.mark.parametrize("name", SOLVERS)
def test_reproducible_from_seed(name):
    a = _run(name, epsilon=1.0, rng=5)
    b = _run(name, epsilon=1.0, rng=np.random.default_rng(5))
    c = _run(name, epsilon=1.0, rng=6)
    np.testing.assert_array_equal(a.weights, _run(name, epsilon=1.0, rng=5).weights)
    np.testing.assert_array_equal(a.weights, b.weights)  # an int seed means default_rng(seed)
    assert not np.array_equal(a.weights, c.weights)


def test_noise_has_the_calibrated_scale():
    """One DP-GD step from w = 0 with lr = 1: w₁ = −(g_sum + N(0, σ²I))/n, so across 500 seeds the
    coordinates of n·w₁ have std σ. 2000 samples: the sample std is within 10% of σ except with
    probability < 1e-6 (normal approximation, z ≈ 6.3)."""
    n = X.shape[0]
    w1 = np.array([_run("dp_gd", steps=1, learning_rate=1.0, alpha=0.0, epsilon=2.0, rng=s).weights for s in range(500)])
    sigma = _run("dp_gd", steps=1, learning_rate=1.0, alpha=0.0, epsilon=2.0).sigma
    emp = (n * (w1 - w1.mean(axis=0))).std(axis=0, ddof=1).mean()
    assert abs(emp / sigma - 1.0) < 0.1


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=1.0, delta=0.0), "delta"),
        (dict(epsilon=1.0, data_norm_bound=0.5), "data_norm_bound"),
        (dict(epsilon=1.0, data_norm_bound=None), "clip_norm"),
        (dict(epsilon=1.0, calibration="exact"), "calibration"),
        (dict(epsilon=1.0, noise_multiplier=1.0), "either"),
        (dict(epsilon=1.0, rng="seed"), "rng"),
    ],
)
def test_bad_arguments_raise(name, bad, match):
    with pytest.raises(ValueError, match=match):
        _run(name, **bad)


@pytest.mark.parametrize("name", SOLVERS)
def test_bad_data_raises(name):
    fn, base = SOLVERS[name]
    kw = dict(base, epsilon=1.0, data_norm_bound=1.0)
    with pytest.raises(ValueError, match="labels"):
        fn(X, np.where(Y > 0, 2.0, 1.0), **kw)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        fn(Xn, Y, **kw)
    Xb = X.copy()
    Xb[7] *= 3.0 / np.linalg.norm(Xb[7])
    with pytest.raises(ValueError, match="data_norm_bound"):
        fn(Xb, Y, **kw)
    # the same rows are accepted when gradients are clipped instead
    step = {"smoothness": 1.0} if name == "dp_accmd" else {"learning_rate": 0.5}
    fn(Xb, Y, **base, **step, epsilon=1.0, clip_norm=1.0)


@pytest.mark.parametrize("name", SOLVERS)
def test_zero_one_labels_are_mapped_and_said_so(name):
    fn, base = SOLVERS[name]
    kw = dict(base, alpha=0.01, data_norm_bound=1.0, delta=DELTA, rng=0, trace=False, epsilon=1.0)
    a = fn(X, Y, **kw)
    b = fn(X, (Y + 1) / 2, **kw)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.details["label_mapping"] is None
    assert b.details["label_mapping"].startswith("{0, 1} mapped")


@pytest.mark.parametrize("name", ["dp_gd", "dp_accmd", "dp_svrg", "dp_sgd_wor"])
def test_solvers_normalising_by_n_refuse_add_remove(name):
    """Dividing by the private n under add/remove would reveal n through the noise scale."""
    with pytest.raises(ValueError, match="relation must be 'replace_one'"):
        _run(name, epsilon=1.0, relation="add_remove")


def test_poisson_sgd_with_public_sampling_rate_and_steps_does_not_depend_on_n():
    r_small = _run("dp_sgd_poisson", epsilon=1.0, sampling_rate=0.1, steps=12)
    r_large = dp_sgd(np.vstack([X, X[:1]]), np.append(Y, Y[0]), batch_size=50, sampling_rate=0.1, steps=12,
                     alpha=0.01, data_norm_bound=1.0, delta=DELTA, epsilon=1.0, rng=0, trace=False)
    assert r_small.event == r_large.event  # the schedule, noise and accounting ignore n
    assert r_small.event.event.sampling_rate == 0.1 and r_small.event.count == 12
    with pytest.raises(ValueError, match="sampling_rate"):
        _run("dp_sgd_wor", epsilon=1.0, sampling_rate=0.1)


@pytest.mark.parametrize("name", SOLVERS)
def test_sparse_csr_input_gives_the_dense_result(name, monkeypatch):
    """scipy.sparse CSR X is kept sparse (never densified: any dense copy is refused here) and gives the dense
    result to rounding (issues 15.2, 26.1)."""
    import scipy.sparse as sp

    fn, base = SOLVERS[name]
    args = dict(base, alpha=0.01, data_norm_bound=1.0, delta=DELTA, rng=5, epsilon=1.0)
    dense = fn(X, Y, **args).weights
    monkeypatch.setattr("algorithms._data.MAX_DENSE_BYTES", 0)
    np.testing.assert_allclose(fn(sp.csr_matrix(X), Y, **args).weights, dense, rtol=1e-10, atol=1e-12)
