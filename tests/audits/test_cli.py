"""``dpcore audit``: arguments, exit codes, JSON output.

The target catalogue is replaced by a small fake module (shift targets of audits.target), so these
tests check the command line itself, independently of the library's mechanisms and solvers.
"""

import json
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audits.cli as cli
from audits import AuditResult
from audits.target import shift_target

SIGMA = 3.73063163481594


def _fake_mechanism_target(name, epsilon, delta, planted=None):
    scale = {"gaussian": SIGMA, "laplace": 1.0}[name] / epsilon
    if planted == "half-noise":
        scale /= 2
    label = name if planted is None else f"{name}[{planted}]"
    return shift_target(label, epsilon, delta, noise=name, scale=scale)


@pytest.fixture
def fake_targets(monkeypatch):
    mod = types.ModuleType("audits.targets")
    mod.MECHANISM_NAMES = ("gaussian", "laplace")
    mod.SOLVER_NAMES = ("dp_gd",)
    mod.PLANTED_BUGS = ("half-noise",)
    mod.mechanism_target = _fake_mechanism_target
    mod.solver_target = lambda name, epsilon, delta, planted=None: _fake_mechanism_target("gaussian", epsilon, delta,
                                                                                         planted)
    monkeypatch.setitem(sys.modules, "audits.targets", mod)
    return mod


