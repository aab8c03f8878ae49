"""CLI start-up: what ``semi-core --help`` and ``semi-core CMD --help`` import, and torch-free runs.

Each check runs in a fresh interpreter (``python -c``), because ``sys.modules`` of the test
process already holds everything. torch is *blocked* there by a meta-path finder that records
every attempt to import it (an attempt caught by a ``try/except ImportError`` is still caught
here) and raises ``ModuleNotFoundError`` as on a machine without the torch extra.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from semi_core.cli import COMMAND_MODULES, build_parser
from semi_core.cli._commands import COMMANDS

# Prelude of every child: block torch (and what sits on it), record the attempts.
_BLOCK = r"""
import sys, io, contextlib, json, importlib.abc
ATTEMPTS = []
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "opacus", "functorch", "torchvision"):
            ATTEMPTS.append(name)
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, _Block())
HEAVY = ("torch", "sympy", "scipy", "scipy.stats", "scipy.optimize", "numba", "numpy",
         "semi_core_ext", "dask", "pandas", "matplotlib")
def loaded():
    return sorted(m for m in HEAVY if m in sys.modules)
def run(argv):
    from semi_core.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()
"""


def _child(body: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _BLOCK + body], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_top_level_help_imports_argparse_only():
    """``semi-core --help`` (and a bare ``semi-core``): no NumPy, SciPy, SymPy, Numba, torch."""
    res = _child(r"""
rc, out, err = run(["--help"])
after_help = loaded()
rc2, out2, err2 = run([])
print(json.dumps({"rc": rc, "out": out, "loaded": after_help, "torch": ATTEMPTS,
                  "rc_bare": rc2, "err_bare": err2}))
""")
    assert res["rc"] == 0
    assert res["loaded"] == [], f"semi-core --help imported {res['loaded']}"
    assert res["torch"] == []
    for cmd, (_, help_line) in COMMANDS.items():
        assert cmd in res["out"]
        assert help_line.split()[0] in res["out"]
    # no command: a usage error (exit 2) naming the missing argument, as before
    assert res["rc_bare"] == 2
    assert "COMMAND" in res["err_bare"] or "command" in res["err_bare"]


def test_every_command_help_without_torch():
    """``semi-core CMD --help`` for every command, in turn, with torch blocked: exit 0, the
    command's own usage, and no attempt to import torch (the first offender is named)."""
    cmds = [m.replace("_", "-") for m in COMMAND_MODULES]
    res = _child(r"""
report = {}
for cmd in CMDS:
    rc, out, err = run([cmd, "--help"])
    report[cmd] = {"rc": rc, "usage": out.startswith("usage: semi-core " + cmd),
                   "torch": list(ATTEMPTS), "err": err[-500:], "loaded": loaded()}
print(json.dumps(report))
""".replace("CMDS", repr(cmds)))
    assert list(res) == cmds
    before: set[str] = set()
    for cmd in cmds:
        r = res[cmd]
        assert r["torch"] == [], f"`semi-core {cmd} --help` tried to import {r['torch']}"
        assert r["rc"] == 0 and r["usage"], (cmd, r)
        new = set(r["loaded"]) - before
        before |= new
        # scipy.stats costs ~1 s to import: no command's --help loads it; SymPy: verify's only
        assert "scipy.stats" not in new, f"`semi-core {cmd} --help` imported scipy.stats"
        assert "sympy" not in new or cmd == "verify", f"`semi-core {cmd} --help` imported sympy"


