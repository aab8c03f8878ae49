"""One stderr line when a kernel compiles (the first run after an install), none when it comes
from Numba's cache or when progress is off."""

import io
import os
import subprocess
import sys

import pytest

from semi_core import _progress

numba = pytest.importorskip("numba")


@pytest.fixture
def fresh_notice(monkeypatch):
    monkeypatch.setitem(_progress._COMPILE_NOTICE, "written", False)
    monkeypatch.setitem(_progress._COMPILE_NOTICE, "enabled", True)


def _kernel(module: str):
    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return numba.njit(add_one)  # no cache: it compiles on its first call


def test_compiling_a_package_kernel_writes_the_notice_once(fresh_notice, capsys):
    from semi_core.kernels._jit import numba_module

    numba_module()  # imports Numba once and installs the compile hook

    _kernel("user_code")(1)  # not ours: no notice
    assert _progress.COMPILE_NOTICE not in capsys.readouterr().err
    _kernel("semi_core.kernels.fake")(1)
    _kernel("semi_core.kernels.fake")(2.0)
    err = capsys.readouterr().err
    assert err.count(_progress.COMPILE_NOTICE) == 1 and "first run only" in err


def test_no_notice_when_progress_is_off(fresh_notice):
    _progress.set_compile_notice(False)
    out = io.StringIO()
    assert _progress.notice_compiling(out) is False and out.getvalue() == ""


@pytest.mark.slow
def test_first_run_compiles_with_notice_second_run_loads_the_cache(tmp_path):
    """A fresh Numba cache (NUMBA_CACHE_DIR) compiles and says so; the next run loads it."""
    code = ("from semi_core.game.engine import simulate\n"
            "from semi_core.mechanisms.empirical_mean import EmpiricalMean\n"
            "simulate(EmpiricalMean.isotropic(5, 3), 2000, 0, kernel='numba')\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SEMI_CORE_FORCE_TWIN", None)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=900) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    assert runs[0].stderr.count(_progress.COMPILE_NOTICE) == 1
    assert _progress.COMPILE_NOTICE not in runs[1].stderr
