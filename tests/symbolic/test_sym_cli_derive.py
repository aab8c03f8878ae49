"""``semi-core derive``: JSON shape, text output, bad names."""

import json

from semi_core.cli import main


def test_derive_json_one_name(capsys):
    assert main(["derive", "--json", "--name", "em_R2"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    payload = json.loads(out[0])
    (row,) = payload["derivations"]
    assert set(row) == {"name", "latex", "source", "matches_seed", "note"}
    assert row["name"] == "em_R2"
    assert row["matches_seed"] is False
    assert "ERRATUM" in row["note"]
    assert row["latex"].startswith("R^{2}(\\gamma) = ")


def test_derive_text_with_latex(capsys):
    assert main(["derive", "--latex", "--name", "em_gamma_max"]) == 0
    out = capsys.readouterr().out
    assert "em_gamma_max" in out and "matches seed" in out
    assert "\\gamma_{\\max} = " in out


def test_derive_bad_name(capsys):
    assert main(["derive", "--json", "--name", "nope"]) == 2
    err = json.loads(capsys.readouterr().out.strip())
    assert "name must be one of" in err["error"]


def test_derive_latex_is_the_display_form(capsys):
    """``--latex`` prints the paper form (deviations as written), not SymPy's expanded tree."""
    assert main(["derive", "--latex", "--name", "em_log_lr_1d"]) == 0
    out = capsys.readouterr().out
    assert (r"\frac{n}{\left(n - 1\right) \sigma^{2}} \left(z^{*} - \mu\right) "
            r"\left(\bar{X}_{\tau} - \mu\right)") in out
    assert r"- \mu + \bar{X}_{\tau}" not in out
