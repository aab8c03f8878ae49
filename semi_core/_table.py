"""A small table type for results in notebooks and terminals (one home for summaries).

:class:`Table` holds rows of plain values; it prints as aligned text, renders as HTML in a
notebook (``_repr_html_``), converts to JSON-safe dicts and, when pandas is installed, to a
``DataFrame`` (``to_frame``). Result types return one from their ``summary()``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["Table", "ResultDisplay", "require_pandas"]


def require_pandas():
    """``pandas``, or an ImportError that says how to get it (pandas is optional)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("to_frame() needs pandas: pip install pandas") from None
    return pd


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
            return f"{v:.3e}"
        return f"{v:.4f}"
    return str(v)


class Table:
    """Rows of named values.

    Parameters
    ----------
    rows : sequence of dict
        One dict per row; the columns are the keys of the first row, in order.
    title : str
        Shown above the text and HTML forms.
    """

    def __init__(self, rows: Sequence[dict[str, Any]], title: str = ""):
        self.rows = [dict(r) for r in rows]
        self.title = title
        self.columns = list(self.rows[0]) if self.rows else []

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]

    def __repr__(self) -> str:
        cells = [[_fmt(r.get(c)) for c in self.columns] for r in self.rows]
        widths = [max([len(c)] + [len(row[j]) for row in cells])
                  for j, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        left = [isinstance(self.rows[0].get(c), str) if self.rows else False
                for c in self.columns]
        lines.append("  ".join(c.ljust(w) if lf else c.rjust(w)
                               for c, w, lf in zip(self.columns, widths, left, strict=True)))
        lines += ["  ".join(v.ljust(w) if lf else v.rjust(w)
                            for v, w, lf in zip(row, widths, left, strict=True))
                  for row in cells]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c)))}</td>"
                                        for c in self.columns) + "</tr>" for r in self.rows)
        cap = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def to_dict(self) -> list[dict[str, Any]]:
        """The rows as plain dicts (JSON-safe when the values are)."""
        return [dict(r) for r in self.rows]

    def to_frame(self):
        """A pandas ``DataFrame`` with one row per row (pandas optional)."""
        return require_pandas().DataFrame(self.rows, columns=self.columns)


class ResultDisplay:
    """What every result type shows in a terminal and a notebook (mixed into the result
    dataclasses, which are declared with ``repr=False``).

    A subclass defines ``summary() -> Table`` (one row per quantity, tidy: one value per
    row and column) and ``to_dict()`` (JSON-safe), and names the few fields of its one-line
    ``repr`` in ``_repr_fields``; the mixin gives ``__repr__`` (no arrays),
    ``_repr_html_`` (the summary as an HTML table) and ``to_frame()`` (the summary as a
    pandas ``DataFrame``, pandas optional).
    """

    _repr_fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        parts = []
        for name in self._repr_fields:
            v = getattr(self, name)
            parts.append(f"{name}={v!r}" if isinstance(v, str) else f"{name}={_fmt(v)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def summary(self) -> Table:
        """One row per scalar entry of ``to_dict()`` (``quantity, value``); result types with
        a richer table (one row per test, per attack, per epsilon) override it."""
        scalar = (str, int, float, bool, type(None))
        rows = [{"quantity": k, "value": v} for k, v in self.to_dict().items()
                if isinstance(v, scalar)]
        return Table(rows, title=repr(self))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict: the fields named in ``_repr_fields`` (subclasses give more)."""
        return {name: getattr(self, name) for name in self._repr_fields}

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_frame(self):
        """The summary as a tidy pandas ``DataFrame`` (pandas optional)."""
        return self.summary().to_frame()
