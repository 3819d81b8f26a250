"""``dpcore calibrate --tune-candidates``: the budget split between the tuning runs and their selection."""

import json
import math

import pytest

import dpcore
from dpcore.cli import main
from dpcore.selection import RepeatAndSelectEvent

BASE = ["calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "300"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("dist,extra,shape", [("poisson", [], math.inf), ("logarithmic", [], 0.0),
                                              ("truncated-negative-binomial", ["--tune-shape", "0.5"], 0.5)])
def test_tuned_calibration_json(capsys, dist, extra, shape):
    code, out, err = run(capsys, *BASE, "--tune-candidates", "10", "--tune-distribution", dist, *extra, "--json")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["epsilon"] <= 2.0 and rec["certified"] and rec["relation"] == "add_remove"
    assert 0 < rec["one_run_epsilon"] < rec["epsilon"]
    assert rec["selection_epsilon"] == pytest.approx(rec["epsilon"] - rec["one_run_epsilon"])
    # independent re-check of the printed sigma: the selection event of that run meets the target
    run_event = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(rec["noise_multiplier"]), 0.01), 300)
    total = dpcore.get_epsilon(RepeatAndSelectEvent(run_event, 10, shape), 1e-5, accountant="rdp").epsilon
    assert total <= 2.0 and total == pytest.approx(rec["epsilon"], rel=1e-9)


def test_tuned_calibration_table(capsys):
    code, out, _ = run(capsys, *BASE, "--tune-candidates", "5", "--no-certify")
    assert code == 0 and "one_run_epsilon" in out and "geometric" in out


@pytest.mark.parametrize("argv,flag", [
    (["--tune-shape", "0.5"], "--tune-shape needs --tune-candidates"),
    (["--tune-distribution", "poisson"], "--tune-distribution needs --tune-candidates"),
    (["--tune-candidates", "0.5"], "--tune-candidates must be >= 1"),
    (["--tune-candidates", "5", "--tune-shape", "1"], "--tune-shape contradicts"),
    (["--tune-candidates", "5", "--tune-distribution", "truncated-negative-binomial"], "needs --tune-shape"),
    (["--tune-candidates", "5", "--tune-distribution", "truncated-negative-binomial", "--tune-shape", "-1"],
     "--tune-shape must be in"),
    (["--tune-candidates", "1e12"], "--tune-candidates must be in"),
])
def test_bad_tuning_flags_one_line_exit_2(capsys, argv, flag):
    code, out, err = run(capsys, *BASE, *argv)
    assert code == 2 and flag in err and err.count("\n") == 1


def test_tuning_with_the_plain_gaussian_is_refused(capsys):
    code, _, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--mechanism", "gaussian",
                       "--sensitivity", "1", "--tune-candidates", "5")
    assert code == 2 and "--tune-candidates" in err
