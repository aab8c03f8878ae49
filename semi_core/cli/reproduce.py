"""`semi-core reproduce`: the main job — a report directory reproducing the seeds' results."""

from __future__ import annotations

from ._common import Result, add_json_flag


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="write the report (Markdown + PNG figures + JSON)")
    p.add_argument("--quick", action="store_true",
                   help="fewer Monte Carlo rounds (each section says so); minutes on a laptop")
    p.add_argument("--out", default="report", help="output directory (default ./report)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--section", action="append", default=None, metavar="MODULE",
                   help="build only this section module (repeatable), e.g. "
                        "semi_core.report.power_section")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> Result:
    import json

    from semi_core.report import SECTION_MODULES, build_report

    if args.section:
        unknown = [s for s in args.section if s not in SECTION_MODULES]
        if unknown:
            raise ValueError(f"--section must be among {SECTION_MODULES}, got {unknown}")
    path = build_report(args.out, quick=args.quick, seed=args.seed, sections=args.section,
                        show_progress=not (args.no_progress or args.json))
    summary = json.loads((path.parent / "report.json").read_text())
    payload = {"report": str(path), "quick": args.quick,
               "sections": {k: {"figures": v["figures"], "seconds": v["seconds"]}
                            for k, v in summary.items()}}
    return Result(payload, f"report written to {path}")