def _run(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # refused by the parser (a value of the wrong type, a flag given twice)
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_correct_mechanism_passes(fake_targets, capsys):
    code, out, err = _run(["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "4000"], capsys)
    assert code == 0 and err == ""
    assert "verdict" in out and "pass" in out and "gdp" in out  # auto picks GDP for Gaussian noise


def test_planted_bug_is_flagged_with_exit_1_and_json(fake_targets, capsys):
    code, out, _ = _run(["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "10000",
                         "--planted", "half-noise", "--json", "--workers", "2", "--seed", "3"], capsys)
    rec = json.loads(out)
    assert code == 1 and rec["verdict"] == "violated" and rec["target"] == "gaussian[half-noise]"
    for key in ("eps_lower", "confidence", "claimed_epsilon", "delta", "trials", "estimator", "p_value"):
        assert key in rec


def test_solver_and_explicit_estimator(fake_targets, capsys):
    code, out, _ = _run(["solver", "dp_gd", "--epsilon", "1", "--delta", "1e-5", "--trials", "2000",
                         "--estimator", "one-run", "--json"], capsys)
    assert code == 0 and json.loads(out)["estimator"] == "one-run"


@pytest.mark.parametrize(
    "argv,name",
    [
        (["mechanism", "gauss", "--epsilon", "1", "--delta", "1e-5", "--trials", "100"], "NAME"),
        (["mechanism", "gaussian", "--epsilon", "-1", "--delta", "1e-5", "--trials", "100"], "--epsilon"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "2", "--trials", "100"], "--delta"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "2"], "--trials"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--workers", "0"],
         "--workers"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--planted", "x"],
         "--planted"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--confidence", "1"],
         "--confidence"),
        (["mechanism", "laplace", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--estimator", "gdp"],
         "--estimator"),
        (["mechanism", "gaussian", "--epsilon", "1e308", "--delta", "1e-5", "--trials", "100"], "--epsilon"),
        (["mechanism", "gaussian", "--epsilon", "1e-300", "--delta", "1e-5", "--trials", "100"], "--epsilon"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", str(10**23)], "--trials"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--workers", str(10**9)],
         "--workers"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--batch-size", "0"],
         "--batch-size"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--confidence", "1e-300"],
         "--confidence"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--results", "/"],
         "--results"),
        (["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--results",
          "/nonexistent-dir/r.jsonl"], "--results"),
    ],
)
def test_bad_input_is_one_line_naming_the_argument_exit_2(fake_targets, capsys, argv, name):
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpcore: error:") and name in err


def test_audit_all_exit_code_follows_the_verdicts(monkeypatch, capsys):
    def result(verdict):
        return AuditResult("t-" + verdict, 1.0, 1e-5, "replace_one", "gaussian", "output", "gdp", 0.95,
                           0.5 if verdict == "pass" else 1.5, 0.5, verdict, 100, 0)

    calls = {}

    def fake_audit_all(*, quick, workers, seed, progress, out):
        calls.update(quick=quick, workers=workers)
        return list(outcomes)

    mod = types.ModuleType("audits.library_audit")
    mod.audit_all = fake_audit_all
    monkeypatch.setitem(sys.modules, "audits.library_audit", mod)
    outcomes = [result("pass"), result("pass")]
    code, out, _ = _run(["all", "--quick"], capsys)
    assert code == 0 and calls == {"quick": True, "workers": None} and "2 of 2 claims pass" in out
    outcomes = [result("pass"), result("violated")]
    code, out, _ = _run(["all", "--json", "--workers", "2"], capsys)
    assert code == 1 and [r["verdict"] for r in json.loads(out)] == ["pass", "violated"]


def test_registered_with_the_dpcore_command(fake_targets, capsys):
    dpcore_cli = pytest.importorskip("dpcore.cli")
    code = dpcore_cli.main(["audit", "mechanism", "laplace", "--epsilon", "1", "--delta", "1e-5", "--trials", "3000",
                            "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["estimator"] == "clopper-pearson"
    assert dpcore_cli.main(["audit", "mechanism", "laplace", "--epsilon", "0", "--delta", "1e-5",
                            "--trials", "10"]) == 2


def test_target_that_cannot_be_calibrated_names_the_arguments(fake_targets, capsys, monkeypatch):
    def refuse(name, epsilon, delta, planted=None):
        raise ValueError("sigma must be in (0, inf); got 0.0")

    monkeypatch.setattr(fake_targets, "mechanism_target", refuse)
    code, _, err = _run(["mechanism", "gaussian", "--epsilon", "50", "--delta", "1e-5", "--trials", "100"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--epsilon 50.0, --delta 1e-05" in err and "sigma" in err


def test_batch_size_and_results_reach_the_runner(fake_targets, capsys, tmp_path):
    path = tmp_path / "r.jsonl"
    argv = ["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "1000", "--batch-size", "300",
            "--results", str(path), "--json"]
    code, out, _ = _run(argv, capsys)
    assert code == 0 and json.loads(out)["details"]["batches"] == 4
    assert len(path.read_text().splitlines()) == 1 + 4
    code, _, err = _run(argv[:-1] + ["--seed", "1"], capsys)  # another audit on the same file: refused
    assert code == 2 and "--results" in err and "different audit" in err


_NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(0.5, 0.99),
                    st.sampled_from([1e308, 1e-300, 5e-324, -0.0]))
_COUNT = st.one_of(st.integers(-3, 600), st.integers(10**8 + 1, 10**30))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eps=_NUMBER, delta=_NUMBER, conf=_NUMBER, trials=_COUNT, workers=st.integers(-2, 10**12), batch=_COUNT,
       seed=st.integers(-2, 10**40))
def test_fuzzed_arguments_end_in_a_verdict_or_one_line_error(fake_targets, capsys, eps, delta, conf, trials, workers,
                                                             batch, seed):
    argv = ["mechanism", "gaussian", f"--epsilon={eps!r}", f"--delta={delta!r}", f"--confidence={conf!r}",
            f"--trials={trials}", f"--batch-size={batch}", f"--seed={seed}"]
    if workers > 3 or workers < 1:  # keep valid runs in-process; bad values must still be refused
        argv.append(f"--workers={workers}")
    code, out, err = _run(argv, capsys)
    assert code in (0, 1, 2, 3)  # 3: a verdict of "no power"
    if code == 2:  # one line naming the flag, from the command or from the parser
        assert out == "" and err.count("\n") == 1
        assert err.startswith("dpcore: error: --") or err.startswith("dpcore audit mechanism: error: argument --")


# ----------------------------------------------------------------------------- issue 22 item 5


def test_integral_floats_are_accepted_as_documented(fake_targets, capsys):
    # `--trials 1e4` used to be refused by argparse's int although the README accepts integral floats
    code, out, err = _run(["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "1e3",
                           "--batch-size", "2.5e2", "--seed", "1e1", "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and rec["trials"] == 1000 and rec["seed"] == 10 and rec["details"]["batch_size"] == 250
    code, out, err = _run(["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "1.5e3",
                           "--batch-size", "2.5"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--batch-size" in err


def test_progress_goes_to_stderr_unless_quiet(fake_targets, capsys, monkeypatch):
    monkeypatch.setattr("dpcore._progress.LINE_INTERVAL", 0.0)  # stderr is no terminal here: lines, not a bar
    argv = ["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "2000", "--batch-size", "500"]
    code, out, err = _run(argv + ["--json"], capsys)
    assert code == 0 and json.loads(out)["trials"] == 2000  # stdout stays one JSON object
    assert "dpcore: audit of gaussian: 500 of 2000 trials (25 %)" in err.splitlines()
    assert err.splitlines()[-1] == "dpcore: audit of gaussian: 2000 of 2000 trials (100 %)"
    code, out, err = _run(argv + ["--quiet"], capsys)
    assert code == 0 and err == ""


# ------------------------------------------------------------------ power of a single audit (real library targets)
def test_powerless_single_audit_reads_no_power_and_exits_3(capsys):
    """Issue 25 review: 100 trials cannot see dp_gd with half its noise (predicted power 0.43 < 1/2 — 0.34 when the
    row was RDP-calibrated, its release then 0.915-DP); the audit said "pass", exit 0, as if it were evidence. Now
    "no power" with the reason, exit 3; 2000 trials catch it."""
    argv = ["solver", "dp_gd", "--epsilon", "1", "--delta", "1e-5", "--planted", "half-noise", "--quiet"]
    code, out, _ = _run(argv + ["--trials", "100"], capsys)
    assert code == 3 and "no power" in out and "predicted power 0.43 < 0.5" in out and "more --trials" in out
    code, out, _ = _run(argv + ["--trials", "2000", "--json"], capsys)
    record = json.loads(out)
    assert code == 1 and record["verdict"] == "violated"


def test_norm_stress_single_audit_is_exempt_from_the_power_rule(capsys):
    """dp_gd_tiny is a targeted attack whose correct outcome is eps_lb = 0 (audits.solver_targets): a pass, exit 0,
    with the basis recorded — as in `dpcore audit all`."""
    code, out, _ = _run(["solver", "dp_gd_tiny", "--epsilon", "1", "--delta", "1e-5", "--trials", "100",
                         "--estimator", "clopper-pearson", "--json", "--quiet"], capsys)
    record = json.loads(out)
    assert code == 0 and record["verdict"] == "pass" and record["eps_lower"] == 0.0
    assert record["details"]["power"] is None and "targeted" in record["details"]["power_basis"]


def test_gdp_on_a_subsampled_claim_suggests_the_curve_test(capsys):
    """The refusal of --estimator gdp for a non-Gaussian claim with a privacy event names `curve` (it used to
    suggest only clopper-pearson or one-run); one line, exit 2."""
    from dpcore.cli import main

    assert main(["audit", "mechanism", "subsampled-gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100",
                 "--estimator", "gdp"]) == 2
    err = capsys.readouterr().err.strip()
    assert "use curve" in err and "clopper-pearson or one-run" in err and "\n" not in err
