"""The seed's models from the CLI: MLP widths (one or several hidden layers) and the size of the
Purchase-100 MLP that the Hessian benchmark uses."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks.whitebox import AttackConfig  # noqa: E402
from semi_core.cli import main  # noqa: E402
from semi_core.sgd.reference_models import build_attack_model  # noqa: E402


def test_mlp_widths():
    # seed §4.1: 600 features, 32 hidden, 100 classes: 600*32 + 32 + 32*100 + 100
    assert build_attack_model("mlp", 600, 100, hidden=32).d == 22_532
    fm = build_attack_model("mlp", 10, 3, hidden=(8, 4, 2))       # a 4-layer MLP
    assert fm.d == (10 * 8 + 8) + (8 * 4 + 4) + (4 * 2 + 2) + (2 * 3 + 3)
    assert sum(isinstance(m, torch.nn.Linear) for m in fm.module) == 4
    with pytest.raises(ValueError, match="hidden"):
        build_attack_model("mlp", 10, 3, hidden=(8, 0))
    assert AttackConfig(model="mlp", hidden=[8, 4]).hidden == (8, 4)
    with pytest.raises(ValueError, match="hidden"):
        AttackConfig(model="mlp", hidden=())


@pytest.mark.parametrize("value", ["0", "8,x", ""])
def test_cli_hidden_refused(capsys, value):
    rc = main(["attack", "--model", "mlp", "--hidden", value, "--json"])
    assert rc != 0
    assert "--hidden" in capsys.readouterr().out


def test_tables_on_user_files(tmp_path):
    """analysis/iha_tables.py --data: the seed's tables on a user's Purchase-style .npz (a tiny
    file written here; nothing is downloaded)."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 120)
    x = (rng.random((120, 6)) < 0.3 + 0.2 * (y[:, None] == np.arange(6)[None] % 3)).astype(float)
    np.savez(tmp_path / "purchase.npz", features=x, labels=y)
    spec = importlib.util.spec_from_file_location(
        "iha_tables", Path(__file__).resolve().parents[2] / "analysis" / "iha_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = mod.main(["--quick", "--settings", "", "--out", str(tmp_path / "out"),
                     "--models", "16", "--data", f"file:mlp:Purchase-100:{tmp_path}/purchase.npz",
                     "--hidden", "4", "--targets", "40"])
    res = data["file/mlp"]
    assert res["setup"]["d"] == 6 * 4 + 4 + 4 * 3 + 3
    assert {"iha", "rmia", "l-attack"} <= set(res["metrics"])
    md = (tmp_path / "out" / "iha_tables.md").read_text()
    assert all(f"(Table {k})" in md for k in (3, 4, 9)) and "Table 5" in md
