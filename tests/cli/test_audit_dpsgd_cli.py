"""``semi-core audit-dpsgd``: payload and argument errors."""

import argparse
import json

import pytest

pytest.importorskip("torch")

from semi_core.cli import audit_dpsgd  # noqa: E402
from semi_core.cli._common import emit  # noqa: E402


def _parse(argv):
    parser = argparse.ArgumentParser()
    audit_dpsgd.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["audit-dpsgd", *argv])


def test_cli_json_payload(capsys):
    args = _parse(["--rounds", "24", "--tau", "2", "--steps", "3", "--batch-size", "16",
                   "--epsilon", "1", "--n-reference", "16", "--json"])
    emit(args.func(args), as_json=True)
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon_true"] == pytest.approx(1.0, rel=1e-9)
    assert set(out["attacks"]) == {"semi_sgd", "semi_max", "delta_diff", "delta_ratio",
                                   "back_front_diff", "back_front_ratio"}
    for a in out["attacks"].values():
        assert {"epsilon_lower_bound", "auc", "tpr_at_fpr"} <= set(a)


def test_cli_passes_the_executor_and_chunk_size_to_the_audit(monkeypatch):
    """--threads/--workers/--scheduler become the audit's Executor (the same seed gives the
    same games on each: tests/sgd/test_dpsgd_runner.py)."""
    from semi_core.game.backends import Executor

    seen = {}

    class Stop(Exception):
        pass

    def fake(**kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr("semi_core.sgd.audit.run_audit", fake)
    args = _parse(["--rounds", "12", "--tau", "1", "--steps", "2", "--threads", "2",
                   "--chunk-size", "4"])
    with pytest.raises(Stop):
        args.func(args)
    assert seen["executor"] == Executor(threads=2, small_jobs="in-process")
    assert seen["chunk_size"] == 4


@pytest.mark.parametrize("argv, match", [
    (["--tau", "11"], "tau"),
    (["--tau", "x"], "tau"),
    (["--clip", "0"], "clip"),
    (["--batch-size", "1"], "batch-size"),
    (["--epsilon", "-1"], "epsilon"),
])
def test_cli_bad_arguments(argv, match):
    args = _parse(["--rounds", "4", *argv])
    with pytest.raises(ValueError, match=match):
        args.func(args)


@pytest.mark.parametrize("flag", ["--threads", "--workers", "--chunk-size"])
def test_cli_executor_and_chunk_flags_refuse_zero(flag, capsys):
    with pytest.raises(SystemExit):
        _parse([flag, "0"])
    assert flag in capsys.readouterr().err
