"""The ``device`` argument of the torch layer (:mod:`semi_core.sgd.device`): CPU-only checks.

CI has no GPU: every test passes ``device="cpu"`` explicitly, and checks that a ``meta`` device,
an absent ``cuda`` device and a model on another device are refused with an error naming the
argument, before any work. ``benchmarks/bench_gpu.py`` runs the same audit on a GPU when one is
present.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from semi_core.sgd.device import STATS_DTYPE, model_device, resolve_device  # noqa: E402
from semi_core.sgd.dirac import WhiteBoxMechanism, play_white_box  # noqa: E402
from semi_core.sgd.one_run import synthetic_setup  # noqa: E402

NO_CUDA = not torch.cuda.is_available()


def test_default_is_the_models_device_and_cpu_is_accepted():
    model = nn.Linear(3, 2)
    assert resolve_device(None, model) == torch.device("cpu")
    assert resolve_device("cpu", model) == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert model_device(nn.ReLU()) == torch.device("cpu")


def test_meta_device_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match=r"device='meta'.*meta tensors hold no data"):
        resolve_device("meta")
    with pytest.raises(ValueError, match=r"mydev='meta'"):
        resolve_device(torch.device("meta"), name="mydev")
    with pytest.raises(ValueError, match="model's device.*meta"):
        resolve_device(None, nn.Linear(3, 2, device="meta"))


@pytest.mark.skipif(not NO_CUDA, reason="checks the error on a machine without a GPU")
@pytest.mark.parametrize("dev", ["cuda", "cuda:0", torch.device("cuda", 1)])
def test_absent_cuda_is_refused_naming_the_argument(dev):
    with pytest.raises(ValueError, match=r"device='cuda.*' is not available.*device='cpu'"):
        resolve_device(dev)


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match="device='gpu7' is not a torch device"):
        resolve_device("gpu7")
    with pytest.raises(TypeError, match="device must be None, a string or a torch.device"):
        resolve_device(0.5)


@pytest.mark.skipif(not NO_CUDA, reason="needs a model on another device than the one asked")
def test_model_elsewhere_is_refused():
    # a model on 'meta' asked to run on cpu: the toolkit never moves a user's model
    with pytest.raises(ValueError, match="meta"):
        resolve_device("cpu", nn.Linear(2, 2, device="meta"))


def test_white_box_mechanism_on_explicit_cpu_is_bit_identical():
    setup = synthetic_setup(4, 1.0, steps=2, seed=0)
    a = play_white_box(setup, rounds=16, tau=1, seed=1, semi=False)
    b = play_white_box(setup, rounds=16, tau=1, seed=1, semi=False, device="cpu")
    assert np.array_equal(a.scores("dirac")[0], b.scores("dirac")[0])
    assert np.array_equal(a.scores("dirac")[1], b.scores("dirac")[1])
    with pytest.raises(ValueError, match="device='meta'"):
        WhiteBoxMechanism(setup, device="meta")
    with pytest.raises(ValueError, match="device applies when mech is a WhiteBoxSetup"):
        play_white_box(WhiteBoxMechanism(setup), rounds=4, tau=1, seed=0, device="cpu")
    if NO_CUDA:
        with pytest.raises(ValueError, match="device='cuda' is not available"):
            WhiteBoxMechanism(setup, device="cuda")


def test_float32_setup_trains_in_float32_with_float64_statistics():
    setup = synthetic_setup(4, 1.0, steps=2, seed=0)
    fm32 = type(setup.fm)(setup.fm.module.float())
    import dataclasses

    s32 = dataclasses.replace(setup, fm=fm32, theta0=setup.theta0.float(),
                              pool_x=setup.pool_x.float(), ref_x=setup.ref_x.float())
    mech = WhiteBoxMechanism(s32, device="cpu")
    rel = mech.release(np.arange(8) % 2 == 0, 1, np.random.default_rng(0))
    traj, idx = mech.trajectories(rel)
    assert traj.dtype == torch.float32                      # training in the model's dtype
    s = mech.standardised(traj, idx)
    assert s.dtype == np.float64                            # statistics in float64
    # same draws in float64: the standardised updates agree to float32 rounding scaled by
    # n/(eta C) = 128 (|theta| ~ 1, eps32 ~ 6e-8: ~1e-5)
    mech64 = WhiteBoxMechanism(setup, device="cpu")
    traj64, idx64 = mech64.trajectories(mech64.release(np.arange(8) % 2 == 0, 1,
                                                       np.random.default_rng(0)))
    assert np.allclose(s, mech64.standardised(traj64, idx64), atol=1e-3)
    assert STATS_DTYPE == torch.float64


def test_dpsgd_mechanism_on_explicit_cpu_is_bit_identical(small_setup):
    from semi_core.sgd.mechanism import DPSGDMechanism

    member = np.arange(6) % 2 == 0
    a = DPSGDMechanism(small_setup)
    b = DPSGDMechanism(small_setup, device="cpu")
    assert b.setup is small_setup                      # already there: not copied
    ra = a.release(member, 2, np.random.default_rng(0))
    rb = b.release(member, 2, np.random.default_rng(0))
    assert np.array_equal(ra, rb)
    assert np.array_equal(a.log_lr_steps(ra), b.log_lr_steps(rb))
    with pytest.raises(ValueError, match="device='meta'"):
        DPSGDMechanism(small_setup, device="meta")
    if NO_CUDA:
        with pytest.raises(ValueError, match="device='cuda:0' is not available"):
            DPSGDMechanism(small_setup, device="cuda:0")


def test_move_setup_keeps_a_setup_already_there_and_checks_the_device():
    # the copy path needs a second device: benchmarks/bench_gpu.py exercises it on a GPU
    from semi_core.sgd.device import move_setup

    setup = synthetic_setup(4, 1.0, steps=2, seed=0)
    assert move_setup(setup, "cpu") is setup
    assert WhiteBoxMechanism(setup, device="cpu").setup is setup
    with pytest.raises(ValueError, match="device='meta'"):
        move_setup(setup, "meta")
