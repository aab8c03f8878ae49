"""Shared SymPy symbols (one object per name so expressions from different modules combine)."""

from __future__ import annotations

import sympy as sp

# Batch size n >= 2, positive scales, real locations.
n = sp.Symbol("n", positive=True)
d = sp.Symbol("d", positive=True, integer=True)
tau = sp.Symbol("tau", positive=True)
sigma = sp.Symbol("sigma", positive=True)
mu = sp.Symbol("mu", real=True)
z = sp.Symbol("z", real=True)
gamma = sp.Symbol("gamma", real=True)
xbar = sp.Symbol("xbar", real=True)          # batch mean Xbar_tau
muhat = sp.Symbol("muhat", real=True)        # released running mean mu_hat_tau
muhat_prev = sp.Symbol("muhat_prev", real=True)
N_prev = sp.Symbol("N_prev", nonnegative=True)   # N_{tau-1} = sum_{s<tau} n_s
N_T = sp.Symbol("N_T", positive=True)            # N_T = sum_s n_s
W = sp.Symbol("W", real=True)                    # final release mu_hat_T
m = sp.Symbol("m", nonnegative=True)             # squared Mahalanobis distance m*
q = sp.Symbol("q", nonnegative=True)             # N^T Sigma^{-1} N
ell = sp.Symbol("ell", real=True)                # N^T Sigma^{-1} delta
u = sp.Symbol("u", nonnegative=True)             # (N-delta)^T Sigma^{-1} (N-delta)
p = sp.Symbol("p", positive=True)                # false-positive rate
R2 = sp.Symbol("R2", nonnegative=True)

# Generic transition x | H_i ~ N(m_i, v_i).
x0 = sp.Symbol("x0", real=True)
m0 = sp.Symbol("m0", real=True)
m1 = sp.Symbol("m1", real=True)
v0 = sp.Symbol("v0", positive=True)
v1 = sp.Symbol("v1", positive=True)
