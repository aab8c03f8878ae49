"""`semi-core reproduce`: the main job — a report directory reproducing the seeds' results.

``--out`` is checked (non-empty, not a link, a writable directory or creatable) before any
section runs. The report is built in a private temporary directory and published at the end
(:func:`semi_core.report.build_report`): a failed, interrupted (SIGINT) or terminated (SIGTERM)
run leaves ``--out`` as it was, and a directory holding ``report.md`` is complete.
"""

from __future__ import annotations

from ._common import Result
from ._options import add_json, add_progress, add_seed, reporter_from_args


def register(sub) -> None:
    """Add the ``reproduce`` subcommand."""
    p = sub.add_parser("reproduce", help="write the report (Markdown + PNG figures + JSON)")
    p.add_argument("--quick", action="store_true",
                   help="fewer Monte Carlo rounds (each section says so); minutes on a laptop")
    p.add_argument("--out", default="report", metavar="DIR",
                   help="output directory (default ./report; created when the report is "
                        "complete; report.md is written last)")
    add_seed(p)
    p.add_argument("--section", action="append", default=None, metavar="MODULE",
                   help="build only this section module (repeatable), e.g. "
                        "semi_core.report.power_section")
    add_progress(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> Result:
    """Build the report; payload: report path, quick, per-section figures and seconds."""
    import json

    from semi_core._validation import check_output_path
    from semi_core.report import SECTION_MODULES, build_report

    out = check_output_path(args.out, "--out", kind="dir")
    if args.section:
        unknown = [s for s in args.section if s not in SECTION_MODULES]
        if unknown:
            raise ValueError(f"--section must be among {SECTION_MODULES}, got {unknown}")
    path = build_report(out, quick=args.quick, seed=args.seed, sections=args.section,
                        progress=reporter_from_args(args))
    summary = json.loads((path.parent / "report.json").read_text())
    payload = {"report": str(path), "quick": args.quick,
               "sections": {k: {"figures": v["figures"], "seconds": v["seconds"]}
                            for k, v in summary.items()}}
    return Result(payload, f"report written to {path}")
