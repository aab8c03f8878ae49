"""The ``device`` argument of TrainingLoop and CheckpointRuns (semi_core.sgd.device's rule):
``device="cpu"`` is the default on a CPU model, bit for bit; ``meta`` and absent devices are
refused, naming ``device``, before any training; a float32 model trains in float32 while the
statistics are float64. The CUDA paths run where a GPU is present (skipped otherwise)."""

import copy
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from semi_core.game.play import play  # noqa: E402
from semi_core.integrations import training as tr  # noqa: E402
from semi_core.integrations.checkpoints import CheckpointRuns, load_model  # noqa: E402
from semi_core.integrations.training import TrainingLoop  # noqa: E402
from semi_core.sgd.grads import clip_rows  # noqa: E402
from tests.integrations import ckpt_helpers as H  # noqa: E402
from tests.integrations.user_loop import (  # noqa: E402
    BATCH,
    CLIP,
    LR,
    SIGMA,
    STEPS,
    X,
    Y,
    make_model,
    user_train,
)

SPEC = "tests.integrations.ckpt_helpers:make_model"
CUDA = torch.cuda.is_available()
ABSENT = ("meta", "cuda:99")   # no data / not on any machine this suite runs on


def _loop(model=None, train=user_train, reference=(X[:64], Y[:64]), **kw):
    kw = {"canary": "dirac", "noise_multiplier": SIGMA, **kw}
    return TrainingLoop(train, make_model() if model is None else model,
                        reference=reference, steps=STEPS, lr=LR, batch_size=BATCH,
                        max_grad_norm=CLIP, **kw)


def _same_game(a, b):
    np.testing.assert_array_equal(a.member, b.member)
    assert set(a.stats) == set(b.stats)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])


@pytest.mark.parametrize("canary", ["dirac", "input"])
def test_cpu_device_is_the_default_bit_for_bit(canary):
    kw = {"canary": canary}
    if canary == "input":
        kw["canary_record"] = (np.r_[np.zeros(5), 4.0], 2)
    base, cpu = _loop(**kw), _loop(device="cpu", **kw)
    assert base.device == cpu.device == torch.device("cpu")
    _same_game(play(base, 8, seed=5, tau=2), play(cpu, 8, seed=5, tau=2))


@pytest.mark.parametrize("device", ABSENT)
def test_absent_or_meta_device_is_refused_before_training(device):
    calls = []

    def train(model, run):
        calls.append(1)
        user_train(model, run)

    with pytest.raises(ValueError, match=r"device=.*(meta|not available)"):
        _loop(train=train, device=device)
    assert calls == []


def test_meta_model_is_refused_naming_device():
    with pytest.raises(ValueError, match="meta tensors hold no data.*pass device='cpu'"):
        _loop(model=make_model().to("meta"), device=None)
    with pytest.raises(TypeError, match="device must be None, a string or a torch.device"):
        _loop(device=0)


def test_float32_model_trains_in_float32_with_float64_statistics(monkeypatch):
    """The standardised update s_t = -(n / (eta C)) (theta_t - theta_{t-1})_j and the moments
    a_t = (n-1) m / C, var_t = sigma^2 + (n-1) v / C^2 recomputed in NumPy float64 from the
    float64 releases and the float32 gradients at the recorded parameters: they agree to 1e-12
    relative (the former float32 arithmetic put var_t off by 2e-8 here)."""
    dtypes = []

    def train(model, run):
        dtypes.append({p.dtype for p in model.parameters()})
        user_train(model, run)

    import tests.integrations.user_loop as U

    monkeypatch.setattr(U, "X", X.float())     # the user's float32 data
    loop = _loop(model=make_model().float(), train=train)
    rel = loop.release(np.array([True, False]), 2, np.random.default_rng(0))
    assert dtypes == [{torch.float32}] * 2 and rel.dtype == np.float64
    s, a, var = loop._dirac_parts(rel)
    traj = np.concatenate([np.broadcast_to(loop.theta0.numpy(), (2, 1, loop.fm.d)), rel], 1)
    j, n, C = loop.coordinate, BATCH, CLIP
    want_s = -(n / (LR * C)) * np.diff(traj[:, :, j], axis=1)
    np.testing.assert_allclose(s, want_s, rtol=1e-12, atol=0)
    for t in range(STEPS):
        th = torch.as_tensor(traj[:, t], dtype=torch.float32)
        g = clip_rows(loop.fm.per_sample_grads_batched(th, loop.ref_x, loop.ref_y, shared=True),
                      C)[..., j].numpy().astype(np.float64)
        np.testing.assert_allclose(a[:, t], (n - 1) * g.mean(1) / C, rtol=1e-12)
        np.testing.assert_allclose(var[:, t], SIGMA**2 + (n - 1) * g.var(1, ddof=1) / C**2,
                                   rtol=1e-12)
    assert np.isfinite(loop.log_lr_steps(rel)).all()


