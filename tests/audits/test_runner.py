"""run_audit: executor independence, Dask, resumable results, progress, validation, records."""

import concurrent.futures as cf
import json
import math

import numpy as np
import pytest

from audits import AuditResult, FunctionTarget, append_record, format_table, read_records, run_audit
from audits.report import REPORT_KEYS
from audits.runner import batch_sizes
from audits.target import shift_target

SIGMA = 3.73063163481594


def _gauss(sigma=SIGMA, eps=1.0):
    return shift_target("gaussian", eps, 1e-5, noise="gaussian", scale=sigma)


def _same(a: AuditResult, b: AuditResult) -> None:
    assert a.eps_lower == b.eps_lower and a.p_value == b.p_value and a.verdict == b.verdict
    for x, y in zip(a.samples, b.samples):
        np.testing.assert_array_equal(x, y)


def test_batches_cover_the_trials():
    assert batch_sizes(12, 5) == [5, 5, 2]
    assert batch_sizes(10, 5) == [5, 5]


@pytest.mark.parametrize("estimator", ["clopper-pearson", "gdp", "one-run"])
def test_result_does_not_depend_on_workers_or_executor(estimator):
    kw = dict(estimator=estimator, seed=7, batch_size=700)
    one = run_audit(_gauss(), 3000, workers=1, **kw)
    two = run_audit(_gauss(), 3000, workers=2, **kw)
    with cf.ThreadPoolExecutor(3) as pool:
        threads = run_audit(_gauss(), 3000, executor=pool, **kw)
    _same(one, two)
    _same(one, threads)
    other_seed = run_audit(_gauss(), 3000, seed=8, estimator=estimator, batch_size=700)
    assert not np.array_equal(one.samples[1], other_seed.samples[1])


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_result():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            dask = run_audit(_gauss(), 2000, estimator="gdp", executor=client, seed=3, batch_size=500)
    _same(dask, run_audit(_gauss(), 2000, estimator="gdp", seed=3, batch_size=500))


class _CountingSampler:
    """Gaussian shift sampler that counts its calls (in-process only)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, which, n, rng):
        self.calls += 1
        return rng.normal(float(which), SIGMA, n)


def test_results_file_is_resumed(tmp_path):
    path = tmp_path / "audit.jsonl"
    sampler = _CountingSampler()
    target = FunctionTarget("counting", 1.0, 1e-5, sampler, noise_family="gaussian")
    full = run_audit(target, 2500, estimator="gdp", batch_size=500, results_path=path)
    assert sampler.calls == 10  # 5 batches × (D, D′)
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 6 and json.loads(lines[0])["format"] == "dpcore-audit-results"
    # Simulate a crash after 2 batches, in the middle of writing the third.
    path.write_text("".join(lines[:3]) + lines[3][:40])
    sampler.calls = 0
    resumed = run_audit(target, 2500, estimator="gdp", batch_size=500, results_path=path)
    assert sampler.calls == 6  # only the 3 missing batches ran
    _same(full, resumed)
    # Complete file: nothing runs again, and another estimator of the same design reuses it.
    sampler.calls = 0
    cp = run_audit(target, 2500, estimator="clopper-pearson", batch_size=500, results_path=path)
    assert sampler.calls == 0 and cp.estimator == "clopper-pearson"


def test_results_file_of_another_audit_is_refused(tmp_path):
    path = tmp_path / "audit.jsonl"
    run_audit(_gauss(), 100, results_path=path)
    with pytest.raises(ValueError, match="results_path"):
        run_audit(_gauss(), 100, results_path=path, seed=1)


def test_progress_bar(capsys, monkeypatch):
    # stderr is not a terminal here: progress is a line per LINE_INTERVAL seconds instead of a tqdm bar
    monkeypatch.setattr("dpcore._progress.LINE_INTERVAL", 0.0)
    run_audit(_gauss(), 1000, progress=True, batch_size=250)
    err = capsys.readouterr().err
    assert "250 of 1000 trials" in err and "1000 of 1000 trials (100 %)" in err
    run_audit(_gauss(), 1000, progress=False, batch_size=250)
    assert capsys.readouterr().err == ""


class _BareTarget:
    """Implements only the protocol (no sample_one_run)."""

    name = "bare"
    claimed_epsilon = 1.0
    delta = 1e-5
    relation = "replace_one"
    noise_family = "laplace"

    def sample(self, which, n, rng):
        return rng.laplace(float(which), 1.0, n)


def test_protocol_only_target_and_one_run_fallback():
    res = run_audit(_BareTarget(), 2000, estimator="one-run")
    assert res.relation == "replace_one" and res.statistic == "score" and not res.violated
    assert res.details["canaries"] == 1000  # half selects the number of guesses, half is evaluated


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(trials=3), "trials"),
        (dict(trials=100, estimator="bayes"), "estimator"),
        (dict(trials=100, workers=0), "workers"),
        (dict(trials=100, confidence=1.5), "confidence"),
        (dict(trials=100, seed=-1), "seed"),
        (dict(trials=100, batch_size=0), "batch_size"),
        (dict(trials=100, workers=2, executor=cf.ThreadPoolExecutor(1)), "either"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_audit(_gauss(), **kwargs)


def test_bad_targets_are_refused():
    with pytest.raises(ValueError, match="target"):
        run_audit(object(), 100)
    with pytest.raises(ValueError, match="relation"):
        FunctionTarget("x", 1.0, 1e-5, lambda w, n, r: np.zeros(n), relation="neighbours")
    with pytest.raises(ValueError, match="noise_family"):
        FunctionTarget("x", 1.0, 1e-5, lambda w, n, r: np.zeros(n), noise_family="cauchy")
    wrong = FunctionTarget("x", 1.0, 1e-5, lambda w, n, r: np.zeros(n + 1))
    with pytest.raises(ValueError, match="scores"):
        run_audit(wrong, 100)
    with pytest.raises(ValueError, match="noise"):
        shift_target("x", 1.0, 1e-5, noise="cauchy")


def test_json_record_and_table(tmp_path):
    res = run_audit(_gauss(sigma=SIGMA / 2), 10_000, estimator="gdp")
    rec = json.loads(res.to_json())
    assert set(REPORT_KEYS) <= set(rec)
    assert rec["verdict"] == "violated" and rec["estimator"] == "gdp" and rec["trials"] == 10_000
    assert rec["relation"] == "add_remove" and rec["statistic"] == "output" and rec["target"] == "gaussian"
    inf = run_audit(shift_target("open", math.inf, 1e-5, noise="none"), 100)
    assert not inf.violated and json.loads(inf.to_json())["claimed_epsilon"] == "inf"
    log = tmp_path / "log.jsonl"
    append_record(res, log)
    append_record(inf, log)
    assert [r["target"] for r in read_records(log)] == ["gaussian", "open"]
    table = format_table([res, inf])
    assert "VIOLATED" in table and inf.verdict in table and len(table.splitlines()) == 4
