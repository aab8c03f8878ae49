"""One place for every Numba JIT setting used by semi_core.

All compiled kernels are decorated with :func:`jit`, so the settings are uniform:
``cache=True`` (compiled code is reused across processes, including Dask workers),
``fastmath=False`` (IEEE semantics, so kernels agree with their NumPy twins to rounding),
``nogil=True`` (chunks run concurrently in threads) and ``parallel`` only where asked.

``SEMI_CORE_FORCE_TWIN=1`` makes :func:`use_twins` true: dispatchers then call the NumPy
twins in :mod:`semi_core.kernels._twins` instead of the compiled kernels (the test suite is
re-run this way for the tests that exercise a kernel).

``SEMI_CORE_KERNEL_TRACE=PATH`` makes every kernel dispatch (a call of :func:`use_twins` or
of the Cython dispatcher) create the empty file ``PATH`` once per process and path: the
test suite sets it per test to learn, in the compiled pass, which tests reach a kernel
(also in subprocesses they start), and re-runs just those with the twins.

Numba is imported lazily: by :func:`jit` (so by importing a module that defines a compiled
kernel) or :func:`numba_module`, never by importing this module. Importing Numba costs about
0.26 s of CPU and loading cached kernels as much again, which a small job run on the twins
does not pay (``semi_core.game.engine.choose_kernel``); a dispatcher that may run on the twins
imports its kernel module only when the compiled kernel is chosen.
"""

from __future__ import annotations

import importlib.util
import os

from ._trace import note_kernel_use

__all__ = ["jit", "use_twins", "note_kernel_use", "numba_available", "numba_module"]

_NUMBA: dict = {}  # "available": bool (found on the path), "module": the imported module


def _install_compile_notice() -> None:
    """One stderr line (:func:`semi_core._progress.notice_compiling`) when a kernel of this
    package compiles: Numba's cache had no entry for it (the first run after an install or an
    upgrade); loading from the cache fires no compile event."""
    try:
        from numba.core import event as ev
    except ImportError:  # pragma: no cover - an older Numba: no notice
        return
    from semi_core._progress import notice_compiling

    class _Notice(ev.Listener):
        def on_start(self, event):
            disp = (event.data or {}).get("dispatcher")
            module = getattr(getattr(disp, "py_func", None), "__module__", None) or ""
            if module.startswith("semi_core."):
                notice_compiling()

        def on_end(self, event):
            pass

    ev.register("numba:compile", _Notice())  # for the life of the process


def numba_available() -> bool:
    """Whether Numba is installed, without importing it (a path lookup, cached).

    Returns
    -------
    bool
        True when ``import numba`` would find the package.
    """
    if "available" not in _NUMBA:
        # numba is a core dependency, but keep the twins usable without it
        _NUMBA["available"] = importlib.util.find_spec("numba") is not None
    return _NUMBA["available"]


def numba_module():
    """Import Numba (once) and install the compile notice; None when Numba is missing.

    Returns
    -------
    module or None
        The ``numba`` module.
    """
    if "module" not in _NUMBA:
        mod = None
        if numba_available():
            try:
                import numba as mod
            except ImportError:  # pragma: no cover - exercised only on broken installs
                mod = None
        _NUMBA["module"] = mod
        if mod is not None:
            _install_compile_notice()
    return _NUMBA["module"]


def use_twins() -> bool:
    """True when ``SEMI_CORE_FORCE_TWIN`` is set (not empty / ``0``) or Numba is missing.

    Read at call time, so a test may set the variable with ``monkeypatch.setenv``. Every
    dispatcher asks this before running a kernel, so it also notes the use
    (:func:`note_kernel_use`).

    Returns
    -------
    bool
        Whether the NumPy twins run instead of the compiled kernels.
    """
    note_kernel_use()
    return (os.environ.get("SEMI_CORE_FORCE_TWIN", "").strip() not in ("", "0")
            or not numba_available())


def jit(fn=None, *, parallel: bool = False, inline: str = "never"):
    """Decorate a kernel with the project's Numba settings.

    Parameters
    ----------
    fn : callable, optional
        Function to compile (decorator used with or without arguments).
    parallel : bool
        Enable ``prange`` parallel loops for this kernel.
    inline : {"never", "always"}
        Numba-IR inlining of small helpers.
    """

    def wrap(f):
        numba = numba_module()
        if numba is None:  # pragma: no cover
            return f
        return numba.njit(cache=True, fastmath=False, nogil=True, parallel=parallel,
                           inline=inline)(f)

    return wrap(fn) if fn is not None else wrap
