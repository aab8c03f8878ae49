"""Optional extras: a missing one is named with the command that installs it.

``torch`` (and scikit-learn, safetensors) come with ``semi_core[torch]``, Opacus with
``semi_core[opacus]``, Dask with ``semi_core[dask]``. A module of the torch layer imported where
its extra is missing raises :class:`MissingExtraError` (a ``ModuleNotFoundError``, so
``except ImportError`` still catches it) that says which extra to install, instead of Python's
bare ``No module named 'torch'``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["EXTRA_OF", "MissingExtraError", "missing_extra", "extra_needed", "require",
           "import_lazily"]

#: Top-level module -> the optional extra that installs it.
EXTRA_OF = {"torch": "torch", "sklearn": "torch", "safetensors": "torch", "opacus": "opacus",
            "dask": "dask", "distributed": "dask"}


class MissingExtraError(ModuleNotFoundError):
    """An optional extra is not installed (the message names the ``pip install`` command)."""


def missing_extra(exc: ImportError, needed_by: str) -> MissingExtraError | None:
    """The clear error for ``exc`` when it is a missing optional extra, else ``None``.

    Parameters
    ----------
    exc : ImportError
        The error an import raised.
    needed_by : str
        What needed the module (a module or command name), for the message.

    Returns
    -------
    MissingExtraError or None
        ``None`` when ``exc`` is not about a module of an optional extra.
    """
    if isinstance(exc, MissingExtraError):
        return exc
    name = getattr(exc, "name", None) or ""
    root = name.split(".")[0]
    extra = EXTRA_OF.get(root)
    if extra is None or not isinstance(exc, ModuleNotFoundError):
        return None
    return MissingExtraError(
        f"{needed_by} needs {root}, which is not installed: it comes with the optional extra "
        f"[{extra}]: pip install 'semi_core[{extra}]' (in a clone: pip install -e '.[{extra}]')",
        name=name)


@contextmanager
def extra_needed(needed_by: str) -> Iterator[None]:
    """The one guard around imports of optional extras: within the block, an import of a missing
    extra's module raises :class:`MissingExtraError` naming the extra to install; any other
    ``ImportError`` passes through unchanged (it is not reworded as a missing extra).

    Parameters
    ----------
    needed_by : str
        What needs the imports (a module or command name), for the message.

    Returns
    -------
    contextmanager
        A context manager; use as ``with extra_needed("attack"): import torch``.

    Examples
    --------
    >>> with extra_needed("x"):
    ...     import math
    """
    try:
        yield
    except ImportError as exc:
        err = missing_extra(exc, needed_by)
        if err is None:
            raise
        raise err from None


def require(module: str, needed_by: str) -> None:
    """Import ``module`` or raise :class:`MissingExtraError` naming its extra.

    Parameters
    ----------
    module : str
        A module of an optional extra (``"torch"``).
    needed_by : str
        What needs it, for the message.

    Returns
    -------
    None
    """
    with extra_needed(needed_by):
        importlib.import_module(module)


def import_lazily(package: str, module: str):
    """``importlib.import_module(f"{package}.{module}")``, a missing extra named clearly (the
    lazy ``__getattr__`` of the torch-layer packages).

    Parameters
    ----------
    package, module : str
        The package and the submodule's name in it.

    Returns
    -------
    module
        The imported submodule.
    """
    with extra_needed(f"{package}.{module}"):
        return importlib.import_module(f"{package}.{module}")
