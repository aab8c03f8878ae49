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


def test_authors_mse_convention_is_the_same_sgd_run():
    """SGD with (lr, wd) on the authors' (sigma - y)^2 (torch MSELoss) is the run with
    (2 lr, wd / 2) on 1/2 (sigma - y)^2: AttackConfig.train_sgd() gives those, and torch's
    own SGD agrees to rounding (1e-12)."""
    import numpy as np

    from semi_core.sgd.momentum import SGDConfig

    sgd = SGDConfig(lr=0.01, momentum=0.9, weight_decay=5e-4, batch_size=8, epochs=3)
    cfg = AttackConfig(model="logreg-mse", mse_convention="mean", sgd=sgd)
    tr = cfg.train_sgd()
    assert cfg.loss_scale == 2.0 and tr.lr == 0.02 and tr.weight_decay == 2.5e-4
    assert AttackConfig(model="logreg-mse").train_sgd() == AttackConfig(model="logreg-mse").sgd
    with pytest.raises(ValueError, match="mse_convention"):
        AttackConfig(model="logreg", mse_convention="mean")
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.normal(size=(40, 5)))
    y = torch.as_tensor((rng.random(40) < 0.5).astype(float))
    order = [torch.as_tensor(rng.permutation(40)[:8]) for _ in range(30)]

    def run(lr, wd, half):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(5, 1), torch.nn.Sigmoid()).double()
        opt = torch.optim.SGD(m.parameters(), lr=lr, momentum=0.9, weight_decay=wd)
        for b in order:
            opt.zero_grad()
            r = m(x[b]).reshape(-1) - y[b]
            ((0.5 if half else 1.0) * r * r).mean().backward()
            opt.step()
        return torch.cat([p.detach().reshape(-1) for p in m.parameters()])

    authors = run(sgd.lr, sgd.weight_decay, half=False)
    ours = run(tr.lr, tr.weight_decay, half=True)
    assert torch.allclose(authors, ours, rtol=0, atol=1e-12)


def test_mse_convention_scales_the_auditor_quantities():
    from semi_core.attacks.whitebox import run_attacks
    from semi_core.sgd.hessian import mean_loss_hessian
    from semi_core.sgd.momentum import SGDConfig

    sgd = SGDConfig(lr=0.05, batch_size=16, epochs=3)
    cfg = AttackConfig(dataset="digits-odd", model="logreg-mse", n_models=8, n_targets=40,
                       sgd=sgd, mse_convention="mean", pool_size=120)
    run = run_attacks(cfg, ("iha", "iha-cg", "loss"), seed=0)
    wb = run.whitebox[0]
    mech = run.mechanism
    H = mean_loss_hessian(wb.fm, wb.theta, mech.x[wb.train_idx], mech.y[wb.train_idx])
    assert torch.allclose(wb.hessian(), 2.0 * H, rtol=0, atol=1e-14)
    assert mech.cfg.lr == 0.1                       # trained with (2 lr, wd / 2) on 1/2 MSE
    # exact and CG iHVPs of the scaled Hessian agree (CG tolerance 1e-10)
    import numpy as np
    np.testing.assert_allclose(run.result.stats["iha"], run.result.stats["iha-cg"], rtol=1e-6,
                               atol=1e-8)
