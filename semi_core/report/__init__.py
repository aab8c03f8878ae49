"""The ``semi-core reproduce`` report: a directory with ``report.md``, PNG figures, ``report.json``.

Each section lives in its own module listed in :data:`SECTION_MODULES`; a section module
defines ``build(ctx: ReportContext) -> Section``. Later work adds sections by adding a module.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semi_core.cli._common import to_jsonable

__all__ = ["ReportContext", "Section", "SECTION_MODULES", "build_report"]

SECTION_MODULES = [
    "semi_core.report.power_section",
    "semi_core.report.robustness_section",
    "semi_core.report.audit_section",
    "semi_core.report.dpsgd_section",
    "semi_core.report.claims_section",
]


@dataclass
class ReportContext:
    """What a section gets: where to write, quick or full mode, a seed, a progress hook."""

    out_dir: Path
    quick: bool = True
    seed: int = 0
    progress: Callable[[str], None] = lambda msg: None


@dataclass
class Section:
    """One report section: Markdown body, figure file names (relative), JSON data."""

    title: str
    markdown: str
    figures: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def build_report(out_dir, *, quick: bool = True, seed: int = 0, sections=None,
                 show_progress: bool = True) -> Path:
    """Build every section and write ``report.md`` and ``report.json`` under ``out_dir``."""
    from tqdm.auto import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    modules = list(sections or SECTION_MODULES)
    bar = tqdm(modules, desc="report", disable=not show_progress, unit="section")
    ctx = ReportContext(out_dir=out, quick=quick, seed=seed, progress=lambda m: bar.set_postfix_str(m))
    built: list[tuple[Section, float]] = []
    for name in bar:
        t0 = time.perf_counter()
        sec = importlib.import_module(name).build(ctx)
        built.append((sec, time.perf_counter() - t0))
    lines = ["# semi_core report", "",
             f"Mode: {'quick' if quick else 'full'}; seed {seed}.", ""]
    for sec, dt in built:
        lines += [f"## {sec.title}", "", sec.markdown.strip(), ""]
        lines += [f"![{f}]({f})" for f in sec.figures]
        lines += ["", f"_section built in {dt:.1f} s_", ""]
    (out / "report.md").write_text("\n".join(lines))
    (out / "report.json").write_text(json.dumps(to_jsonable(
        {sec.title: {"data": sec.data, "figures": sec.figures, "seconds": dt} for sec, dt in built}
    ), indent=2))
    return out / "report.md"
