"""Figures say what they draw: integer axes tick at integers, bands are named in the legend."""

from semi_core.report import ReportContext
from semi_core.report import _plots as P


def _capture(monkeypatch):
    figs = []

    def save(fig, path):
        figs.append(fig)
        return path

    monkeypatch.setattr(P, "save", save)
    return figs


def test_fig2_number_of_updates_ticks_at_integers(tmp_path, monkeypatch):
    from semi_core.report import power_section as S

    def fake_point(mech, tau, rounds, seed):  # the figure only, no Monte Carlo
        return {t: {"closed_form": 0.5, "mc": 0.5, "mc_se": 0.01} for t in S.TEST_NAMES}

    monkeypatch.setattr(S, "_point", fake_point)
    figs = _capture(monkeypatch)
    S.build(ReportContext(out_dir=tmp_path))
    ax = figs[0].axes[0]
    lo, hi = ax.get_xlim()
    ticks = [x for x in ax.get_xticks() if lo <= x <= hi]
    assert len(ticks) >= 2 and all(float(x).is_integer() for x in ticks), ticks


def test_fig1_legend_names_its_bands(tmp_path, monkeypatch):
    from semi_core.report.semi_figures_section import _fig1

    figs = _capture(monkeypatch)
    with P.style() as plt:
        _fig1(ReportContext(out_dir=tmp_path), plt, 200)
        labels = [t.get_text() for t in figs[0].legends[0].get_texts()]
        plt.close(figs[0])
    assert any("1 SD" in s for s in labels) and any("tau" in s for s in labels), labels
