"""The report section builds in quick mode with every table and both figures."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_quick_section_builds(tmp_path):
    from semi_core.report import ReportContext
    from semi_core.report.seq_audit_section import ORDER, build

    assert ORDER == 75
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    for head in ("Table 1", "Table 2", "Table 3", "App. F.2", "App. F.1", "Type I",
                 "SeMI stream audit"):
        assert head in sec.markdown
    for f in sec.figures:
        assert (tmp_path / f).stat().st_size > 1000
    assert sec.data["table1"]["rows"] and "paths" not in sec.data["table1"]["rows"][0]


def test_readings_and_ceiling_parts_render(tmp_path):
    """The NonDPGaussian2-by-reading table and the Fig. 8 ceiling figure, on tiny runs."""
    from semi_core.audit.sequential import experiments as ex
    from semi_core.report.seq_audit_section import _ceiling_figure, render_markdown

    rt = ex.readings_table(runs=2, max_obs={0.01: 200, 0.1: 200}, readings=("auditorium",),
                           conventions=("paper",), seed=1)
    assert {r["reading"] for r in rt["rows"]} == {"auditorium"}
    assert rt["rows"][0]["seed_mean_over_rejecting"] == pytest.approx(986.88, abs=0.01)
    cc = ex.canary_ceiling(runs=1, max_obs=300, seed=1)
    assert cc["runs"][0]["lb_end"] <= cc["any_kernel_ceiling"]
    md = render_markdown({"nondp2_readings": rt, "canary_ceiling": cc})
    assert "by reading of the mechanism" in md and "has a ceiling" in md
    assert "| auditorium | paper | 0.01 |" in md
    _ceiling_figure(tmp_path / "c.png", cc)
    assert (tmp_path / "c.png").stat().st_size > 1000
