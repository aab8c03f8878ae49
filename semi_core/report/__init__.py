"""The ``semi-core reproduce`` report: a directory with ``report.md``, PNG figures, ``report.json``.

Each section lives in its own module ``semi_core/report/*_section.py`` defining
``build(ctx: ReportContext) -> Section`` and an integer ``ORDER`` (position in the report);
sections are discovered, so a new system adds one by adding a module (:data:`SECTION_MODULES`).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semi_core._json import to_jsonable

__all__ = ["ReportContext", "Section", "SECTION_MODULES", "COMPLETION_MARKERS", "build_report"]



def _discover() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if m.name.endswith("_section")]
    order = {}
    for name in names:  # read ORDER without importing (sections import heavy layers lazily)
        src = (Path(__file__).parent / f"{name}.py").read_text()
        hit = re.search(r"^ORDER\s*=\s*(\d+)", src, re.M)
        order[name] = int(hit.group(1)) if hit else 500
    return [f"semi_core.report.{n}" for n in sorted(names, key=lambda n: (order[n], n))]


#: Every section module, in report order (``ORDER`` in each module, then name).
SECTION_MODULES = _discover()


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


#: Written last, in this order: a report directory holding ``report.md`` is complete.
COMPLETION_MARKERS = ("report.json", "report.md")


def build_report(out_dir, *, quick: bool = True, seed: int = 0, sections=None,
                 show_progress: bool = True, progress=None) -> Path:
    """Build every section and write ``report.md`` and ``report.json`` under ``out_dir``.

    Atomic (:func:`semi_core._io.atomic_output_dir`): the sections write into a private
    temporary directory; only when every section has finished is it renamed to ``out_dir`` (or,
    if ``out_dir`` already exists, its files are moved in, :data:`COMPLETION_MARKERS` last and
    the old markers removed first). A run that fails or is killed leaves ``out_dir`` as it was
    (at most a hidden ``.NAME.partial-*`` directory after a ``SIGKILL``), so a directory with
    ``report.md`` always holds a complete report. Links planted at output names are replaced,
    never followed.

    Parameters
    ----------
    out_dir : path
        The report directory.
    quick : bool
        Fewer Monte Carlo rounds (each section says so).
    seed : int
        Root seed of every section.
    sections : list of str, optional
        Section modules to build (default :data:`SECTION_MODULES`).
    show_progress : bool
        Report progress on stderr when ``progress`` is not given.
    progress : bool, Reporter or callable, optional
        Where progress goes (:func:`semi_core._progress.as_reporter`): one stage counting
        sections, the sections' own stages nested in it.

    Returns
    -------
    pathlib.Path
        ``out_dir/report.md``.

    Raises
    ------
    KeyboardInterrupt
        Interrupted: the message counts the sections built, as the progress does.
    """
    from semi_core._io import atomic_output_dir  # lazy: audit-game imports a section only
    from semi_core._progress import as_reporter

    rep = as_reporter(show_progress if progress is None else progress)
    modules = list(sections or SECTION_MODULES)
    with atomic_output_dir(out_dir, name="out_dir", last=COMPLETION_MARKERS) as tmp:
        ctx = ReportContext(out_dir=tmp, quick=quick, seed=seed, progress=rep)
        built: list[tuple[Section, float]] = []
        with rep.stage("report", total=len(modules), unit="section") as st:
            for name in modules:
                st.set_note(name.rsplit(".", 1)[-1])
                t0 = time.perf_counter()
                try:
                    sec = importlib.import_module(name).build(ctx)
                except KeyboardInterrupt as exc:
                    # count in the units the progress shows (sections), not the inner tasks
                    # (the CLI still tells SIGTERM from Ctrl-C: it records the signal)
                    raise KeyboardInterrupt(f"interrupted after {st.done} of {len(modules)} sections "
                               f"(in {name.rsplit('.', 1)[-1]}); no report written") from exc
                built.append((sec, time.perf_counter() - t0))
                st.update(1)
        lines = ["# semi_core report", "",
                 f"Mode: {'quick' if quick else 'full'}; seed {seed}.", ""]
        for sec, dt in built:
            lines += [f"## {sec.title}", "", sec.markdown.strip(), ""]
            lines += [f"![{f}]({f})" for f in sec.figures]
            lines += ["", f"_section built in {dt:.1f} s_", ""]
        (tmp / "report.json").write_text(json.dumps(to_jsonable(
            {sec.title: {"data": sec.data, "figures": sec.figures, "seconds": dt}
             for sec, dt in built}), indent=2))
        (tmp / "report.md").write_text("\n".join(lines))
    return Path(out_dir) / "report.md"
