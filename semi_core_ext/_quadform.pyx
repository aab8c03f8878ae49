# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Batched quadratic forms through a Cholesky-whitened factor.

For each row N_i of ``N`` (m x d) compute

    q_i = c0 + b^T w_i + s * ||w_i||^2

with the whitened vector either ``w_i = L^{-1} N_i`` (``quadform_cholsolve``: L lower
triangular, the Cholesky factor of a covariance; forward substitution, no inverse formed) or
``w_i = A N_i`` (``quadform_whitened``: A upper triangular). nogil scalar kernels -> prange
loops; the NumPy twins live in ``semi_core.kernels._twins``.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

# Below this many scalar operations an OpenMP region costs more than it saves.
DEF SERIAL_WORK = 65536
# Rows solved together by the blocked kernel (lanes for auto-vectorisation).
DEF BLOCK = 16


cdef inline double _row_upper(const double[:, ::1] N, Py_ssize_t i,
                              const double[:, ::1] A, const double[::1] b,
                              double c0, double s) noexcept nogil:
    cdef Py_ssize_t d = N.shape[1]
    cdef Py_ssize_t j, k
    cdef double w, lin = 0.0, sq = 0.0
    for j in range(d):
        w = 0.0
        for k in range(j, d):
            w = w + A[j, k] * N[i, k]
        lin = lin + b[j] * w
        sq = sq + w * w
    return c0 + lin + s * sq


cdef inline void _block_solve(const double[:, ::1] N, Py_ssize_t i0, Py_ssize_t nb,
                              const double[:, ::1] L, const double[::1] b,
                              double c0, double s, double* w, double[::1] out) noexcept nogil:
    # w is laid out w[k * BLOCK + r]: the innermost loops run over the rows r of the block.
    cdef Py_ssize_t d = N.shape[1]
    cdef Py_ssize_t j, k, r
    cdef double lin[BLOCK]
    cdef double sq[BLOCK]
    cdef double ljk, inv
    for r in range(nb):
        lin[r] = 0.0
        sq[r] = 0.0
    for j in range(d):
        for r in range(nb):
            w[j * BLOCK + r] = N[i0 + r, j]
        for k in range(j):
            ljk = L[j, k]
            for r in range(nb):
                w[j * BLOCK + r] -= ljk * w[k * BLOCK + r]
        inv = 1.0 / L[j, j]
        for r in range(nb):
            w[j * BLOCK + r] *= inv
            lin[r] += b[j] * w[j * BLOCK + r]
            sq[r] += w[j * BLOCK + r] * w[j * BLOCK + r]
    for r in range(nb):
        out[i0 + r] = c0 + lin[r] + s * sq[r]


def quadform_whitened(const double[:, ::1] N, const double[:, ::1] A, const double[::1] b,
                      double c0, double s, double[::1] out, int num_threads=0):
    """Fill ``out[i] = c0 + b.(A N_i) + s |A N_i|^2`` (A upper triangular)."""
    cdef Py_ssize_t m = N.shape[0]
    cdef Py_ssize_t i
    cdef int nt = num_threads if num_threads > 0 else 0
    if nt == 1 or m * N.shape[1] * N.shape[1] < SERIAL_WORK:
        with nogil:
            for i in range(m):
                out[i] = _row_upper(N, i, A, b, c0, s)
    elif nt > 0:
        for i in prange(m, nogil=True, schedule="static", num_threads=nt):
            out[i] = _row_upper(N, i, A, b, c0, s)
    else:
        for i in prange(m, nogil=True, schedule="static"):
            out[i] = _row_upper(N, i, A, b, c0, s)
    return out


def quadform_cholsolve(const double[:, ::1] N, const double[:, ::1] L, const double[::1] b,
                       double c0, double s, double[::1] out, int num_threads=0):
    """Fill ``out[i] = c0 + b.w_i + s |w_i|^2`` with ``L w_i = N_i`` (L lower triangular).

    Rows are solved in blocks of 16 so that the forward substitution vectorises across rows.
    """
    cdef Py_ssize_t m = N.shape[0]
    cdef Py_ssize_t d = N.shape[1]
    cdef Py_ssize_t nblocks = (m + BLOCK - 1) // BLOCK
    cdef Py_ssize_t blk, i0
    cdef double* w
    cdef int nt = num_threads if num_threads > 0 else 0
    if m == 0:
        return out
    if nt == 1 or m * d * d < SERIAL_WORK:
        w = <double*> malloc(max(d, 1) * BLOCK * sizeof(double))
        if w == NULL:
            raise MemoryError()
        with nogil:
            for blk in range(nblocks):
                i0 = blk * BLOCK
                _block_solve(N, i0, min(BLOCK, m - i0), L, b, c0, s, w, out)
        free(w)
    elif nt > 0:
        with nogil, parallel(num_threads=nt):
            w = <double*> malloc(max(d, 1) * BLOCK * sizeof(double))
            for blk in prange(nblocks, schedule="static"):
                _block_solve(N, blk * BLOCK, min(BLOCK, m - blk * BLOCK), L, b, c0, s, w, out)
            free(w)
    else:
        with nogil, parallel():
            w = <double*> malloc(max(d, 1) * BLOCK * sizeof(double))
            for blk in prange(nblocks, schedule="static"):
                _block_solve(N, blk * BLOCK, min(BLOCK, m - blk * BLOCK), L, b, c0, s, w, out)
            free(w)
    return out
