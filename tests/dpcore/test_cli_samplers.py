"""CLI: --sampling random-allocation|truncated-poisson|shuffle|with-replacement with a loader's
--dataset-size/--batch-size/--epochs; the JSON names the sampler; bad combinations exit 2."""

import json

import pytest

from dpcore.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


LOADER = ("--dataset-size", "6000", "--batch-size", "60")


def test_random_allocation_epsilon_json_names_the_sampler(capsys):
    code, out, _ = _run(capsys, "epsilon", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling",
                        "random-allocation", *LOADER, "--epochs", "2", "--accountant", "pld", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["sampler"] == "random-allocation" and rec["steps"] == 200 and rec["units"] == 2
    assert rec["steps_per_epoch"] == 100 and rec["relation"] == "add_remove"
    assert rec["bounds"][0] <= rec["epsilon"] == rec["bounds"][1]


def test_shuffle_prints_three_labelled_numbers(capsys):
    code, out, _ = _run(capsys, "epsilon", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling", "shuffle",
                        *LOADER, "--epochs", "1", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["sampler"] == "shuffle"
    assert rec["epsilon_if_poisson_not_a_guarantee"] < rec["epsilon_lower_bound"] <= rec["epsilon"]


def test_truncated_poisson_calibrate_and_steps(capsys):
    code, out, _ = _run(capsys, "calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling", "truncated-poisson",
                        *LOADER, "--steps", "300", "--no-certify", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["sampler"] == "truncated-poisson" and rec["max_batch_size"] == 72
    assert rec["sampling_rate"] == 0.01 and rec["steps"] == 300 and rec["epsilon"] <= 2.0


@pytest.mark.parametrize("extra,needle", [
    (("--sampling", "shuffle", *LOADER, "--epochs", "1", "--sampling-rate", "0.1"), "--sampling-rate contradicts"),
    (("--sampling", "shuffle", *LOADER), "exactly one of --epochs and --steps"),
    (("--sampling", "random-allocation", "--dataset-size", "100", "--epochs", "1"), "--batch-size is required"),
    (("--sampling", "shuffle", *LOADER, "--epochs", "1", "--max-batch-size", "9"), "--max-batch-size contradicts"),
    (("--sampling-rate", "0.01", "--steps", "10", "--batch-size", "5"), "--batch-size contradicts"),
    (("--sampling", "with-replacement", *LOADER, "--epochs", "1", "--relation", "add_remove"), "--relation contradicts"),
    (("--sampling", "random-allocation", "--dataset-size", "10", "--batch-size", "20", "--epochs", "1"), "--batch-size"),
    (("--sampling", "random-allocation", *LOADER, "--epochs", "1", "--orders", "2", "3"), "--orders contradicts"),
    (("--sampling", "random-allocation", *LOADER, "--epochs", "1", "--no-optimize-order"),
     "--no-optimize-order contradicts"),
])
def test_bad_flag_combinations_exit_2(capsys, extra, needle):
    code, _, err = _run(capsys, "epsilon", "--noise-multiplier", "1", "--delta", "1e-5", *extra)
    assert code == 2 and needle in err and err.count("\n") == 1


def test_random_allocation_auto_reports_the_certified_lower_bound(capsys):
    """Issue 23 review, item 9: auto printed bounds [0.0, upper]; its lower bound is the PLD's."""
    argv = ("epsilon", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling", "random-allocation", *LOADER,
            "--epochs", "2", "--json")
    auto = json.loads(_run(capsys, *argv)[1])
    pld = json.loads(_run(capsys, *argv, "--accountant", "pld")[1])
    assert auto["accountant"] == "pld" and auto["bounds"] == pld["bounds"] and auto["bounds"][0] > 0.99 * auto["epsilon"]
