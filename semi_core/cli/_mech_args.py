"""Mechanism arguments shared by `power`, `simulate` and other commands.

Kept for importers; the definitions live in :mod:`semi_core.cli._options` (the one home of
shared CLI options).
"""

from __future__ import annotations

from ._options import add_mechanism_args, mechanism_from_args, parse_tau

__all__ = ["add_mechanism_args", "mechanism_from_args", "parse_tau"]
