"""One place for every Numba JIT setting used by semi_core.

All compiled kernels are decorated with :func:`jit`, so the settings are uniform:
``cache=True`` (compiled code is reused across processes, including Dask workers),
``fastmath=False`` (IEEE semantics, so kernels agree with their NumPy twins to rounding),
``nogil=True`` (chunks run concurrently in threads) and ``parallel`` only where asked.

``SEMI_CORE_FORCE_TWIN=1`` makes :func:`use_twins` true: dispatchers then call the NumPy
twins in :mod:`semi_core.kernels._twins` instead of the compiled kernels (the test suite is
re-run this way for tests marked ``twin``).
"""

from __future__ import annotations

import os

__all__ = ["jit", "use_twins"]

try:  # numba is a core dependency, but keep the twins usable without it
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only on broken installs
    _numba = None


def use_twins() -> bool:
    """True when ``SEMI_CORE_FORCE_TWIN`` is set (not empty / ``0``) or Numba is missing.

    Read at call time, so a test may set the variable with ``monkeypatch.setenv``.
    """
    return os.environ.get("SEMI_CORE_FORCE_TWIN", "").strip() not in ("", "0") or _numba is None


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
        if _numba is None:  # pragma: no cover
            return f
        return _numba.njit(cache=True, fastmath=False, nogil=True, parallel=parallel,
                           inline=inline)(f)

    return wrap(fn) if fn is not None else wrap
