"""Argument checks shared by every public function.

Bad input raises ``ValueError``/``TypeError`` naming the argument and the allowed range;
nothing is silently clipped.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import numpy as np

from semi_core._progress import format_seconds

__all__ = [
    "check_int",
    "check_batch_size",
    "check_positive",
    "check_probability",
    "check_open_unit",
    "check_finite_array",
    "check_tau",
    "check_covariance",
    "check_pmf",
    "check_delta",
    "check_failure_prob",
    "check_scores",
    "check_score_matrix",
    "as_score_array",
    "check_real",
    "check_output_path",
    "ResourceLimitError",
    "memory_limit",
    "check_memory",
    "time_limit",
    "DEFAULT_MAX_SECONDS",
    "check_work",
    "format_bytes",
]


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as ``int`` after checking type and range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        hi = "" if maximum is None else f"..{maximum}"
        raise ValueError(f"{name} must be in {minimum}{hi or '..inf'}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be in {minimum if minimum is not None else '-inf'}..{maximum}, got {value}")
    return value


def check_batch_size(n, name: str = "n") -> int:
    """Batch sizes must be integers >= 2 (the H1 batch keeps n-1 random points)."""
    return check_int(n, name, minimum=2)


def check_positive(value, name: str) -> float:
    """A finite, strictly positive float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def check_probability(value, name: str, *, low_open=True, high_open=True) -> float:
    """A probability in (0, 1) (ends open by default)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    lo_ok = value > 0 if low_open else value >= 0
    hi_ok = value < 1 if high_open else value <= 1
    if not (np.isfinite(value) and lo_ok and hi_ok):
        lb = "(0" if low_open else "[0"
        rb = "1)" if high_open else "1]"
        raise ValueError(f"{name} must be in {lb}, {rb}, got {value}")
    return value


def check_open_unit(values, name: str) -> np.ndarray:
    """Array of probabilities, every entry in the open interval (0, 1)."""
    arr = np.asarray(values, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if ((arr <= 0) | (arr >= 1)).any():
        raise ValueError(f"{name} must lie in (0, 1); got values from {arr.min()} to {arr.max()}")
    return arr


def check_finite_array(values, name: str, *, ndim: int | tuple[int, ...] | None = None,
                       shape: tuple | None = None, dtype=float) -> np.ndarray:
    """Convert to a float array and reject NaN/inf and wrong shapes."""
    if np.iscomplexobj(values):  # np.asarray(..., float) would drop the imaginary part silently
        raise TypeError(f"{name} must be real-valued, got a complex array")
    try:
        arr = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric array-like: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}, got shape {arr.shape}")
    if shape is not None:
        if len(shape) != arr.ndim or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            raise ValueError(f"{name} must have shape {shape} (None = any), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_tau(tau, T: int, name: str = "tau") -> int:
    """Insertion time: an integer in 1..T."""
    return check_int(tau, name, minimum=1, maximum=T)


def check_release_args(member, tau, T: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(member, tau)`` arguments of a mechanism's ``release``, checked one way.

    Parameters
    ----------
    member : array_like of bool
        Whether the target is inserted in each round (flattened to ``(R,)``).
    tau : int or array_like of int
        Insertion step(s), broadcast against ``member``.
    T : int
        Number of steps of the mechanism.

    Returns
    -------
    member : ndarray of bool, shape (R,)
    taus : ndarray of int64, shape (R,)
        Insertion steps in ``1..T`` (a read-only broadcast view).
    """
    member = np.asarray(member, dtype=bool).reshape(-1)
    taus = np.broadcast_to(np.asarray(tau, dtype=np.int64), member.shape)
    if taus.size and (taus.min() < 1 or taus.max() > T):
        raise ValueError(f"tau must be in 1..{T}")
    return member, taus


