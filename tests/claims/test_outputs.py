"""What the registry's verdicts become: the ``semi-core verify`` command, the LaTeX document,
the errata page (``docs/errata.md``) and the report's claims section."""

from __future__ import annotations

import json
from pathlib import Path

from semi_core.claims import HOLDS_UNDER, all_claims, errata_markdown, to_latex
from tests.claims.verdicts import EXPECTED_CONDITIONAL, EXPECTED_FAILS
from tests.latex_helpers import compile_latex

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = all_claims()


def test_cli_registered():
    from semi_core.cli import COMMAND_MODULES

    assert "verify" in COMMAND_MODULES


def test_cli_json_is_one_object(capsys, cli_main):
    main = cli_main
    assert main(["verify", "--claim", "combining_mi_updates:B1.l2", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    obj = json.loads(out[0])
    assert set(obj) >= {"claims", "summary"}
    (c,) = obj["claims"]
    assert set(c) >= {"id", "source", "verdict", "detail", "corrected_latex"}
    assert c["verdict"].startswith(HOLDS_UNDER)
    assert obj["summary"]["holds_only_under"] == 1


def test_cli_files_and_errors(tmp_path, capsys, cli_main):
    main = cli_main
    tex, md = tmp_path / "v.tex", tmp_path / "e.md"
    assert main(["verify", "--paper", "combining_mi_updates", "--latex", str(tex),
                 "--errata", str(md)]) == 0
    assert tex.read_text().startswith(r"\documentclass")
    assert "# Errata for the seed papers" in md.read_text()
    capsys.readouterr()
    assert main(["verify", "--claim", "B1.l2", "--latex", str(tmp_path / "x.pdf"), "--json"]) == 2
    assert "must name a .tex file" in json.loads(capsys.readouterr().out)["error"]
    assert main(["verify", "--list", "--paper", "sequential_dp_auditing", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == len(all_claims(
        "sequential_dp_auditing"))


def test_latex_pins_exact_strings(results):
    tex = to_latex(list(results.values()))
    # Lemma B.5 as stated (n^2 m/2) and corrected (m/2).
    assert (r"R_{2} = \frac{\left(2 n - 2\right) \left(- \frac{d \log{\left(\frac{n - 1}"
            r"{n} \right)}}{2} - \gamma + \frac{m n^{2}}{2}\right)}{n}") in tex
    # corrected: the display form of the derivation em_R2 (semi_core.symbolic)
    assert (r"R_{2} = \frac{2 \left(n - 1\right)}{n} \left(\frac{m}{2} - \gamma - "
            r"\frac{d}{2} \log{\left(\frac{n - 1}{n} \right)}\right)") in tex
    # Lemma 5.1: log(xi/4) as printed, log(2/xi) corrected.
    assert r"\mathrm{radius} = \frac{\sqrt{2} \sqrt{\log{\left(\frac{\xi}{4} \right)}}}" \
           r"{2 \sqrt{N}}" in tex
    assert r"\mathrm{radius} = \frac{\sqrt{2} \sqrt{\log{\left(\frac{2}{\xi} \right)}}}" \
           r"{2 \sqrt{N}}" in tex
    # Edgeworth h1 with the missing 1/6.
    assert r"h_{1} = \frac{\lambda_{3} \left(x^{3} - 3 x\right)}{6}" in tex
    assert (r"\subsection*{semi\_\allowbreak{}sequential\_\allowbreak{}mi:lemB.5: Type I error "
            r"region (diagonal Sigma)}") in tex
    assert tex.count(r"\begin{dmath*}") == tex.count(r"\end{dmath*}") > 100
    # names written as formulas, verdicts in words, no code names as left-hand sides
    assert r"\mathrm{lhs" not in tex and r"\mathrm{min\_gap}" not in tex
    assert r"\min_{\text{settings}}\,(\text{power gap}) \geq 0" in tex
    assert "The claim fails as stated; the corrected form below holds." in tex
    assert tex.rstrip().endswith(r"\end{document}")


def test_latex_compiles(results, tmp_path):
    compile_latex(to_latex(list(results.values())), tmp_path)


def test_errata_page_is_generated_from_registry(results):
    text = errata_markdown(list(results.values()))
    for cid in EXPECTED_FAILS | EXPECTED_CONDITIONAL:
        assert f"### `{cid}`" in text
    committed = ROOT / "docs" / "errata.md"
    assert committed.is_file(), "run `semi-core verify --errata docs/errata.md`"

    def skeleton(t):  # headings, verdicts, formulas and tables; not the numeric details
        keep = ("#", "- **Verdict", "- **As stated", "- **Corrected", "|", "Registered")
        return [ln for ln in t.splitlines() if ln.startswith(keep)]

    assert skeleton(committed.read_text()) == skeleton(text), \
        "docs/errata.md is stale: run `semi-core verify --errata docs/errata.md`"


def test_report_section(results, tmp_path, monkeypatch):
    from semi_core.report import ReportContext, claims_section
    from semi_core.report.claims_section import ERRATA_NAME, FIGURE_NAME, build

    monkeypatch.setattr(claims_section, "verify", lambda **kw: list(results.values()))
    sec = build(ReportContext(out_dir=tmp_path))
    assert f"[errata]({ERRATA_NAME})" in sec.markdown
    assert (tmp_path / ERRATA_NAME).read_text().startswith("# Errata")
    assert (tmp_path / FIGURE_NAME).stat().st_size > 0
    assert sec.data["summary"]["total"] == len(CLAIMS)
