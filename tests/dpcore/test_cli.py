"""The dpcore command line: tables, --json keys, one-line errors with exit code 2."""

import json
import subprocess
import sys

import pytest

from dpcore.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_epsilon_json(capsys):
    rec = run_json(capsys, "epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.01",
                   "--steps", "10000", "--delta", "1e-5")
    # default accountant "auto": the smallest valid bound (the RDP accountant gives 5.632)
    assert rec["epsilon"] <= 5.632 and rec["relation"] == "add_remove"
    assert "method" in rec and "delta" in rec
    rdp = run_json(capsys, "epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.01",
                   "--steps", "10000", "--delta", "1e-5", "--accountant", "rdp")
    assert rdp["epsilon"] == pytest.approx(5.632, rel=2e-3) and rdp["accountant"] == "rdp" and rdp["order"] > 1
    assert rec["epsilon"] <= rdp["epsilon"]


def test_epsilon_moments_accountant_is_mironov_conversion_of_integer_rdp(capsys):
    import numpy as np

    import dpcore
    from dpcore.calibration import subsampled_gaussian_event

    args = ("epsilon", "--noise-multiplier", "1.5", "--sampling-rate", "0.05", "--steps", "100", "--delta", "1e-5")
    mom = run_json(capsys, *args, "--accountant", "moments")
    orders = np.arange(2, 34, dtype=float)  # moments lambda = 1..32 <-> RDP orders lambda + 1
    rdp = dpcore.compute_rdp(subsampled_gaussian_event(1.5, 0.05, 100), orders)
    eps_mironov, _, _ = dpcore.rdp_to_epsilon(orders, rdp, 1e-5, method="mironov")
    assert mom["epsilon"] == pytest.approx(eps_mironov, rel=1e-6)
    # The improved conversion used by the default RDP route is never worse.
    assert run_json(capsys, *args)["epsilon"] <= mom["epsilon"]


def test_epsilon_without_replacement(capsys):
    rec = run_json(capsys, "epsilon", "--noise-multiplier", "2", "--sampling-rate", "0.01", "--steps", "100",
                   "--delta", "1e-5", "--sampling", "without-replacement", "--dataset-size", "10000")
    assert rec["relation"] == "replace_one" and rec["epsilon"] > 0


def test_rdp_json(capsys):
    rec = run_json(capsys, "rdp", "--noise-multiplier", "1.0", "--sampling-rate", "1", "--orders", "2", "3.5")
    assert [r["order"] for r in rec["rdp"]] == [2.0, 3.5]
    assert rec["rdp"][0]["value"] == pytest.approx(1.0) and rec["rdp"][1]["value"] == pytest.approx(1.75)


def test_calibrate_gaussian_mechanism(capsys):
    rec = run_json(capsys, "calibrate", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5",
                   "--sensitivity", "1")
    assert rec["sigma"] == pytest.approx(3.73063163481594, rel=1e-10)


def test_calibrate_noise_multiplier_is_certified(capsys):
    rec = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01",
                   "--steps", "1000")
    assert rec["epsilon"] <= 1.0 and rec["certified"] is True and rec["noise_multiplier"] > 0


def test_shuffle_and_compose(capsys):
    rec = run_json(capsys, "shuffle", "--epsilon0", "1", "--n", "10000", "--delta", "1e-6")
    assert 0 < rec["epsilon"] < 1
    opt = run_json(capsys, "compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "100",
                   "--target-delta", "1e-5", "--method", "optimal")
    drv = run_json(capsys, "compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "100",
                   "--target-delta", "1e-5", "--method", "drv")
    assert opt["epsilon"] <= drv["epsilon"] <= 10.0


def test_table_output(capsys):
    code, out, _ = run(capsys, "epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10",
                       "--delta", "1e-5")
    assert code == 0 and "epsilon" in out and "relation" in out


