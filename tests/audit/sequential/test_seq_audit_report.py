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
