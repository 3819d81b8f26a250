"""dpcore._jit.jit: an on-disk Numba cache where one can be written, in-memory compilation elsewhere.

The install test puts the project's packages into a read-only prefix in a temporary folder, with HOME an
unwritable path and NUMBA_CACHE_DIR / XDG_CACHE_HOME unset, and runs ``import mechanisms``, a kernel
and ``dpcore epsilon`` in a subprocess (issue 12: they used to fail with "cannot cache function …:
no locator available"). The prefix is made read-only by permissions and, because root ignores
those, by replacing every ``__pycache__`` folder with a read-only file of that name.
"""

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpcore._jit import jit

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("dpcore", "mechanisms", "algorithms", "audits")


def _make_read_only(root: Path) -> None:
    for pycache in [p for p in root.rglob("__pycache__") if p.is_dir()]:
        shutil.rmtree(pycache)
    for package in [p for p in root.rglob("__init__.py")]:
        blocker = package.parent / "__pycache__"
        blocker.write_text("")
    for path in sorted(root.rglob("*"), reverse=True) + [root]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(root: Path) -> None:
    for path in [root] + sorted(root.rglob("*")):
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _clean_env(tmp_path: Path, site: Path) -> dict:
    home = tmp_path / "home"
    home.write_text("not a folder: nothing can be created below HOME, not even by root")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME=str(home), PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    return env


def test_jit_compiles_and_caches_where_it_can(tmp_path, monkeypatch):
    @jit
    def double(x):
        return 2.0 * x

    @jit(fastmath=False)
    def triple(x):
        return 3.0 * x

    assert double(1.5) == 3.0 and triple(np.ones(2)).tolist() == [3.0, 3.0]
    assert double._cache.__class__.__name__ == "FunctionCache"  # an on-disk cache was set up
    with pytest.raises(TypeError, match="cache"):
        jit(cache=False)


@pytest.mark.slow
def test_read_only_install_imports_and_runs(tmp_path):
    # The layout ``pip install --target`` gives this pure-Python project (copied, so the test
    # needs neither network nor the ``wheel`` package), then made read-only.
    site = tmp_path / "site"
    for package in PACKAGES:
        shutil.copytree(REPO / package, site / package, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    _make_read_only(site)
    try:
        script = textwrap.dedent("""
            import numpy as np
            import mechanisms
            assert mechanisms.__file__.startswith(SITE), mechanisms.__file__
            from mechanisms import kernels
            assert kernels.gaussian_noise_kernel(np.random.default_rng(0), 3, 1.0).shape == (3,)
            from dpcore.cli import main
            main(["epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "100",
                  "--delta", "1e-5", "--accountant", "rdp"])
        """).replace("SITE", repr(str(site)))
        run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_clean_env(tmp_path, site),
                             capture_output=True, text=True, timeout=600)
    finally:
        _make_writable(site)
    assert run.returncode == 0, run.stderr
    assert "no locator available" not in run.stderr
    assert "epsilon" in run.stdout.lower()
    notices = [line for line in run.stderr.splitlines() if "Numba cache" in line]
    assert len(notices) == 1, run.stderr  # one line per process, however many kernels
    assert not list(site.rglob("*.nbi"))  # nothing was written into the prefix


def test_nothing_is_compiled_at_import(tmp_path):
    script = textwrap.dedent("""
        import gc
        import dpcore, mechanisms, algorithms, audits
        from numba.core.registry import CPUDispatcher
        kernels = [o for o in gc.get_objects() if isinstance(o, CPUDispatcher)]
        assert len(kernels) > 20, len(kernels)
        compiled = [k.py_func.__qualname__ for k in kernels if k.signatures]
        assert not compiled, compiled
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
