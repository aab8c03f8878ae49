"""A trace of kernel use for the test suite (no Numba import: the Cython dispatcher uses it too).

``SEMI_CORE_KERNEL_TRACE=PATH`` makes every kernel dispatch create the empty file ``PATH``
(see :mod:`semi_core.kernels._jit`).
"""

from __future__ import annotations

import os

__all__ = ["note_kernel_use"]

_TRACE_ENV = "SEMI_CORE_KERNEL_TRACE"
_traced: str | None = None


def note_kernel_use() -> None:
    """Mark that a kernel dispatch happened, when ``SEMI_CORE_KERNEL_TRACE`` names a file.

    Creates that (empty) file once per process and path; never follows a link and never
    fails the caller (an unwritable path is ignored: the trace is a test-suite aid).
    """
    global _traced
    path = os.environ.get(_TRACE_ENV)
    if not path or path == _traced:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    os.close(fd)
    _traced = path
