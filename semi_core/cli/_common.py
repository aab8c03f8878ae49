"""Shared CLI helpers: JSON conversion, output, common arguments."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Result", "emit", "to_jsonable", "add_json_flag", "load_npy"]


@dataclass
class Result:
    """What a subcommand returns: a JSON payload and the text shown without ``--json``."""

    payload: dict[str, Any]
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def to_jsonable(obj):
    """Convert numpy scalars/arrays and non-finite floats to plain JSON values."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Path):
        return str(obj)
    return obj


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
