"""Progress reporting, one home: a bar on a terminal, a line every few seconds otherwise.

Every long computation takes ``progress``: ``False``/``None`` (silent), ``True`` (report on
stderr), a :class:`Reporter`, or a callable taking one status string (the older hook style).
:func:`as_reporter` turns each into a :class:`Reporter`. A reporter shows a ``tqdm`` bar when
its stream is a terminal and otherwise writes a plain line at most every ``interval`` seconds
(logs of batch jobs stay readable: no carriage returns), at least that often while a stage or
a command (:meth:`Reporter.running`) is under way; :meth:`Reporter.announce` states the
estimated total time before long work starts. The CLI's ``--progress/--no-progress`` decides
whether a command reports on stderr (default: yes, also under ``--json``, whose one JSON object
goes to stdout).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Reporter", "as_reporter", "format_seconds", "default_interval", "process_age",
           "set_compile_notice", "notice_compiling", "COMPILE_NOTICE", "ANNOUNCE_AFTER",
           "DEFAULT_INTERVAL", "INTERVAL_ENV"]

#: Work estimated to take longer than this many seconds is announced before it starts.
ANNOUNCE_AFTER = 10.0
#: Longest silence (seconds) of a plain-line reporter while work is under way.
DEFAULT_INTERVAL = 10.0
#: The heartbeat writes a line once this fraction of the interval passed in silence (the rest
#: is slack for a thread waiting for the interpreter's lock).
HEARTBEAT_EARLY = 0.8
#: Environment variable overriding :data:`DEFAULT_INTERVAL` (seconds, > 0).
INTERVAL_ENV = "SEMI_CORE_PROGRESS_INTERVAL"


def default_interval() -> float:
    """Seconds between plain progress lines: ``$SEMI_CORE_PROGRESS_INTERVAL`` if set, else
    :data:`DEFAULT_INTERVAL`.

    Returns
    -------
    float
        The interval, > 0.
    """
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        val = float(text)
    except ValueError:
        val = float("nan")
    if not (val > 0 and math.isfinite(val)):
        raise ValueError(f"{INTERVAL_ENV} must be a number of seconds > 0, got {text!r}")
    return val


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


def process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; 0 where unknown).

    Returns
    -------
    float
        The age, >= 0.
    """
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return min(max(age, 0.0), 3600.0)


class _Stage:
    """One counted stage of work (see :meth:`Reporter.stage`)."""

    def __init__(self, rep: Reporter, desc: str, total: int | None, unit: str):
        self.rep, self.desc, self.total, self.unit = rep, desc, total, unit
        self.done = 0
        self.note = ""
        self.t0 = time.monotonic()
        self.bar = None
        if rep.enabled and rep.is_tty:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit=unit, desc=desc, file=rep.stream,
                            dynamic_ncols=True, leave=False)

    def update(self, n: int = 1) -> None:
        """``n`` more units done; off a terminal, a line when none was written for
        ``interval`` seconds."""
        self.done += int(n)
        if self.bar is not None:
            self.bar.update(n)
            return
        self.rep._maybe_line()

    def set_note(self, note: str) -> None:
        """What the stage is working on now (shown after its count)."""
        self.note = str(note)
        if self.bar is not None:
            self.bar.set_postfix_str(self.note, refresh=True)

    def _status(self, now: float) -> str:
        el = now - self.t0
        note = f" [{self.note}]" if self.note else ""
        if self.total:
            frac = self.done / self.total
            left = el * (1 - frac) / frac if frac > 0 else float("nan")
            eta = f", about {format_seconds(left)} left" if frac > 0 else ""
            return (f"{self.desc}: {100 * frac:.0f}% ({self.done}/{self.total} {self.unit}s)"
                    f"{note}, {format_seconds(el)} elapsed{eta}")
        return f"{self.desc}: {self.done} {self.unit}s{note}, {format_seconds(el)} elapsed"

    def open(self) -> _Stage:
        """Start reporting the stage (what ``with`` does); end it with :meth:`close`."""
        self.rep._push(self)
        return self

    def close(self) -> None:
        """End the stage (what leaving the ``with`` block does)."""
        self.rep._pop(self)
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> _Stage:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


