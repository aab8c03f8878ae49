"""``semi-core`` command line: one module per subcommand, each with ``--json``.

A subcommand module defines ``register(subparsers)``; its handler returns a
:class:`~semi_core.cli._common.Result`, printed as exactly one JSON object under ``--json``.
Subcommands are discovered (every public module of this package is one) and listed, with their
one-line help and ``--help`` order, in :data:`semi_core.cli._commands.COMMANDS`.

Start-up is lazy: the top-level parser is built from that table without importing any command
module (``semi-core --help`` imports ``argparse`` and nothing of NumPy, SciPy, SymPy, Numba or
torch), and only the chosen command's module is imported and registered, so a command that
needs no torch runs (and shows its ``--help``) where torch is not installed. This module and
:mod:`~semi_core.cli._commands` must stay free of heavy imports (``tests/cli/test_startup.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import signal
import sys
import threading
import time
from collections.abc import Iterable

from semi_core import __version__

from ._commands import COMMANDS, EXIT_TERMINATED

_PACKAGE = __name__


def _discover() -> list[str]:
    """Module names (with ``_``) of the subcommands: the table's order, then any public module
    of this package missing from the table (alphabetically; registered eagerly)."""
    found = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    listed = [mod.rsplit(".", 1)[1] for mod, _ in COMMANDS.values()]
    return [n for n in listed if n in found] + sorted(found - set(listed))


#: Every subcommand module (name with ``_``; the command is spelled with ``-``).
COMMAND_MODULES = _discover()


class _TopParser(argparse.ArgumentParser):
    """The top-level parser when no command is named (``semi-core``, ``semi-core --help``):
    argparse only. Its usage errors are :class:`~semi_core.cli._common.UsageError`, as those of
    :class:`~semi_core.cli._options.SemiCoreParser` (imported on the error path only)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        from ._common import UsageError

        raise UsageError(f"{message} (see {self.prog} --help)", self.prog)


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser.

    Parameters
    ----------
    commands : iterable of str, optional
        Commands (spelled with ``-``) whose modules are imported and registered with their
        full options; every other command gets a bare entry (its one-line help from
        :data:`~semi_core.cli._commands.COMMANDS`), enough for the top-level ``--help`` and for
        argparse to recognise the name. ``None`` (default): every command in full.
    """
    full = None if commands is None else set(commands)
    if full is None or full:
        from ._options import SemiCoreParser

        parser_class: type[argparse.ArgumentParser] = SemiCoreParser
    else:
        parser_class = _TopParser
    parser = parser_class(
        prog="semi-core",
        description="Sequential membership inference and privacy auditing.",
    )
    parser.add_argument("--version", action="version", version=f"semi-core {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        cmd = name.replace("_", "-")
        row = COMMANDS.get(cmd)
        if row is None or full is None or cmd in full:
            module = row[0] if row is not None else f"{_PACKAGE}.{name}"
            importlib.import_module(module).register(sub)
        else:
            sub.add_parser(cmd, help=row[1], add_help=False)
    return parser


def _wants_json(argv) -> bool:
    # Decided from the raw tokens: a usage error happens before parsing completes.
    return any(tok == "--json" or (tok.startswith("--j") and "--json".startswith(tok))
               for tok in argv if isinstance(tok, str))


def _command_name(argv) -> str:
    return next((t for t in argv if isinstance(t, str) and not t.startswith("-")), "")


#: Environment variable: seconds a command may take to stop after SIGTERM (default 10).
TERM_GRACE_ENV = "SEMI_CORE_TERM_GRACE"


def term_grace() -> float:
    """Seconds between a SIGTERM and the process's exit at the latest (:data:`TERM_GRACE_ENV`).

    Returns
    -------
    float
        The value of ``SEMI_CORE_TERM_GRACE`` (a number >= 0; 0 waits as long as the work
        takes), 10 when unset.

    Raises
    ------
    ValueError
        The variable is set to something else.
    """
    raw = os.environ.get(TERM_GRACE_ENV, "").strip()
    if not raw:
        return 10.0
    try:
        val = float(raw)
    except ValueError:
        val = float("nan")
    if not val >= 0 or val == float("inf"):
        raise ValueError(f"{TERM_GRACE_ENV} must be a finite number of seconds >= 0, got {raw!r}")
    return val


class _Signals:
    """SIGTERM (and SIGINT) as exceptions while a command runs; deferred while output is printed.

    Installed by :func:`main` only (never at import: a library must not take over a host
    program's signals), in the main thread, and restored on return. SIGTERM raises
    :class:`~semi_core.cli._common.Terminated` (a ``KeyboardInterrupt``, so the game runner
    cancels and lets running tasks finish as for Ctrl-C); SIGINT raises ``KeyboardInterrupt`` as
    Python's own handler does (only replaced when that default is in place: an ignored SIGINT stays
    ignored). While the one JSON object (or the text) is being printed a signal is ignored, so
    the output is never cut in half; the work is done by then and the exit code is that of the
    result.
    """

    def __init__(self, grace: float = 10.0, *, command: str = "", as_json: bool = False):
        self.emitting = False
        self.holding = False  # importing: a signal is kept and raised when the import ends
        self.pending: int | None = None
        self.terminated = False  # a SIGTERM arrived (whatever exception it became)
        self.old: dict[int, object] = {}
        self.grace = float(grace)  # main() reads it from SEMI_CORE_TERM_GRACE
        self.command, self.as_json = command, as_json
        self.linger = False  # keep the watchdog through interpreter exit (the console script)
        self.emitted = False  # the one output was printed
        self.exit_code = EXIT_TERMINATED
        self._out = threading.RLock()  # held while the output is printed, by either thread
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None

    def _handler(self, signum, frame):
        if self.emitting:
            return
        if self.holding:
            # never raise inside an import (a module left half-imported, e.g. NumPy, cannot be
            # imported again in this process): keep the signal for the end of the block
            self.pending = signum
            return
        if signum == signal.SIGTERM:
            from ._common import Terminated

            self.terminated = True
            # a second SIGTERM during the clean-up ends the process at once
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self._arm()
            raise Terminated(signum)
        raise KeyboardInterrupt("interrupted by SIGINT (Ctrl-C) before the command finished")

    @contextlib.contextmanager
    def installed(self):
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        self.old[signal.SIGTERM] = signal.signal(signal.SIGTERM, self._handler)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.old[signal.SIGINT] = signal.signal(signal.SIGINT, self._handler)
        try:
            yield self
        finally:
            for signum, old in self.old.items():
                signal.signal(signum, old)
            if not self.linger:
                self._stop.set()  # a call from Python: never outlive it

    @contextlib.contextmanager
    def held(self):
        """Keep a SIGTERM/SIGINT that arrives inside this block (building the parser imports
        the command's module) and raise it when the block ends."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            if self.pending is not None:
                signum, self.pending = self.pending, None
                self._handler(signum, None)

    @contextlib.contextmanager
    def deferred(self):
        """Ignore (do not raise) SIGTERM/SIGINT inside this block (printing the output)."""
        with self._out:  # never at the same time as the watchdog's output
            was, self.emitting = self.emitting, True
            try:
                yield
            finally:
                self.emitting = was
                self.emitted = True

    # -- the SIGTERM watchdog ------------------------------------------------------------
    def _arm(self) -> None:
        """Start the watchdog: the process ends within :attr:`grace` s of the SIGTERM."""
        if self._watch is None and self.grace > 0:
            self._watch = threading.Thread(target=self._watchdog, name="semi-core-sigterm",
                                           daemon=True)
            self._watch.start()

    def _watchdog(self) -> None:
        """After ``grace`` s: unpublished outputs removed, the one output printed, exit 143.

        The ``Terminated`` raised in the main thread normally ends the command within a second.
        It cannot where the main thread waits for work that no exception reaches: a task running
        in a worker thread (the runner lets running tasks finish), a compiled kernel or a JIT
        compilation (signals are handled between bytecodes only), or an exception raised inside
        a finaliser (Python prints it as ignored and goes on). A SIGTERM is a request to stop
        now (a scheduler sends SIGKILL soon after), so the process does not wait for them.
        """
        if self._stop.wait(self.grace):
            return
        with self._out:
            if self._stop.is_set():
                return
            if not self.emitted:
                self.emitted = True
                io_mod = sys.modules.get("semi_core._io")
                if io_mod is not None:
                    io_mod.discard_unpublished()
                frame = sys._current_frames().get(threading.main_thread().ident)
                where = ""
                if frame is not None:
                    code = frame.f_code
                    where = (f" (the main thread was in {code.co_name}, "
                             f"{os.path.basename(code.co_filename)}:{frame.f_lineno})")
                msg = (f"Terminated: stopped by signal 15 (SIGTERM); the running work did not stop "
                       f"within {self.grace:g} s ({TERM_GRACE_ENV}), so the process exited "
                       f"without waiting for it{where}; no output was written")
                self._write_error(msg)
            code = self.exit_code if self.emitted else EXIT_TERMINATED
            os._exit(code)

    def _write_error(self, msg: str) -> None:
        import json

        try:
            if self.as_json:
                line = json.dumps({"error": msg, "kind": "terminated",
                                   "command": self.command or None}) + "\n"
                os.write(sys.stdout.fileno(), line.encode())
            else:
                where = f"semi-core {self.command}" if self.command else "semi-core"
                os.write(sys.stderr.fileno(), f"{where}: error: {msg}\n".encode())
        except (OSError, ValueError, AttributeError):  # pragma: no cover - no stdout left
            pass


#: Exit code when stdout's reader has gone away (128 + SIGPIPE, the shell convention).
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout not a real file
        pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``semi-core`` console script.

    Error contract (every command, automatically): any exception becomes, under ``--json``,
    exactly one JSON object ``{"error": ..., "kind": ..., "command": ...}`` on stdout, else one
    line ``semi-core CMD: error: ...`` on stderr; the exit code is 2 for user errors (usage,
    invalid arguments, files, resources, timeouts) and 1 for internal errors
    (``SEMI_CORE_DEBUG=1`` re-raises those with their traceback).

    ``SystemExit``: only argparse's own exits (``--help``, ``--version``, raised while the
    arguments are parsed) pass through. A ``sys.exit(...)`` anywhere later (in the user's code a
    command imports and calls, such as ``audit-checkpoints --model``'s factory) did not finish
    the command: it is kind ``user_exit``, exit code 2 (a user error; the code the user's code
    asked for is in the message), with the same one JSON object under ``--json``.

    Signals: SIGINT (Ctrl-C) gives kind ``interrupted`` and exit code 130; SIGTERM (what
    ``timeout``, ``kill`` and batch schedulers send) gives kind ``terminated`` and exit code 143
    (128 + the signal number, the shell convention), with the same one JSON object. Outputs are
    written atomically (:mod:`semi_core._io`), so a stopped command leaves no partial file or
    report directory. The handlers are installed here, for the duration of the call, never when
    the library is imported.
    """
    from_console = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    command = _command_name(argv)
    signals = _Signals(command=command, as_json=as_json)
    # the console script keeps the SIGTERM watchdog through the interpreter's exit (which joins
    # worker threads); a call from Python never outlives its return
    signals.linger = from_console
    parsing = True  # a SystemExit now is argparse's own (--help, --version)
    with signals.installed():
        try:
            signals.grace = term_grace()
            known = {name.replace("_", "-") for name in COMMAND_MODULES}
            with signals.held():  # imports the command's module
                parser = build_parser([command] if command in known else [])
                args = parser.parse_args(argv)
            parsing = False
            command = getattr(args, "command", command) or command
            as_json = bool(getattr(args, "json", as_json))
            signals.command, signals.as_json = command, as_json
            from semi_core._progress import process_age

            from ._options import command_progress

            # progress on stderr, never on stdout; a console command counts its silence from
            # the process's start (a call with argv, as from tests, from now)
            started = time.monotonic() - process_age() if from_console else None
            with command_progress(args, command, started):
                result = args.func(args)
            from ._common import emit

            with signals.deferred():
                emit(result, as_json=as_json)
                sys.stdout.flush()
        except BrokenPipeError:
            # the reader went away (``semi-core ... | head``): nothing more can be written;
            # exit quietly as other tools do, with the shell's code for SIGPIPE
            _silence_stdout()
            return EXIT_BROKEN_PIPE
        except BaseException as exc:  # noqa: BLE001 - the contract covers every failure
            if isinstance(exc, SystemExit) and parsing:
                raise  # --help / --version
            from ._common import Terminated, classify_error, emit

            with signals.deferred():
                kind, code = classify_error(exc)
                if signals.terminated and isinstance(exc, KeyboardInterrupt):
                    # SIGTERM re-raised by a layer as its own KeyboardInterrupt (the runner's
                    # Interrupted, carrying the finished chunks)
                    kind, code = classify_error(Terminated())
                if code == 1 and os.environ.get("SEMI_CORE_DEBUG"):
                    raise
                msg = " ".join(str(exc).split()) or type(exc).__name__
                if isinstance(exc, SystemExit):
                    msg = (f"code run by the command called sys.exit({exc.code!r}) before the "
                           "command finished; no result was produced")
                if as_json:
                    try:
                        emit({"error": f"{type(exc).__name__}: {msg}", "kind": kind,
                              "command": command or None}, as_json=True)
                        sys.stdout.flush()
                    except BrokenPipeError:
                        _silence_stdout()
                        return EXIT_BROKEN_PIPE
                else:
                    where = f"semi-core {command}" if command else "semi-core"
                    print(f"{where}: error: {msg}", file=sys.stderr)
                signals.exit_code = code
            return code
    signals.exit_code = 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
