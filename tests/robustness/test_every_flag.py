"""Every value flag of every ``semi-core`` command, at the extremes: a clean error or a result.

The cases are generated from the argparse parser itself (:func:`semi_core.cli.build_parser`):
for each subcommand, each option that takes a value gets values of its class (extremes, zero,
negative, tiny, huge, NaN, infinities, integers past 64 bits, wrong types, empty strings, bad
choices) on top of a *base* command line with the smallest work settings. Each case runs
in-process (``main(argv + ["--json"])``) under a hang guard and must

* exit with a documented code: 0 (a result) or 2 (a user error; ``internal`` is exit 1 and a
  failure here);
* print exactly one JSON object on stdout, with ``error`` and a stable ``kind`` on failure, and
  no NaN anywhere in it (a value that cannot be computed is an error, never NaN);
* print no traceback.

Real work is bounded: the base lines are tiny and ``SEMI_CORE_MAX_SECONDS`` (the one resource
gate, :func:`semi_core._validation.check_work`) is set low, so a valid combination that would
work for long stops at the estimator (kind ``resource``) instead of running. The commands that
train models (:data:`STOP_GAMES`) run their checks and the runner's pilot, then stop where the
games would start (:meth:`semi_core.game.backends.Executor.run` raises a resource error), and
``reproduce`` stops where the report would be built; every case runs in a temporary working
directory (an output name like ``abc`` lands there).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import pytest

from semi_core._validation import ResourceLimitError
from semi_core.cli import build_parser
from semi_core.game.backends import Executor

from .conftest import run_cli

#: Estimated seconds a case may plan for (larger estimates stop at the resource gate).
BUDGET_SECONDS = "3"

FLOATS = ["0", "-0", "-1", "1e-16", "1e-300", "5e-324", "1e300", "-1e300", "1e-320",
          "1.7976931348623157e308", "1e999", "nan", "inf", "-inf", "0.9999999999999999", "abc",
          ""]
INTS = ["0", "1", "-1", "2", "2.5", "1e12", "9223372036854775808", "-9223372036854775809",
        "0x10", "nan", "abc", ""]
STRINGS = ["", "abc", "nan", "-1", "1e300"]
CHOICES_BAD = ["nope", ""]

#: The smallest valid work of each command (options the case sets are removed first).
BASES: dict[str, list[str]] = {
    "power": [],
    "simulate": ["--rounds", "40", "--chunk-size", "20"],
    "derive": ["--name", "gaussian_log_lr_scalar"],
    "audit": ["--scores", "{scores}", "--delta", "1e-5"],
    "epsilon": ["--gdp-mu", "1", "--delta", "1e-5"],
    "audit-game": ["--rounds", "40", "--T", "2", "--mu-levels", "1"],
    "audit-dpsgd": ["--rounds", "8", "--steps", "2", "--n-reference", "8", "--batch-size", "8"],
    "verify": ["--claim", "semi_sequential_mi:thm3.1"],
    "reproduce": ["--quick", "--section", "semi_core.report.power_section", "--out", "{out}"],
    "attack": ["--models", "4", "--targets", "4", "--bootstrap", "2", "--attacks", "loss"],
    "audit-checkpoints": ["--model", "{missing}", "--reference", "{missing}", "--target-index",
                          "0", "--lr", "0.1", "--batch-size", "4", "--runs", "{missing}"],
    "audit-opacus": ["--rounds", "8", "--steps", "2", "--batch-size", "8"],
    "leakage": ["--n", "20", "--dim", "20"],
    "seq-audit": ["--epsilon", "0.1", "--max-obs", "50"],
    "updates": ["--trials", "2", "--n-ref", "2", "--n0", "40", "--n-up", "2"],
}

#: Flags whose values are not numbers but names of things (files, mechanisms, sections).
_PATHLIKE = {"--scores", "--cov", "--target-file", "--latex", "--errata", "--out", "--data-dir",
             "--data-path", "--roc", "--model", "--runs", "--runs-root", "--runs-file",
             "--reference", "--target", "--plot", "--scheduler", "--section", "--name",
             "--claim", "--mechanism", "--dataset", "--attacks", "--targets", "--hessian",
             "--data", "--tau", "--epsilon-grid", "--bandwidth", "--epsilon"}

#: Commands whose games (model training) are stopped before they start.
STOP_GAMES = {"audit-dpsgd", "audit-opacus", "attack", "updates", "leakage"}
#: Executor flags: a valid value would start threads, a Dask LocalCluster or a connection;
#: their cases stop where the work would be handed to the executor.
EXECUTOR_FLAGS = {"--threads", "--workers", "--scheduler", "--connect-timeout",
                  "--worker-timeout"}

#: (command, flag, value) cases that fail because of code owned by another task (fix pending).
XFAIL: dict[tuple[str, str, str], str] = {}


def _value_flags():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for cmd, sp in sub.choices.items():
        for act in sp._actions:
            if not act.option_strings or act.nargs == 0 or isinstance(act, argparse._HelpAction):
                continue
            yield cmd, act


def _values(act) -> list[str]:
    if act.choices:
        return CHOICES_BAD
    t = getattr(act.type, "__name__", "")
    if act.type is float:
        return FLOATS
    if act.type is int or "int" in t or t == "_seed":
        return INTS
    if t == "_unit":
        return FLOATS
    return STRINGS if any(o in _PATHLIKE for o in act.option_strings) else STRINGS + FLOATS[:4]


def _cases():
    out = []
    for cmd, act in _value_flags():
        flag = act.option_strings[-1]
        for v in dict.fromkeys(_values(act)):
            marks = ()
            why = XFAIL.get((cmd, flag, v))
            if why:
                marks = (pytest.mark.xfail(strict=True, reason=why),)
            out.append(pytest.param(cmd, flag, v, id=f"{cmd} {flag}={v!r}", marks=marks))
    return out


CASES = _cases()


def _strip(base: list[str], flag: str) -> list[str]:
    """``base`` without ``flag`` and its value(s)."""
    out, skip = [], False
    for a in base:
        if skip and not a.startswith("--"):
            continue
        skip = False
        if a == flag:
            skip = True
            continue
        out.append(a)
    return out


@pytest.fixture(scope="module", autouse=True)
def _heavy_imports():
    """Import the heavy optional modules once, before any case's hang guard starts: an import
    interrupted by the guard (on a loaded machine) would leave torch half-registered and break
    every later case."""
    import importlib

    for name in ("torch", "sympy", "distributed", "matplotlib.pyplot", "semi_core.claims",
                 "semi_core.symbolic"):
        try:
            importlib.import_module(name)
        except ImportError:  # pragma: no cover - optional extras
            pass


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("flags")
    rng = np.random.default_rng(0)
    s = d / "scores.csv"
    m = rng.random(60) < 0.5
    s.write_text("score,member\n" + "".join(f"{x:.6f},{int(b)}\n" for x, b in
                                            zip(rng.normal(size=60) + m, m)))
    return {"scores": str(s), "out": str(d / "report"), "missing": str(d / "missing.pt")}


def test_case_count():
    """The grid covers every value flag of every command: 2000 inputs or more."""
    assert len(CASES) >= 2000, len(CASES)
    assert {c.values[0] for c in CASES} >= set(BASES)  # a new command runs on its defaults


def _no_nan(obj, path="$"):
    if isinstance(obj, float):
        assert not np.isnan(obj), f"NaN at {path}"
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _no_nan(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _no_nan(v, f"{path}[{i}]")


def _stopped(*args, **kwargs):
    raise ResourceLimitError("the robustness suite stops this work before it starts")


def _stop_training(monkeypatch) -> None:
    """Every gradient step (pre-training, DP-SGD, attacks) stops at its first backward pass:
    what is checked is the validation before it."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.Tensor, "backward", _stopped)
    monkeypatch.setattr(torch.autograd, "backward", _stopped)


