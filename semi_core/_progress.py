"""Progress reporting, one home: a bar on a terminal, a line every few seconds otherwise.

Every long computation takes ``progress``: ``False``/``None`` (silent), ``True`` (report on
stderr), a :class:`Reporter`, or a callable taking one status string (the older hook style).
:func:`as_reporter` turns each into a :class:`Reporter`. A reporter shows a ``tqdm`` bar when
its stream is a terminal and otherwise writes a plain line at most every ``interval`` seconds
(logs of batch jobs stay readable); :meth:`Reporter.announce` states the estimated total time
before long work starts. The CLI's ``--progress/--no-progress`` decides whether a command
reports (default: yes unless ``--json``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Reporter", "as_reporter", "format_seconds", "ANNOUNCE_AFTER"]

#: Work estimated to take longer than this many seconds is announced before it starts.
ANNOUNCE_AFTER = 10.0


def format_seconds(s: float) -> str:
    """``42 s``, ``3.5 min``, ``2.1 h``, ``4.0 days``."""
    s = float(s)
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


class _Stage:
    """One counted stage of work (see :meth:`Reporter.stage`)."""

    def __init__(self, rep: Reporter, desc: str, total: int | None, unit: str):
        self.rep, self.desc, self.total, self.unit = rep, desc, total, unit
        self.done = 0
        self.t0 = time.monotonic()
        self.last = self.t0
        self.bar = None
        if rep.enabled and rep.is_tty:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit=unit, desc=desc, file=rep.stream,
                            dynamic_ncols=True, leave=False)

    def update(self, n: int = 1) -> None:
        self.done += int(n)
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if self.rep.enabled and now - self.last >= self.rep.interval:
            self.last = now
            self.rep.line(self._status(now))

    def _status(self, now: float) -> str:
        el = now - self.t0
        if self.total:
            frac = self.done / self.total
            left = el * (1 - frac) / frac if frac > 0 else float("nan")
            eta = f", about {format_seconds(left)} left" if frac > 0 else ""
            return (f"{self.desc}: {100 * frac:.0f}% ({self.done}/{self.total} {self.unit}s), "
                    f"{format_seconds(el)} elapsed{eta}")
        return f"{self.desc}: {self.done} {self.unit}s, {format_seconds(el)} elapsed"

    def __enter__(self) -> _Stage:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


class Reporter:
    """Where progress goes.

    Parameters
    ----------
    enabled : bool
        Report at all.
    stream : text stream, optional
        Default ``sys.stderr``.
    interval : float
        Seconds between plain lines when the stream is not a terminal.
    hook : callable, optional
        Called with every status line instead of writing it (library callers).
    """

    def __init__(self, enabled: bool = True, *, stream: TextIO | None = None,
                 interval: float = 10.0, hook: Callable[[str], None] | None = None):
        self.enabled = bool(enabled)
        self.stream = sys.stderr if stream is None else stream
        self.interval = float(interval)
        self.hook = hook
        try:
            self.is_tty = hook is None and bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.is_tty = False

    def line(self, msg: str) -> None:
        """One status line (a message between stages, or a periodic update)."""
        if not self.enabled:
            return
        if self.hook is not None:
            self.hook(msg)
            return
        print(msg, file=self.stream, flush=True)

    def announce(self, seconds: float | None, what: str) -> None:
        """State the estimated time of ``what`` before it starts (when it is long)."""
        if seconds is not None and seconds >= ANNOUNCE_AFTER:
            self.line(f"{what}: estimated {format_seconds(seconds)}")

    def stage(self, desc: str, total: int | None = None, unit: str = "round") -> _Stage:
        """A counted stage: ``with rep.stage("play", total=R) as s: ... s.update(k)``."""
        return _Stage(self, desc, total, unit)


def as_reporter(progress) -> Reporter:
    """``None``/``False`` -> silent, ``True`` -> stderr, a callable -> its hook, a reporter as is."""
    if isinstance(progress, Reporter):
        return progress
    if progress is None or progress is False:
        return Reporter(False)
    if progress is True:
        return Reporter(True)
    if callable(progress):
        return Reporter(True, hook=progress, interval=10.0)
    raise TypeError(f"progress must be a bool, a Reporter or a callable, got "
                    f"{type(progress).__name__}")
