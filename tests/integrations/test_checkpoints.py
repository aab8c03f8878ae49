"""Audit saved checkpoints: formats, refusals, the trajectory, a recorded game, the CLI."""

import json
import os
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from semi_core.integrations.checkpoints import (  # noqa: E402
    CheckpointRuns,
    audit_checkpoints,
    load_model,
    load_state,
    step_files,
)
from tests.integrations import ckpt_helpers as H  # noqa: E402

SPEC = "tests.integrations.ckpt_helpers:make_model"


def _runs(**kw):
    x, y = H.data(7, 200)
    kw = {"steps": 4, **kw}
    return CheckpointRuns(load_model(SPEC), reference=(x, y), target=H.CANARY, lr=0.5,
                          batch_size=16, noise_multiplier=1.0, max_grad_norm=1.0, **kw)


def test_formats_load_identically(tmp_path):
    H.train_run(tmp_path / "a", member=True, tau=2, seed=3, fmt="safetensors")
    H.train_run(tmp_path / "b", member=True, tau=2, seed=3, fmt="pt")
    r = _runs()
    np.testing.assert_array_equal(r.trajectory(tmp_path / "a"), r.trajectory(tmp_path / "b"))
    state = load_state(step_files(tmp_path / "a")[0][1])
    np.savez(tmp_path / "c.npz", **state)
    assert load_state(tmp_path / "c.npz").keys() == state.keys()


def test_refusals_name_the_file(tmp_path):
    run = tmp_path / "run"
    H.train_run(run, member=False, tau=1, seed=1)
    r = _runs()
    (run / "step_2.safetensors").unlink()
    with pytest.raises(ValueError, match=r"saved steps \[0, 1, 3, 4\] \(4 files\) are not the "
                                         r"expected \[0, 1, 2, 3, 4\]"):
        r.trajectory(run)
    H.train_run(run, member=False, tau=1, seed=1)
    bad = {k: v.copy() for k, v in load_state(run / "step_3.safetensors").items()}
    first = next(iter(bad))
    bad[first][...] = np.nan
    from safetensors.numpy import save_file
    save_file(bad, str(run / "step_3.safetensors"))
    with pytest.raises(ValueError, match="step_3.safetensors.*NaN"):
        r.trajectory(run)
    bad[first] = np.zeros((2, 2))
    save_file(bad, str(run / "step_3.safetensors"))
    with pytest.raises(ValueError, match="step_3.safetensors.*shape"):
        r.trajectory(run)


class _Evil:
    def __reduce__(self):
        return (open, (str(Path(sys.argv[0]).parent / "PWNED"), "w"))


def test_pickled_objects_are_refused_without_running(tmp_path):
    p = tmp_path / "step_0.pt"
    with open(p, "wb") as fh:
        pickle.dump({"w": _Evil()}, fh)
    marker = Path(sys.argv[0]).parent / "PWNED"
    with pytest.raises(ValueError, match="refused"):
        load_state(p)
    assert not marker.exists()
    torch.save({"w": torch.zeros(2), "opt": {"lr": 0.1}}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="not an array"):
        load_state(tmp_path / "x.pt")


def test_trajectory_mode_and_model_spec_errors(tmp_path):
    H.train_run(tmp_path / "m", member=True, tau=3, seed=5)
    out = audit_checkpoints(_runs(), [tmp_path / "m"])
    lr = np.asarray(out["log_lr"])
    assert lr.shape == (1, 4) and np.isfinite(lr).all()
    assert out["theta0"] == "saved" and out["config"]["statistics_dtype"] == "float64"
    assert out["statistics"][0]["semi_max"] == lr.max()
    for spec, match in [("nocolon", "module:callable"), ("no_such_mod:f", "cannot import"),
                        ("json:nothing_here", "no callable")]:
        with pytest.raises(ValueError, match=match):
            load_model(spec)


