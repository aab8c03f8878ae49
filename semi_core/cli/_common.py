"""Shared CLI helpers: JSON conversion, output, common arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from semi_core._json import to_jsonable

__all__ = ["Result", "emit", "to_jsonable", "add_json_flag", "load_npy"]


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
    """Load a ``.npy`` file without pickles (``allow_pickle=False``)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{name}: no such file {path}")
    return np.load(p, allow_pickle=False)
