"""Shared CLI helpers: JSON conversion, output, common arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from semi_core._json import to_jsonable

__all__ = ["Result", "UsageError", "Terminated", "emit", "to_jsonable", "add_json_flag",
           "load_npy", "classify_error", "EXIT_INTERRUPTED", "EXIT_TERMINATED"]

#: Exit code after SIGINT / Ctrl-C (128 + 2, the shell convention).
EXIT_INTERRUPTED = 130
#: Exit code after SIGTERM (:data:`semi_core.cli._commands.EXIT_TERMINATED`).
from ._commands import EXIT_TERMINATED  # noqa: E402


@dataclass
class Result:
    """What a subcommand returns: a JSON payload and the text shown without ``--json``."""

    payload: dict[str, Any]
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def emit(result, *, as_json: bool) -> None:
    """Print a result: exactly one JSON object with ``--json``, else its text."""
    if isinstance(result, Result):
        payload, text = result.payload, result.text
    else:
        payload, text = result, None
    if as_json:
        print(json.dumps(to_jsonable(payload), sort_keys=False))
    else:
        print(text if text else json.dumps(to_jsonable(payload), indent=2))


def add_json_flag(parser) -> None:
    """Add the ``--json`` flag every subcommand takes."""
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object")


def load_npy(path: str, name: str) -> np.ndarray:
    """Load a ``.npy`` file without pickles (``allow_pickle=False``).

    An ``.npz`` archive, a pickled object array or a file that is not ``.npy`` is a
    ``ValueError`` naming the flag; a complex array is a ``TypeError``.
    """
    if not str(path).strip():
        raise ValueError(f"{name} must be a non-empty path")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{name}: no such file {path}")
    try:
        arr = np.load(p, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise ValueError(f"{name}: {path} holds pickled objects, which are refused "
                             "(allow_pickle=False)") from None
        raise ValueError(f"{name}: {path} is not a readable .npy file: {exc}") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{name}: {path} is not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray):  # an .npz archive gives an NpzFile
        close = getattr(arr, "close", None)
        if close is not None:
            close()
        raise ValueError(f"{name}: {path} is an .npz archive; save one array with np.save "
                         "(.npy)")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name}: {path} holds a complex array; real values are required")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: {path} must hold numbers, got dtype {arr.dtype}")
    return arr.astype(float)


class Terminated(KeyboardInterrupt):  # noqa: N818 - named like KeyboardInterrupt
    """Raised in the main thread by the CLI's SIGTERM handler (:func:`semi_core.cli.main`).

    A ``KeyboardInterrupt``, so SIGTERM stops work exactly as Ctrl-C does (the game runner
    cancels what has not started and lets running tasks finish, ``finally`` blocks and context
    managers run, partial outputs are removed; ``except Exception`` does not swallow it); the
    CLI still reports it as ``terminated`` (exit 143), also when a layer re-raised it as another
    ``KeyboardInterrupt``.
    """

    def __init__(self, signum: int = 15):
        super().__init__(f"stopped by signal {signum} (SIGTERM) before the command finished")
        self.signum = signum


class UsageError(ValueError):
    """An argparse usage error (unknown flag, missing value, invalid choice, bad type)."""

    def __init__(self, message: str, prog: str = "semi-core"):
        super().__init__(message)
        self.prog = prog


def classify_error(exc: BaseException) -> tuple[str, int]:
    """``(kind, exit code)`` of an exception for the CLI's error contract.

    Kinds are stable strings: ``usage``, ``invalid_argument``, ``resource``, ``corrupt_input``,
    ``file_not_found``, ``permission_denied``, ``bad_path``, ``timeout``, ``connection``,
    ``os_error``, ``missing_dependency``, ``numeric``, ``interrupted`` (SIGINT / Ctrl-C, exit
    130), ``terminated`` (SIGTERM, exit 143), ``user_exit`` (a ``sys.exit`` in code the command
    ran, such as a user's model factory, after the arguments were parsed) and ``internal``
    (exit 1: a bug, please report).
    Every other kind is a user error (exit 2).
    """
    import gzip
    import zlib

    from semi_core._validation import ResourceLimitError

    if isinstance(exc, UsageError):
        return "usage", 2
    if isinstance(exc, SystemExit):
        return "user_exit", 2
    if isinstance(exc, ResourceLimitError | MemoryError):
        return "resource", 2
    if isinstance(exc, zlib.error | EOFError | gzip.BadGzipFile):
        return "corrupt_input", 2
    if isinstance(exc, FileNotFoundError):
        return "file_not_found", 2
    if isinstance(exc, PermissionError):
        return "permission_denied", 2
    if isinstance(exc, IsADirectoryError | NotADirectoryError | FileExistsError):
        return "bad_path", 2
    if isinstance(exc, TimeoutError):
        return "timeout", 2
    if isinstance(exc, ConnectionError):
        return "connection", 2
    if isinstance(exc, OSError):
        return "os_error", 2
    if isinstance(exc, ImportError):
        return "missing_dependency", 2
    if isinstance(exc, ValueError | TypeError):
        return "invalid_argument", 2
    if isinstance(exc, ArithmeticError):
        return "numeric", 2
    if isinstance(exc, Terminated):
        return "terminated", EXIT_TERMINATED
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", EXIT_INTERRUPTED
    return "internal", 1