def test_recorded_game_certifies_below_the_truth(tmp_path):
    """24 labelled runs: a valid bound (below the run's exact eps) from SeMI* at tau = 2."""
    from semi_core.sgd.accounting import dpsgd_epsilon

    dirs, member = [], []
    rng = np.random.default_rng(0)
    for i in range(24):
        m = bool(rng.random() < 0.5) if i > 1 else bool(i)
        H.train_run(tmp_path / f"r{i}", member=m, tau=2, seed=100 + i, sigma=1.0)
        dirs.append(tmp_path / f"r{i}")
        member.append(m)
    out = audit_checkpoints(_runs(), dirs, member=member, tau=2, delta=1e-5)
    eps = dpsgd_epsilon(1.0, 1e-5)
    for test, per in out["epsilon_lower_bound"].items():
        for b in per.values():
            assert 0 <= b["epsilon_lower_bound"] <= eps, test
    assert out["game"].rounds == 24 and set(out["game"].stats) >= {"semi-star", "delta_diff"}


def test_cli(tmp_path, capsys, monkeypatch):
    from semi_core.cli import main

    for i, m in enumerate([True, False, True, False, True, False]):
        H.train_run(tmp_path / ("member" if m else "non-member") / f"run{i}", member=m, tau=1,
                    seed=i)
    x, y = H.data(7, 200)
    np.savez(tmp_path / "ref.npz", X=x, y=y)
    np.savez(tmp_path / "target.npz", X=H.CANARY[0][None], y=np.array([H.CANARY[1]]))
    code = main(["audit-checkpoints", "--model", SPEC, "--runs-root", str(tmp_path),
                 "--reference", str(tmp_path / "ref.npz"), "--target", str(tmp_path / "target.npz"),
                 "--lr", "0.5", "--batch-size", "16", "--noise-multiplier", "1",
                 "--max-grad-norm", "1", "--tau", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["runs"] == 6 and out["members"] == 3
    assert "semi-star" in out["epsilon_lower_bound"]


# ------------------------------------------------------------------ checkpoints as saved
def test_step_numbers_of_any_size_and_timestamps(tmp_path):
    """step_4000000000 and Unix-timestamp names: memory depends on the file count only."""
    import tracemalloc

    run = tmp_path / "big"
    H.train_run(run, member=False, tau=1, seed=2, steps=2, every=2,
                name=lambda t: f"step_{t * 2_000_000_000}")
    tracemalloc.start()
    files = step_files(run)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [k for k, _ in files] == [0, 4_000_000_000] and peak < 2**20
    r = _runs(steps=[0, 4_000_000_000])
    assert r.T == 1 and r.gaps.tolist() == [4_000_000_000]
    assert np.isfinite(r.log_lr_steps(r.load([run]))).all()
    ts = tmp_path / "ts"                        # timestamps: the numbers only order the files
    H.train_run(ts, member=False, tau=1, seed=2, steps=4, every=2, save0=False,
                name=lambda t: f"ckpt_{1_700_000_000 + 37 * t}")
    r = _runs(steps=4, every=2, file_steps="order")
    out = audit_checkpoints(r, [ts])
    assert out["theta0"] == "model factory (not saved)" and np.shape(out["log_lr"]) == (1, 2)


def test_stride_every_step_is_the_per_step_statistic_and_theta0_from_the_factory(tmp_path):
    """All steps saved: the per-gap log-LR is the per-step one (1e-10); saved every 2 steps
    without theta_0: the trajectory starts at the factory's parameters and the gaps are 2."""
    from semi_core.integrations.checkpoints import step_log_lrs

    H.train_run(tmp_path / "a", member=True, tau=2, seed=4)
    r = _runs()
    traj = r.load([tmp_path / "a"])
    want = step_log_lrs(r.fm, torch.as_tensor(traj), r.ref_x, r.ref_y, r.tgt_x, r.tgt_y,
                        lr=0.5, batch_size=16, noise_multiplier=1.0, max_grad_norm=1.0)
    for form in ("dense", "lowrank"):
        np.testing.assert_allclose(_runs(form=form).log_lr_steps(traj), want, rtol=1e-9,
                                   atol=1e-9)
    H.train_run(tmp_path / "b", member=True, tau=2, seed=4, every=2, save0=False)
    r2 = _runs(every=2)
    t2 = r2.load([tmp_path / "b"])[0]
    np.testing.assert_array_equal(t2, traj[0, [0, 2, 4]])
    assert r2.gap_of([1, 2, 3, 4]).tolist() == [1, 1, 2, 2]
    with pytest.raises(ValueError, match="tau must be a training step in 1..4"):
        r2.gap_of(5)


def test_half_and_bfloat16_checkpoints_and_models(tmp_path):
    """bf16/fp16 safetensors and torch files are read (exactly widened); a half/bf16 model
    is scored in float64 (no Cholesky in half precision)."""
    H.train_run(tmp_path / "bf", member=True, tau=2, seed=5, dtype=torch.bfloat16)
    H.train_run(tmp_path / "hf", member=True, tau=2, seed=5, dtype=torch.float16, fmt="pt")
    H.train_run(tmp_path / "f64", member=True, tau=2, seed=5)
    r = _runs()
    full = r.trajectory(tmp_path / "f64")
    bf = r.trajectory(tmp_path / "bf")
    want = torch.as_tensor(full).to(torch.bfloat16).to(torch.float64).numpy()
    np.testing.assert_array_equal(bf, want)
    hf = r.trajectory(tmp_path / "hf")
    np.testing.assert_array_equal(hf, full.astype(np.float16).astype(np.float64))
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        x, y = H.data(7, 200)
        rh = CheckpointRuns(load_model(SPEC).to(dt), reference=(x, y), target=H.CANARY,
                            lr=0.5, batch_size=16, steps=4, noise_multiplier=1.0)
        lr = rh.log_lr_steps(rh.load([tmp_path / "bf"]))
        assert np.isfinite(lr).all() and rh.params()["model_dtype"] == str(dt)[6:]


def test_bool_and_integer_weights_are_refused(tmp_path):
    from safetensors.torch import save_file

    run = tmp_path / "r"
    H.train_run(run, member=False, tau=1, seed=1)
    state = {k: torch.as_tensor(v) for k, v in load_state(run / "step_1.safetensors").items()}
    first = next(iter(state))
    for bad in (state[first] > 0, state[first].to(torch.int32)):
        save_file({**state, first: bad}, str(run / "step_1.safetensors"))
        with pytest.raises(TypeError, match="weights must be floating point"):
            _runs().trajectory(run)


def test_zero_target_loss_does_not_end_the_audit(tmp_path):
    """A memorised canary (float64 cross-entropy exactly 0 at theta_T) gives finite ratio
    scores: log(l_0 / l_T) from the log-losses (l_T = e^a, a ~ -200)."""
    from safetensors.torch import save_file

    from semi_core.integrations.checkpoints import loss_scores

    dirs, member = [], []
    for i in range(6):
        m = i % 2 == 0
        H.train_run(tmp_path / f"r{i}", member=m, tau=2, seed=40 + i)
        dirs.append(tmp_path / f"r{i}")
        member.append(m)
    last = tmp_path / "r0" / "step_4.safetensors"
    state = {k: torch.as_tensor(v) for k, v in load_state(last).items()}
    bias = next(k for k in state if k.endswith("2.bias"))
    state[bias] = state[bias].clone()
    state[bias][H.CANARY[1]] += 200.0
    save_file(state, str(last))
    r = _runs()
    traj = r.load([dirs[0]])
    assert r.fm.losses_batched(torch.as_tensor(traj[0, -1:]), r.tgt_x, r.tgt_y).item() == 0.0
    ll = r.target_log_losses(traj)
    assert np.isfinite(ll).all() and ll[0, -1] < -150
    out = audit_checkpoints(r, dirs, member=member, tau=2)
    s = out["game"].stats["back_front_ratio"]
    assert np.isfinite(s).all() and s[0] == pytest.approx(ll[0, 0] - ll[0, -1])
    # squared error: an exact fit is the c -> 0+ limit (+inf), 0/0 is ratio 1 (log 0)
    ninf = -np.inf
    sc = loss_scores(np.array([[0.0, ninf, ninf]]))
    assert sc["back_front_ratio"][0] == np.inf and sc["delta_ratio"][0] == np.inf
    assert loss_scores(np.array([[ninf, ninf]]))["back_front_ratio"][0] == 0.0


def test_bad_records_labels_and_loss_are_named_before_work(monkeypatch):
    import semi_core.integrations.checkpoints as ck

    monkeypatch.setattr(ck, "load_state", lambda p: pytest.fail("read a checkpoint"))
    x, y = H.data(7, 50)
    kw = dict(lr=0.5, batch_size=16, steps=4)
    cases = [((x[:, :5], y), (np.ones(5), 1), {}, r"reference: the model cannot take records of "
                                          r"shape \(5,\)"),
             ((x, y), (np.ones(5), 1), {}, "target: 5 features, a reference record has 6"),
             ((x, np.r_[y[:-1], 3]), H.CANARY, {}, r"reference: labels must be in 0..2"),
             ((x, y), (H.CANARY[0], 7), {}, r"target: labels must be in 0..2"),
             ((x, y + 0.5), H.CANARY, {}, "whole numbers"),
             ((x, y.astype(float)), H.CANARY, {"loss": "mse"}, "loss: 'mse' needs a model "
                                                               "with one output per record")]
    for ref, tgt, extra, match in cases:
        with pytest.raises(ValueError, match=match):
            CheckpointRuns(load_model(SPEC), reference=ref, target=tgt, **kw, **extra)


def test_memory_is_estimated_before_work_and_linear_in_the_reference_set(tmp_path,
                                                                          monkeypatch):
    from semi_core._validation import ResourceLimitError

    x, y = H.data(3, 4000)
    r = CheckpointRuns(load_model(SPEC), reference=(x, y), target=H.CANARY, lr=0.5,
                       batch_size=16, steps=4)
    big = CheckpointRuns(load_model(SPEC), reference=(np.tile(x, (25, 1)), np.tile(y, 25)),
                         target=H.CANARY, lr=0.5, batch_size=16, steps=4)
    p1, p2 = r.plan(16), big.plan(16)                 # 4,000 vs 100,000 records
    assert p2["form"] == "dense" and p2["peak_bytes"] < 2**28
    # linear: the growth is the records (and bounded chunks), never m^2 (8e10 bytes at 1e5)
    assert p2["peak_bytes"] - p1["peak_bytes"] <= 8 * 2 * 6 * 96_000 + 8 * 3 * 83 * 2**26 / 8
    low = CheckpointRuns(load_model(SPEC), reference=(x[:40], y[:40]), target=H.CANARY,
                         lr=0.5, batch_size=16, steps=4).plan(1)
    assert low["form"] == "lowrank"
    H.train_run(tmp_path / "a", member=False, tau=1, seed=1)
    import semi_core.integrations.checkpoints as ck

    monkeypatch.setenv("SEMI_CORE_MAX_MEMORY", "1M")
    monkeypatch.setattr(ck, "load_state", lambda p: pytest.fail("read a checkpoint"))
    with pytest.raises(ResourceLimitError, match="audit-checkpoints: 1 runs x 4 gaps, m = 4000"):
        audit_checkpoints(r, [tmp_path / "a"])


@pytest.mark.slow
@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),
                    reason="needs Linux's /proc/self/clear_refs to reset the peak RSS")
