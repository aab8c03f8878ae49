"""The batched DP-SGD log-LR from reference statistics at parameter points: both hypotheses'
factors in one call, one point shared by many games (the common theta_0 at step 1), and
the Woodbury factors against dense NumPy. Tolerances: float64 rounding (1e-10 relative; the
capacitance matrices have condition numbers below 10 here)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")


from semi_core.sgd.batched import (  # noqa: E402
    dense_reference_stats,
    ghost_log_lr,
    ghost_reference_stats,
    log_lr_from_stats,
)
from semi_core.sgd.grads import clip_rows  # noqa: E402
from semi_core.sgd.gradstats import woodbury_factors, woodbury_quad  # noqa: E402


def test_woodbury_factors_and_quad_match_dense_numpy(rng):
    P, m, d = 3, 7, 12
    w = rng.normal(size=(P, d, m))
    gram = torch.as_tensor(np.einsum("pdi,pdj->pij", w, w))
    alphas = (0.4, 0.35)
    betas = torch.as_tensor(rng.uniform(0.5, 2.0, size=(2, P)))
    chol, logdet = woodbury_factors(gram, alphas, betas, d)
    x = rng.normal(size=(P, d))
    for h in range(2):
        dense = [betas[h, p].item() * np.eye(d) + alphas[h] * w[p] @ w[p].T for p in range(P)]
        np.testing.assert_allclose(logdet[h].numpy(),
                                   [np.linalg.slogdet(a)[1] for a in dense], rtol=1e-10)
        proj = torch.as_tensor(np.einsum("pdi,pd->pi", w, x))
        q = woodbury_quad(chol[h], proj, torch.as_tensor((x * x).sum(1)), alphas[h],
                          betas[h])
        np.testing.assert_allclose(q.numpy(), [x[p] @ np.linalg.solve(dense[p], x[p])
                                               for p in range(P)], rtol=1e-10)
        # one factor shared by every vector: the first point's matrix for all P vectors
        q1 = woodbury_quad(chol[h][:1], torch.as_tensor(x @ w[0]),
                           torch.as_tensor((x * x).sum(1)), alphas[h], betas[h][:1])
        np.testing.assert_allclose(q1.numpy(), [v @ np.linalg.solve(dense[0], v) for v in x],
                                   rtol=1e-10)


@pytest.mark.parametrize("kind", ["logreg", "mlp"])
def test_one_shared_point_equals_the_point_repeated(kind, rng, tiny_problem):
    """Games at one common point (statistics and factors computed once, one solve with G
    right-hand sides) score as if each game had its own copy of the point: ghost and dense
    statistics, with and without DP noise."""
    fm, stack, ref_x, ref_y = tiny_problem(kind, rng)
    G = 5
    theta = fm.theta().reshape(1, -1)
    upd = 0.01 * torch.as_tensor(rng.normal(size=(G, fm.d)))
    tgt = torch.as_tensor(rng.normal(size=(G, fm.d)))
    kw = dict(eta=0.5, n=16, clip=0.5, shrinkage=0.1)
    for sdp in (0.0, 1.5):
        each = ghost_log_lr(upd, theta.expand(G, -1), stack, ref_x, ref_y, tgt, sigma_dp=sdp,
                            ridge=1e-4, **kw)
        shared = log_lr_from_stats(upd, tgt, ghost_reference_stats(
            stack, theta, ref_x, ref_y, clip=0.5, shrinkage=0.1, ridge=1e-4), sigma_dp=sdp,
            **kw)
        torch.testing.assert_close(shared, each, rtol=1e-10, atol=1e-10)
        ref = clip_rows(fm.per_sample_grads(theta[0], ref_x, ref_y), 0.5).unsqueeze(0)
        dense = log_lr_from_stats(upd, tgt, dense_reference_stats(ref, shrinkage=0.1,
                                                                  ridge=1e-4),
                                  sigma_dp=sdp, **kw)
        torch.testing.assert_close(dense, each, rtol=1e-10, atol=1e-10)


def test_points_must_be_one_or_one_per_game(rng):
    ref = torch.as_tensor(rng.normal(size=(2, 5, 4)))
    st = dense_reference_stats(ref)
    with pytest.raises(ValueError, match="1 or 3 points"):
        log_lr_from_stats(torch.zeros(3, 4, dtype=torch.float64),
                          torch.zeros(3, 4, dtype=torch.float64), st, eta=0.1, n=8,
                          sigma_dp=1.0, clip=1.0)
    with pytest.raises(ValueError, match="m=2"):
        dense_reference_stats(ref[:, :1])


def test_a_capacitance_matrix_that_is_not_positive_definite_is_refused(rng):
    w = rng.normal(size=(2, 6, 4))
    gram = torch.as_tensor(np.einsum("pdi,pdj->pij", w, w))
    with pytest.raises(ValueError, match="not positive definite"):
        woodbury_factors(gram, (-10.0,), torch.ones(1, 2, dtype=torch.float64), 6)


@pytest.mark.parametrize("m", [7, 128])
def test_factors_through_torchs_lapack_equal_cholesky_ex_bit_for_bit(m, rng, monkeypatch):
    """Where torch's library exports LAPACK's dpotrf, woodbury_factors calls it in place on the
    transposed capacitance matrices (no column-major copy): the same routine on the same
    triangle as torch.linalg.cholesky_ex, so the factors and log-determinants are equal bit for
    bit (m = 128: the default reference sample); they match dense NumPy (1e-10 as above); a
    matrix that is not positive definite is refused."""
    from semi_core.sgd import gradstats

    if gradstats._torch_potrf() is None:
        pytest.skip("torch's library does not export dpotrf here (cholesky_ex is used)")
    P, d = 4, 3 * m
    w = rng.normal(size=(P, d, m)) / np.sqrt(d)
    gram = torch.as_tensor(np.einsum("pdi,pdj->pij", w, w))
    gram[:, 0, 1] += 1e-9  # not symmetric bit for bit: the upper triangle is the one read
    alphas = (0.4, 0.35)
    betas = torch.as_tensor(rng.uniform(0.5, 2.0, size=(2, P)))
    fast = woodbury_factors(gram, alphas, betas, d)
    monkeypatch.setattr(gradstats, "_POTRF", False)   # torch.linalg.cholesky_ex
    slow = woodbury_factors(gram, alphas, betas, d)
    monkeypatch.undo()
    assert torch.equal(fast[0], slow[0]) and torch.equal(fast[1], slow[1])
    assert torch.equal(fast[0], fast[0].tril())
    for h in range(2):
        dense = [betas[h, p].item() * np.eye(d) + alphas[h] * w[p] @ w[p].T for p in range(P)]
        np.testing.assert_allclose(fast[1][h].numpy(),
                                   [np.linalg.slogdet(a)[1] for a in dense], rtol=1e-10)
    with pytest.raises(ValueError, match="not positive definite"):
        woodbury_factors(gram, (-10.0,), torch.ones(1, P, dtype=torch.float64), d)
