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
import pkgutil
import sys

from ._common import emit

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
    parser = argparse.ArgumentParser(
        prog="semi-core",
        description="Sequential membership inference and privacy auditing.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"semi_core.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``semi-core`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        if getattr(args, "json", False):
            emit({"error": f"{type(exc).__name__}: {exc}"}, as_json=True)
        else:
            print(f"semi-core {args.command}: error: {exc}", file=sys.stderr)
        return 2
    emit(result, as_json=getattr(args, "json", False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
