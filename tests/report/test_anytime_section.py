"""The anytime one-run report section: its three tables and the validity verdict."""

from __future__ import annotations

import pytest

import semi_core.audit.anytime_one_run as aor
from semi_core.report import ReportContext
from semi_core.report.anytime_section import ORDER, build


def test_section_builds_small(tmp_path, monkeypatch):
    for name in ("validity_table", "price_table", "stopping_table"):
        fn = getattr(aor, name)
        monkeypatch.setattr(aor, name, lambda fn=fn, **kw: fn(**{**kw, "runs": 8,
                                                                  "n_canaries": 120}))
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    assert ORDER == 46
    for head in ("**Validity**", "**Price of anytime validity**", "**Stopping time**",
                 "| canaries | epsilon |", "median_stop"):
        assert head in sec.markdown
    assert len(sec.data["validity"]) == len(aor.VALIDITY_CELLS)
    assert all(r["runs"] == 8 for r in sec.data["stopping"])


@pytest.mark.slow
def test_quick_section_is_valid(tmp_path):
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    assert "Cells whose interval\nlies above 0.05: 0." in sec.markdown
    assert all(r["ok"] for r in sec.data["validity"])
