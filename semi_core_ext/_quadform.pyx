# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Batched quadratic forms through a whitened (triangular) factor.

For each row N_i of ``N`` (m x d) compute

    q_i = c0 + b^T (A N_i) + s * ||A N_i||^2

where ``A`` is upper triangular (d x d). With C2 = s A^T A and c1 = A^T b this equals
c0 + c1^T N_i + N_i^T C2 N_i. nogil scalar kernel -> prange loop; the NumPy twin lives in
``semi_core.kernels._twins.quadform_whitened``.
"""

from cython.parallel cimport prange


cdef inline double _row_quadform(const double[:, ::1] N, Py_ssize_t i,
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


def quadform_whitened(const double[:, ::1] N, const double[:, ::1] A, const double[::1] b,
                      double c0, double s, double[::1] out, int num_threads=0):
    """Fill ``out[i] = c0 + b.(A N_i) + s |A N_i|^2`` for every row (A upper triangular)."""
    cdef Py_ssize_t m = N.shape[0]
    cdef Py_ssize_t i
    if num_threads <= 0:
        for i in prange(m, nogil=True, schedule="static"):
            out[i] = _row_quadform(N, i, A, b, c0, s)
    else:
        for i in prange(m, nogil=True, schedule="static", num_threads=num_threads):
            out[i] = _row_quadform(N, i, A, b, c0, s)
    return out
