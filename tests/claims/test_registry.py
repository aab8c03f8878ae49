"""The claims registry: its arrangement by seed and content, the records, the verdicts, and that
every check can fail.

``test_perturbed_form_fails`` scales one registered formula (by 1.1, or 1/1.1 for upper bounds)
and asserts the verifier then reports ``fails``.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import sympy as sp

from semi_core.claims import (
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    SEED_MODULES,
    all_claims,
    get_claim,
    perturb_forms,
    select_claims,
    summary,
    verify,
    verify_claim,
)
from tests.claims.verdicts import EXPECTED_CONDITIONAL, EXPECTED_FAILS, REQUIRED

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_DIR = ROOT / "semi_core" / "claims"
CLAIMS = all_claims()
IDS = [c.id for c in CLAIMS]


def test_registry_covers_the_required_statements():
    for seed, labels in REQUIRED.items():
        have = {c.label for c in all_claims(seed)}
        assert labels <= have, f"{seed}: missing {sorted(labels - have)}"


def test_one_package_per_seed_modules_named_by_content():
    """Each seed paper is one subpackage (named as its seed file), its stated formulas in
    ``formulas``; no module is named by when its claims were found; every module's claims
    belong to its package's seed."""
    history = re.compile(r"round_?\d|second|_system$|_v\d$")
    for seed, mods in SEED_MODULES.items():
        assert (CLAIMS_DIR / seed / "__init__.py").is_file()
        names = [m.rsplit(".", 1)[1] for m in mods]
        assert mods == tuple(f"semi_core.claims.{seed}.{n}" for n in names)
        assert names[0] == "formulas", f"{seed}: its stated formulas come first"
        for name in names:
            assert not history.search(name), f"{seed}.{name} is named by history, not content"
            claims = importlib.import_module(f"semi_core.claims.{seed}.{name}").CLAIMS
            assert claims, f"{seed}.{name} registers no claim"
            assert {c.seed for c in claims} == {seed}, f"{seed}.{name} registers another seed"
    loose = [p.name for p in CLAIMS_DIR.glob("*.py")
             if not p.name.startswith("_") and p.name != "registry.py"]
    assert not loose, f"claim modules outside a seed package: {loose}"


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


def test_same_seed_same_result():
    a = verify(claim="semi_sequential_mi:corE.2", rng_seed=3)[0]
    b = verify(claim="semi_sequential_mi:corE.2", rng_seed=3)[0]
    assert a.as_json() == b.as_json()


def test_claim_ids_cited_in_the_code_exist():
    """Errata prose lives once (the claims' notes): code cites claim ids; each must resolve."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, SEED_MODULES)) + r"):([A-Za-z][\w.]*\w)")
    cited = set()
    for path in (ROOT / "semi_core").rglob("*.py"):
        if CLAIMS_DIR in path.parents:
            continue
        cited |= {f"{a}:{b}" for a, b in pattern.findall(path.read_text())}
    assert "semi_sequential_mi:lemB.5" in cited  # the symbolic layer and stats cite it
    ids = set(IDS)
    assert not sorted(cited - ids), f"unknown claim ids cited: {sorted(cited - ids)}"
