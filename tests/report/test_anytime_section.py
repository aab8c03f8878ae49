"""The anytime one-run report section: its four tables and the validity verdict."""

from __future__ import annotations

import pytest

import semi_core.audit.anytime_one_run as aor
import semi_core.integrations.anytime as ait
from semi_core.report import ReportContext
from semi_core.report.anytime_section import ORDER, build


def _small(monkeypatch):
    for name in ("validity_table", "price_table", "stopping_table"):
        fn = getattr(aor, name)
        monkeypatch.setattr(aor, name, lambda fn=fn, **kw: fn(**{**kw, "runs": 8,
                                                                  "n_canaries": 120}))
    zoo = ait.bug_zoo_stopping
    # 2 runs per loop of 60 canaries in 4 steps; the Dirac loops claim epsilon 0.3 so that 60
    # canaries can refute a bug
    monkeypatch.setattr(ait, "bug_zoo_stopping", lambda **kw: zoo(
        **{**kw, "runs": 2, "m": 60, "steps": 4, "dirac_epsilon": 0.3}))


def test_section_builds_small(tmp_path, monkeypatch):
    _small(monkeypatch)
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    assert ORDER == 46
    for head in ("**Validity**", "**Price of anytime validity**", "**Stopping time**",
                 "| canaries | epsilon |", "median_stop"):
        assert head in sec.markdown
    assert len(sec.data["validity"]) == len(aor.VALIDITY_CELLS)
    assert all(r["runs"] == 8 for r in sec.data["stopping"])
    zoo = {r["loop"]: r for r in sec.data["bug_zoo"]}
    assert "**The DP-SGD bug zoo** (2 runs per loop" in sec.markdown
    assert tuple(zoo) == ait.BUG_ZOO
    # the correct loops are refuted by neither audit; noise divided by the batch size makes
    # the Dirac canaries visible: both audits refute every run, the anytime one before the end
    for ok in ("correct", "correct (sampler)"):
        assert zoo[ok]["anytime_refuted"] == 0 and zoo[ok]["end_of_run_refuted"] == 0
        assert zoo[ok]["median_stop_step"] == "-"
    bug = zoo["noise / batch size"]
    assert bug["anytime_refuted"] == 1 and bug["end_of_run_refuted"] == 1
    assert bug["median_stop_step"] <= 4 and bug["median_stop_canary"] <= 60
    # the sampler loops train alike: only the claim differs (declared rate 0.01 < 0.5)
    assert zoo["sample rate misreported"]["claimed"] < zoo["correct (sampler)"]["claimed"]
    assert (zoo["sample rate misreported"]["median_end_of_run_bound"]
            == zoo["correct (sampler)"]["median_end_of_run_bound"])


def test_bug_zoo_rejects_rates():
    with pytest.raises(ValueError, match="q_declared must be < q_true"):
        ait.bug_zoo_stopping(runs=1, m=20, steps=2, q_true=0.1, q_declared=0.2)
    with pytest.raises(ValueError, match="runs"):
        ait.bug_zoo_stopping(runs=0)


@pytest.mark.slow
def test_quick_section_is_valid(tmp_path):
    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    assert "Cells whose interval\nlies above 0.05: 0." in sec.markdown
    assert all(r["ok"] for r in sec.data["validity"])


@pytest.mark.slow
def test_quick_bug_zoo_refutes_every_bug():
    """The report's quick bug zoo (5 runs per loop, 200 canaries, 10 steps): no correct loop is
    refuted, the end-of-run audit refutes every buggy run, and the anytime audit stops every
    Dirac-bug run before the last step."""
    rows = {r["loop"]: r for r in ait.bug_zoo_stopping(runs=5, steps=10, seed=0)}
    for ok in ("correct", "correct (sampler)"):
        assert rows[ok]["anytime_refuted"] == 0 and rows[ok]["end_of_run_refuted"] == 0
    for bug in ("clipping off", "noise / batch size", "sample rate misreported"):
        assert rows[bug]["end_of_run_refuted"] == 1
    for bug in ("clipping off", "noise / batch size"):
        assert rows[bug]["anytime_refuted"] == 1 and rows[bug]["median_stop_step"] < 10
