"""Argument checks shared by every public function.

Bad input raises ``ValueError``/``TypeError`` naming the argument and the allowed range;
nothing is silently clipped.
"""

from __future__ import annotations

import numbers

import numpy as np

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
    it (directly or through :func:`check_score_matrix`).
    """
    return check_score_matrix(scores, name, ndim=1)


def check_score_matrix(scores, name: str, *, ndim: int = 2) -> np.ndarray:
    """Scores as a float array of ``ndim`` dimensions (rows = independent audits), non-empty
    along the last axis, without NaN, real-valued."""
    if np.iscomplexobj(scores):
        raise TypeError(f"{name} must be real-valued, got a complex array")
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.shape[-1] == 0 or arr.size == 0:
        raise ValueError(f"{name} is empty: both member and non-member scores are needed "
                         "(at least 1 each)")
    nan = int(np.isnan(arr).sum())
    if nan:
        raise ValueError(f"{name} contains NaN ({nan} values)")
    return arr
