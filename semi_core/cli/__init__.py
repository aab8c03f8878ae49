"""``semi-core`` command line: one module per subcommand, each with ``--json``.

A subcommand module defines ``register(subparsers)``; its handler returns a
:class:`~semi_core.cli._common.Result`, printed as exactly one JSON object under ``--json``.
Subcommands are discovered: every public module of this package is one (a new system adds a
command by adding a module, without editing this file); :data:`ORDER` fixes the ``--help`` order
of the first ones, the rest follow alphabetically.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from ._common import classify_error, emit
from ._options import SemiCoreParser

#: Order of the first commands in --help (discovered commands not listed follow alphabetically).
ORDER = ["power", "simulate", "derive", "audit", "epsilon", "audit_game", "audit_dpsgd",
         "verify", "reproduce"]


def _discover() -> list[str]:
    found = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


#: Every subcommand module (name with ``_``; the command is spelled with ``-``).
COMMAND_MODULES = _discover()


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = SemiCoreParser(
        prog="semi-core",
        description="Sequential membership inference and privacy auditing.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"semi_core.cli.{name}").register(sub)
    return parser


def _wants_json(argv) -> bool:
    # Decided from the raw tokens: a usage error happens before parsing completes.
    return any(tok == "--json" or (tok.startswith("--j") and "--json".startswith(tok))
               for tok in argv if isinstance(tok, str))


def _command_name(argv) -> str:
    return next((t for t in argv if isinstance(t, str) and not t.startswith("-")), "")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``semi-core`` console script.

    Error contract (every command, automatically): any exception becomes, under ``--json``,
    exactly one JSON object ``{"error": ..., "kind": ..., "command": ...}`` on stdout, else one
    line ``semi-core CMD: error: ...`` on stderr; the exit code is 2 for user errors (usage,
    invalid arguments, files, resources, timeouts), 130 when interrupted and 1 for internal
    errors (``SEMI_CORE_DEBUG=1`` re-raises those with their traceback).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    command = _command_name(argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        command = getattr(args, "command", command) or command
        as_json = bool(getattr(args, "json", as_json))
        result = args.func(args)
        emit(result, as_json=as_json)
    except SystemExit:  # --help / --version
        raise
    except BaseException as exc:  # noqa: BLE001 - the contract covers every failure
        kind, code = classify_error(exc)
        if code == 1 and os.environ.get("SEMI_CORE_DEBUG"):
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        if as_json:
            emit({"error": f"{type(exc).__name__}: {msg}", "kind": kind,
                  "command": command or None}, as_json=True)
        else:
            where = f"semi-core {command}" if command else "semi-core"
            print(f"{where}: error: {msg}", file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
