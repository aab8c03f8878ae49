"""Every option of every command states its default in --help, and every help renders."""

from __future__ import annotations

import argparse

import pytest

from semi_core.cli import build_parser
from semi_core.cli._commands import COMMANDS


def _commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_every_default_is_stated(cmd):
    p = _commands()[cmd]
    text = p.format_help()  # renders (no stray % in a help string)
    fmt = p._get_formatter()
    missing = []
    for act in p._actions:
        if (not act.option_strings or act.help == argparse.SUPPRESS
                or act.default in (None, False, argparse.SUPPRESS)):
            continue
        shown = fmt._get_help_string(act) if act.help else ""
        if "default" not in shown.lower():
            missing.append(act.option_strings[0])
    assert not missing, f"{cmd}: options whose --help does not state the default: {missing}"
    assert "--json" in text or cmd in ("reproduce",)


@pytest.mark.parametrize("cmd, old, new", [
    ("seq-audit", "--epsilon", "--claimed-epsilon"),
    ("updates", "--threshold", "--threshold-rule"),
    ("updates", "--shift", "--shift-kind"),
    ("updates", "--data", "--data-file"),
    ("audit-checkpoints", "--runs", "--run-dirs"),
])
def test_renamed_flags_keep_a_deprecated_alias(cmd, old, new):
    """One meaning per name: a flag whose meaning differed was renamed; the old spelling still
    parses into the same destination and is documented as a deprecated alias."""
    p = _commands()[cmd]
    acts = {o: a for a in p._actions for o in a.option_strings}
    assert acts[old].dest == acts[new].dest
    assert acts[old].help == f"deprecated alias of {new}"
    assert acts[old].default is argparse.SUPPRESS  # the new flag's default stands


def test_audit_game_takes_the_executor_and_gives_the_same_rows(capsys):
    import json

    from semi_core.cli import main

    def rows(*extra):
        assert main(["audit-game", "--rounds", "300", "--mu-levels", "1", "2", *extra,
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)["rows"]
        for r in out:  # where the games ran and how long they took are not results
            r.pop("executor", None)
            r.pop("seconds", None)
            r.get("metadata", {}).pop("executor", None)
        return json.dumps(out, sort_keys=True, default=str)

    assert rows() == rows("--threads", "2")