def test_1e5_reference_records_peak_memory_subprocess(tmp_path):
    """10^5 reference records score one run in a fresh process with a peak under 1.5 GB above
    the imports and the records (the m x m Gram matrix alone would be 80 GB)."""
    import subprocess
    import textwrap

    H.train_run(tmp_path / "a", member=False, tau=1, seed=1, steps=2)
    code = textwrap.dedent(f"""
        import numpy as np, torch
        torch.set_num_threads(1)   # one allocator arena: the figure does not depend on load
        from tests.integrations import ckpt_helpers as H
        from semi_core.integrations.checkpoints import CheckpointRuns, load_model
        def status(key):
            with open("/proc/self/status") as fh:
                return next(int(l.split()[1]) for l in fh if l.startswith(key + ":"))
        x, y = H.data(3, 100_000)
        # the peak of the audit alone, above what the imports and the records already hold
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = status("VmRSS")
        r = CheckpointRuns(load_model("{SPEC}"), reference=(x, y), target=H.CANARY, lr=0.5,
                           batch_size=16, steps=2)
        lr = r.log_lr_steps(r.load([r"{tmp_path / 'a'}"]))
        assert np.isfinite(lr).all()
        print(base, status("VmHWM") - base)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    base, grew = (int(v) for v in out.stdout.split()[-2:])
    assert grew < 1.5 * 2**20, (base, grew)      # KiB


def test_runs_listed_twice_or_in_both_classes(tmp_path):
    for i in range(4):
        H.train_run(tmp_path / f"r{i}", member=False, tau=1, seed=i)
    d = [tmp_path / f"r{i}" for i in range(4)]
    with pytest.raises(ValueError, match="labelled both member and non-member"):
        audit_checkpoints(_runs(), [*d, d[0]], member=[True, True, False, False, False], tau=1)
    with pytest.raises(ValueError, match="listed twice"):
        audit_checkpoints(_runs(), [*d, d[0]])
    with pytest.raises(ValueError, match="member must be booleans or 0/1"):
        audit_checkpoints(_runs(), d, member=[0.5, 1, 0, 0], tau=1)


def _cli_setup(tmp_path):
    x, y = H.data(7, 200)
    np.savez(tmp_path / "ref.npz", X=x, y=y)
    np.savez(tmp_path / "target.npz", X=H.CANARY[0][None], y=np.array([H.CANARY[1]]))
    return ["--model", SPEC, "--reference", str(tmp_path / "ref.npz"), "--lr", "0.5",
            "--batch-size", "16", "--noise-multiplier", "1", "--max-grad-norm", "1"]


def test_cli_manifests_bom_crlf_json_and_any_folder_names(tmp_path, capsys):
    from semi_core.cli import main

    rows = []
    for i, m in enumerate([True, False, True, False]):
        run = tmp_path / "runs" / f"seed{i}"
        H.train_run(run, member=m, tau=2, seed=i, fmt="pt", every=2, save0=False,
                    name=lambda t: f"step{t}")
        rows.append((f"runs/seed{i}", int(m)))
    base = _cli_setup(tmp_path) + ["--target", str(tmp_path / "target.npz"), "--json"]
    text = "\ufeffpath,member,tau\r\n" + "".join(f"{p},{m},2\r\n" for p, m in rows)
    (tmp_path / "runs.csv").write_bytes(text.encode("utf-8"))
    (tmp_path / "runs.json").write_text(json.dumps(
        [{"path": p, "member": bool(m), "tau": 2} for p, m in rows]))
    got = []
    for f in ("runs.csv", "runs.json"):
        code = main(["audit-checkpoints", *base, "--runs-file", str(tmp_path / f)])
        out = json.loads(capsys.readouterr().out)
        assert code == 0, out
        assert out["members"] == 2 and out["theta0"] == "model factory (not saved)"
        assert out["config"]["saved_steps"] == [0, 2, 4]
        got.append(out["epsilon_lower_bound"])
    assert got[0] == got[1]
    (tmp_path / "both.csv").write_text("path,member\nruns/seed0,1\nruns/seed0,0\n"
                                       "runs/seed1,0\nruns/seed2,1\n")
    code = main(["audit-checkpoints", *base, "--runs-file", str(tmp_path / "both.csv"),
                 "--tau", "2"])
    err = json.loads(capsys.readouterr().out)
    assert code != 0 and "labelled both member and non-member" in err["error"]


def test_cli_refuses_negative_target_index_and_names_flags(tmp_path, capsys):
    from semi_core.cli import main

    H.train_run(tmp_path / "a", member=False, tau=1, seed=1)
    base = _cli_setup(tmp_path) + ["--run-dirs", str(tmp_path / "a"), "--json"]
    code = main(["audit-checkpoints", *base, "--target-index", "-1"])
    err = json.loads(capsys.readouterr().out)
    assert code != 0 and "--target-index must be in 0..199" in err["error"]
    assert "negative" in err["error"]
    code = main(["audit-checkpoints", *base, "--target-index", "0", "--loss", "mse"])
    err = json.loads(capsys.readouterr().out)
    assert code != 0 and "--loss: 'mse' needs a model" in err["error"]