def test_torch_free_commands_run_without_torch(tmp_path):
    """Commands that need no torch run with torch blocked (and never try to import it; small
    sizes; ``derive``/``verify`` need SymPy and are slow, their ``--help`` is checked above); a
    torch command fails with the missing-dependency error naming the extra to install."""
    csv = tmp_path / "scores.csv"
    lines = ["score,member"] + [f"{0.01 * i},{int(i % 2 == 0)}" for i in range(200)]
    csv.write_text("\n".join(lines) + "\n")
    runs = {
        "power": ["power", "--T", "10", "--json"],
        "epsilon": ["epsilon", "--gdp-mu", "1", "--delta", "1e-5", "--json"],
        "audit": ["audit", "--scores", str(csv), "--delta", "0", "--json"],
        "simulate": ["simulate", "--rounds", "2000", "--json"],
        "audit-game": ["audit-game", "--rounds", "200", "--json"],
        "seq-audit": ["seq-audit", "--epsilon", "0.01", "--max-obs", "100", "--json"],
        "leakage": ["leakage", "--d", "100", "--n", "50", "--json"],
    }
    res = _child(r"""
report = {}
for key, argv in RUNS.items():
    rc, out, err = run(argv)
    report[key] = {"rc": rc, "out": out, "torch": list(ATTEMPTS), "err": err[-500:]}
rc, out, err = run(["audit-opacus", "--rounds", "2", "--json"])
report["audit-opacus"] = {"rc": rc, "out": out}
print(json.dumps(report))
""".replace("RUNS", repr(runs)))
    for key in runs:
        r = res[key]
        assert r["torch"] == [], f"`semi-core {key}` tried to import {r['torch']}"
        assert r["rc"] == 0, (key, r)
        json.loads(r["out"])  # exactly one JSON object
    r = res["audit-opacus"]
    err = json.loads(r["out"])
    assert r["rc"] == 2 and err["kind"] == "missing_dependency", r
    assert "pip install" in err["error"] and "torch" in err["error"]


def test_power_runs_without_scipy_stats():
    """``power`` with its default tests reads SciPy's special functions only (scipy.stats,
    optimize and integrate cost most of its start-up); ``epsilon`` needs no scipy.stats."""
    res = _child(r"""
rc, out, err = run(["power", "--T", "10", "--json"])
power = sorted(m for m in ("scipy.stats", "scipy.optimize", "scipy.integrate")
               if m in sys.modules)
rc2, out2, err2 = run(["epsilon", "--gdp-mu", "1", "--delta", "1e-5", "--json"])
print(json.dumps({"rc": [rc, rc2], "power": power, "stats": "scipy.stats" in sys.modules}))
""")
    assert res["rc"] == [0, 0]
    assert res["power"] == [], f"power imported {res['power']}"
    assert not res["stats"]


def test_epsilon_imports_no_scipy_optimizer():
    """``epsilon`` solves its one root with ``gdp_epsilon``'s own bracketed solver: SciPy's
    optimiser (about half of the command's import time) is never loaded."""
    res = _child(r"""
rc, out, err = run(["epsilon", "--gdp-mu", "1", "--delta", "1e-5", "--json"])
print(json.dumps({"rc": rc, "out": out,
                  "loaded": sorted(m for m in sys.modules if m.startswith("scipy.optimize"))}))
""")
    assert res["rc"] == 0
    assert abs(json.loads(res["out"])["epsilon"] - 4.377) < 1e-3
    assert res["loaded"] == [], f"epsilon imported {res['loaded']}"


def test_command_table_matches_the_modules():
    """Every command module has its row (else it is imported at every start-up), and the table's
    one-line help is the help its module registers."""
    listed = {mod.rsplit(".", 1)[1] for mod, _ in COMMANDS.values()}
    assert set(COMMAND_MODULES) == listed
    assert {m.replace("_", "-") for m in COMMAND_MODULES} == set(COMMANDS)
    for cmd, (mod, _) in COMMANDS.items():
        assert mod == f"semi_core.cli.{cmd.replace('-', '_')}"
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    registered = {a.dest: a.help for a in sub._choices_actions}
    assert registered == {cmd: h for cmd, (_, h) in COMMANDS.items()}
    assert list(registered) == list(COMMANDS)  # --help order


def test_lazy_parser_registers_only_the_chosen_command():
    parser = build_parser(["epsilon"])
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)
    options = {o for a in sub.choices["epsilon"]._actions for o in a.option_strings}
    assert "--gdp-mu" in options
    assert {o for a in sub.choices["power"]._actions for o in a.option_strings} == set()


def test_audit_opacus_bug_names_are_the_zoo():
    pytest.importorskip("torch")
    from semi_core.cli.audit_opacus import BUG_NAMES
    from semi_core.sgd.bugs import BUGS

    assert BUG_NAMES == tuple(BUGS)


def test_audit_game_help_imports_no_game_runner():
    """``audit-game --help`` reads no default from the game auditor at import: the auditor and
    the game runner (``semi_core.audit.games``, ``semi_core.game.play``) load only when the
    command runs."""
    res = _child(r"""
rc, out, err = run(["audit-game", "--help"])
print(json.dumps({"rc": rc, "loaded": sorted(m for m in sys.modules
                  if m in ("semi_core.audit.games", "semi_core.game.play"))}))
""")
    assert res["rc"] == 0
    assert res["loaded"] == [], f"audit-game --help imported {res['loaded']}"
