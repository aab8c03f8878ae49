"""Tests of the claims registry, its checks, verdicts, CLI, LaTeX and errata output.

Every check must be able to fail: ``test_perturbed_form_fails`` scales one registered formula
(by 1.1, or 1/1.1 for upper bounds) and asserts the verifier then reports ``fails``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from semi_core.claims import (
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    SEED_MODULES,
    all_claims,
    errata_markdown,
    get_claim,
    perturb_forms,
    select_claims,
    summary,
    to_latex,
    verify,
    verify_claim,
)
from semi_core.claims import _reference as ref
from tests.latex_helpers import compile_latex

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = all_claims()
IDS = [c.id for c in CLAIMS]

# The statements the issue asks to register, per seed (labels as in the registry).
REQUIRED = {
    "semi_sequential_mi": {
        "lem2.1", "eq2", "thm3.1", "thm3.4", "thm3.10", "lem3.2", "lem3.5", "lem3.6", "lem3.7",
        "lem3.8", "propD.2", "corD.1", "thmE.1", "corE.2", "corE.3", "lemB.1", "lemB.4",
        "lemB.5", "thmB.2", "corB.3", "corB.6", "thmC.1", "lemF.1", "lemF.2", "lemF.6",
        "lemF.7", "lemF.9", "corF.8", "thmF.3", "thmF.4", "thmF.5", "thmF.10", "thm4.1",
        "lem5.1", "appG.dkw"},
    "per_datum_leakage": {
        "thm3.1", "cor3.2.eq8", "cor3.2.eq9", "eq10", "rem3.3", "gdp.sec3", "thm4.1", "rem4.2",
        "thm4.3", "thm4.3.eq16", "rem4.4", "thm4.5", "thm4.5.adv", "appC.h1", "appC.h2",
        "appC.eq48"},
    "sequential_dp_auditing": {"thm3.1", "sec3.4.evalue"},
    "combining_mi_updates": {"B1.l2sq", "B1.l2sq.expansion", "B1.l2"},
}

# Issue 26 item 9 (statements the first round did not check), per seed.
for _seed, _labels in {
    "semi_sequential_mi": {"appH.4.auc"},
    "per_datum_leakage": {"appC.4.threshold", "appC.6.restated", "remC.12.var",
                          "thmC.5.lattice", "secE.1.easy"},
    "combining_mi_updates": {"alg3.p_in", "thmB.1.appC", "lemB.2.chi2"},
    "iha_parameters_vs_loss": {"tab7.purchase100", "sec4.1.eq4.spectrum", "appE.grad_L0"},
}.items():
    REQUIRED.setdefault(_seed, set()).update(_labels)

# Our conclusions (each decided by the check; pinned so a regression in a check shows up).
EXPECTED_FAILS = {
    "semi_sequential_mi:lemB.5", "semi_sequential_mi:corB.6", "semi_sequential_mi:lem5.1",
    "semi_sequential_mi:appG.dkw", "semi_sequential_mi:appA.5.roots", "semi_sequential_mi:appH.3",
    "per_datum_leakage:thm4.3", "per_datum_leakage:thm4.3.eq16",
    "per_datum_leakage:rem4.4", "per_datum_leakage:appC.h1", "per_datum_leakage:appC.eq48",
    "sequential_dp_auditing:remA.1",
}
EXPECTED_CONDITIONAL = {"per_datum_leakage:thm4.5.adv", "combining_mi_updates:B1.l2",
                        "semi_sequential_mi:thm4.1.dpsgd"}

# Claim modules added beside the four originals pin their own conclusions: a module may define
# ``EXPECTED_FAILS`` / ``EXPECTED_CONDITIONAL`` (sets of full claim ids).
for _mods in SEED_MODULES.values():
    for _name in _mods:
        _mod = importlib.import_module(_name)
        EXPECTED_FAILS |= set(getattr(_mod, "EXPECTED_FAILS", ()))
        EXPECTED_CONDITIONAL |= set(getattr(_mod, "EXPECTED_CONDITIONAL", ()))


@pytest.fixture
def cli_main(monkeypatch):
    """``semi_core.cli.main`` with only this subcommand registered (others are optional here)."""
    import semi_core.cli as cli

    monkeypatch.setattr(cli, "COMMAND_MODULES", ["verify"])
    return cli.main


@pytest.fixture(scope="module")
def results():
    return {r.id: r for r in verify()}


def test_registry_covers_the_issue():
    for seed, labels in REQUIRED.items():
        have = {c.label for c in all_claims(seed)}
        assert labels <= have, f"{seed}: missing {sorted(labels - have)}"


def test_claim_records_are_well_formed():
    assert len(set(IDS)) == len(IDS)
    for c in CLAIMS:
        assert c.seed in SEED_MODULES and c.id.startswith(c.seed + ":")
        assert c.location and c.title and c.method in {"symbolic", "numeric", "monte-carlo",
                                                       "asymptotic"}
        assert c.stated and all(isinstance(v, sp.Basic | sp.MatrixBase) for v in c.stated.values())
        assert isinstance(c.hypotheses, tuple)
        if c.perturb_key is not None:
            assert c.perturb_key in c.stated


@pytest.mark.parametrize("cid", IDS)
def test_verdict(results, cid):
    r = results[cid]
    if cid in EXPECTED_FAILS:
        assert r.verdict == FAILS, r.detail
        assert r.counterexample, "a failure must carry a counterexample"
        if get_claim(cid).corrected is not None:
            assert r.corrected_checked is True, r.detail
            assert r.corrected_latex
    elif cid in EXPECTED_CONDITIONAL:
        assert r.verdict.startswith(HOLDS_UNDER), r.detail
        assert r.condition
    else:
        assert r.verdict == HOLDS, r.detail


@pytest.mark.parametrize("cid", IDS)
def test_perturbed_form_fails(cid):
    """A verdict of ``holds`` must come from a check that can fail."""
    c = get_claim(cid)
    base = c.corrected if cid in EXPECTED_FAILS and c.corrected is not None else None
    res = verify_claim(c, forms=perturb_forms(c, base))
    assert res.verdict == FAILS, f"perturbed {cid} not detected: {res.detail}"


def test_summary_counts(results):
    s = summary(list(results.values()))
    assert s["total"] == len(CLAIMS)
    assert s["holds"] + s["fails"] + s["holds_only_under"] == s["total"]
    assert set(s["failures"]) == EXPECTED_FAILS
    assert set(s["conditional"]) == EXPECTED_CONDITIONAL
    for seed in SEED_MODULES:
        assert s["per_seed"][seed]["registered"] == len(all_claims(seed))


def test_selection_and_bad_input():
    assert [c.id for c in select_claims(claim="lemB.5")] == ["semi_sequential_mi:lemB.5"]
    assert len(select_claims(seed="combining_mi_updates")) == len(all_claims(
        "combining_mi_updates"))
    with pytest.raises(ValueError, match="seed must be one of"):
        all_claims("no_such_seed")
    with pytest.raises(ValueError, match="unknown"):
        get_claim("no_such_claim")
    with pytest.raises(ValueError, match="ambiguous"):
        get_claim("thm3.1")  # label used by several seeds
    with pytest.raises(TypeError, match="claim_id"):
        get_claim(3)
    with pytest.raises(ValueError, match="belongs to seed"):
        select_claims(seed="per_datum_leakage", claim="semi_sequential_mi:lemB.5")
    with pytest.raises(ValueError, match="rng_seed"):
        verify(claim="B1.l2", rng_seed=-1)


# ----------------------------------------------------------------------------- references

def test_error_references_match_monte_carlo():
    """The chi-square error forms used as references agree with simulated log LRs."""
    rng = np.random.default_rng(11)
    R = 40000
    for n, d in ((6, 2), (15, 3)):
        u = rng.normal(size=d)
        m = float(u @ u)
        gamma = m / 2 - d / 2 * np.log((n - 1) / n) - 1.0
        w0 = rng.standard_normal((R, d)) / np.sqrt(n)
        w1 = u / n + rng.standard_normal((R, d)) * np.sqrt(n - 1) / n
        a_mc = (ref.loglr_batch(w0, u, n) >= gamma).mean()
        b_mc = (ref.loglr_batch(w1, u, n) < gamma).mean()
        # 4 binomial SE
        assert abs(a_mc - ref.alpha_lr(gamma, n, m, d)) <= 4 * np.sqrt(a_mc * (1 - a_mc) / R)
        assert abs(b_mc - ref.beta_lr(gamma, n, m, d)) <= 4 * np.sqrt(b_mc * (1 - b_mc) / R)


def test_releases_joint_matches_simulation():
    rng = np.random.default_rng(5)
    n_t, mu_t, var_t, z, tau, R = np.array([3, 5, 4]), np.array([0.0, 1.0, -1.0]), \
        np.array([1.0, 2.0, 0.5]), 4.0, 2, 40000
    rel = np.empty((R, 3))
    tot, cnt = np.zeros(R), 0
    for t in range(3):
        x = mu_t[t] + np.sqrt(var_t[t]) * rng.standard_normal((R, n_t[t]))
        if t == tau - 1:
            x[:, 0] = z
        tot += x.sum(axis=1)
        cnt += n_t[t]
        rel[:, t] = tot / cnt
    mean, cov = ref.releases_joint(n_t, mu_t, var_t, tau, z)
    se_mean = np.sqrt(np.diag(cov) / R)
    assert np.all(np.abs(rel.mean(axis=0) - mean) <= 4 * se_mean)  # 4 SE
    emp = np.cov(rel.T)
    se_cov = np.sqrt((np.diag(cov)[:, None] * np.diag(cov)[None, :] + cov**2) / R)
    assert np.all(np.abs(emp - cov) <= 4 * se_cov)  # 4 SE of a sample covariance (Gaussian)


def test_subsampled_moments_match_monte_carlo():
    """Quadrature moments of the sub-sampled LR (Theorem 4.3 check) vs simulating the mechanism."""
    from semi_core.claims.per_datum_leakage import _exact_sub

    rng = np.random.default_rng(3)
    n, tau, m, rho, R = 400, 0.5, 2.0, 0.5, 4000
    d, k = int(tau * n), int(rho * n)
    a = np.sqrt(m * n / d)
    s1, v1 = a / np.sqrt(k), (k - 1) / k

    def stat(x):
        logr = -0.5 * np.log(v1) - (x - s1) ** 2 / (2 * v1) + x**2 / 2
        return np.log1p(rho * np.expm1(logr)).sum(axis=1)

    x0 = rng.standard_normal((R, d))
    inc = rng.random(R) < rho  # the target is in the sub-sample with probability k/n
    x1 = np.where(inc[:, None], s1 + np.sqrt(v1) * rng.standard_normal((R, d)),
                  rng.standard_normal((R, d)))
    ex = _exact_sub(n, tau, m, rho)
    for key, sample in (("0", stat(x0)), ("1", stat(x1))):
        mean_se = sample.std() / np.sqrt(R)
        assert abs(sample.mean() - ex["mean" + key]) <= 4 * mean_se  # 4 SE
        c = (sample - sample.mean()) ** 2
        assert abs(sample.var() - ex["var" + key]) <= 4 * c.std() / np.sqrt(R)  # 4 SE


# ----------------------------------------------------------------------------- outputs

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
    import semi_core.claims as claims
    from semi_core.report import ReportContext
    from semi_core.report.claims_section import ERRATA_NAME, FIGURE_NAME, build

    monkeypatch.setattr(claims, "verify", lambda **kw: list(results.values()))
    sec = build(ReportContext(out_dir=tmp_path))
    assert f"[errata]({ERRATA_NAME})" in sec.markdown
    assert (tmp_path / ERRATA_NAME).read_text().startswith("# Errata")
    assert (tmp_path / FIGURE_NAME).stat().st_size > 0
    assert sec.data["summary"]["total"] == len(CLAIMS)


def test_core_error_functions_agree_with_registry_reference():
    """Cross-check: the numeric core's closed forms equal the registry's reference forms."""
    errors = pytest.importorskip("semi_core.stats.errors")
    if not hasattr(errors, "alpha_quadratic"):
        pytest.skip("semi_core.stats.errors.alpha_quadratic not available")
    rng = np.random.default_rng(2)
    for _ in range(20):
        n, d, m = int(rng.integers(2, 50)), int(rng.integers(1, 5)), rng.uniform(0.1, 9)
        gamma = m / 2 - d / 2 * np.log((n - 1) / n) - rng.exponential(2)
        assert np.isclose(errors.alpha_quadratic(gamma, n, m, d), ref.alpha_lr(gamma, n, m, d),
                          rtol=1e-9, atol=1e-12)
        assert np.isclose(errors.beta_quadratic(gamma, n, m, d), ref.beta_lr(gamma, n, m, d),
                          rtol=1e-9, atol=1e-12)


def test_same_seed_same_result():
    a = verify(claim="semi_sequential_mi:corE.2", rng_seed=3)[0]
    b = verify(claim="semi_sequential_mi:corE.2", rng_seed=3)[0]
    assert a.as_json() == b.as_json()


# ----------------------------------------------------------------------------- one SymPy stack

SEED_MODULES_MINE = ("semi_sequential_mi", "per_datum_leakage", "sequential_dp_auditing",
                     "combining_mi_updates", "_core", "_reference")


def test_claims_use_the_symbolic_layer():
    """Phi/Phinv and lambdify are the symbolic layer's; no second SymPy stack in claims/."""
    import ast

    import semi_core.claims._core as core
    import semi_core.symbolic as symbolic

    assert core.Phi is symbolic.Phi and core.Phinv is symbolic.Phinv
    for name in SEED_MODULES_MINE:
        path = ROOT / "semi_core" / "claims" / f"{name}.py"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                assert not bases & {"sp.Function", "Function"}, f"{name}: own {node.name}"
            if isinstance(node, ast.Attribute) and node.attr == "lambdify":
                assert ast.unparse(node.value) not in {"sp", "sympy"}, f"{name}: sp.lambdify"