def check_covariance(cov, name: str = "cov", *, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate a symmetric positive-definite matrix; return ``(cov, cholesky_lower)``."""
    arr = check_finite_array(cov, name, ndim=2)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name} must be {d}x{d} to match the dimension, got {arr.shape}")
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(arr).max())):
        raise ValueError(f"{name} must be symmetric")
    try:
        chol = np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite (Cholesky failed)") from None
    # a singular matrix can pass Cholesky with a rounding-size pivot: refuse it, or every
    # whitened distance downstream is noise
    piv = np.diag(chol) ** 2
    if piv.size and piv.min() <= arr.shape[0] * np.finfo(float).eps * np.abs(np.diag(arr)).max():
        raise ValueError(f"{name} is numerically singular (a Cholesky pivot is at rounding "
                         "level): it must be positive definite with a condition number well "
                         "below 1e16")
    return arr, chol


def check_pmf(pmf, name: str, *, size: int | None = None) -> np.ndarray:
    """A probability mass function: non-negative, finite, summing to 1 (within 1e-9)."""
    arr = check_finite_array(pmf, name, ndim=1)
    if size is not None and arr.size != size:
        raise ValueError(f"{name} must have {size} entries, got {arr.size}")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    if abs(arr.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, sums to {arr.sum()!r}")
    return arr


def check_delta(delta, name: str = "delta") -> float:
    """``delta`` must be a real number in ``[0, 1)``."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a real number in [0, 1), got {type(delta).__name__}")
    delta = float(delta)
    if not (np.isfinite(delta) and 0.0 <= delta < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {delta}")
    return delta


def check_failure_prob(failure_prob, name: str = "failure_prob") -> float:
    r"""Failure probability :math:`\xi` of a certified bound, in ``(0, 0.5]``."""
    if isinstance(failure_prob, bool) or not isinstance(failure_prob, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 0.5], got "
                        f"{type(failure_prob).__name__}")
    xi = float(failure_prob)
    if not (np.isfinite(xi) and 0.0 < xi <= 0.5):
        raise ValueError(f"{name} must be in (0, 0.5], got {xi}")
    return xi


def check_scores(scores, name: str) -> np.ndarray:
    """1-D, non-empty float array without NaN (``+-inf`` allowed: e.g. infinite log-LRs).

    The one validator of membership scores: every path that certifies an epsilon bound calls
    it (directly or through :func:`check_score_matrix`); what it accepts is decided by
    :func:`as_score_array`.
    """
    return check_score_matrix(scores, name, ndim=1)


_NOTHING = object()


def _masked_in_sequence(seq) -> int:
    """Masked entries of masked arrays nested in lists/tuples (np.asarray drops their masks)."""
    total = 0
    for v in seq:
        if isinstance(v, np.ma.MaskedArray):
            total += int(np.ma.getmaskarray(v).sum())
        elif isinstance(v, list | tuple):
            total += _masked_in_sequence(v)
    return total


