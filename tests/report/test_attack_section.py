"""The IHA report section in quick mode (slow tier: trains ~200 small models)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")


@pytest.mark.slow
def test_attack_section_quick(tmp_path):
    from semi_core.cli._common import to_jsonable
    from semi_core.report import SECTION_MODULES, ReportContext
    from semi_core.report.attack_section import ORDER, build

    assert "semi_core.report.attack_section" in SECTION_MODULES and ORDER == 60
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    for fig in sec.figures:
        assert (tmp_path / fig).stat().st_size > 1000
    md = sec.markdown
    for needle in ("Exact vs CG (Table 3)", "Damping vs low-rank (Table 8", "Term ablation",
                   "Leave-one-out fraction (Table 9)", "Agreement at FPR 0.05",
                   "0.542, 2.61, 0.51", "What transfers"):
        assert needle in md
    data = sec.data["digits-odd/logreg-mse"]
    assert data["exact_vs_cg"]["max_relative_score_difference"] < 1e-5
    json.dumps(to_jsonable(sec.data))


def test_resources_block_quick():
    """The Table 6 / App. D.1 subsection in quick mode (small shapes, in this process): the
    sweep's ten measurements, the fitted laws from five sizes, the seed's numbers named."""
    from semi_core.report.attack_section import resources_block

    md, study = resources_block(quick=True)
    assert "seed Table 6" in md and "fitted law" in md and "Quick mode" in md
    assert len(study["rows"]) == 10
    assert {r["method"] for r in study["rows"]} == {"exact", "cg"}
    fit = study["fits"]["exact_wall_s"]
    assert "error" in fit or fit["points"] == 5
