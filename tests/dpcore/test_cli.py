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
    (["epsilon", "--noise-multiplier", "-1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"], "--noise-multiplier"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "1.5", "--steps", "10", "--delta", "1e-5"], "--sampling-rate"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "2"], "--delta"),
    (["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "0", "--delta", "1e-5"], "--steps"),
    (["epsilon", "--noise-multiplier", "nan", "--sampling-rate", "0.1", "--steps", "1", "--delta", "1e-5"], "--noise-multiplier"),
    (["calibrate", "--epsilon", "0", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10"], "--epsilon"),
    (["calibrate", "--epsilon", "inf", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10"], "--epsilon"),
    (["calibrate", "--epsilon", "-1", "--delta", "1e-5", "--mechanism", "gaussian", "--sensitivity", "1"], "--epsilon"),
    (["shuffle", "--epsilon0", "1", "--n", "1", "--delta", "1e-6"], "--n"),
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
    try:
        code = main(argv)
    except SystemExit as exc:  # refused by the parser (e.g. an integer beyond 1.8e308)
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "error" in err
    else:
        assert "epsilon" in out or "sigma" in out


# ----------------------------------------------------------------------------- issue 22 item 5

import argparse  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import tomllib  # noqa: E402
from importlib.metadata import EntryPoint  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import example, given, strategies as st  # noqa: E402

import dpcore  # noqa: E402
import dpcore.cli as cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def declared_plugins(monkeypatch):
    """dpcore.cli's plugins as this tree's pyproject.toml declares them: the installed package
    metadata may predate a new entry point (``pip install -e .`` refreshes it)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    monkeypatch.setattr(cli, "entry_points",
                        lambda group: [EntryPoint(n, v, group) for n, v in declared.get(group, {}).items()])


def _outcome(argv):
    """(exit code, stdout, stderr) of ``dpcore argv``, in-process; a case over 60 s is a hang."""
    import contextlib
    import io

    def hang(signum, frame):
        raise TimeoutError(f"dpcore {' '.join(argv)} hangs")

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(60)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exc:
                code = exc.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


#: A valid, quick invocation of every command (arguments after the command name); each option is
#: swept with every value of BAD_VALUES on top of the first base that uses it (or the first base).
SWEEP_BASES = {
    "epsilon": ["--noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5",
                "--noise-multiplier 1 --delta 1e-5 --sampling truncated-poisson --dataset-size 1000 --batch-size 10 "
                "--epochs 1 --max-batch-size 12"],
    "delta": ["--noise-multiplier 1 --sampling-rate 0.01 --steps 10 --epsilon 1",
              "--noise-multiplier 1 --epsilon 1 --sampling random-allocation --dataset-size 1000 --batch-size 10 "
              "--epochs 1"],
    "curve": ["--noise-multiplier 1 --sampling-rate 0.01 --steps 10 --epsilons 1 2"],
    "rdp": ["--noise-multiplier 1 --sampling-rate 0.01 --orders 2 3"],
    "calibrate": ["--epsilon 1 --delta 1e-5 --sampling-rate 0.01 --steps 10 --no-certify",
                  "--mechanism gaussian --epsilon 1 --delta 1e-5 --sensitivity 1",
                  "--mechanism laplace --epsilon 1 --sensitivity 1 --sensitivity-norm 2 --dimension 3",
                  "--mechanism l2-laplace --epsilon 1 --sensitivity 1",
                  "--mechanism discrete-laplace --epsilon 1 --sensitivity 1",
                  "--mechanism discrete-gaussian --epsilon 1 --delta 1e-5 --sensitivity 1 --accountant rdp",
                  "--mechanism generalized-gaussian --epsilon 1 --delta 1e-5 --sensitivity 1 --p 3 --dimension 4",
                  "--epsilon 1 --delta 1e-5 --sampling-rate 0.01 --steps 10 --no-certify --tune-candidates 3 "
                  "--tune-distribution truncated-negative-binomial --tune-shape 0.5",
                  "--max-tpr 0.2 --at-fpr 0.1 --sampling-rate 0.01 --steps 10",
                  "--max-tpr 0.2 --at-fpr 0.1 --sampling-rate 0.01 --noise-multiplier 2",
                  "--epsilon 1 --delta 1e-5 --sampling truncated-poisson --dataset-size 1000 --batch-size 10 --epochs 1 "
                  "--max-batch-size 12 --no-certify"],
    "risk": ["--noise-multiplier 2 --sampling-rate 0.01 --steps 10 --fpr 0.01 0.1 --delta 1e-5 --fpr-floor 1e-6"],
    "shuffle": ["--epsilon0 1 --n 1000 --delta 1e-6"],
    "compose": ["--epsilon 0.1 --delta 1e-8 --count 10 --target-delta 1e-5"],
    "audit mechanism": ["gaussian --epsilon 1 --delta 1e-5 --trials 100"],
    "audit solver": ["dp_gd --epsilon 1 --delta 1e-5 --trials 8"],
    "audit all": [""],
}
BAD_VALUES = ("-1", "0", "nan", "inf", "-inf", "1e308", "1e-320", "abc", "1.5", "1e400", "99999999999999999999999", "")


def _refusal_problems(command, parser):
    """Every swept invocation of ``command`` that is refused without naming the flag the user typed
    in one line (or that fails in another way). Accepted values (exit 0, 1, or 3 for an audit without power) are fine."""
    problems = []
    bases = SWEEP_BASES[command]
    for action in cli.option_actions(parser):
        if action.nargs == 0 or action.dest == "results":  # flags without a value; paths: tests of their own
            continue
        flag = action.option_strings[-1]
        users = [b for b in bases if re.search(rf"{re.escape(flag)}(?![\w-])", b)] or bases[:1]
        for base in users:
            tokens = base.split()
            if flag in tokens:  # drop the base's own value(s) of the flag
                i = tokens.index(flag)
                j = next((k for k in range(i + 1, len(tokens)) if tokens[k].startswith("--")), len(tokens))
                tokens = tokens[:i] + tokens[j:]
            for value in (BAD_VALUES if action.choices is None else ("bogus",)):
                argv = command.split() + tokens + [flag, value, "--quiet"]
                code, _, err = _outcome(argv)
                if code in (0, 1, 3) and "Traceback" not in err:  # 3: a single audit with no power
                    continue
                named = re.search(rf"{re.escape(flag)}(?![\w-])", err)
                if code != 2 or len(err.strip().splitlines()) != 1 or not named or "Traceback" in err:
                    problems.append(f"dpcore {' '.join(argv)} -> exit {code}: {err.strip()[:160]!r}")
    return problems


def _commands():
    return dict(cli.iter_commands(cli.build_parser()))


def test_every_command_has_a_sweep_base(declared_plugins):
    # a command added later (a plugin's too) must get a base here, or its refusals go untested
    assert set(_commands()) <= set(SWEEP_BASES), set(_commands()) - set(SWEEP_BASES)


@pytest.mark.parametrize("command", sorted(SWEEP_BASES))
def test_every_refusal_names_the_flag_the_user_typed(declared_plugins, monkeypatch, command):
    # issue 22: 70 of 140 refusals named the library's parameter (noise_multiplier, tail_mass, ...)
    monkeypatch.setattr("audits.library_audit.audit_all", lambda **kw: [])  # `audit all`: no real audits
    parser = _commands().get(command)
    if parser is None:
        pytest.skip(f"{command} is not installed")
    assert _refusal_problems(command, parser) == []


def test_the_flag_sweep_catches_a_message_in_library_terms(declared_plugins, monkeypatch):
    # planted bug: no rewriting of library messages -> "noise_multiplier must be ..." is reported
    monkeypatch.setattr(cli, "in_flag_terms", lambda message, flags: message)
    problems = _refusal_problems("rdp", _commands()["rdp"])
    assert any("noise_multiplier must be" in p for p in problems)
    assert any("sampling_rate must be" in p for p in problems)


def test_every_option_of_every_command_has_help(declared_plugins):
    missing = [f"{command} {action.option_strings[-1]}" for command, parser in _commands().items()
               for action in cli.option_actions(parser) if not action.help or action.help == argparse.SUPPRESS]
    assert missing == []


@pytest.mark.parametrize("message, expected", [
    ("noise_multiplier must be in (0, inf); got -1.0", "--noise-multiplier must be in (0, inf); got -1.0"),
    ("the least sigma for epsilon=1.0, delta=1e-05 is big", "the least sigma for --epsilon 1.0, --delta 1e-05 is big"),
    ("target_delta must be in (1 - (1 - delta)^count, 1); the smallest delta", "--target-delta must be in "
     "(1 - (1 - --delta)^--count, 1); the smallest delta"),
    ("use accountant='rdp' (CLI: --method closed-form)", "use --accountant 'rdp' (CLI: --method closed-form)"),
    ("n=100000000000000000000000 is too large", "--n 1.000e+23 (24 digits) is too large"),
    ("tail_mass must be in (0, inf)", "tail_mass must be in (0, inf)"),  # not a parameter of the command
])
def test_library_messages_are_put_in_flag_terms(message, expected):
    flags = {"noise_multiplier": "--noise-multiplier", "epsilon": "--epsilon", "delta": "--delta",
             "target_delta": "--target-delta", "count": "--count", "accountant": "--accountant", "n": "--n",
             "method": "--method"}
    assert cli.in_flag_terms(message, flags) == expected


BASE_EPS = ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10", "--delta", "1e-5"]


@pytest.mark.parametrize("argv, words", [
    (BASE_EPS + ["--steps", "20"], ("--steps is given twice",)),
    (BASE_EPS + ["--optimize-order", "--no-optimize-order"], ("--no-optimize-order contradicts --optimize-order",)),
    (BASE_EPS + ["--json", "--json"], ("--json is given twice",)),
    (BASE_EPS + ["--steps=20"], ("--steps is given twice",)),
    (["calibrate", "--epsilon", "1", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "1"],
     ("--epsilon is given twice",)),
    (["audit", "mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "10", "--trials", "20"],
     ("--trials is given twice",)),
    (["audit", "mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "10", "--progress",
      "--quiet"], ("--quiet contradicts --progress",)),
])
def test_repeated_and_contradictory_flags_are_refused(capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert all(w in err for w in words), err


def test_orders_are_refused_where_the_accountant_would_ignore_them(capsys):
    from dpcore.calibration import subsampled_gaussian_event

    event = subsampled_gaussian_event(1.1, 0.01, 10)
    for accountant in ("pld", "moments", "analytic_gaussian", "profile"):
        with pytest.raises(ValueError, match=f"orders applies only to .*'{accountant}' would ignore it"):
            dpcore.get_epsilon(event, 1e-5, accountant=accountant, orders=[2.0, 3.0])
    with pytest.raises(ValueError, match="optimize_order applies only"):
        dpcore.get_epsilon(event, 1e-5, accountant="pld", optimize_order=True)
    with pytest.raises(ValueError, match="orders applies only"):
        dpcore.get_delta(event, 1.0, accountant="pld", orders=[2.0])
    # honoured where they act: the RDP accountant and auto's RDP part
    at_2 = dpcore.get_epsilon(event, 1e-5, accountant="rdp", orders=[2.0])
    assert at_2.order == 2.0
    assert dpcore.get_epsilon(event, 1e-5, accountant="auto", orders=[2.0]).epsilon <= at_2.epsilon
    code = cli.main(BASE_EPS + ["--accountant", "pld", "--orders", "2", "3"])
    err = capsys.readouterr().err
    assert code == 2 and "--orders" in err and "--accountant 'pld'" in err


@pytest.mark.parametrize("call", [
    lambda: dpcore.get_epsilon(dpcore.GaussianEvent(1.0), "1e-5"),
    lambda: dpcore.GaussianEvent("1.1"),
    lambda: dpcore.compute_rdp(dpcore.GaussianEvent(1.0), ["2", "3"]),
    lambda: dpcore.get_epsilon(dpcore.GaussianEvent(1.0), 1e-5, accountant="rdp", orders=["2", "3"]),
    lambda: dpcore.get_epsilon(dpcore.GaussianEvent(1.0), 1e-5, accountant="rdp", orders=np.array([2 + 0j, 3])),
    lambda: dpcore.calibrate_noise_multiplier("1", 1e-5),
    lambda: dpcore.SelfComposedEvent(dpcore.GaussianEvent(1.0), "10"),
])
def test_strings_and_complex_numbers_are_not_numbers_in_python(call):
    with pytest.raises(ValueError, match="real number|integer >= 1"):
        call()


def test_subnormal_delta_is_refused_naming_the_flag(capsys):
    # it used to be refused naming the PLD's internal tail_mass (shuffle: "math domain error")
    for argv in (BASE_EPS[:-1] + ["1e-320"],
                 ["calibrate", "--epsilon", "1", "--delta", "1e-320", "--sampling-rate", "0.01", "--steps", "10"],
                 ["shuffle", "--epsilon0", "1", "--n", "1000", "--delta", "1e-320"],
                 ["compose", "--epsilon", "1", "--delta", "0", "--count", "10", "--target-delta", "1e-320"],
                 ["audit", "mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-320", "--trials", "100"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and len(err.splitlines()) == 1, err
        assert "argument --" in err and "delta: a subnormal delta has lost its precision: give at least " \
               "2.2250738585072014e-308" in err
    assert cli.main(BASE_EPS[:-1] + ["2.2250738585072014e-308", "--accountant", "rdp"]) == 0  # the least normal
    assert cli.main(["compose", "--epsilon", "1", "--delta", "0", "--count", "10", "--target-delta", "1e-5"]) == 0


def _strict_json(text):
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_and_writes_infinity_as_a_string(capsys):
    # an unbounded epsilon (the PLD upper bound at a tiny delta can be +inf) must stay valid JSON
    args = argparse.Namespace(json=True)
    cli.emit(args, {"epsilon": math.inf, "bounds": [1.0, math.inf], "low": -math.inf,
                    "arr": np.array([np.inf, 2.0]), "n": np.int64(3)}, "t")
    rec = _strict_json(capsys.readouterr().out)
    assert rec == {"epsilon": "inf", "bounds": [1.0, "inf"], "low": "-inf", "arr": ["inf", 2.0], "n": 3}
    assert float(rec["epsilon"]) == math.inf  # how a reader gets the number back
    assert dpcore.PrivacyResult(math.inf, 1e-5, "add_remove", "rdp", "m").to_dict()["epsilon"] == "inf"
    for argv in (BASE_EPS, ["curve", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
                            "--epsilons", "0", "1"],
                 ["compose", "--epsilon", "0.1", "--delta", "0", "--count", "10", "--target-delta", "1e-5"]):
        assert cli.main(argv + ["--json"]) == 0
        _strict_json(capsys.readouterr().out)


def test_integers_accept_integral_floats_and_refuse_the_rest():
    assert cli.integer_type("1e4") == 10_000 and cli.integer_type(" 7 ") == 7 and cli.integer_type("-3") == -3
    assert cli.integer_type("1e308") == 10**308
    for bad in ("1.5", "inf", "nan", "1e-3", "1e309", "abc", "", "1e1000000000", "9" * 5000):  # no 10**(10**9)
        with pytest.raises(argparse.ArgumentTypeError):
            cli.integer_type(bad)


def test_progress_lines_for_slow_stages_on_stderr_and_none_with_quiet(capsys, monkeypatch):
    monkeypatch.setattr("dpcore._progress.STAGE_DELAY", 0.0)  # every stage counts as slow
    argv = ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "100",
            "--accountant", "rdp"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert "Noise calibration" in out and "dpcore" not in out
    assert lines[0] == "dpcore: calibrating the noise multiplier (rdp accountant) ..."
    assert re.fullmatch(r"dpcore: calibrating the noise multiplier \(rdp accountant\): done in \d+\.\d s", lines[1])
    assert any(line.startswith("dpcore: certifying the rdp epsilon") for line in lines)
    assert cli.main(argv + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_quick_stages_print_nothing():
    import io

    from dpcore._progress import Stages

    stream = io.StringIO()
    with Stages(True, stream, delay=30.0).stage("quick"):
        pass
    with Stages(True, stream, delay=0.0).stage("slow"):
        import time

        time.sleep(0.05)
    assert stream.getvalue().splitlines()[0] == "dpcore: slow ..."
    assert "quick" not in stream.getvalue()


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "get_epsilon", interrupted)
    assert cli.main(BASE_EPS) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "dpcore: interrupted\n"


# ----------------------------------------------------------------------------- calibrate --mechanism


def _calibrated(capsys, *argv):
    code = cli.main(["calibrate", *argv, "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return _strict_json(out)


def test_calibrate_laplace_family_matches_the_exact_pure_epsilon(declared_plugins, capsys):
    from fractions import Fraction

    from mechanisms import DiscreteLaplace, L2Laplace, Laplace

    # scale = accounted sensitivity / epsilon, the least float with Delta/scale <= epsilon (exact rationals)
    rec = _calibrated(capsys, "--mechanism", "laplace", "--epsilon", "0.7", "--sensitivity", "3")
    b, sens = rec["scale"], Laplace(1.0, 3.0).accounted_sensitivity
    assert Fraction(sens) / Fraction(b) <= Fraction(0.7) < Fraction(sens) / Fraction(math.nextafter(b, 0))
    assert rec["epsilon"] <= 0.7 and rec["scale"] == Laplace.calibrate(0.7, sensitivity=3.0).scale
    assert rec["relation"] == "the one --sensitivity holds under" and rec["delta"] == 0.0
    rec = _calibrated(capsys, "--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1",
                      "--sensitivity-norm", "2", "--dimension", "4")
    assert rec["scale"] >= 2.0 and rec["accounted_l1_sensitivity"] >= 2.0  # l2 -> l1: factor sqrt(4)
    rec = _calibrated(capsys, "--mechanism", "l2-laplace", "--epsilon", "0.5", "--sensitivity", "2")
    assert rec["scale"] == L2Laplace.calibrate(0.5, sensitivity=2.0).scale and Fraction(2) / Fraction(rec["scale"]) <= 0.5
    rec = _calibrated(capsys, "--mechanism", "discrete-laplace", "--epsilon", "0.3", "--sensitivity", "2")
    assert rec["scale"] == DiscreteLaplace.calibrate(0.3, sensitivity=2).scale
    assert Fraction(2) / Fraction(rec["scale"]) <= Fraction(0.3)


def test_calibrate_discrete_and_generalized_gaussians_meet_the_target(declared_plugins, capsys):
    from mechanisms.discrete import discrete_gaussian_delta
    from mechanisms.generalized_gaussian import GeneralizedGaussian

    rec = _calibrated(capsys, "--mechanism", "discrete-gaussian", "--epsilon", "1", "--delta", "1e-5",
                      "--sensitivity", "1", "--accountant", "rdp")
    # independent route: the exact profile of CKS20 Thm 7 at the returned sigma
    assert rec["epsilon"] <= 1.0 and discrete_gaussian_delta(rec["sigma"], 1.0, 1) <= 1e-5
    assert rec["sigma"] < 4.1  # not absurdly loose: the continuous Gaussian needs 3.73, RDP ~4.05
    rec = _calibrated(capsys, "--mechanism", "generalized-gaussian", "--epsilon", "0.5", "--delta", "1e-6",
                      "--sensitivity", "1", "--p", "4", "--dimension", "10")
    lemma3 = math.sqrt(2 * 3 * math.log(1e6)) / 0.5  # sigma = s sqrt(2 (p-1) ln(1/delta)) / epsilon
    assert lemma3 <= rec["sigma"] <= lemma3 * (1 + 1e-12) and rec["epsilon"] <= 0.5
    assert GeneralizedGaussian(4.0, rec["sigma"], 10).lemma3_epsilon(1e-6) <= 0.5


@pytest.mark.parametrize("argv, words", [
    (["--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1", "--delta", "1e-5"],
     ("--delta contradicts --mechanism laplace",)),
    (["--mechanism", "laplace", "--epsilon", "1"], ("--sensitivity is required with --mechanism laplace",)),
    (["--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1", "--dimension", "3"],
     ("--dimension contradicts --sensitivity-norm 1",)),
    (["--mechanism", "discrete-laplace", "--epsilon", "1", "--sensitivity", "1.5"], ("--sensitivity must be an integer",)),
    (["--mechanism", "generalized-gaussian", "--epsilon", "2", "--delta", "1e-5", "--sensitivity", "1", "--p", "3",
      "--dimension", "3"], ("--epsilon must be in (0, 1.0] for --p != 2",)),
    (["--mechanism", "laplace", "--epsilon", "1e-320", "--sensitivity", "1"], ("--epsilon 1e-320", "2**984")),
    (["--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "1", "--p", "3"],
     ("--p contradicts --mechanism gaussian",)),
    (["--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10", "--sensitivity", "1"],
     ("--sensitivity contradicts --mechanism subsampled-gaussian",)),
])
def test_calibrate_mechanism_refusals(declared_plugins, capsys, argv, words):
    code = cli.main(["calibrate", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and all(w in err for w in words), err


def test_review_item_11_messages_and_python_cli_agreement(capsys):
    """Laplace's refusal names the user's --sensitivity (not the secure-slack one) and no delta; the
    CLI's calibration reports the ε Python's calibrate_noise_multiplier reports for the same σ."""
    assert main(["calibrate", "--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1e308"]) == 2
    err = capsys.readouterr().err
    assert "--sensitivity 1e+308" in err and "delta" not in err
    assert main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "1000",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    python = dpcore.calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=1000)
    assert cli["noise_multiplier"] == python.value and cli["epsilon"] == python.privacy.epsilon


# one δ rule for the command line and the Python API (check_delta; dpcore.cli.delta_type is its CLI face)
_SUBNORMAL_DELTAS = (1e-320, 5e-324, 2.2250738585072009e-308)  # the last: the largest subnormal


def _python_routes(delta):
    """Every Python entry point a target δ reaches (accounting, calibration, a mechanism, an estimator)."""
    from algorithms import DPLogisticRegression
    from mechanisms import Gaussian

    event = dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.0), 0.01)
    X, y = np.array([[0.1, 0.2], [-0.3, 0.1], [0.2, -0.1], [-0.1, -0.2]]), np.array([0, 1, 0, 1])
    return {
        "get_epsilon(auto)": lambda: dpcore.get_epsilon(event, delta),
        "get_epsilon(rdp)": lambda: dpcore.get_epsilon(event, delta, accountant="rdp"),
        "get_epsilon(analytic_gaussian)": lambda: dpcore.get_epsilon(dpcore.GaussianEvent(1.0), delta,
                                                                     accountant="analytic_gaussian"),
        "calibrate_noise_multiplier": lambda: dpcore.calibrate_noise_multiplier(1.0, delta, sampling_rate=0.01,
                                                                                steps=10),
        "calibrate": lambda: dpcore.calibrate(lambda s: dpcore.GaussianEvent(s), "noise_multiplier", 1.0, delta,
                                              lower=0.1, upper=100.0, increasing=False),
        "analytic_gaussian_sigma": lambda: dpcore.analytic_gaussian_sigma(1.0, delta),
        "Gaussian.calibrate": lambda: Gaussian.calibrate(epsilon=1.0, delta=delta, sensitivity=1.0),
        "DPLogisticRegression(delta=)": lambda: DPLogisticRegression(solver="dp_gd", epsilon=1.0, delta=delta,
                                                                     data_norm_bound=1.0, classes=[0, 1],
                                                                     random_state=0).fit(X, y),
    }


@pytest.mark.parametrize("delta", _SUBNORMAL_DELTAS)
def test_subnormal_delta_is_refused_by_the_python_api_as_by_the_cli(delta, capsys):
    """The CLI refused δ = 1e-320 while get_epsilon / calibrate / the estimators certified it (the RDP and
    analytic-Gaussian accountants returned an ε for it): every route now refuses it naming delta and the range."""
    for route, call in _python_routes(delta).items():
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1\) and at least 2\.2250738585072014e-308 "
                                             r"\(a subnormal delta has lost its precision"):
            call()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        cli.main(BASE_EPS[:-1] + [repr(delta)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and "give at least 2.2250738585072014e-308" in err


def test_least_normal_delta_is_accepted_by_every_route():
    """The boundary of the rule: the smallest normal float64 is a δ every route takes (no off-by-one refusal)."""
    for route, call in _python_routes(2.2250738585072014e-308).items():
        call()


@given(st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True, allow_subnormal=True))
@example(5e-324)
@example(2.2250738585072014e-308)
def test_cli_and_python_accept_the_same_deltas(delta):
    """delta_type (the CLI's --delta) refuses a δ in (0, 1) exactly when check_delta (the Python API) does."""
    from dpcore._validation import check_delta

    try:
        check_delta("delta", delta)
        python_accepts = True
    except ValueError:
        python_accepts = False
    try:
        cli.delta_type(repr(delta))
        cli_accepts = True
    except argparse.ArgumentTypeError:
        cli_accepts = False
    assert python_accepts == cli_accepts == (delta >= 2.2250738585072014e-308)
