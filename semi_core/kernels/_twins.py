"""NumPy twins of every compiled kernel (the reference the kernels are tested against)."""

from __future__ import annotations

import numpy as np

__all__ = ["quadform_whitened", "quadform_cholsolve"]


def quadform_whitened(N: np.ndarray, A: np.ndarray, b: np.ndarray, c0: float, s: float) -> np.ndarray:
    """``c0 + b.(A N_i) + s |A N_i|^2`` for every row ``N_i`` (A upper triangular)."""
    W = N @ np.triu(A).T
    return c0 + W @ b + s * np.einsum("ij,ij->i", W, W)


def quadform_cholsolve(N: np.ndarray, L: np.ndarray, b: np.ndarray, c0: float, s: float) -> np.ndarray:
    """``c0 + b.w_i + s |w_i|^2`` with ``L w_i = N_i`` (L lower triangular)."""
    from scipy.linalg import solve_triangular  # lazy: scipy.linalg is slow to import

    if N.shape[0] == 0:
        return np.empty(0)
    W = solve_triangular(np.tril(L), N.T, lower=True, check_finite=False).T
    return c0 + W @ b + s * np.einsum("ij,ij->i", W, W)


# --- SeMI game chunk (twin of semi_core.kernels.engine_kernels.semi_chunk) ------------------
__all__ += ["semi_chunk"]


def _standardized_draws(rng, code: int, fparam: float, scale: float, size) -> np.ndarray:
    # Same Generator methods and elementwise operations as engine_kernels._draw.
    if code == 0:
        return rng.standard_normal(size)
    if code == 1:
        return rng.laplace(0.0, scale, size)
    if code == 2:
        return rng.standard_t(fparam, size) * scale
    if code == 3:
        return (np.where(rng.random(size) < fparam, 1.0, 0.0) - fparam) / scale
    return rng.standard_exponential(size) - 1.0


def semi_chunk(gen, rounds, setup, member_out, tau_out, stats_out, *, block: int = 256):
    """NumPy twin of the compiled SeMI chunk kernel (same Generator stream, same results).

    Parameters
    ----------
    gen : numpy.random.Generator
        The chunk's generator (consumed exactly as the kernel consumes it).
    rounds : int
        Rounds to play.
    setup : SemiChunkSetup
        The chunk's set-up record (:class:`semi_core.kernels._records.SemiChunkSetup`, whose
        attributes document every field).
    member_out, tau_out, stats_out : arrays (rounds,), (rounds,), (4, rounds)
        Outputs (``tau`` is 1-based).
    block : int
        Rounds per vectorised block (does not change the result).
    """
    (exact, code, fparam, scale, n_t, u, llr_c0, llr_k, log_w_unif, p_member, tau_cdf,
     fo_stationary, fo_A, fo_C0, fo_logdet0, fo_C1, fo_m1, fo_logdet1, fo_N) = setup
    n_t = np.asarray(n_t, dtype=np.int64)
    T, d = u.shape
    ctrl = gen.random((rounds, 3))
    member = ctrl[:, 0] < p_member
    tau = np.minimum(np.searchsorted(tau_cdf, ctrl[:, 1], side="right"), T - 1)
    n_tau = n_t[tau]
    j = np.minimum((ctrl[:, 2] * n_tau).astype(np.int64), n_tau - 1)
    offs = np.concatenate(([0], np.cumsum(n_t)))
    for r0 in range(0, rounds, block):
        r1 = min(r0 + block, rounds)
        m = r1 - r0
        mem, ta, jj = member[r0:r1], tau[r0:r1], j[r0:r1]
        W = np.empty((m, T, d))
        if exact:
            e = _standardized_draws(gen, code, fparam, scale, (m, int(offs[-1]), d))
            rows = np.flatnonzero(mem)
            e[rows, offs[ta[rows]] + jj[rows], :] = 0.0  # the datum z* replaces
            for t in range(T):
                acc = np.zeros((m, d))
                for k in range(int(n_t[t])):
                    acc += e[:, offs[t] + k, :]
                hit = (mem & (ta == t))[:, None]
                W[:, t, :] = (acc + np.where(hit, u[t], 0.0)) / n_t[t]
        else:
            g = gen.standard_normal((m, T, d))
            for t in range(T):
                nt = float(n_t[t])
                hit = (mem & (ta == t))[:, None]
                W[:, t, :] = np.where(hit, (np.sqrt(nt - 1.0) * g[:, t, :] + u[t]) / nt,
                                      g[:, t, :] / np.sqrt(nt))
        quad = np.einsum("rtd,rtd->rt", W, W)
        llr = llr_c0 + llr_k * (np.einsum("rtd,td->rt", W, u) - 0.5 * quad)
        stats_out[0, r0:r1] = llr[np.arange(m), ta]
        stats_out[2, r0:r1] = llr.max(axis=1) if T else np.nan
        x = llr + log_w_unif
        top = x.max(axis=1)
        with np.errstate(invalid="ignore"):
            tot = np.exp(x - np.where(np.isfinite(top), top, 0.0)[:, None]).sum(axis=1)
        stats_out[1, r0:r1] = np.where(np.isnan(top), np.nan,
                                       np.where(np.isfinite(top), top + np.log(tot), -np.inf))
        if fo_stationary:
            N = float(fo_N)
            Wf = np.einsum("t,rtd->rd", n_t.astype(float), W) / N
            q0 = np.einsum("rd,rd->r", Wf, Wf)
            diff = Wf - u[ta] / N
            q1 = np.einsum("rd,rd->r", diff, diff)
            stats_out[3, r0:r1] = (-0.5 * d * np.log((N - 1.0) / N)
                                   - N * N / (2.0 * (N - 1.0)) * q1 + 0.5 * N * q0)
        else:
            from scipy.linalg import solve_triangular  # lazy: slow to import

            S = np.einsum("tik,rtk->ri", np.tril(fo_A), W)
            v0 = solve_triangular(fo_C0, S.T, lower=True).T
            q0 = np.einsum("rd,rd->r", v0, v0)
            q1 = np.empty(m)
            for t in range(T):
                sel = ta == t
                if sel.any():
                    v1 = solve_triangular(fo_C1[t], (S[sel] - fo_m1[t]).T, lower=True).T
                    q1[sel] = np.einsum("rd,rd->r", v1, v1)
            stats_out[3, r0:r1] = fo_logdet0 - fo_logdet1[ta] - 0.5 * q1 + 0.5 * q0
    member_out[:] = member
    tau_out[:] = tau + 1
