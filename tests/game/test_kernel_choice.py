"""The engine's kernel choice: small jobs on the NumPy twin without importing Numba, large or
forced jobs on the compiled kernel, one result either way (same B and tau; statistics to
rounding), recorded in the result."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from semi_core.game.engine import (
    TWIN_WORK_LIMIT,
    build_params,
    choose_kernel,
    estimate_resources,
    simulate,
)
from semi_core.mechanisms.empirical_mean import EmpiricalMean

pytestmark = pytest.mark.twin

_CLI = ("import json, sys\nfrom semi_core.cli import main\nrc = main({argv!r})\n"
        "print(json.dumps({{'rc': rc, 'numba': 'numba' in sys.modules,\n"
        "                  'linalg': 'scipy.linalg' in sys.modules}}))\n")


def _cli(argv, **env):
    proc = subprocess.run([sys.executable, "-c", _CLI.format(argv=argv)], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, **env))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-2]), json.loads(lines[-1])


def _forced_twin() -> bool:
    return os.environ.get("SEMI_CORE_FORCE_TWIN", "").strip() not in ("", "0")


def test_small_simulate_never_imports_numba():
    """Nor scipy.linalg (0.1 s of start-up): the mechanism whitens by forward substitution."""
    out, child = _cli(["simulate", "--rounds", "2000", "--json"])
    assert child == {"rc": 0, "numba": False, "linalg": False}
    assert out["kernel"] == "numpy-twin"


def test_forced_compiled_imports_numba_and_says_so():
    out, child = _cli(["simulate", "--rounds", "2000", "--kernel", "numba", "--json"])
    assert child["rc"] == 0
    want = "numpy-twin" if _forced_twin() else "numba"  # SEMI_CORE_FORCE_TWIN wins
    assert out["kernel"] == want and child["numba"] == (want == "numba")


def test_the_rule_is_the_work_threshold(monkeypatch):
    """Below TWIN_WORK_LIMIT (random variates + 64 per round) the twin, at it the compiled
    kernel; explicit choices and the environment override; nothing else enters."""
    monkeypatch.delenv("SEMI_CORE_FORCE_TWIN", raising=False)
    p = build_params(EmpiricalMean.isotropic(10, 10), tau=5)
    per_round = 10 * 10 + 3 + 64
    edge = math.ceil(TWIN_WORK_LIMIT / per_round)
    assert estimate_resources(p, edge, 16384)["work"] == edge * per_round
    assert choose_kernel(p, edge - 1) == "numpy-twin"
    assert choose_kernel(p, edge) == "numba"
    assert choose_kernel(p, 10, "numba") == "numba"
    assert choose_kernel(p, 10**9, "numpy-twin") == "numpy-twin"
    q = build_params(EmpiricalMean.isotropic(10, 10), tau=5, mode="sufficient")
    assert choose_kernel(q, edge) == "numpy-twin"  # 10 variates a round, not 100
    monkeypatch.setenv("SEMI_CORE_FORCE_TWIN", "1")
    assert choose_kernel(p, 10**9, "numba") == "numpy-twin"
    with pytest.raises(ValueError, match="kernel must be one of"):
        choose_kernel(p, 10, "cython")


def test_choice_does_not_depend_on_chunks_or_threads(monkeypatch):
    monkeypatch.delenv("SEMI_CORE_FORCE_TWIN", raising=False)
    mech = EmpiricalMean.isotropic(10, 4)
    a = simulate(mech, 700, 3, chunk_size=128, executor=2)
    b = simulate(mech, 700, 3, chunk_size=128, executor=1)
    assert a.kernel == b.kernel == "numpy-twin"
    np.testing.assert_array_equal(a.member, b.member)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


def test_large_job_runs_compiled_and_agrees_with_the_twin():
    """n = 1000, T = 10: 10,067 work units a round, so 1,987 rounds reach the threshold. The
    auto run (compiled) and the forced twin draw the same stream: identical B and tau, the
    statistics equal up to summation order (1e-12 relative + absolute; measured <= 4e-15)."""
    mech = EmpiricalMean.isotropic(1000, 10)
    rounds = math.ceil(TWIN_WORK_LIMIT / (1000 * 10 + 3 + 64))
    big = simulate(mech, rounds, 11, tau="uniform", chunk_size=512)
    twin = simulate(mech, rounds, 11, tau="uniform", chunk_size=512, kernel="numpy-twin")
    assert big.kernel == ("numpy-twin" if _forced_twin() else "numba")
    assert twin.kernel == "numpy-twin"
    np.testing.assert_array_equal(big.member, twin.member)
    np.testing.assert_array_equal(big.tau, twin.tau)
    for k in big.stats:
        np.testing.assert_allclose(big.stats[k], twin.stats[k], rtol=1e-12, atol=1e-12)
    small = simulate(mech, rounds - 1, 11, tau="uniform", chunk_size=512)
    assert small.kernel == "numpy-twin"
