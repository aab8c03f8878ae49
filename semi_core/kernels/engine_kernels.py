r"""Compiled SeMI game loop for the empirical-mean mechanism (Numba), one chunk per call.

One call plays ``rounds`` rounds of the SeMI game (seed Alg. 1-2) with a single
``numpy.random.Generator`` and writes, per round, the membership bit, the insertion time and
the four statistics (SeMI*, SeMI-Unif, SeMI-max, Final Observation). Memory is
:math:`O(\text{rounds}\cdot T + d^2 T)`; no ``rounds x T x n`` array is formed.

Everything is evaluated in whitened coordinates of each step. With data
:math:`x = \mu_t + L_t e` (see :mod:`semi_core.mechanisms.distributions`) the whitened batch
mean is

.. math::

    w_t = L_t^{-1}(\bar X_t - \mu_t) = \frac1{n_t}\Big(\sum_{k\ne j} e_{t,k}
          + B\,\mathbb 1\{t=\tau\}\,u_t\Big) + (1-B\,\mathbb 1\{t=\tau\})\frac{e_{t,j}}{n_t},
    \qquad u_t = L_t^{-1}(z^*-\mu_t),

and the per-step Gaussian log-LR (seed Thm 3.1 / App. C with :math:`(\mu_t,\Sigma_t,n_t)`) is

.. math::

    \log LR_t = -\frac d2\log\frac{n_t-1}{n_t} - \frac{m_t}{2(n_t-1)}
                + \frac{n_t}{n_t-1}\Big(u_t^\top w_t - \tfrac12\|w_t\|^2\Big),
    \qquad m_t = \|u_t\|^2 .

Random-stream layout of one chunk (the NumPy twin
:func:`semi_core.kernels._twins.semi_chunk` consumes the Generator identically):

1. ``3 * rounds`` uniforms, round-major: ``(u_B, u_tau, u_j)``; ``B = u_B < p_member``,
   ``tau`` by inverting the CDF of :math:`\nu_\tau`, ``j = floor(u_j n_tau)``.
2. Exact mode: for each round, step, datum and coordinate one standardised variate; the
   variate of datum ``j`` of batch ``tau`` is drawn and discarded when ``B = 1`` (it is the
   element that ``z*`` replaces). Sufficient mode: for each round and step ``d`` standard
   normals ``g`` and :math:`w_t = g/\sqrt{n_t}` or :math:`(\sqrt{n_t-1}\,g + u_t)/n_t`.

Cost (``benchmarks/bench_engine.py``): for ``d = 1`` with a stationary covariance the kernel
works in blocks of 128 rounds: the block's control values first (``tau`` by counting the CDF
entries below ``u_tau``, equal to the search since the CDF is non-decreasing, with no
data-dependent branch), then the draws (the stream order above, one number per step kept: the
batch sum or the one normal), then the statistics by straight loops over the block's rounds,
which LLVM vectorises: one pass per step for the whitened mean (one division; the step that
holds :math:`z^*` selects its own numerator and divisor), its log-LR, the running maxima and
the Final Observation sum, then one pass per step for the SeMI-Unif terms; the operations per
round are the general path's, so the results are the same. The terms :math:`e^{x_t-\max}` of
SeMI-Unif are computed by the branch-free polynomial of :mod:`semi_core.kernels.witness`
(error :math:`\le 2` ulp) instead of a libm call per step: SeMI-Unif can differ from a libm
``exp`` in its last bits (the other three statistics and the stream are unchanged). Sufficient
mode draws ``u_j`` (the stream is the same) but does not keep it.
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._names import SEMI_TESTS

from ._jit import jit
from ._witness_nb import _exp_neg

__all__ = ["semi_chunk", "STAT_NAMES"]

#: Order of the rows of the statistics output.
STAT_NAMES = SEMI_TESTS  # row order of the kernel's output


@jit(inline="always")
def _draw(gen, code, fparam, scale):
    # One standardised variate; ``scale`` is the family's precomputed constant.
    if code == 0:
        return gen.standard_normal()
    if code == 1:
        return gen.laplace(0.0, scale)
    if code == 2:
        return gen.standard_t(fparam) * scale
    if code == 3:
        b = 1.0 if gen.random() < fparam else 0.0
        return (b - fparam) / scale
    return gen.standard_exponential() - 1.0


@jit(inline="always")
def _batch_sum(gen, code, fparam, scale, nt, skip, acc):
    # acc = sum over the batch's data (datum ``skip`` drawn and discarded); the family branch
    # is hoisted out of the loops so the Gaussian path is a plain ziggurat loop.
    d = acc.shape[0]
    for i in range(d):
        acc[i] = 0.0
    if code == 0 and d == 1:
        # scalar accumulator: keeps the d = 1 sum in a register
        a = 0.0
        for k in range(nt):
            x = gen.standard_normal()
            if k != skip:
                a += x
        acc[0] = a
    elif code == 0:
        for k in range(nt):
            if k == skip:
                for _ in range(d):
                    gen.standard_normal()
            else:
                for i in range(d):
                    acc[i] += gen.standard_normal()
    else:
        for k in range(nt):
            if k == skip:
                for _ in range(d):
                    _draw(gen, code, fparam, scale)
            else:
                for i in range(d):
                    acc[i] += _draw(gen, code, fparam, scale)


@jit
def _forward_solve(L, x, out):
    # out = L^{-1} x for lower-triangular L (forward substitution, no inverse formed).
    d = x.shape[0]
    for i in range(d):
        acc = x[i]
        for k in range(i):
            acc -= L[i, k] * out[k]
        out[i] = acc / L[i, i]


#: Rounds per block of the one-dimensional path (its scratch, ~ ``T + 6`` doubles per round,
#: stays in the L1 cache).
_BLOCK = 128


@jit
def _chunk_d1(gen, rounds, setup, ctrl, member_out, tau_out, stats_out):
    # d = 1, stationary covariance, in blocks of rounds: (0) the block's control values
    # (straight loops over the rounds, no draws); (1) the random draws in the stream order of
    # the general path (round, step, datum), reduced to one number per step (the batch sum, or
    # the one normal of sufficient mode); (2) everything else as straight branch-free loops
    # over the block's rounds, which LLVM vectorises (the same IEEE operations per round as the
    # general path, so the same results).
    exact, code, fparam, scale = setup.exact, setup.code, setup.fparam, setup.scale
    n_t, u, llr_c0, llr_k = setup.n_t, setup.u, setup.llr_c0, setup.llr_k
    log_w_unif, p_member, tau_cdf, N = setup.log_w_unif, setup.p_member, setup.tau_cdf, setup.fo_N
    T = n_t.shape[0]
    B = min(_BLOCK, max(rounds, 1))
    # step t of round i: the batch sum (exact) or the normal (sufficient), then its log-LR
    x = np.empty((T, B))
    hit_t = np.empty(B, dtype=np.int64)  # the step of the inserted datum, -1 if none
    tau_b = np.empty(B, dtype=np.int64)
    j_b = np.empty(B, dtype=np.int64)
    s0 = np.empty(B)
    mx = np.empty(B)
    top = np.empty(B)
    bad = np.empty(B, dtype=np.bool_)
    tot = np.empty(B)
    acc = np.empty(1)
    ntf = np.empty(T)
    hit_a = np.empty(T)  # the hit step's w = (hit_a g + u) / n_t
    miss_d = np.empty(T)  # any other step's w = g / miss_d
    u_N = np.empty(T)
    for t in range(T):
        ntf[t] = float(n_t[t])
        hit_a[t] = 1.0 if exact else math.sqrt(n_t[t] - 1.0)
        miss_d[t] = ntf[t] if exact else math.sqrt(float(n_t[t]))
        u_N[t] = u[t, 0] / N
    fo_c0 = -0.5 * 1 * math.log((N - 1.0) / N)
    fo_c1 = N * N / (2.0 * (N - 1.0))
    c_mem, c_tau, c_j = ctrl[0], ctrl[1], ctrl[ctrl.shape[0] - 1]
    for r0 in range(0, rounds, B):
        m = min(B, rounds - r0)
        # phase 0: B, tau (CDF inversion by counting: the CDF is non-decreasing), j
        for i in range(m):
            tau_b[i] = 0
        for t in range(T - 1):
            ct = tau_cdf[t]
            for i in range(m):
                tau_b[i] += c_tau[r0 + i] >= ct
        for i in range(m):
            r = r0 + i
            member = c_mem[r] < p_member
            tau = tau_b[i]
            member_out[r] = member
            tau_out[r] = tau + 1
            hit_t[i] = tau if member else -1
        if exact:
            for i in range(m):
                nt = n_t[tau_b[i]]
                j_b[i] = min(int(c_j[r0 + i] * nt), nt - 1)
        # phase 1: the draws (scalar; the Generator is sequential)
        if not exact:
            for i in range(m):
                for t in range(T):
                    x[t, i] = gen.standard_normal()
        elif code == 0:
            for i in range(m):
                ht = hit_t[i]
                j = j_b[i]
                for t in range(T):
                    # the batch sum without a test per datum: the data before datum j, datum j
                    # drawn and discarded (z* replaces it), the data after it
                    nt = n_t[t]
                    stop = j if ht == t else nt
                    a = 0.0
                    for _ in range(stop):
                        a += gen.standard_normal()
                    if stop < nt:
                        gen.standard_normal()
                        for _ in range(stop + 1, nt):
                            a += gen.standard_normal()
                    x[t, i] = a
        else:
            for i in range(m):
                for t in range(T):
                    _batch_sum(gen, code, fparam, scale, n_t[t],
                               j_b[i] if hit_t[i] == t else -1, acc)
                    x[t, i] = acc[0]
        # phase 2: whitened means and log-LRs (in place), running max / log-sum-exp top,
        # Final Observation sum; one pass per step. The whitened mean is
        # (a g + b) / c with (a, b, c) = (hit_a, u, n_t) at the hit step and (1, 0, miss_d)
        # elsewhere: the same quotient as g / miss_d (1 g + 0 = g, up to the sign of a zero
        # g, which no statistic sees), so one division per step and no second pass for the
        # hit step. np.true_divide: IEEE division (no zero test per element; the divisors
        # are >= 1), which LLVM vectorises.
        for i in range(m):
            s0[i] = 0.0
            mx[i] = -np.inf
            top[i] = -np.inf
            bad[i] = False
            tot[i] = 0.0
        for t in range(T):
            nt = ntf[t]
            u0 = u[t, 0]
            ha, md = hit_a[t], miss_d[t]
            c0, kt, lw = llr_c0[t], llr_k[t], log_w_unif[t]
            for i in range(m):
                h = hit_t[i] == t
                w0 = np.true_divide((ha if h else 1.0) * x[t, i] + (u0 if h else 0.0),
                                    nt if h else md)
                lt = c0 + kt * ((0.0 + u0 * w0) - 0.5 * (0.0 + w0 * w0))
                x[t, i] = lt
                s0[i] += nt * w0
                bad[i] |= lt != lt  # NaN fails every comparison
                mx[i] = lt if lt > mx[i] else mx[i]
                v = lt + lw
                top[i] = v if v > top[i] else top[i]
        # SeMI-Unif: exp(-(top - x_t)) by the vectorised polynomial, summed in step order
        for t in range(T):
            lw = log_w_unif[t]
            for i in range(m):
                tot[i] += _exp_neg(top[i] - (x[t, i] + lw))
        for i in range(m):
            r = r0 + i
            tau = tau_b[i]
            stats_out[0, r] = x[tau, i]
            stats_out[2, r] = np.nan if bad[i] else mx[i]
            wi = s0[i] / N
            q0 = 0.0 + wi * wi
            diff = wi - u_N[tau]
            q1 = 0.0 + diff * diff
            stats_out[3, r] = fo_c0 - fo_c1 * q1 + 0.5 * N * q0
        for i in range(m):
            r = r0 + i
            if bad[i] or top[i] == np.inf:
                stats_out[1, r] = np.nan
            elif top[i] == -np.inf:
                stats_out[1, r] = -np.inf
            else:
                stats_out[1, r] = top[i] + math.log(tot[i])


@jit
def semi_chunk(gen, rounds, setup, member_out, tau_out, stats_out):
    """Play ``rounds`` SeMI rounds with ``gen``; write ``member_out``, ``tau_out``, ``stats_out``.

    ``setup`` is a :class:`~semi_core.kernels._records.SemiChunkSetup` (its fields are
    documented there). See the module docstring for the model and the random-stream layout;
    the NumPy twin :func:`semi_core.kernels._twins.semi_chunk` takes the same arguments.

    Parameters
    ----------
    gen : numpy.random.Generator
        The chunk's generator (consumed in the documented stream layout).
    rounds : int
        Number of rounds R.
    setup : SemiChunkSetup
        The game's parameters.
    member_out : ndarray of bool, shape (R,)
        Receives the membership bits.
    tau_out : ndarray of int64, shape (R,)
        Receives the insertion times.
    stats_out : ndarray of float64, shape (4, R)
        Receives the four statistics.
    """
    exact, code, fparam, scale = setup.exact, setup.code, setup.fparam, setup.scale
    n_t, u, llr_c0, llr_k = setup.n_t, setup.u, setup.llr_c0, setup.llr_k
    log_w_unif, p_member, tau_cdf = setup.log_w_unif, setup.p_member, setup.tau_cdf
    fo_stationary, fo_A, fo_C0, fo_logdet0 = (setup.fo_stationary, setup.fo_A, setup.fo_C0,
                                              setup.fo_logdet0)
    fo_C1, fo_m1, fo_logdet1, fo_N = setup.fo_C1, setup.fo_m1, setup.fo_logdet1, setup.fo_N
    T = n_t.shape[0]
    d = u.shape[1]
    # the control uniforms (u_B, u_tau, u_j) of every round, one row each; sufficient mode
    # never reads u_j: it is drawn and not kept
    ctrl = np.empty((3 if exact else 2, rounds))
    for r in range(rounds):
        ctrl[0, r] = gen.random()
        ctrl[1, r] = gen.random()
        c_j = gen.random()
        if exact:
            ctrl[2, r] = c_j
    if d == 1 and fo_stationary:
        _chunk_d1(gen, rounds, setup, ctrl, member_out, tau_out, stats_out)
        return
    acc = np.empty(d)
    w = np.empty(d)
    s = np.empty(d)
    tmp = np.empty(d)
    tmp2 = np.empty(d)
    llr = np.empty(T)
    # per-step and per-chunk constants, hoisted out of the round loop (same values)
    sq_n = np.empty(T)
    sq_n1 = np.empty(T)
    for t in range(T):
        sq_n[t] = math.sqrt(float(n_t[t]))
        sq_n1[t] = math.sqrt(n_t[t] - 1.0)
    fo_c0 = -0.5 * d * math.log((fo_N - 1.0) / fo_N)
    fo_c1 = fo_N * fo_N / (2.0 * (fo_N - 1.0))
    scalar = d == 1 and fo_stationary  # d = 1: every vector is one register
    for r in range(rounds):
        member = ctrl[0, r] < p_member
        tau = 0
        while tau < T - 1 and ctrl[1, r] >= tau_cdf[tau]:
            tau += 1
        j = int(ctrl[2, r] * n_t[tau]) if exact else 0  # j: exact mode only
        if j >= n_t[tau]:
            j = n_t[tau] - 1
        member_out[r] = member
        tau_out[r] = tau + 1
        for i in range(d):
            s[i] = 0.0
        s0 = 0.0
        # SeMI-max and the SeMI-Unif maximum, accumulated step by step
        mx = -np.inf
        top = -np.inf
        nan_seen = False  # NaN propagates to SeMI-max and SeMI-Unif, as in NumPy
        for t in range(T):
            nt = n_t[t]
            hit = member and t == tau
            if scalar:
                u0 = u[t, 0]
                if exact:
                    if code == 0:
                        # the Gaussian batch sum in a register (datum ``skip`` discarded)
                        skip = j if hit else -1
                        a = 0.0
                        for k in range(nt):
                            x = gen.standard_normal()
                            if k != skip:
                                a += x
                    else:
                        _batch_sum(gen, code, fparam, scale, nt, j if hit else -1, acc)
                        a = acc[0]
                    w0 = (a + (u0 if hit else 0.0)) / nt
                elif hit:
                    w0 = (sq_n1[t] * gen.standard_normal() + u0) / nt
                else:
                    w0 = gen.standard_normal() / sq_n[t]
                lt = llr_c0[t] + llr_k[t] * ((0.0 + u0 * w0) - 0.5 * (0.0 + w0 * w0))
                s0 += nt * w0
            else:
                if exact:
                    _batch_sum(gen, code, fparam, scale, nt, j if hit else -1, acc)
                    for i in range(d):
                        add = u[t, i] if hit else 0.0
                        w[i] = (acc[i] + add) / nt
                elif hit:
                    for i in range(d):
                        w[i] = (sq_n1[t] * gen.standard_normal() + u[t, i]) / nt
                else:
                    for i in range(d):
                        w[i] = gen.standard_normal() / sq_n[t]
                dot = 0.0
                sq = 0.0
                for i in range(d):
                    dot += u[t, i] * w[i]
                    sq += w[i] * w[i]
                lt = llr_c0[t] + llr_k[t] * (dot - 0.5 * sq)
                # Final Observation: accumulate mu_hat_T - mu_bar (whitened when stationary).
                if fo_stationary:
                    for i in range(d):
                        s[i] += nt * w[i]
                else:
                    for i in range(d):
                        a = 0.0
                        for k in range(i + 1):
                            a += fo_A[t, i, k] * w[k]
                        s[i] += a
            llr[t] = lt
        if scalar:
            s[0] = s0
        for t in range(T):  # branch-free: NaN fails every comparison
            lt = llr[t]
            nan_seen = nan_seen or lt != lt
            mx = lt if lt > mx else mx
            v = lt + log_w_unif[t]
            top = v if v > top else top
        # SeMI*, SeMI-max, SeMI-Unif (log-sum-exp with the unif weights)
        stats_out[0, r] = llr[tau]
        stats_out[2, r] = np.nan if nan_seen else mx
        if nan_seen or top == np.inf:
            stats_out[1, r] = np.nan
        elif top == -np.inf:
            stats_out[1, r] = -np.inf
        else:
            # exp(-(top - x_t)) by the vectorised polynomial (no libm call per step)
            tot = 0.0
            for t in range(T):
                tot += _exp_neg(top - (llr[t] + log_w_unif[t]))
            stats_out[1, r] = top + math.log(tot)
        # Final Observation log-LR
        if fo_stationary:
            N = fo_N
            q0 = 0.0
            q1 = 0.0
            for i in range(d):
                wi = s[i] / N
                q0 += wi * wi
                diff = wi - u[tau, i] / N
                q1 += diff * diff
            stats_out[3, r] = fo_c0 - fo_c1 * q1 + 0.5 * N * q0
        else:
            _forward_solve(fo_C0, s, tmp)
            q0 = 0.0
            for i in range(d):
                q0 += tmp[i] * tmp[i]
            for i in range(d):
                tmp2[i] = s[i] - fo_m1[tau, i]
            _forward_solve(fo_C1[tau], tmp2, tmp)
            q1 = 0.0
            for i in range(d):
                q1 += tmp[i] * tmp[i]
            stats_out[3, r] = fo_logdet0 - fo_logdet1[tau] - 0.5 * q1 + 0.5 * q0