class Reporter:
    """Where progress goes.

    Off a terminal a reporter writes one plain line (no carriage return) whenever none was
    written for ``interval`` seconds while work is under way: the counts of the stages open
    now (outermost first: done / total, elapsed, estimated time left), written by the work's
    own updates or, when one step takes longer, by a heartbeat thread. On a terminal each stage
    is a ``tqdm`` bar. A reporter is also a callable taking one status string, so it can be
    passed where the older hook style is expected.

    Parameters
    ----------
    enabled : bool
        Report at all.
    stream : text stream, optional
        Default ``sys.stderr``.
    interval : float, optional
        Longest silence, in seconds, when the stream is not a terminal; default
        :data:`INTERVAL_ENV` from the environment, else :data:`DEFAULT_INTERVAL`.
    hook : callable, optional
        Called with every status line instead of writing it (library callers).
    """

    def __init__(self, enabled: bool = True, *, stream: TextIO | None = None,
                 interval: float | None = None, hook: Callable[[str], None] | None = None):
        self.enabled = bool(enabled)
        self.stream = sys.stderr if stream is None else stream
        self.interval = default_interval() if interval is None else float(interval)
        if not (self.interval > 0 and math.isfinite(self.interval)):
            raise ValueError(f"interval must be a finite number of seconds > 0, got {interval}")
        self.hook = hook
        try:
            self.is_tty = hook is None and bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.is_tty = False
        self._stack: list[_Stage] = []
        self._label: str | None = None
        self._t0 = time.monotonic()
        self._last = self._t0
        self._lock = threading.RLock()
        self._beat: threading.Thread | None = None
        self._stop = threading.Event()
        self._holds = 0

    def line(self, msg: str) -> None:
        """One status line (a message between stages, or a periodic update)."""
        if not self.enabled:
            return
        with self._lock:
            self._last = time.monotonic()
            if self.hook is not None:
                self.hook(msg)
                return
            if self.is_tty and any(s.bar is not None for s in self._stack):
                from tqdm.auto import tqdm

                tqdm.write(msg, file=self.stream)
                return
            print(msg, file=self.stream, flush=True)

    __call__ = line

    def announce(self, seconds: float | None, what: str) -> None:
        """State the estimated time of ``what`` before it starts (when it is long)."""
        if seconds is not None and seconds >= ANNOUNCE_AFTER:
            self.line(f"{what}: estimated {format_seconds(seconds)}")

    def stage(self, desc: str, total: int | None = None, unit: str = "round") -> _Stage:
        """A counted stage: ``with rep.stage("play", total=R) as s: ... s.update(k)``."""
        return _Stage(self, desc, total, unit)

    def status(self) -> str:
        """The current status: the command's elapsed time and every open stage's count."""
        now = time.monotonic()
        with self._lock:
            parts = [s._status(now) for s in self._stack]
            if self._label is not None:
                parts.insert(0, f"{self._label}: {format_seconds(now - self._t0)} elapsed")
        return " | ".join(parts) if parts else f"{format_seconds(now - self._t0)} elapsed"

    @contextlib.contextmanager
    def running(self, label: str, started: float | None = None):
        """The whole of a command: a status line at least every ``interval`` seconds until the
        block ends (off a terminal; on one where no bar is shown), ``label`` leading it.
        ``started`` (a ``time.monotonic()`` value, default now) is when the silence began: a
        console command passes its process's start (:func:`process_age`), since the
        interpreter's start-up is silence too."""
        self._label = label
        self._t0 = time.monotonic() if started is None else min(float(started),
                                                                 time.monotonic())
        self._last = self._t0
        self._hold()
        try:
            yield self
        finally:
            with self._lock:  # stages left open by an exception end with the command
                for stage in list(self._stack):
                    if stage.bar is not None:
                        stage.bar.close()
                        stage.bar = None
                self._stack.clear()
                self._holds = min(self._holds, 1)
            self._release()
            self._label = None

    # -- internals ------------------------------------------------------------------------
    def _maybe_line(self) -> None:
        if self.enabled and time.monotonic() - self._last >= self.interval:
            self.line(self.status())

    def _push(self, stage: _Stage) -> None:
        with self._lock:
            self._stack.append(stage)
        self._hold()

    def _pop(self, stage: _Stage) -> None:
        with self._lock:
            if stage not in self._stack:
                return
            self._stack.remove(stage)
        self._release()

    def _hold(self) -> None:
        """Start the heartbeat (plain-line reporters writing to a stream) for one holder."""
        if not self.enabled or self.hook is not None:
            return
        with self._lock:
            self._holds += 1
            if self._beat is None:
                self._stop = threading.Event()
                self._beat = threading.Thread(target=self._heartbeat, args=(self._stop,),
                                              name="semi_core-progress", daemon=True)
                self._beat.start()

    def _release(self) -> None:
        if not self.enabled or self.hook is not None:
            return
        with self._lock:
            self._holds -= 1
            if self._holds > 0 or self._beat is None:
                return
            beat, self._beat = self._beat, None
            self._stop.set()
        beat.join()

    def _heartbeat(self, stop: threading.Event) -> None:
        # due a little before the interval ends: a thread waits for the GIL (a compiled call
        # holding it, a loaded machine), and the interval is the longest silence promised
        due = HEARTBEAT_EARLY * self.interval
        while True:
            wait = self._last + due - time.monotonic()
            if stop.wait(max(wait, 0.01 * self.interval)):
                return
            with self._lock:
                if stop.is_set():
                    return
                if self.is_tty and any(s.bar is not None for s in self._stack):
                    self._last = time.monotonic()  # the bar shows progress
                    continue
                if time.monotonic() - self._last >= due:
                    self.line(self.status())