def test_global_rng_forks_every_cuda_generator_on_a_cuda_device(monkeypatch):
    """torch.manual_seed seeds every GPU: a run on CUDA forks (and restores) them all."""
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert tr._cuda_devices(torch.device("cuda:1")) == [0, 1]
    assert tr._cuda_devices(torch.device("cpu")) == []
    assert tr._cuda_devices(None) == []


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_cuda_loop_repeats_and_restores_the_cuda_generator():
    """A loop that draws from the global CUDA generator gives the same releases at the same
    seed, and the caller's CUDA random state is unchanged afterwards."""
    model = make_model().cuda()
    gpu_x, gpu_y = X.cuda(), Y.cuda()

    def cuda_train(model, run):
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        for t in range(1, run.steps + 1):
            idx = torch.randperm(len(gpu_x), generator=run.generator, device="cuda")[:BATCH]
            x, y = run.canary_batch(t, gpu_x[idx], gpu_y[idx])
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            with torch.no_grad():
                for p in model.parameters():   # the global CUDA generator
                    p.grad += torch.randn(p.shape, device="cuda", dtype=p.dtype) * SIGMA * CLIP
            opt.step()
            run.record(model)

    loop = _loop(model=model, train=cuda_train, canary="input", reference=(gpu_x[:64], gpu_y[:64]),
                 canary_record=(np.r_[np.zeros(5), 4.0], 2))
    assert loop.device.type == "cuda" and loop.ref_x.is_cuda
    before = torch.cuda.get_rng_state()
    a = loop.release(np.array([True, False]), 2, np.random.default_rng(1))
    assert torch.equal(before, torch.cuda.get_rng_state())
    b = loop.release(np.array([True, False]), 2, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(loop.log_lr_steps(a)).all()


# ------------------------------------------------------------------ checkpoints
def _runs(**kw):
    x, y = H.data(7, 200)
    return CheckpointRuns(kw.pop("model", None) or load_model(SPEC), reference=(x, y),
                          target=H.CANARY, lr=0.5, batch_size=16, noise_multiplier=1.0,
                          max_grad_norm=1.0, steps=4, **kw)


def test_checkpoint_runs_cpu_device_is_the_default_bit_for_bit(tmp_path):
    for i, m in enumerate([True, False]):
        H.train_run(tmp_path / f"r{i}", member=m, tau=2, seed=i)
    base, cpu = _runs(), _runs(device="cpu")
    rel = base.load([tmp_path / "r0", tmp_path / "r1"])
    np.testing.assert_array_equal(rel, cpu.load([tmp_path / "r0", tmp_path / "r1"]))
    np.testing.assert_array_equal(base.log_lr_steps(rel), cpu.log_lr_steps(rel))
    np.testing.assert_array_equal(base.target_log_losses(rel), cpu.target_log_losses(rel))
    assert cpu.params()["device"] == "cpu" and cpu.params()["statistics_dtype"] == "float64"


def test_float32_model_checkpoints_scored_in_float64(tmp_path):
    H.train_run(tmp_path / "r", member=True, tau=2, seed=0)
    r64, r32 = _runs(), _runs(model=load_model(SPEC).float())
    assert r32.params()["model_dtype"] == "float32" and r32.fm.dtype == torch.float64
    rel = r64.load([tmp_path / "r"])
    np.testing.assert_array_equal(r64.log_lr_steps(rel), r32.log_lr_steps(rel))


@pytest.mark.parametrize("device", ABSENT)
def test_checkpoint_runs_refuse_absent_devices(device):
    with pytest.raises(ValueError, match=r"device=.*(meta|not available)"):
        _runs(device=device)
    with pytest.raises(ValueError, match="meta tensors hold no data.*pass device='cpu'"):
        _runs(model=copy.deepcopy(load_model(SPEC)).to("meta"))


@pytest.mark.parametrize("device", ABSENT)
def test_cli_device_is_checked_before_any_file_is_read(tmp_path, capsys, device):
    from semi_core.cli import main

    x, y = H.data(7, 200)
    np.savez(tmp_path / "ref.npz", X=x, y=y)
    code = main(["audit-checkpoints", "--model", SPEC, "--reference", str(tmp_path / "ref.npz"),
                 "--target-index", "0", "--lr", "0.5", "--batch-size", "16",
                 "--run-dirs", str(tmp_path / "missing"), "--device", device, "--json"])
    err = json.loads(capsys.readouterr().out)
    assert code == 2 and f"--device={device!r}" in err["error"]


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_checkpoint_runs_on_cuda_match_cpu(tmp_path):
    """The same float64 statistics on the GPU: equal to the CPU's up to float64 reduction
    order (1e-9 relative on log-LRs of order 1)."""
    H.train_run(tmp_path / "r", member=True, tau=2, seed=0)
    cpu, gpu = _runs(), _runs(model=load_model(SPEC).cuda(), device="cuda")
    rel = cpu.load([tmp_path / "r"])
    np.testing.assert_allclose(gpu.log_lr_steps(rel), cpu.log_lr_steps(rel), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(gpu.target_log_losses(rel), cpu.target_log_losses(rel),
                               rtol=1e-9, atol=1e-12)
