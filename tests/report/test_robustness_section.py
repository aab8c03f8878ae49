"""Robustness report section and the Fig. 2 analysis script (quick sizes)."""

import importlib.util
import math
from pathlib import Path

from semi_core.report import SECTION_MODULES, ReportContext
from semi_core.report import robustness_section as rs

SIGMAS = 4.5


def test_robustness_section(tmp_path):
    assert "semi_core.report.robustness_section" in SECTION_MODULES
    sec = rs.build(ReportContext(out_dir=tmp_path, quick=True, seed=1))
    assert (tmp_path / "robustness.png").stat().st_size > 1000
    rows = sec.data["rows"]
    assert set(rows) == set(rs.FAMILIES)
    # Gaussian control row: the LR is correctly specified, so measured ~ theory (4.5 s.e.)
    for t in rs.TESTS:
        assert abs(rows["gaussian"][t]["z"]) < SIGMAS
    # centred exponential data: the misspecified SeMI* loses power (~0.04 vs 0.073, z ~ -10)
    assert rows["exponential"]["semi-star"]["z"] < -SIGMAS
    assert "| bernoulli:0.3 |" in sec.markdown


def test_fig2_script_small(tmp_path):
    path = Path(__file__).resolve().parents[2] / "analysis" / "fig2_power.py"
    spec = importlib.util.spec_from_file_location("fig2_power", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(["--rounds", "4000", "--out", str(tmp_path), "--mode", "sufficient"])
    assert (tmp_path / "fig2_power.png").exists() and (tmp_path / "fig2_power.json").exists()
    assert res["engine_seconds"] > 0 and len(res["rows"]) == res["points"]
    for r in res["rows"]:
        c = r["semi-star"]
        assert abs(c["mc"] - c["closed_form"]) < SIGMAS * max(c["se"], math.sqrt(0.01 / 2000))
