"""Discovery of the symbolic topic modules and look-up of their derivations.

Every public module ``semi_core/symbolic/<topic>.py`` registers its closed forms with
:func:`semi_core.symbolic._core.register` at import time. This module finds those modules with
:mod:`pkgutil` and imports them, so a new topic module registers itself without any edit here.
The imports point one way only: topic modules -> ``_core``; ``_registry`` -> topic modules and
``_core``; ``_core`` imports neither (no import circle).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from pathlib import Path

from ._core import Derivation, registered

__all__ = ["topic_modules", "all_derivations", "get_derivation", "derivation_names"]

_PACKAGE = __name__.rsplit(".", 1)[0]


def topic_modules() -> tuple[str, ...]:
    """Names of the topic modules (public modules of ``semi_core.symbolic``), sorted."""
    here = [str(Path(__file__).resolve().parent)]
    return tuple(sorted(m.name for m in pkgutil.iter_modules(here)
                        if not m.name.startswith("_") and not m.ispkg))


@functools.cache
def _load() -> None:
    for name in topic_modules():
        importlib.import_module(f"{_PACKAGE}.{name}")


def derivation_names() -> list[str]:
    """Names of every registered derivation, in registration order, without building any.

    Returns
    -------
    list of str
        The names :func:`get_derivation` accepts.
    """
    _load()
    return list(registered())


def all_derivations() -> dict[str, Derivation]:
    """Every registered derivation, name -> :class:`Derivation` (built once, cached)."""
    _load()
    return {name: build() for name, build in registered().items()}


def get_derivation(name: str) -> Derivation:
    """One derivation by name; ``ValueError`` listing the valid names otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    _load()
    builders = registered()
    if name not in builders:
        raise ValueError(f"name must be one of {sorted(builders)}, got {name!r}")
    return builders[name]()
