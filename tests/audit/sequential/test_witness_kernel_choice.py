"""The witness kernel's size rule (``choose_witness_backend``): small sequential audits run on
the NumPy twin without importing Numba, large ones (or library calls without
``planned_runs``) on the compiled kernel; the two agree to rounding (the twin's ``exp`` against
the kernel's polynomial, <= 2 ulp each), so the verdicts are the same and the log-wealths agree
to 1e-12 relative; the result names the kernel that ran."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from semi_core.audit.sequential import mechanism_source, sequential_grid
from semi_core.kernels._jit import use_twins
from semi_core.kernels.witness import TWIN_EXCESS_LIMIT_S, choose_witness_backend
from semi_core.mechanisms.zoo import SEED_PAIR, NonDPGaussian1

needs_numba = pytest.mark.skipif(use_twins(), reason="the compiled kernel is not in use")


@needs_numba
def test_rule_edges_and_forcing():
    assert choose_witness_backend(100, 1) == "numpy"
    assert choose_witness_backend(1_700, 1) == "numpy"
    assert choose_witness_backend(1_800, 1) == "numba"       # one run: about 1,750 steps
    assert choose_witness_backend(175, 1, runs=20) == "numpy"
    assert choose_witness_backend(185, 1, runs=20) == "numba"  # the runs share the budget
    assert choose_witness_backend(500, 100) == "numba"        # d multiplies the pair term
    for b in ("numba", "numpy", "python"):
        assert choose_witness_backend(10, 1, backend=b) == b
        assert choose_witness_backend(10**6, 1, backend=b) == b
    assert TWIN_EXCESS_LIMIT_S == 0.4


def test_bad_backend_and_force_twin(monkeypatch):
    with pytest.raises(ValueError, match="backend must be auto, numba, numpy or python"):
        choose_witness_backend(10, 1, backend="fortran")
    monkeypatch.setenv("SEMI_CORE_FORCE_TWIN", "1")
    assert choose_witness_backend(10**6, 1) == "numpy"
    assert choose_witness_backend(10, 1, backend="numba") == "numpy"
    with pytest.raises(ValueError, match="planned_runs"):
        sequential_grid(mechanism_source(NonDPGaussian1(1.0), *SEED_PAIR), [0.01], delta=1e-5,
                        max_obs=50, planned_runs=0)


def _grid(**kw):
    return sequential_grid(mechanism_source(NonDPGaussian1(1.0), *SEED_PAIR), [0.01, 0.1],
                           delta=1e-5, max_obs=300, seed=3, **kw)


@needs_numba
def test_twin_and_kernel_agree_and_the_result_names_the_kernel():
    lib = _grid()                       # no planned_runs: the compiled kernel, as before
    small = _grid(planned_runs=1)       # 300 steps, one run: the twin
    big = _grid(planned_runs=1000)      # the excess of 1,000 runs: the kernel
    assert [r.diagnostics["kernel"] for r in lib.results] == ["numba"] * 2
    assert [r.diagnostics["kernel"] for r in small.results] == ["numpy"] * 2
    assert [r.diagnostics["kernel"] for r in big.results] == ["numba"] * 2
    for a, b in zip(lib.results, small.results, strict=True):
        assert (a.rejected, a.stopped_at, a.n_observed) == (b.rejected, b.stopped_at,
                                                             b.n_observed)
        np.testing.assert_allclose(b.log_wealth, a.log_wealth, rtol=1e-12, atol=1e-12)
    for a, b in zip(lib.results, big.results, strict=True):
        np.testing.assert_array_equal(a.log_wealth, b.log_wealth)
    assert lib.epsilon_lower_bound == small.epsilon_lower_bound


_CHILD = r"""
import contextlib, io, json, sys
import semi_core.kernels.witness
light = "numba" not in sys.modules
from semi_core.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(ARGV)
print(json.dumps({"rc": rc, "light_import": light, "numba": "numba" in sys.modules,
                  "kernels": [r["witness_diagnostics"]["kernel"]
                              for r in json.loads(out.getvalue())["runs"]]}))
"""


@needs_numba
@pytest.mark.parametrize("max_obs, runs, kernel", [(100, 1, "numpy"), (2500, 1, "numba")])
def test_seq_audit_small_job_imports_no_numba(max_obs, runs, kernel):
    argv = ["seq-audit", "--claimed-epsilon", "0.01", "--max-obs", str(max_obs), "--runs",
            str(runs), "--no-progress", "--json"]
    proc = subprocess.run([sys.executable, "-c", _CHILD.replace("ARGV", repr(argv))],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0 and res["light_import"]
    assert res["kernels"] == [kernel] * runs
    assert res["numba"] == (kernel == "numba")