@pytest.mark.parametrize("cmd, flag, value", CASES)
def test_flag_value(cmd, flag, value, capsys, files, monkeypatch, tmp_path, no_hang):
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", os.environ.get("SEMI_CORE_FLAG_BUDGET",
                                                               BUDGET_SECONDS))
    monkeypatch.chdir(tmp_path)
    if cmd in STOP_GAMES or flag in EXECUTOR_FLAGS:
        monkeypatch.setattr(Executor, "run", _stopped)
    if cmd in STOP_GAMES:
        _stop_training(monkeypatch)
    if cmd == "reproduce":
        import semi_core.report

        monkeypatch.setattr(semi_core.report, "build_report", _stopped)
    base = [a.format(**files) for a in _strip(BASES.get(cmd, []), flag)]
    argv = [cmd, *base, flag, value, "--json"]
    rc, out, err = run_cli(capsys, argv)
    assert "Traceback" not in out + err, (argv, err[-2000:])
    assert rc in (0, 2), (argv, rc, out[-500:], err[-500:])
    lines = out.strip().splitlines()
    assert len(lines) == 1, (argv, out[-500:])
    obj = json.loads(lines[0])
    assert isinstance(obj, dict)
    if rc == 2:
        assert set(obj) >= {"error", "kind"} and obj["kind"] != "internal", (argv, obj)
        assert obj["error"].strip()
    else:
        assert "error" not in obj, (argv, obj)
        _no_nan(obj)