#: The one-time compile notice: whether it is written (the CLI's ``--no-progress`` turns it off)
#: and whether it was (once per process).
_COMPILE_NOTICE = {"enabled": True, "written": False}
#: The line written when the first kernel compiles in a process.
COMPILE_NOTICE = ("semi_core: compiling kernels (first run only: Numba caches them for later "
                  "runs)...")


def set_compile_notice(enabled: bool) -> None:
    """Write (or not) :data:`COMPILE_NOTICE` on stderr when a kernel compiles.

    Parameters
    ----------
    enabled : bool
        ``False`` silences it (``--no-progress``).

    Returns
    -------
    None
    """
    _COMPILE_NOTICE["enabled"] = bool(enabled)


def notice_compiling(stream: TextIO | None = None) -> bool:
    """Write :data:`COMPILE_NOTICE` once per process (the kernels' compile hook calls this).

    Parameters
    ----------
    stream : text stream, optional
        Default ``sys.stderr``.

    Returns
    -------
    bool
        Whether the line was written now.
    """
    if not _COMPILE_NOTICE["enabled"] or _COMPILE_NOTICE["written"]:
        return False
    _COMPILE_NOTICE["written"] = True
    print(COMPILE_NOTICE, file=sys.stderr if stream is None else stream, flush=True)
    return True


def as_reporter(progress) -> Reporter:
    """``None``/``False`` -> silent, ``True`` -> stderr, a callable -> its hook, a reporter as is."""
    if isinstance(progress, Reporter):
        return progress
    if progress is None or progress is False:
        return Reporter(False)
    if progress is True:
        return Reporter(True)
    if callable(progress):
        return Reporter(True, hook=progress)
    raise TypeError(f"progress must be a bool, a Reporter or a callable, got "
                    f"{type(progress).__name__}")
