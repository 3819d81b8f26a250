"""Results files: never clobber, refuse tampering, one writer; kills lose and duplicate nothing,
and pool workers die with a killed audit (issues 11.3 and 12.4)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from audits import FunctionTarget, run_audit
from audits.results_file import ResultsFile, ResultsFileError
from audits.target import shift_target

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "slow_audit_cli.py"
SIGMA = 3.73063163481594
POSIX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc: Linux only")


def _gauss():
    return shift_target("gaussian", 1.0, 1e-5, noise="gaussian", scale=SIGMA)


def _audit(path, **kw):
    return run_audit(_gauss(), kw.pop("trials", 1000), estimator="gdp", batch_size=kw.pop("batch_size", 100),
                     results_path=path, **kw)


def _batch_lines(path):
    return Path(path).read_bytes().split(b"\n")[1:-1]


# ------------------------------------------------------------------ never clobber
def test_a_file_that_is_not_a_results_file_is_refused_and_left_intact(tmp_path):
    victim = tmp_path / "passwd"
    content = b"root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/sh\n"
    victim.write_bytes(content)
    before = os.stat(victim)
    with pytest.raises(ValueError, match="not a dpcore audit results file"):
        _audit(victim)
    assert victim.read_bytes() == content and os.stat(victim).st_mtime_ns == before.st_mtime_ns
    json_victim = tmp_path / "other.jsonl"
    json_victim.write_bytes(b'{"kind": "header", "target": "gaussian"}\n')  # JSON, but not ours
    with pytest.raises(ValueError, match="not a dpcore audit results file"):
        _audit(json_victim)
    assert json_victim.read_bytes() == b'{"kind": "header", "target": "gaussian"}\n'


def test_a_results_file_of_another_audit_is_refused_and_left_intact(tmp_path):
    path = tmp_path / "r.jsonl"
    _audit(path)
    content = path.read_bytes()
    for kw, field in ((dict(seed=1), "seed"), (dict(trials=2000), "trials"), (dict(batch_size=50), "batch_size")):
        with pytest.raises(ValueError, match=f"different audit.*{field}="):
            _audit(path, **kw)
    with pytest.raises(ValueError, match="different audit.*design"):
        run_audit(_gauss(), 1000, estimator="one-run", batch_size=100, results_path=path)
    assert path.read_bytes() == content


@pytest.mark.parametrize("make,match", [
    (lambda tmp: tmp, "is a directory"),
    (lambda tmp: tmp / "missing" / "r.jsonl", "directory .* does not exist"),
    (lambda tmp: Path("/dev/null"), "not a regular file"),
])
def test_unusable_paths_give_one_line_errors(tmp_path, make, match):
    with pytest.raises(ValueError, match=match) as info:
        _audit(make(tmp_path))
    assert "\n" not in str(info.value) and "results_path" in str(info.value)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_unwritable_paths_give_one_line_errors(tmp_path):
    locked_dir = tmp_path / "ro"
    locked_dir.mkdir()
    locked_dir.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="cannot be opened for writing"):
            _audit(locked_dir / "r.jsonl")
    finally:
        locked_dir.chmod(0o700)


def test_empty_file_and_interrupted_header_are_completed(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    ref = _audit(empty)
    header = empty.read_bytes().split(b"\n")[0] + b"\n"
    partial_header = tmp_path / "partial.jsonl"
    partial_header.write_bytes(header[:30])
    again = _audit(partial_header)
    assert partial_header.read_bytes() == empty.read_bytes() and again.eps_lower == ref.eps_lower


# ------------------------------------------------------------------ checksums and duplicates
def _tamper(path, edit):
    lines = Path(path).read_bytes().split(b"\n")
    Path(path).write_bytes(b"\n".join(edit(lines)))


def _flip_a_score(lines):
    rec = json.loads(lines[3])
    scores = np.frombuffer(__import__("base64").b64decode(rec["data"]["scores1"]), "<f8").copy()
    scores[0] += 10.0  # a planted "strong" trial
    rec["data"]["scores1"] = __import__("base64").b64encode(scores.tobytes()).decode()
    lines[3] = json.dumps(rec).encode()
    return lines


@pytest.mark.parametrize("edit,match", [
    (_flip_a_score, "line 4: batch checksum mismatch"),
    (lambda lines: lines[:4] + [lines[3]] + lines[4:], "line 5: batch 2 appears twice"),
    (lambda lines: lines[:2] + [b"not json"] + lines[3:], "line 3: not a valid batch record"),
])
def test_tampered_or_duplicated_batches_are_refused(tmp_path, edit, match):
    path = tmp_path / "r.jsonl"
    _audit(path)
    _tamper(path, edit)
    content = path.read_bytes()
    with pytest.raises(ValueError, match=match):
        _audit(path)
    assert path.read_bytes() == content


def test_a_torn_last_line_is_dropped_and_recomputed(tmp_path):
    path = tmp_path / "r.jsonl"
    full = _audit(path)
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:100])  # killed while writing batch 4
    resumed = _audit(path)
    assert resumed.eps_lower == full.eps_lower and resumed.p_value == full.p_value
    indices = [json.loads(x)["batch"] for x in _batch_lines(path)]
    assert sorted(indices) == list(range(10))


# ------------------------------------------------------------------ one writer
def test_a_second_writer_is_refused_while_the_first_holds_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    _audit(path)  # creates it
    config_holder = _audit  # same configuration as the first run
    with ResultsFile(path, _header_config(path), [100] * 10, ["scores0", "scores1"]):
        with pytest.raises(ResultsFileError, match="in use by another running audit"):
            config_holder(path)
    assert _audit(path).trials == 1000  # lock released on close


def _header_config(path):
    return json.loads(Path(path).read_bytes().split(b"\n")[0])["config"]


# ------------------------------------------------------------------ kills (subprocess)
def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1]), env.get("PYTHONPATH", "")])
    return env


def _cli(pause, args):
    return subprocess.Popen([sys.executable, str(SCRIPT), str(pause), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), start_new_session=True)


def _kill_group(proc):
    """SIGKILL whatever is left of the test's process group (the audit and any stray worker)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _children(pid):
    """Pids of the live (non-zombie) processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid):
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def _wait_for(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@POSIX
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
@pytest.mark.parametrize("workers", [1, 2])
def test_killed_audit_resumes_without_loss_or_duplicates_and_leaves_no_worker(tmp_path, sig, workers):
    trials, batch = 4_000, 50
    path = tmp_path / "r.jsonl"
    args = ["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", str(trials), "--batch-size",
            str(batch), "--results", str(path), "--json", "--seed", "5", "--workers", str(workers)]
    proc = _cli(0.05, args)
    try:
        assert _wait_for(lambda: path.exists() and len(_batch_lines(path)) >= 6), proc.communicate(timeout=5)
        workers_seen = []
        if workers > 1:
            assert _wait_for(lambda: len(_children(proc.pid)) >= 2)
            workers_seen = _children(proc.pid)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert _wait_for(lambda: not any(_alive(p) for p in workers_seen), timeout=10), "a pool worker survived"
    finally:
        _kill_group(proc)
    kept = _batch_lines(path)
    assert 0 < len(kept) < trials // batch
    done = _cli(0.0, args)
    out, err = done.communicate(timeout=120)
    assert done.returncode in (0, 1), err.decode()
    resumed = json.loads(out)
    lines = _batch_lines(path)
    assert lines[: len(kept)] == kept  # nothing written before the kill was lost or rewritten
    indices = [json.loads(x)["batch"] for x in lines]
    assert sorted(indices) == list(range(trials // batch))  # every batch exactly once
    assert resumed["trials"] == trials and resumed["details"]["batches"] == trials // batch
    clean = run_audit(FunctionTarget("gaussian", 1.0, 1e-5, _normal_sampler, noise_family="gaussian"),
                      trials, estimator="gdp", batch_size=batch, seed=5)
    assert resumed["eps_lower"] == clean.eps_lower
    assert resumed["details"]["false_positives"] == clean.details["false_positives"]
    assert resumed["details"]["false_negatives"] == clean.details["false_negatives"]


def _normal_sampler(which, n, rng):
    return rng.normal(float(which), SIGMA, n)


@POSIX
def test_second_cli_writer_is_refused_with_exit_2(tmp_path):
    path = tmp_path / "r.jsonl"
    args = ["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "20000", "--batch-size", "100",
            "--results", str(path)]
    first = _cli(0.05, args)
    try:
        assert _wait_for(lambda: path.exists() and len(_batch_lines(path)) >= 1)
        second = _cli(0.0, args)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 2 and out == b""
        assert err.decode().count("\n") == 1 and "in use by another running audit" in err.decode()
    finally:
        _kill_group(first)


# ------------------------------------------------------------------ issue 22: symlinks and Ctrl-C
def test_a_dangling_symlink_is_refused_in_one_line_and_not_followed(tmp_path):
    # it used to recurse until RecursionError (O_EXCL refuses the link, the stat says "missing")
    for target in (tmp_path / "nowhere.jsonl", Path("/nonexistent-dir/r.jsonl")):
        link = tmp_path / "link.jsonl"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        with pytest.raises(ResultsFileError, match="symbolic link to .* which does not exist") as info:
            _audit(link)
        assert "\n" not in str(info.value) and not target.exists() and link.is_symlink()
    proc = subprocess.run([sys.executable, "-m", "dpcore.cli", "audit", "mechanism", "gaussian", "--epsilon", "1",
                           "--delta", "1e-5", "--trials", "100", "--results", str(link)], capture_output=True,
                          text=True, env=_env(), timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"dpcore: error: --results '{link}' is a symbolic link")


@POSIX
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_ends_an_audit_in_one_line_and_the_rerun_resumes(tmp_path, workers):
    trials, batch = 2_000, 50
    path = tmp_path / "r.jsonl"
    args = ["mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", str(trials), "--batch-size",
            str(batch), "--results", str(path), "--json", "--seed", "7", "--workers", str(workers), "--quiet"]
    proc = _cli(0.05, args)
    try:
        assert _wait_for(lambda: path.exists() and len(_batch_lines(path)) >= 4), proc.communicate(timeout=5)
        if workers > 1:
            assert _wait_for(lambda: len(_children(proc.pid)) >= 2)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        out, err = proc.communicate(timeout=60)
    finally:
        _kill_group(proc)
    kept = _batch_lines(path)
    assert proc.returncode == 130 and out == b"", err.decode()
    assert err.decode().count("\n") == 1 and b"Traceback" not in err, err.decode()
    assert err.decode() == (f"dpcore: interrupted: the {len(kept)} of {trials // batch} batches done are in "
                            f"--results {path}: rerun the same command to resume\n")
    assert 0 < len(kept) < trials // batch
    done = _cli(0.0, args)
    out, err = done.communicate(timeout=120)
    assert done.returncode in (0, 1), err.decode()
    resumed = json.loads(out)
    assert _batch_lines(path)[: len(kept)] == kept
    assert sorted(json.loads(x)["batch"] for x in _batch_lines(path)) == list(range(trials // batch))
    clean = run_audit(FunctionTarget("gaussian", 1.0, 1e-5, _normal_sampler, noise_family="gaussian"),
                      trials, estimator="gdp", batch_size=batch, seed=7)
    assert resumed["eps_lower"] == clean.eps_lower and resumed["p_value"] == clean.p_value


def test_ctrl_c_without_a_results_file_says_nothing_was_kept(capsys, monkeypatch):
    import audits.runner as runner

    from dpcore.cli import main

    def interrupted(*args, **kwargs):
        raise runner.AuditInterrupted(0, 10)

    monkeypatch.setattr(runner, "run_audit", interrupted)
    assert main(["audit", "mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--trials", "100"]) == 130
    assert capsys.readouterr().err == ("dpcore: interrupted: nothing was kept (give --results PATH to make an audit "
                                       "resumable)\n")
