"""A missing optional extra is named with the command that installs it (torch simulated as
missing through ``sys.modules``)."""

import importlib
import sys

import pytest

from semi_core._extras import MissingExtraError, import_lazily, missing_extra, require


@pytest.fixture
def no_torch(monkeypatch):
    """torch made unimportable, and the torch-layer modules forgotten so they import anew."""
    monkeypatch.setitem(sys.modules, "torch", None)
    for name in [m for m in sys.modules if m.startswith(("semi_core.attacks.whitebox",
                                                          "semi_core.attacks.updates",
                                                          "semi_core.integrations.opacus",
                                                          "semi_core.sgd.audit"))]:
        monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize("module", ["semi_core.attacks.whitebox", "semi_core.attacks.updates",
                                    "semi_core.integrations.opacus"])
def test_torch_layer_import_names_the_extra(no_torch, module):
    with pytest.raises(MissingExtraError, match=r"needs torch.*pip install 'semi_core\[torch\]'"):
        importlib.import_module(module)


def test_lazy_export_names_the_extra(no_torch):
    import semi_core.sgd

    with pytest.raises(ModuleNotFoundError, match=r"semi_core\.sgd\.audit needs torch.*"
                                                  r"semi_core\[torch\]"):
        semi_core.sgd.run_audit  # noqa: B018 - the lazy attribute imports the torch module


def test_other_import_errors_pass_through(no_torch, monkeypatch):
    require("math", "x")  # present: nothing raised
    with pytest.raises(ModuleNotFoundError, match="no_such_module") as info:
        require("no_such_module_here", "x")
    assert not isinstance(info.value, MissingExtraError)
    assert missing_extra(ImportError("cannot import name 'f'"), "x") is None
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingExtraError, match=r"x needs distributed.*semi_core\[dask\]"):
        require("distributed", "x")
    assert import_lazily("semi_core", "_names").__name__ == "semi_core._names"