def test_derived_forms_are_the_symbolic_derivations():
    """The derived/corrected forms of the SeMI claims are the symbolic layer's derivations."""
    from semi_core.claims._core import derived_form
    from semi_core.claims.semi_sequential_mi import X, _derived_loglr_1d
    from semi_core.symbolic import get_derivation
    from semi_core.symbolic._display import plain

    assert _derived_loglr_1d() == get_derivation("em_log_lr_1d").expr.subs(
        get_derivation("em_log_lr_1d").symbols[0], X)
    lem = get_claim("semi_sequential_mi:lemB.5")
    n, m, d = (sp.Symbol(k, positive=True) for k in ("n", "m", "d"))
    g = sp.Symbol("gamma", real=True)
    ours = derived_form("em_R2", {"m": m, "d": d})
    assert sp.simplify(plain(lem.corrected["R2"]) - ours) == 0
    assert lem.corrected["R2"].free_symbols == {n, m, d, g}
    roots = get_claim("semi_sequential_mi:appA.5.roots").corrected
    T = sp.Symbol("T", positive=True)
    assert sp.simplify(plain(roots["W_hi"]) - get_derivation("fo_root_hi_1d").expr.subs(
        sp.Symbol("N_T", positive=True), n * T)) == 0


def test_reference_errors_are_the_symbolic_lambdified_forms():
    from semi_core.symbolic import get_derivation

    f = get_derivation("em_alpha").lambdify()
    assert ref.alpha_lr(-0.5, 7, 1.5, 2) == pytest.approx(float(f(-0.5, 1.5, 7, 2)), rel=1e-15)
    w, u = np.array([[0.3, -0.2]]), np.array([1.0, 0.5])
    q, ell, mm = float(w[0] @ w[0]), float(w[0] @ u), float(u @ u)
    ours = -np.log(6 / 7) - 7 / 12 * q + 7 / 6 * ell - mm / 12   # Thm 3.1 at n = 7, d = 2
    assert ref.loglr_batch(w, u, 7)[0] == pytest.approx(ours, rel=1e-12)


def test_claim_ids_cited_in_the_code_exist():
    """Errata prose lives once (the claims' notes): code cites claim ids; each must resolve."""
    import re

    pattern = re.compile(r"\b(" + "|".join(map(re.escape, SEED_MODULES)) + r"):([A-Za-z][\w.]*\w)")
    cited = set()
    for path in (ROOT / "semi_core").rglob("*.py"):
        if path.parent.name == "claims":
            continue
        cited |= {f"{a}:{b}" for a, b in pattern.findall(path.read_text())}
    assert "semi_sequential_mi:lemB.5" in cited  # the symbolic layer and stats cite it
    ids = set(IDS)
    assert not sorted(cited - ids), f"unknown claim ids cited: {sorted(cited - ids)}"
