"""Bad input to the Opacus adapter and ``semi-core audit-opacus``: a clear error naming the
argument (API) or one JSON object with an ``error`` key and exit code 2 (CLI)."""

import json

import pytest

pytest.importorskip("opacus")
torch = pytest.importorskip("torch")

from semi_core.integrations.opacus import audit_opacus  # noqa: E402

GOOD = dict(noise_multiplier=1.0, max_grad_norm=1.0, batch_size=16, steps=3, tau=2, rounds=4,
            delta=1e-5, semi=False, engine="batched")


def _bn_model():
    return torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.BatchNorm1d(4),
                               torch.nn.Linear(4, 3)).double()


def _frozen_model():
    m = torch.nn.Linear(8, 3).double()
    for p in m.parameters():
        p.requires_grad_(False)
    return m


BAD = [
    ({"noise_multiplier": 0.0}, ValueError, "noise_multiplier"),
    ({"noise_multiplier": -1.0}, ValueError, "noise_multiplier"),
    ({"noise_multiplier": float("nan")}, ValueError, "noise_multiplier"),
    ({"max_grad_norm": 0.0}, ValueError, "max_grad_norm"),
    ({"max_grad_norm": -2.0}, ValueError, "max_grad_norm"),
    ({"batch_size": 10_000}, ValueError, "batch_size"),
    ({"batch_size": 100, "steps": 10}, ValueError, "batch_size"),
    ({"tau": 0}, ValueError, "tau"),
    ({"tau": 4}, ValueError, "tau"),
    ({"tau": None}, ValueError, "tau"),
    ({"rounds": 1}, ValueError, "rounds"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"delta": 1.5}, ValueError, "delta"),
    ({"canary": "nope"}, ValueError, "canary"),
    ({"sampler": "nope"}, ValueError, "sampler"),
    ({"bug": "nope"}, ValueError, "bug"),
    ({"engine": "nope"}, ValueError, "engine"),
    ({"sampler": "poisson", "bug": "sampling_rate_misreport", "engine": "opacus"}, ValueError,
     "sampling_rate_misreport"),
    ({"model_fn": _bn_model}, ValueError, "model_fn"),
    ({"model_fn": _frozen_model}, ValueError, "model_fn"),
    ({"model_fn": "not callable"}, TypeError, "model_fn"),
    ({"model_fn": lambda: 3}, TypeError, "model_fn"),
    ({"train_dataset": [1, 2, 3]}, TypeError, "train_dataset"),
    ({"canaries_per_run": 2, "canary": "input"}, ValueError, "canaries_per_run"),
]


@pytest.mark.parametrize("change,exc,needle", BAD)
def test_bad_input_names_the_argument(problem, change, exc, needle):
    model_fn, data = problem
    kw = {**GOOD, **change}
    mf = kw.pop("model_fn", model_fn)
    ds = kw.pop("train_dataset", data)
    with pytest.raises(exc, match=needle):
        audit_opacus(mf, ds, **kw)


CLI_BAD = [
    ["--epsilon", "0"], ["--epsilon", "-1"], ["--delta", "0"], ["--tau", "0"], ["--tau", "11"],
    ["--batch-size", "5000"], ["--clip", "0"], ["--rounds", "1"], ["--bug", "nope"],
    ["--canary", "nope"], ["--lr", "0"],
]


@pytest.mark.parametrize("argv", CLI_BAD)
def test_cli_bad_input_one_json_error(argv, capsys):
    from semi_core.cli import main

    extra = [] if "--rounds" in argv else ["--rounds", "4"]
    rc = main(["audit-opacus", *argv, *extra, "--no-semi", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 2
    assert len(out) == 1
    assert "error" in json.loads(out[0])


def test_cli_runs_and_prints_one_json_object(capsys):
    from semi_core.cli import main

    rc = main(["audit-opacus", "--epsilon", "2", "--rounds", "24", "--steps", "3",
               "--batch-size", "16", "--tau", "2", "--no-semi", "--bug", "noise_reused",
               "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0 and len(out) == 1
    d = json.loads(out[0])
    for key in ("epsilon_lower_bound", "epsilon_true", "epsilon_accountant", "claim_refuted",
                "claim_refuted_gdp", "warnings", "neighbouring_relation"):
        assert key in d
    assert d["epsilon_true"] is None or d["epsilon_true"] == "inf" or d["epsilon_true"] > 2
    assert set(d["epsilon_lower_bound"]["dirac"]) == {"band", "dkw", "cp", "gdp", "gdp_gaussian"}
