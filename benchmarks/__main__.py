"""Run every ``benchmarks/bench_*.py``'s ``main()`` and print their tables.

Usage::

    python -m benchmarks            # full sizes
    python -m benchmarks --quick    # small sizes (CI smoke run)
    python -m benchmarks engine     # only bench_engine.py (names filter by substring)

Each module's ``main(quick=False)`` prints its own table of rates and ratios measured in the
same run and returns a list of row dicts; ``--json FILE`` writes them all.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
import time
from pathlib import Path


def discover() -> list[str]:
    """Module names ``benchmarks.bench_*`` in this directory, sorted."""
    here = Path(__file__).resolve().parent
    return [f"benchmarks.{p.stem}" for p in sorted(here.glob("bench_*.py"))]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("only", nargs="*", help="substrings selecting bench modules")
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--json", metavar="FILE", help="write every module's rows as JSON")
    args = ap.parse_args(argv)
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    results = {}
    for name in discover():
        if args.only and not any(s in name for s in args.only):
            continue
        mod = importlib.import_module(name)
        if not hasattr(mod, "main"):
            continue
        t0 = time.perf_counter()
        kwargs = {"quick": args.quick} if "quick" in inspect.signature(mod.main).parameters else {}
        rows = mod.main(**kwargs)
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]")
        results[name] = rows
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
