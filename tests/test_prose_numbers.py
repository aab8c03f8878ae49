"""Prose that reaches the LaTeX and errata documents shows numbers, never NumPy reprs."""

from semi_core.claims.sequential_dp_auditing import algorithms as A


def test_claim_detail_formats_numpy_scalars():
    """The failing point of App. B's betting range (the seed's printed form) is printed as
    numbers: 'alpha=0.01, tau=0', not "{'tau': np.float64(0.0)}"."""
    out = A._check_lambda_range({"lambda_max": 1 / (4 * A.alpha_ + 2 * A.tau_)}, None)
    assert not out.ok
    assert "at alpha=0.01, tau=0:" in out.detail
    assert "np." not in out.detail and "float64" not in out.detail