def _type_name(values) -> str:
    t = type(values)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def as_score_array(scores, name: str) -> np.ndarray:
    """Convert scores to a plain float ``ndarray`` exactly, or refuse them with their type named.

    Accepted, value for value: ``ndarray`` (and subclasses other than masked arrays) of bool
    (0/1), integer or real floating dtype; lists, tuples and nested sequences of real numbers;
    objects with ``__array__`` (pandas Series/DataFrame, CPU torch tensors, xarray) that give
    such an array; object arrays whose every element is a real number. A ``numpy.ma`` masked
    array is accepted as its data only when no entry is masked: a masked entry is refused, never
    silently unmasked (its data would enter the bound). Refused with ``TypeError``: complex
    values, strings and bytes (a CSV is parsed by its loader, not here), datetimes, ``None`` or
    other non-numbers in object arrays, generators and iterators (their values would be
    consumed), sets and mappings, anything NumPy cannot convert (a torch tensor that requires
    grad: detach it). Integers above :math:`2^{53}` round to the nearest float: a monotone map,
    so thresholds ``score > gamma`` and every distribution-free bound are unchanged in validity.
    Shape, emptiness and NaN are checked by :func:`check_score_matrix`.
    """
    if type(scores) is np.ndarray and scores.dtype.kind in "biuf":
        return np.asarray(scores, dtype=float)  # the common case, decided by type alone
    kind = _type_name(scores)
    if isinstance(scores, str | bytes | bytearray | memoryview | Set | Mapping | Iterator):
        raise TypeError(f"{name} must be an array of real numbers (ndarray, list, tuple, "
                        f"Series, tensor), got {kind}")
    n_masked = _masked_in_sequence(scores) if isinstance(scores, list | tuple) else 0
    if n_masked:
        raise TypeError(f"{name} is a {kind} holding masked arrays with {n_masked} masked "
                        "entries: masked scores are not dropped silently; pass the "
                        "compressed() arrays, or fill them explicitly")
    try:
        arr = np.asanyarray(scores)  # keeps a masked array (np.asarray would drop the mask)
    except Exception as exc:  # noqa: BLE001 - e.g. torch: RuntimeError for grad tensors
        raise TypeError(f"{name}: cannot convert {kind} to a numeric array: "
                        f"{' '.join(str(exc).split())[:200]}") from None
    if isinstance(arr, np.ma.MaskedArray):
        n_masked = int(np.ma.getmaskarray(arr).sum())
        if n_masked:
            raise TypeError(f"{name} is a masked array with {n_masked} masked entr"
                            f"{'y' if n_masked == 1 else 'ies'}: masked scores are not dropped "
                            "silently (their hidden values would enter the bound); pass "
                            "scores.compressed() to drop them, or fill them explicitly")
        arr = np.ma.getdata(arr)
    arr = np.asarray(arr)
    if arr.dtype.kind == "O":
        bad = next((v for v in arr.reshape(-1)
                    if not isinstance(v, numbers.Real | np.bool_)), _NOTHING)
        if bad is not _NOTHING:
            raise TypeError(f"{name} must hold real numbers only, got an element of type "
                            f"{_type_name(bad)} ({kind} of objects)")
    elif arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real-valued, got a complex array ({kind})")
    elif arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got {kind} of dtype {arr.dtype} "
                        "(strings, bytes, datetimes and records are not scores)")
    try:
        return np.asarray(arr, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"{name} must be a numeric array ({kind}): {exc}") from None


def check_score_matrix(scores, name: str, *, ndim: int = 2) -> np.ndarray:
    """Scores as a float array of ``ndim`` dimensions (rows = independent audits), non-empty
    along the last axis, without NaN, real-valued (what is accepted: :func:`as_score_array`)."""
    arr = as_score_array(scores, name)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape} "
                         f"({_type_name(scores)})")
    if arr.shape[-1] == 0 or arr.size == 0:
        raise ValueError(f"{name} is empty: both member and non-member scores are needed "
                         "(at least 1 each)")
    nan = int(np.isnan(arr).sum())
    if nan:
        raise ValueError(f"{name} contains NaN ({nan} values)")
    return arr


