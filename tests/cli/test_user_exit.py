"""``sys.exit`` in code a command runs is an error of the contract, not a silent exit.

Only argparse's own exits (``--help``, ``--version``) pass through ``main``; a ``SystemExit``
raised after the arguments are parsed (a user's model factory calling ``sys.exit(3)``) gives
kind ``user_exit``, exit code 2 and, under ``--json``, exactly one JSON object on stdout.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from semi_core.cli import main


def _raising(code):
    def handler(args):
        sys.exit(code)

    return handler


@pytest.mark.parametrize("code", [3, 0, None, "bye"])
def test_sys_exit_in_a_handler_is_one_json_error(monkeypatch, capsys, code):
    import semi_core.cli.audit as audit

    monkeypatch.setattr(audit, "handler", _raising(code))
    rc = main(["audit", "--scores", "x.csv", "--delta", "1e-5", "--json"])
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    obj = json.loads(out)
    assert rc == 2 and obj["kind"] == "user_exit" and obj["command"] == "audit"
    assert f"sys.exit({code!r})" in obj["error"]


def test_sys_exit_in_a_handler_in_text_mode(monkeypatch, capsys):
    import semi_core.cli.audit as audit

    monkeypatch.setattr(audit, "handler", _raising(3))
    rc = main(["audit", "--scores", "x.csv", "--delta", "1e-5"])
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == ""
    assert cap.err.startswith("semi-core audit: error: ") and "sys.exit(3)" in cap.err


@pytest.mark.parametrize("argv,code", [(["--version"], 0), (["audit", "--help"], 0),
                                       (["--help"], 0)])
def test_argparse_exits_pass_through(capsys, argv, code):
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == code
    assert capsys.readouterr().out.strip()


def test_a_model_factory_calling_sys_exit(tmp_path, monkeypatch, capsys):
    """The case as a user meets it: ``audit-checkpoints --model`` imports and calls a factory
    that calls ``sys.exit(3)``; stdout used to stay empty (exit code 3)."""
    pytest.importorskip("torch")
    (tmp_path / "exit_factory_mod.py").write_text(
        "import sys\n\n\ndef make_model():\n    sys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    np.savez(tmp_path / "ref.npz", X=np.zeros((10, 3)), y=np.zeros(10, dtype=int))
    (tmp_path / "run").mkdir()
    rc = main(["audit-checkpoints", "--model", "exit_factory_mod:make_model", "--run-dirs",
               str(tmp_path / "run"), "--reference", str(tmp_path / "ref.npz"),
               "--target-index", "0", "--lr", "0.5", "--batch-size", "4",
               "--noise-multiplier", "1", "--max-grad-norm", "1", "--json"])
    out = capsys.readouterr().out
    obj = json.loads(out)
    assert rc == 2 and obj["kind"] == "user_exit" and "sys.exit(3)" in obj["error"]
    assert obj["command"] == "audit-checkpoints"
