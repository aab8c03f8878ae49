"""White-box Dirac canary and bug zoo on semi_core's batched trainer (no Opacus needed).

Monte Carlo tolerances: 4.5 standard errors (tests/conftest.MC_SIGMAS); the standard error of a
sample mean is sd/sqrt(N), of a sample standard deviation sd/sqrt(2(N-1)).
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.bugs import BUGS, get_bug, privatize  # noqa: E402
from semi_core.sgd.dirac import (  # noqa: E402
    WhiteBoxMechanism,
    WhiteBoxScorer,
    WhiteBoxSetup,
    draw_runs,
    train_batched,
)
from semi_core.sgd.dpsgd import GameDraw, train_dpsgd_batched  # noqa: E402

from .conftest import white_box_setup as wb_setup  # noqa: E402

MC = 4.5


def plan_runs(setup, *, rounds, tau, seed):
    """``rounds`` runs (``k`` canaries each, bits i.i.d. Bernoulli(1/2)) at insertion time tau."""
    rng = np.random.default_rng(seed)
    member = rng.random(rounds * setup.k) < 0.5
    return draw_runs(setup, member, tau, rng)


def train_white_box(setup, runs, *, bug=None, fast=True):
    return train_batched(setup, runs, bug=bug, fast=fast)


def white_box_scores(setup, traj, runs, *, semi=True):
    """Scores of every game, run-major (the runner's scorer on the packed releases)."""
    mech = WhiteBoxMechanism(setup)
    rel = mech.pack_releases(traj, len(runs) * setup.k)
    return WhiteBoxScorer(mech, semi)(rel, runs.tau.reshape(-1))


def standardised(setup, traj, tau):
    j = torch.as_tensor(setup.coords)
    cfg = setup.cfg
    upd = (traj[:, 1:] - traj[:, :-1])[:, :, j]
    return (-cfg.batch_size / (cfg.lr * cfg.clip) * upd).numpy()      # (R, T, k)


def test_dirac_coordinates_are_isolated(problem):
    setup, mom = wb_setup(problem, k=4)
    assert np.all(mom == 0)
    # weight columns of the two always-zero features (Linear(8, 3): W[c, f] at 8c + f)
    assert set(setup.coords.tolist()) <= {8 * c + f for c in range(3) for f in (6, 7)}


def test_dirac_statistic_is_exactly_gaussian_pm1(problem):
    sigma = 2.0
    setup, _ = wb_setup(problem, sigma=sigma, k=2)
    plan = plan_runs(setup, rounds=500, tau=2, seed=3)
    with torch.no_grad():
        traj = train_white_box(setup, plan)
    s = standardised(setup, traj, 2)[:, 1, :].reshape(-1)
    m = plan.member.reshape(-1)
    for sel, mean in ((m, 1.0), (~m, -1.0)):
        v = s[sel]
        assert abs(v.mean() - mean) < MC * sigma / math.sqrt(v.size)
        assert abs(v.std(ddof=1) - sigma) < MC * sigma / math.sqrt(2 * (v.size - 1))
    # other steps carry noise only
    rest = standardised(setup, traj, 2)[:, [0, 2], :].reshape(-1)
    assert abs(rest.mean()) < MC * sigma / math.sqrt(rest.size)
    scores = white_box_scores(setup, traj, plan, semi=False)
    np.testing.assert_allclose(scores["dirac"], 2 * s / sigma**2, rtol=1e-9, atol=1e-12)


def test_input_canary_trainer_matches_dpsgd_trainer(problem):
    """Our white-box trainer with an input canary is the lead's DP-SGD trainer on the same draws."""
    setup, _ = wb_setup(problem, kind="input", sigma=1.0)
    plan = plan_runs(setup, rounds=8, tau=2, seed=1)
    with torch.no_grad():
        ours = train_white_box(setup, plan)
    draws = []
    for i, mem in enumerate(plan.member[:, 0]):
        draws.append(GameDraw(batches=plan.batches[i], tau=int(plan.tau[i, 0]) if mem else None,
                              slot=int(plan.slots[i, 0]) if mem else None, noise=plan.noise[i]))
    with torch.no_grad():
        ref = train_dpsgd_batched(setup.fm, setup.theta0, draws, setup.pool_x, setup.pool_y,
                                  (setup.canary_x, setup.canary_y), setup.cfg)
    torch.testing.assert_close(ours, ref, rtol=1e-10, atol=1e-12)
    scores = white_box_scores(setup, ours, plan)
    assert {"semi_sgd", "semi_max", "delta_diff", "back_front_ratio"} <= set(scores)
    assert all(np.all(np.isfinite(v)) and v.shape == (8,) for v in scores.values())
    at_tau = white_box_scores(setup, ours, plan, semi="tau")
    assert "semi_max" not in at_tau
    np.testing.assert_allclose(at_tau["semi_sgd"], scores["semi_sgd"], rtol=1e-12)


# (bug, clip, predicted shift of s_tau per world, predicted sd of s_tau)
BUG_EFFECTS = [
    (None, 1.0, 1.0, lambda s, c: s),
    ("noise_unscaled", 2.0, 1.0, lambda s, c: s / c),
    ("wrong_batch_size", 1.0, 1.0, lambda s, c: s / BUGS["wrong_batch_size"].factor),
    ("clip_mismatch", 1.0, BUGS["clip_mismatch"].factor, lambda s, c: s),
    ("batch_clip", 2.0, 4.0, lambda s, c: s),          # canary M = 4C gets through unclipped
]


@pytest.mark.parametrize("bug,clip,shift,sd", BUG_EFFECTS)
def test_bug_effect_on_dirac_statistic(problem, bug, clip, shift, sd):
    sigma = 1.5
    setup, _ = wb_setup(problem, sigma=sigma, clip=clip, scale=4.0)
    plan = plan_runs(setup, rounds=300, tau=2, seed=11)
    with torch.no_grad():
        traj = train_white_box(setup, plan, bug=get_bug(bug))
    s = standardised(setup, traj, 2)[:, 1, 0]
    m = plan.member[:, 0]
    want_sd = sd(sigma, clip)
    for sel, mean in ((m, shift), (~m, -shift)):
        v = s[sel]
        assert abs(v.mean() - mean) < MC * want_sd / math.sqrt(v.size)
        assert abs(v.std(ddof=1) - want_sd) < MC * want_sd / math.sqrt(2 * (v.size - 1))
    mu_obs = 2 * shift / want_sd
    fac = 1.0 if bug is None else get_bug(bug).mu_factor(clip=clip, n=16, steps=3)
    assert mu_obs <= fac * 2 / sigma + 1e-12  # never more than the stated true mu


def test_noise_reused_contrast_is_exact(problem):
    setup, _ = wb_setup(problem, sigma=3.0)
    plan = plan_runs(setup, rounds=40, tau=2, seed=5)
    with torch.no_grad():
        traj = train_white_box(setup, plan, bug=get_bug("noise_reused"))
    c = white_box_scores(setup, traj, plan, semi=False)["dirac_contrast"]
    np.testing.assert_allclose(c, np.where(plan.member[:, 0], 1.0, -1.0), atol=1e-8)
    with torch.no_grad():
        traj = train_white_box(setup, plan)
    c = white_box_scores(setup, traj, plan, semi=False)["dirac_contrast"]
    assert np.abs(np.abs(c) - 1).max() > 0.5   # the correct run is noisy


def test_privatize_rejects_bad_clip_and_unknown_bug():
    g = torch.zeros(2, 3, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="clip"):
        privatize(g, torch.zeros(2, 4, dtype=torch.float64), clip=0.0, sigma_dp=1.0)
    with pytest.raises(ValueError, match="bug"):
        get_bug("no_such_bug")
    assert get_bug("none") is None and get_bug(None) is None


def test_setup_rejects_bad_canary(problem):
    setup, _ = wb_setup(problem)
    with pytest.raises(ValueError, match="coords"):
        WhiteBoxSetup(**{**setup.__dict__, "coords": [setup.fm.d]})
    with pytest.raises(ValueError, match="scale"):
        WhiteBoxSetup(**{**setup.__dict__, "scale": 0.5})
    with pytest.raises(ValueError, match="tau"):
        plan_runs(setup, rounds=4, tau=0, seed=0)
    with pytest.raises(ValueError, match="tau"):
        plan_runs(setup, rounds=4, tau=setup.cfg.steps + 1, seed=0)
    with pytest.raises(ValueError, match="semi"):
        WhiteBoxScorer(WhiteBoxMechanism(setup), semi="yes")


@pytest.mark.parametrize("bug", [None, *BUGS])
def test_fast_path_equals_per_sample_reference(problem, bug):
    """The ghost path (swap of the canary slots) equals the generic per-sample path of
    :func:`semi_core.sgd.bugs.privatize` for every bug, with 2 canaries per run."""
    setup, _ = wb_setup(problem, sigma=1.0, clip=0.3, k=2)
    plan = plan_runs(setup, rounds=6, tau=2, seed=8)
    with torch.no_grad():
        fast = train_white_box(setup, plan, bug=get_bug(bug), fast=True)
        ref = train_white_box(setup, plan, bug=get_bug(bug), fast=False)
    torch.testing.assert_close(fast, ref, rtol=1e-9, atol=1e-10)