@pytest.mark.parametrize("argv, name", [
    (["epsilon", "--noise-multiplier", "-1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"], "noise_multiplier"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "1.5", "--steps", "10", "--delta", "1e-5"], "sampling_rate"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "2"], "delta"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "0", "--delta", "1e-5"], "steps"),
    (["epsilon", "--noise-multiplier", "nan", "--sampling-rate", "0.1", "--steps", "1", "--delta", "1e-5"], "noise"),
    (["calibrate", "--epsilon", "0", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10"], "--epsilon"),
    (["calibrate", "--epsilon", "inf", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10"], "--epsilon"),
    (["calibrate", "--epsilon", "-1", "--delta", "1e-5", "--mechanism", "gaussian", "--sensitivity", "1"], "--epsilon"),
    (["shuffle", "--epsilon0", "1", "--n", "1", "--delta", "1e-6"], "n"),
    (["epsilon", "--noise-multiplier", "1"], "required"),
])
def test_bad_input_is_one_line_and_exit_code_2(capsys, argv, name):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse-level errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err


def test_console_script_installed():
    proc = subprocess.run([sys.executable, "-m", "dpcore.cli", "epsilon", "--noise-multiplier", "1",
                           "--sampling-rate", "2", "--steps", "1", "--delta", "1e-5"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_compose_drv_never_reports_delta_above_the_target(capsys):
    # 100 * 1e-7 rounds to just below 1e-5 in float; the slack must be computed exactly.
    rec = run_json(capsys, "compose", "--epsilon", "0.1", "--delta", "1e-7", "--count", "100",
                   "--target-delta", "1e-5", "--method", "drv")
    assert rec["delta"] <= 1e-5


# ----------------------------------------------------------------------------- issue 14 item 4


def test_unsampled_gaussian_default_is_exact(capsys):
    rec = run_json(capsys, "epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "1", "--steps", "100",
                   "--delta", "1e-5")
    assert 79.2 < rec["epsilon"] < 79.3 and rec["accountant"] == "analytic_gaussian"


def test_delta_subcommand_inverts_epsilon(capsys):
    args = ("--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "1000")
    eps = run_json(capsys, "epsilon", *args, "--delta", "1e-5", "--accountant", "rdp")["epsilon"]
    rec = run_json(capsys, "delta", *args, "--epsilon", repr(eps), "--accountant", "rdp")
    assert rec["delta"] <= 1e-5 * (1 + 1e-9) and rec["epsilon"] == eps


def test_steps_accepts_integral_floats_only(capsys):
    base = ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--delta", "1e-5", "--accountant", "rdp"]
    a = run_json(capsys, *base, "--steps", "1e4")
    b = run_json(capsys, *base, "--steps", "10000")
    assert a["steps"] == 10000 and a["epsilon"] == b["epsilon"]
    for bad in ("1.5", "inf", "nan", "1e-3"):
        with pytest.raises(SystemExit) as exc:
            main(base + ["--steps", bad])
        assert exc.value.code == 2 and "--steps" in capsys.readouterr().err


def test_calibrate_accepts_certify(capsys):
    rec = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01",
                   "--steps", "1000", "--certify", "--accountant", "rdp")
    assert rec["certified"] is True and rec["epsilon"] <= 1.0
    with pytest.raises(SystemExit):
        main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "10",
              "--certify", "--no-certify"])
    assert "--no-certify" in capsys.readouterr().err


def test_calibrate_without_replacement_matches_peers(capsys):
    # issue 14: b = 600 of n = 60 000, T = 10⁴, ε = 1: σ ≈ 8.17 with RDP (dp_accounting / autodp), not 404.5
    argv = ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "1e4",
            "--sampling", "without-replacement", "--dataset-size", "60000", "--no-certify"]
    rec = run_json(capsys, *argv, "--accountant", "rdp")
    assert 8.0 < rec["noise_multiplier"] < 8.2
    # the default (auto) takes the PLD's symmetrised dominating pair (issue 8), far below WBK19's RDP
    auto = run_json(capsys, *argv)
    assert auto["noise_multiplier"] < 0.6 * rec["noise_multiplier"] and auto["epsilon"] <= 1.0


def test_compose_one_million_exact(capsys):
    rec = run_json(capsys, "compose", "--epsilon", "0.01", "--delta", "1e-9", "--count", "1000000",
                   "--target-delta", "1e-2")
    assert 0 < rec["epsilon"] < 1e4 and rec["delta"] == 1e-2


@pytest.mark.parametrize("argv, flags", [
    (["calibrate", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "1",
      "--sampling-rate", "0.5", "--steps", "10"], ("--sampling-rate", "--mechanism gaussian")),
    (["calibrate", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "1",
      "--accountant", "rdp"], ("--accountant", "--mechanism gaussian")),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10", "--delta", "1e-5",
      "--sampling", "none"], ("--sampling-rate", "--sampling none")),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10", "--delta", "1e-5",
      "--dataset-size", "100"], ("--dataset-size", "--sampling")),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "1", "--steps", "10", "--delta", "1e-5",
      "--accountant", "analytic_gaussian", "--orders", "2", "3"], ("--orders", "--accountant")),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "10",
      "--sensitivity", "2"], ("--sensitivity", "--mechanism")),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "10",
      "--method", "classic"], ("--method", "--mechanism")),
])
def test_contradictory_or_ignored_flags_are_refused(capsys, argv, flags):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert all(f in err for f in flags), err


@pytest.mark.parametrize("argv", [
    ["epsilon", "--noise-multiplier", "1e308", "--sampling-rate", "0.01", "--steps", "100", "--delta", "1e-5"],
    ["epsilon", "--noise-multiplier", "1e-300", "--sampling-rate", "0.01", "--steps", "100", "--delta", "1e-5"],
    ["calibrate", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-320", "--sensitivity", "1"],
    ["shuffle", "--epsilon0", "1e308", "--n", "1000", "--delta", "1e-6"],
    ["compose", "--epsilon", "1e308", "--delta", "0", "--count", "10", "--target-delta", "1e-5"],
    ["shuffle", "--epsilon0", "1", "--n", "99999999999999999999999", "--delta", "1e-6"],
    ["rdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--orders", "1e300"],
    ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1e400", "--delta", "1e-5"],
    ["compose", "--epsilon", "1", "--delta", "0", "--count", "1e30", "--target-delta", "1e-5"],
])
def test_extreme_input_answers_or_refuses_in_one_line(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "error" in err
    else:
        assert "epsilon" in out or "sigma" in out
