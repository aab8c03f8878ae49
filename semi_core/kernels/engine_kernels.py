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
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._names import SEMI_TESTS

from ._jit import jit

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


@jit
def semi_chunk(gen, rounds, setup, member_out, tau_out, stats_out):
    """Play ``rounds`` SeMI rounds with ``gen``; write ``member_out``, ``tau_out``, ``stats_out``.

    ``setup`` is a :class:`~semi_core.kernels._records.SemiChunkSetup` (its fields are
    documented there). See the module docstring for the model and the random-stream layout;
    the NumPy twin :func:`semi_core.kernels._twins.semi_chunk` takes the same arguments.
    """
    exact, code, fparam, scale = setup.exact, setup.code, setup.fparam, setup.scale
    n_t, u, llr_c0, llr_k = setup.n_t, setup.u, setup.llr_c0, setup.llr_k
    log_w_unif, p_member, tau_cdf = setup.log_w_unif, setup.p_member, setup.tau_cdf
    fo_stationary, fo_A, fo_C0, fo_logdet0 = (setup.fo_stationary, setup.fo_A, setup.fo_C0,
                                              setup.fo_logdet0)
    fo_C1, fo_m1, fo_logdet1, fo_N = setup.fo_C1, setup.fo_m1, setup.fo_logdet1, setup.fo_N
    T = n_t.shape[0]
    d = u.shape[1]
    ctrl = np.empty((rounds, 3))
    for r in range(rounds):
        for c in range(3):
            ctrl[r, c] = gen.random()
    acc = np.empty(d)
    w = np.empty(d)
    s = np.empty(d)
    tmp = np.empty(d)
    tmp2 = np.empty(d)
    llr = np.empty(T)
    for r in range(rounds):
        member = ctrl[r, 0] < p_member
        tau = 0
        while tau < T - 1 and ctrl[r, 1] >= tau_cdf[tau]:
            tau += 1
        j = int(ctrl[r, 2] * n_t[tau])
        if j >= n_t[tau]:
            j = n_t[tau] - 1
        member_out[r] = member
        tau_out[r] = tau + 1
        for i in range(d):
            s[i] = 0.0
        for t in range(T):
            nt = n_t[t]
            hit = member and t == tau
            if exact:
                _batch_sum(gen, code, fparam, scale, nt, j if hit else -1, acc)
                for i in range(d):
                    add = u[t, i] if hit else 0.0
                    w[i] = (acc[i] + add) / nt
            else:
                if hit:
                    c1 = math.sqrt(nt - 1.0)
                    for i in range(d):
                        w[i] = (c1 * gen.standard_normal() + u[t, i]) / nt
                else:
                    c1 = math.sqrt(float(nt))
                    for i in range(d):
                        w[i] = gen.standard_normal() / c1
            dot = 0.0
            sq = 0.0
            for i in range(d):
                dot += u[t, i] * w[i]
                sq += w[i] * w[i]
            llr[t] = llr_c0[t] + llr_k[t] * (dot - 0.5 * sq)
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
        # SeMI*, SeMI-max, SeMI-Unif (log-sum-exp with the unif weights)
        stats_out[0, r] = llr[tau]
        mx = -np.inf
        top = -np.inf
        nan_seen = False  # NaN propagates to SeMI-max and SeMI-Unif, as in NumPy
        for t in range(T):
            if math.isnan(llr[t]):
                nan_seen = True
            elif llr[t] > mx:
                mx = llr[t]
            v = llr[t] + log_w_unif[t]
            if v > top:
                top = v
        stats_out[2, r] = np.nan if nan_seen else mx
        if nan_seen:
            stats_out[1, r] = np.nan
        elif top == -np.inf:
            stats_out[1, r] = -np.inf
        else:
            tot = 0.0
            for t in range(T):
                tot += math.exp(llr[t] + log_w_unif[t] - top)
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
            stats_out[3, r] = (-0.5 * d * math.log((N - 1.0) / N)
                               - N * N / (2.0 * (N - 1.0)) * q1 + 0.5 * N * q0)
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
