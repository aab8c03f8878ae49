"""The torch commands guard their optional imports in one way (:func:`semi_core._extras.
extra_needed`): a missing extra is one JSON error naming the ``pip install`` command of that
extra; any other import error passes through as it is, never relabelled as a missing extra.

torch is made unimportable in this process through ``sys.modules`` (``None`` there makes
``import torch`` raise ``ModuleNotFoundError``); only the module each command imports first is
forgotten (with its submodules, restored after the test).
"""

from __future__ import annotations

import json
import sys

import pytest

from semi_core._extras import MissingExtraError, extra_needed
from semi_core.cli import main

#: command -> (argv, the module its handler imports behind the guard)
COMMANDS = {
    "attack": (["attack", "--json"], "semi_core.attacks.whitebox"),
    "updates": (["updates", "--json"], "semi_core.attacks.updates"),
    "audit-dpsgd": (["audit-dpsgd", "--json"], "semi_core.sgd.audit"),
    "audit-opacus": (["audit-opacus", "--json"], "semi_core.integrations.opacus"),
}


def _error(capsys, argv) -> tuple[int, dict]:
    rc = main(argv)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return rc, json.loads(out)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_missing_torch_names_the_extra(monkeypatch, capsys, command):
    argv, module = COMMANDS[command]
    monkeypatch.setitem(sys.modules, "torch", None)
    # the module and, for a package, its submodules (an earlier test may have imported them:
    # then the package's import would not reach torch); all are put back after the test
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    rc, err = _error(capsys, argv)
    assert rc == 2 and err["kind"] == "missing_dependency", err
    assert "needs torch, which is not installed" in err["error"], err
    assert "pip install 'semi_core[torch]'" in err["error"], err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_other_import_errors_are_not_called_a_missing_extra(monkeypatch, capsys, command):
    """A module of the package that fails to import (here: blocked) keeps its own message."""
    argv, module = COMMANDS[command]
    monkeypatch.setitem(sys.modules, module, None)
    rc, err = _error(capsys, argv)
    assert rc == 2 and err["kind"] == "missing_dependency", err
    assert module in err["error"], err
    assert "pip install" not in err["error"] and "extra" not in err["error"], err


def test_extra_needed_guard():
    with pytest.raises(MissingExtraError, match=r"cmd needs opacus.*semi_core\[opacus\]"):
        with extra_needed("cmd"):
            raise ModuleNotFoundError("No module named 'opacus'", name="opacus")
    with pytest.raises(ImportError, match="cannot import name 'f'") as info:
        with extra_needed("cmd"):
            raise ImportError("cannot import name 'f'")
    assert not isinstance(info.value, MissingExtraError)
