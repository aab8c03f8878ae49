"""Mechanism arguments shared by `power`, `simulate` and other commands."""

from __future__ import annotations

import numpy as np

from ._common import load_npy

__all__ = ["add_mechanism_args", "mechanism_from_args", "parse_tau"]


def add_mechanism_args(p) -> None:
    """--n --T --mu --sigma --target --dim --cov --target-file --tau."""
    p.add_argument("--n", type=int, default=10, help="batch size n >= 2 (default 10)")
    p.add_argument("--T", type=int, default=10, help="number of released updates (default 10)")
    p.add_argument("--mu", type=float, default=0.0, help="data mean (every coordinate; default 0)")
    p.add_argument("--sigma", type=float, default=1.0, help="data standard deviation (default 1)")
    p.add_argument("--target", type=float, default=3.0,
                   help="target z* (d = 1), or its first coordinate with --dim (default 3)")
    p.add_argument("--dim", type=int, default=1, help="data dimension d (default 1)")
    p.add_argument("--cov", metavar="FILE.npy", help="d x d covariance (overrides --sigma)")
    p.add_argument("--target-file", metavar="FILE.npy", help="target vector z* (overrides --target)")
    p.add_argument("--tau", default=None,
                   help="insertion time: an integer in 1..T, or 'uniform' (default: uniform)")


def mechanism_from_args(args):
    """Build the :class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean` the flags describe."""
    from semi_core._validation import check_int, check_positive
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    d = check_int(args.dim, "--dim", minimum=1)
    if args.cov:
        cov = load_npy(args.cov, "--cov")
        d = cov.shape[0] if cov.ndim == 2 else d
    else:
        cov = check_positive(args.sigma, "--sigma") ** 2
    if args.target_file:
        target = load_npy(args.target_file, "--target-file").astype(float)
        if target.ndim != 1:
            raise ValueError(f"--target-file must hold a 1-D vector, got shape {target.shape}")
        d = target.size
    else:
        target = np.full(d, float(args.mu))
        target[0] = float(args.target)
    mu = np.full(d, float(args.mu))
    if np.ndim(cov) == 2 and cov.shape != (d, d):
        raise ValueError(f"--cov must be {d}x{d} to match the target, got {cov.shape}")
    return EmpiricalMean(args.n, args.T, mu=mu, cov=cov, target=target)


def parse_tau(value, T: int):
    """'uniform'/None -> None (uniform law); an integer string -> int (validated later)."""
    if value is None or str(value).lower() == "uniform":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"--tau must be an integer in 1..{T} or 'uniform', got {value!r}") from None
