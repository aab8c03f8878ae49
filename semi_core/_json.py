"""JSON conversion shared by the CLI and the report (one home, below both)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["to_jsonable"]


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