def check_real(value, name: str, *, finite: bool = True) -> float:
    """A real number (``bool`` refused); finite unless ``finite=False`` (NaN always refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or (finite and not np.isfinite(value)):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_output_path(path, name: str, *, kind: str = "file", suffix: str | None = None) -> Path:
    """Check an output path *before* any work is done; return it as a :class:`~pathlib.Path`.

    Nothing is opened at ``path`` and nothing is followed through a link there: the check calls
    ``lstat`` on the path and probes writability with a new, randomly named file created with
    ``O_EXCL | O_NOFOLLOW`` (:func:`semi_core._io.probe_writable_dir`), removed at once. The
    write itself goes through :mod:`semi_core._io` (a new file renamed over the path).

    ``kind="file"``: the parent directory must exist and accept new files; the path must be
    absent or a regular file the caller may write. A symbolic link (dangling or not) is refused
    (``FileExistsError``), a directory too (``IsADirectoryError``), and a FIFO, socket or device
    is refused at once, never opened (it would block or write elsewhere). In a sticky directory
    (``/tmp``) a file owned by someone else is refused (it could not be replaced).
    ``kind="dir"``: the path must be an existing directory (not a link) that accepts new files,
    or absent with its nearest existing ancestor a directory that does; it is *not* created here
    (:func:`semi_core._io.atomic_output_dir` publishes it complete at the end). An empty path is
    refused (it would silently mean the current directory).
    """
    import stat as _stat

    from semi_core._io import probe_writable_dir, refuse_link_or_special

    if path is None or not str(path).strip():
        raise ValueError(f"{name} must be a non-empty path, got {path!r}")
    if kind not in ("file", "dir"):
        raise ValueError(f"kind must be 'file' or 'dir', got {kind!r}")
    p = Path(str(path)).expanduser()
    if suffix is not None and kind == "file" and p.suffix.lower() != suffix:
        raise ValueError(f"{name} must name a {suffix} file, got {str(path)!r}")

    def probe(directory: Path, what: str) -> None:
        try:
            probe_writable_dir(directory)
        except OSError as exc:
            raise PermissionError(f"{name}: cannot create files in {what} {directory} "
                                  f"({exc.strerror or exc})") from None

    if kind == "file":
        st = refuse_link_or_special(p, name)
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise FileNotFoundError(f"{name}: directory {parent} does not exist")
        probe(parent, "the directory")
        if st is not None:
            if not os.access(p, os.W_OK, follow_symlinks=False):
                raise PermissionError(f"{name}: {path} is not writable (read-only file)")
            pst = os.stat(parent)
            euid = os.geteuid() if hasattr(os, "geteuid") else 0
            if (pst.st_mode & _stat.S_ISVTX and euid not in (0, st.st_uid, pst.st_uid)):
                raise PermissionError(f"{name}: {path} belongs to another user in a sticky "
                                      "directory and cannot be replaced")
        return p
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    if st is not None:
        if _stat.S_ISLNK(st.st_mode):
            raise FileExistsError(f"{name}: {path} is a symbolic link; output directories are "
                                  "never written through a link: remove it or name the "
                                  "directory itself")
        if not _stat.S_ISDIR(st.st_mode):
            raise FileExistsError(f"{name}: {path} exists and is not a directory")
        probe(p, "the directory")
        return p
    anc = p
    while not os.path.lexists(anc):
        if anc.parent == anc:
            break
        anc = anc.parent
    if not anc.is_dir():
        raise NotADirectoryError(f"{name}: {anc} (an ancestor of {path}) is not a directory")
    probe(anc, "the directory")
    return p


class ResourceLimitError(ValueError):
    """The work or memory a call would need exceeds what is available: refused up front.

    A ``ValueError`` (a user error: change the arguments); the message says what would work.
    """


def format_bytes(nbytes: float) -> str:
    """``1.5 GiB``-style size."""
    n = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
    return f"{n:.3g} EiB"  # pragma: no cover


def _parse_size(text: str) -> float:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    if t and t[-1] in mult:
        return float(t[:-1]) * mult[t[-1]]
    return float(t)


def memory_limit() -> float:
    """Bytes one call may allocate: ``SEMI_CORE_MAX_MEMORY`` (e.g. ``8G``) if set, else half of
    the physical memory (8 GiB where that cannot be read)."""
    env = os.environ.get("SEMI_CORE_MAX_MEMORY")
    if env:
        try:
            val = _parse_size(env)
        except ValueError:
            raise ValueError(f"SEMI_CORE_MAX_MEMORY must be a size like 8G, got {env!r}") from None
        if not (np.isfinite(val) and val > 0):
            raise ValueError(f"SEMI_CORE_MAX_MEMORY must be > 0, got {env!r}")
        return val
    try:
        return 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8.0 * 2**30


def check_memory(nbytes: float, what: str, *, hint: str = "") -> float:
    """Refuse (``ResourceLimitError``) when ``nbytes`` exceeds :func:`memory_limit`.

    ``what`` names the allocation; ``hint`` says what would work instead (chunking, a
    sufficient-statistic mode, a cluster).
    """
    limit = memory_limit()
    if not np.isfinite(nbytes) or nbytes > limit:
        msg = (f"{what} would need {format_bytes(nbytes) if np.isfinite(nbytes) else 'unbounded'}"
               f" of memory; the limit is {format_bytes(limit)} (half the RAM, or "
               "SEMI_CORE_MAX_MEMORY)")
        raise ResourceLimitError(msg + (f"; {hint}" if hint else ""))
    return float(nbytes)


_TIME_UNITS = {"S": 1.0, "M": 60.0, "MIN": 60.0, "H": 3600.0, "D": 86400.0}

#: Default of ``SEMI_CORE_MAX_SECONDS``: one day of estimated work.
DEFAULT_MAX_SECONDS = 86400.0


def time_limit() -> float:
    """Estimated seconds one call may take: ``SEMI_CORE_MAX_SECONDS`` if set, else one day.

    The variable takes seconds (``600``) or a number with a unit ``s``, ``m``/``min``, ``h``,
    ``d`` (``2h``); ``inf`` or ``none`` lifts the limit. The default (86400 s) refuses only work
    that cannot be meant (a million runs of a quadratic test), never a long but sane job.
    """
    env = os.environ.get("SEMI_CORE_MAX_SECONDS")
    if env is None or not env.strip():
        return DEFAULT_MAX_SECONDS
    t = env.strip().upper()
    if t in ("INF", "NONE", "UNLIMITED"):
        return float("inf")
    mult = 1.0
    for unit in sorted(_TIME_UNITS, key=len, reverse=True):
        if t.endswith(unit) and t[:-len(unit)].strip():
            mult, t = _TIME_UNITS[unit], t[:-len(unit)].strip()
            break
    try:
        val = float(t) * mult
    except ValueError:
        raise ValueError("SEMI_CORE_MAX_SECONDS must be a duration like 600, 30m, 2h or inf, "
                         f"got {env!r}") from None
    if np.isnan(val) or val <= 0:
        raise ValueError(f"SEMI_CORE_MAX_SECONDS must be > 0 (or inf), got {env!r}")
    return val


def check_work(what: str, *, nbytes: float | None = None, seconds: float | None = None,
               hint: str = "") -> None:
    """Refuse up front (``ResourceLimitError``) work whose estimate exceeds the limits.

    The one resource estimator's gate: every command and function that does work growing
    with its arguments estimates, *before* starting, the peak memory ``nbytes`` and the wall
    time ``seconds`` (from the arguments: counts times a per-unit cost) and calls this.

    Parameters
    ----------
    what : str
        The work, with the arguments that size it (``"seq-audit: 10^6 runs x 5000 pairs"``).
    nbytes : float, optional
        Estimated peak bytes; checked against :func:`memory_limit` (``SEMI_CORE_MAX_MEMORY``,
        default half the RAM). ``inf``/NaN (an overflowed estimate) is refused.
    seconds : float, optional
        Estimated wall seconds; checked against :func:`time_limit` (``SEMI_CORE_MAX_SECONDS``,
        default one day; ``inf`` lifts it). ``inf``/NaN is refused.
    hint : str
        What would work instead (smaller arguments, a cluster, a streaming mode).

    Raises
    ------
    ResourceLimitError
        A ``ValueError`` naming the work, the estimate, the limit and ``hint``.
    """
    if nbytes is not None:
        check_memory(float(nbytes), what, hint=hint)
    if seconds is None:
        return
    sec = float(seconds)
    limit = time_limit()
    if np.isnan(sec) or sec > limit:
        took = format_seconds(sec) if np.isfinite(sec) else "unbounded time"
        msg = (f"{what} would take about {took} (estimated before starting); the limit is "
               f"{format_seconds(limit)} (SEMI_CORE_MAX_SECONDS; default one day, 'inf' "
               "lifts it)")
        raise ResourceLimitError(msg + (f"; {hint}" if hint else ""))
