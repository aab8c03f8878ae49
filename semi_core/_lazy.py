"""Lazy public names of a package (PEP 562): one home for the module ``__getattr__`` /
``__dir__`` pair that ``semi_core.audit`` and ``semi_core.audit.sequential`` use, so that
importing a package does not import every submodule its names come from."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str], namespace: dict,
               public: list[str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    homes : mapping of str to str
        Public name -> the module defining it (absolute, or relative to ``package`` when it
        starts with ``.``).
    namespace : dict
        The package's ``globals()``: a resolved name is cached there, so ``__getattr__`` runs
        once per name.
    public : list of str
        The package's ``__all__`` (listed by ``__dir__``).

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``. An unknown name that is a submodule of ``package`` is
        imported (``semi_core.audit.roc`` keeps working as an attribute); any other unknown
        name raises :class:`AttributeError`.
    """

    def __getattr__(name: str):
        home = homes.get(name)
        if home is not None:
            value = getattr(importlib.import_module(home, package), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}"):
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
