"""The DP-SGD audit path end to end, each figure against its reference timed in the same run.

1. **Opacus loop vs batched trainer.** R audit games at one tau (Dirac canary, logistic
   regression pretrained on digits, T = 10, n = 64, C = 1, sigma for eps = 4): (a) the Opacus
   adapter looped -- per chunk ``model_fn()`` and ``PrivacyEngine.make_private``, per run a
   reset to theta_0 and the run's noise seed and T steps of
   Opacus' hooks-based per-sample gradients, clipping and noise
   (:class:`semi_core.integrations.opacus.OpacusMechanism`); (b) the batched trainer of
   :class:`semi_core.sgd.dirac.WhiteBoxMechanism` -- all runs of a chunk (128) as replicas,
   outer-product ("ghost") clipped means on the canary-free steps, ``torch.func`` per-sample
   gradients on the canary step. Both train exactly the same Crafter draws
   (:func:`semi_core.sgd.dirac.draw_runs`), chunk by chunk as the game runner plays them; one
   torch thread; CPU time (the machine may be loaded). Quick mode times 100 runs (Opacus on 40
   of them, scaled linearly: runs are independent and equally costly); full mode 1,000 runs.
2. **Scoring vs training.** :class:`~semi_core.sgd.dirac.WhiteBoxScorer` (``dirac``,
   ``dirac_contrast``, SeMI-SGD and SeMI-max: the audit's default scores) on the batched
   releases, against the batched training of the same runs; and the floor of exact SeMI-max,
   the two ``m x m`` capacitance factorisations per parameter point (``(run, step)`` pair)
   timed alone.
3. **The tour line** ``semi-core audit-opacus --epsilon 4 --canary dirac --rounds R --tau 5
   --delta 1e-5 --json`` as a subprocess, its wall and CPU time and peak memory,
   against the same line run by the code before this work (the worktree ``/tmp/before``, when
   present; ``SEMI_CORE_BEFORE`` overrides the path) in the same run. Full mode: R = 1000 for
   the current code; the reference runs at ``R_ref = 200`` (it needs minutes per hundred runs
   on a loaded machine) and is shown as measured and with its game part (the payload's
   ``game_seconds``) scaled to R. Each run also reports its own CPU split: Opacus training
   (``OpacusMechanism.release``), scoring (``WhiteBoxScorer``) and the rest (imports, the
   pretrained model, certification), timed with ``time.process_time`` inside the command's
   process by a driver that wraps those two calls (the command's output is unchanged), and
   the whole command's CPU against the plain Opacus loop of the same R runs timed in section 1
   (full mode; the quick mode's loop is timed on 40 runs and scaled).
4. **The factorisation floor, old and new form.** The two ``m x m`` capacitance factorisations
   per parameter point as :func:`semi_core.sgd.gradstats.woodbury_factors` runs them (torch's
   LAPACK ``dpotrf`` in place) against ``torch.linalg.cholesky_ex`` (the form before; the
   factors are equal bit for bit), alternated in one process on one torch thread, median of 5.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOUR = ["audit-opacus", "--epsilon", "4", "--canary", "dirac", "--tau", "5", "--delta",
        "1e-5", "--json"]


#: Runs the tour line in a subprocess with Opacus training and scoring timed in its own process
#: (``time.process_time``), printed as one JSON line on stderr after the command's output.
_DRIVER = """
import json, sys, time
from semi_core.integrations.opacus.mechanism import OpacusMechanism
from semi_core.sgd.dirac import WhiteBoxScorer
acc = {"train": 0.0, "score": 0.0}
def timed(cls, name, key):
    f = getattr(cls, name)
    def g(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[key] += time.process_time() - t
    setattr(cls, name, g)
timed(OpacusMechanism, "release", "train")
timed(WhiteBoxScorer, "__call__", "score")
from semi_core.cli import main
try:
    code = main()
finally:
    print("SPLIT " + json.dumps(acc), file=sys.stderr)
raise SystemExit(code)
"""


def _split(stderr: str) -> dict:
    """The driver's CPU split from the command's stderr (empty when absent)."""
    lines = [ln for ln in stderr.splitlines() if ln.startswith("SPLIT ")]
    return json.loads(lines[-1][6:]) if lines else {}


def _timed_cli(rounds: int, pythonpath: str | None = None) -> dict:
    """Wall and CPU seconds and peak memory of the tour line's process at ``rounds``, and its
    CPU split (training, scoring) measured inside it."""
    env = dict(os.environ)
    cwd = None
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
        cwd = "/tmp"  # so that the current checkout is not imported instead
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _DRIVER, *TOUR, "--rounds", str(rounds)],
                                env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own resource usage
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    cpu = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        raise RuntimeError(f"tour line failed ({pythonpath or 'current'}): {stderr[-2000:]}")
    timing = json.loads(stdout).get("timing") or {}
    game = float(timing.get("game_seconds", wall))  # without it: scale everything
    split = _split(stderr)
    return {"rounds": rounds, "wall": wall, "cpu": cpu, "game_wall": game,
            "maxrss_mib": usage.ru_maxrss / 1024.0, "train_cpu": split.get("train"),
            "score_cpu": split.get("score")}


def _split_line(name: str, row: dict) -> str:
    tr, sc = row.get("train_cpu"), row.get("score_cpu")
    if tr is None or sc is None:
        return f"{name:<26} (no split)"
    return (f"{name:<26} {row['rounds']:>6} {tr:>9.2f} {sc:>9.2f} "
            f"{row['cpu'] - tr - sc:>9.2f} {sc / tr:>9.2f}")


def _factor_forms(points: int, m: int, repeat: int = 5) -> dict:
    """CPU seconds of the two capacitance factorisations of ``points`` points (blocks of 16,
    as the scorer runs them) in the current form and in the form before
    (``torch.linalg.cholesky_ex``), alternated on one torch thread; medians of ``repeat``."""
    import numpy as np
    import torch

    from semi_core.integrations.opacus._common import _torch_threads
    from semi_core.sgd import gradstats

    g = torch.as_tensor(np.random.default_rng(0).normal(size=(16, m, 2 * m)))
    gram = g @ g.transpose(-1, -2) / (2 * m)
    betas = torch.full((2, 16), 0.05, dtype=gram.dtype)
    forms = {"current": gradstats._torch_potrf(), "before": False}
    times: dict = {k: [] for k in forms}
    saved = gradstats._POTRF
    try:
        with _torch_threads(1):
            for _ in range(repeat):
                for name, potrf in forms.items():
                    gradstats._POTRF = potrf
                    t0 = time.process_time()
                    for lo in range(0, points, 16):
                        p = min(16, points - lo)
                        gradstats.woodbury_factors(gram[:p], (1.0, 0.98), betas[:, :p], 650)
                    times[name].append(time.process_time() - t0)
    finally:
        gradstats._POTRF = saved
    return {k: float(np.median(v)) for k, v in times.items()}


def main(quick: bool = False) -> list[dict]:
    import torch

    from semi_core.integrations.opacus import digits_example, time_engines
    from semi_core.sgd.accounting import calibrate_sigma

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model_fn, data = digits_example(seed=0, pretrain_epochs=20)
        rounds, opacus_rounds = (100, 40) if quick else (1000, 1000)
        res = time_engines(model_fn, data, noise_multiplier=calibrate_sigma(4.0, 1e-5),
                           rounds=rounds, opacus_rounds=opacus_rounds, seed=0)
    finally:
        torch.set_num_threads(threads)
    so, sb = res["opacus_split"], res["batched_split"]
    print(f"\n## Opacus loop vs batched trainer: {rounds} Dirac audit games at tau = 5 "
          f"(logreg/digits, d = 650, T = 10, n = 64; one torch thread; CPU seconds)")
    print(f"{'path':<34} {'seconds':>9} {'ms/run':>8}   where the time goes")
    print(f"{'Opacus adapter, looped':<34} {res['opacus_seconds']:>9.2f} "
          f"{1e3 * res['opacus_seconds'] / rounds:>8.2f}   make_private "
          f"{so['make_private']:.2f} s, T steps {so['steps']:.2f} s"
          + ("" if res["opacus_rounds_timed"] == rounds
             else f" (timed on {res['opacus_rounds_timed']} runs, scaled)"))
    print(f"{'batched trainer (reference)':<34} {res['batched_seconds']:>9.2f} "
          f"{1e3 * res['batched_seconds'] / rounds:>8.2f}   data {sb['batches']:.2f} s, "
          f"canary step {sb['canary_step']:.2f} s, other steps {sb['other_steps']:.2f} s")
    print(f"{'scoring (WhiteBoxScorer, semi)':<34} {res['scoring_seconds']:>9.2f} "
          f"{1e3 * res['scoring_seconds'] / rounds:>8.2f}   dirac, dirac_contrast, SeMI-SGD "
          "and SeMI-max (T steps)")
    sec = res["factorisation_seconds"]
    print(f"{'  of which factorisations (floor)':<34} {sec:>9.2f} {1e3 * sec / rounds:>8.2f}"
          f"   2 x {res['points']} Cholesky factors of {res['n_reference']}x"
          f"{res['n_reference']} capacitance matrices, nothing else")
    for mode, what in (("tau", "dirac, dirac_contrast, SeMI-SGD at tau only"),
                       ("False", "dirac, dirac_contrast only (--no-semi)")):
        sec = res["scoring_by_semi"][mode]
        print(f"{'scoring, semi=' + mode:<34} {sec:>9.2f} {1e3 * sec / rounds:>8.2f}   {what}")
    print(f"Opacus loop / batched trainer: {res['ratio']:.1f}x (goal >= 20x)")
    print(f"scoring / batched training: {res['scoring_ratio']:.2f}x with SeMI-max (default), "
          f"{res['scoring_by_semi']['tau'] / res['batched_seconds']:.2f}x with semi='tau', "
          f"{res['scoring_by_semi']['False'] / res['batched_seconds']:.2f}x without SeMI "
          "(goal <= 0.5x); the factorisations alone: "
          f"{res['factorisation_seconds'] / res['batched_seconds']:.2f}x")
    rows = [res]

    r_new, r_ref = (100, 100) if quick else (1000, 200)
    new = _timed_cli(r_new)
    print(f"\n## Tour line: semi-core {' '.join(TOUR)} --rounds R (subprocess; "
          f"{os.cpu_count()} cores; CPU = user + system of the command's process)")
    print(f"{'code':<26} {'R':>6} {'wall s':>8} {'CPU s':>8} {'max RSS MiB':>12}")
    print(f"{'current':<26} {r_new:>6} {new['wall']:>8.1f} {new['cpu']:>8.1f} "
          f"{new['maxrss_mib']:>12.0f}")
    row = {"tour": new}
    loop = res["opacus_seconds"] * r_new / rounds   # the plain Opacus loop of r_new runs
    print(f"current CPU / the plain Opacus loop of the same {r_new} runs (section 1, "
          f"{loop:.1f} s): {new['cpu'] / loop:.2f}x; goal <= 25 s CPU at R = 1000")
    ref_path = os.environ.get("SEMI_CORE_BEFORE", "/tmp/before")
    if Path(ref_path, "semi_core").is_dir():
        ref = _timed_cli(r_ref, ref_path)
        scale = r_new / r_ref
        # scale only the game (its own wall time in the payload), not the fixed start-up
        f = (ref["wall"] + (scale - 1) * ref["game_wall"]) / ref["wall"]
        print(f"{'before (' + ref_path + ')':<26} {r_ref:>6} {ref['wall']:>8.1f} "
              f"{ref['cpu']:>8.1f} {ref['maxrss_mib']:>12.0f}")
        if scale != 1:
            print(f"{'before, game scaled to R':<26} {r_new:>6} {ref['wall'] * f:>8.1f} "
                  f"{ref['cpu'] * f:>8.1f}   (game part x R/R_ref; CPU by the same factor)")
        print(f"before / current: wall {ref['wall'] * f / new['wall']:.1f}x, "
              f"CPU {ref['cpu'] * f / new['cpu']:.1f}x; current wall "
              f"{new['wall']:.1f} s (goal < 60 s at R = 1000 on 2 cores)")
        row["before"] = ref
    else:
        print(f"(no reference tree at {ref_path}: set SEMI_CORE_BEFORE to a checkout of the "
              "code before this work)")
        ref = None
    print(f"\n## The tour line's CPU split (seconds inside the command's process; rest = "
          f"imports, pretrained model, certification)\n{'code':<26} {'R':>6} {'training':>9} "
          f"{'scoring':>9} {'rest':>9} {'score/train':>11}")
    print(_split_line("current", new))
    if ref is not None:
        print(_split_line("before (" + ref_path + ")", ref))
    rows.append(row)

    m_ref = res["n_reference"]
    forms = _factor_forms(res["points"], m_ref, repeat=3 if quick else 5)
    print(f"\n## Capacitance factorisations, {res['points']} points x 2 of {m_ref} x {m_ref} "
          "(CPU s, median; alternated in one process)")
    print(f"current (torch's LAPACK dpotrf in place): {forms['current']:.2f} s; before "
          f"(torch.linalg.cholesky_ex): {forms['before']:.2f} s; before / current "
          f"{forms['before'] / forms['current']:.2f}x")
    rows.append({"factorisations": forms})
    return rows


if __name__ == "__main__":
    main("--quick" in sys.argv)
