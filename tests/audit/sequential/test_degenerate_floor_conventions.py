"""Degenerate-witness diagnostics, the two noise-floor readings, the notebook conventions and the
OGA regret bound: vacuous evidence, the mechanisms' reading and Table 1's stopping times."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.audit.sequential import mechanism_source, sequential_test, stream_source
from semi_core.audit.sequential.conventions import (
    new_notebook_witness,
    notebook_witness_block,
    parse_conventions,
    tau_notebook,
)
from semi_core.audit.sequential.rbf import rbf
from semi_core.audit.sequential.tester import witness_diagnostics
from semi_core.mechanisms.zoo import SEED_PAIR, DPLaplace, NonDPLaplace2, make_zoo_mechanism


def test_count_floor_witness_is_flagged_degenerate():
    r = sequential_test(mechanism_source(DPLaplace(0.01), *SEED_PAIR), epsilon=0.01,
                        delta=1e-5, max_obs=300, seed=3)
    assert not r.rejected
    assert r.bandwidth > 1e10  # eq. 5's floored count: outputs ~1e14
    assert r.degenerate and r.verdict.startswith("inconclusive")
    assert r.to_dict(paths=False)["degenerate_witness"] is True


def test_scale_floor_witness_resolves_and_nondp2_rejects():
    r = sequential_test(mechanism_source(NonDPLaplace2(0.01, floor="scale"), *SEED_PAIR),
                        epsilon=0.01, delta=1e-5, max_obs=2000, seed=3)
    assert not r.degenerate and r.rejected and r.verdict == "violation"
    d = sequential_test(mechanism_source(DPLaplace(0.01, floor="scale"), *SEED_PAIR),
                        epsilon=0.01, delta=1e-5, max_obs=300, seed=3)
    assert not d.degenerate and d.verdict == "no violation found"


def test_diagnostics_flags_m_t_zero_and_merged_pairs():
    z = np.zeros((5, 1))
    assert witness_diagnostics(1.0, None, (0, 0), 0.0, 10, 0.0)["degenerate"]
    w = (np.linspace(0, 1, 10)[:, None], np.linspace(0, 1, 10)[:, None] + 0.05)
    out = witness_diagnostics(1e9, w, (0, 0), 1.0, 10, 1.0)
    assert out["degenerate"] and out["warmup_unresolved_fraction"] > 0.9
    ok = witness_diagnostics(0.5, w, (0, 5), 3.0, 10, 0.3)
    assert not ok["degenerate"] and ok["warmup_unresolved_fraction"] == 0.0
    _ = z


def test_scale_floor_atom_probability():
    """Under the scale floor a negative noisy count (P = e^{-eps/2}/2 for n = 1) releases s/n
    exactly up to 1e-12 noise; 20,000 draws: SE ~ 0.0035, tolerance 5 SE."""
    m = NonDPLaplace2(1.0, floor="scale")
    o = m.sample(SEED_PAIR[0], 20_000, np.random.default_rng(0))
    p = np.mean(np.abs(o) < 1e-9)
    assert abs(p - 0.5 * np.exp(-0.5)) < 5 * 0.0035
    c = NonDPLaplace2(1.0)  # count floor: no atom
    assert np.mean(np.abs(c.sample(SEED_PAIR[0], 20_000, np.random.default_rng(0))) < 1e-9) == 0


def test_floor_is_validated_and_reported():
    with pytest.raises(ValueError, match="floor"):
        make_zoo_mechanism("dp-laplace", 0.1, floor="noise")
    assert make_zoo_mechanism("dp-laplace", 0.1, floor="scale").params()["floor"] == "scale"


def test_parse_conventions():
    assert parse_conventions("paper") == frozenset()
    assert parse_conventions("notebook") == {"tau", "ons", "oga"}
    assert parse_conventions("tau, oga") == {"tau", "oga"}
    with pytest.raises(ValueError, match="conventions"):
        parse_conventions("fast")
    assert tau_notebook(0.0, 0.0) == 0.0
    assert abs(tau_notebook(0.01, 0.0) - 2 * np.tanh(0.005)) < 1e-15


def test_notebook_witness_stays_in_half_ball():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(0, 1, (200, 1)), rng.normal(1, 1, (200, 1))
    st = new_notebook_witness(200)
    notebook_witness_block(X, Y, 0, 200, 1.0, st)
    c = st["c"]
    G = rbf(X, X, 1.0) - rbf(X, Y, 1.0) - rbf(Y, X, 1.0) + rbf(Y, Y, 1.0)
    norm2 = float(c @ G @ c)
    assert norm2 <= 0.25 + 1e-9 and abs(norm2 - st["norm2"]) < 1e-9


def test_oga_regret_within_theorem_e2():
    """Deterministic: sup_{||f||<=1} sum <f - f_i, Delta_i> = ||sum Delta_i|| - sum v_i must be
    <= (3D/2) sqrt(M_t) = 3 sqrt(M_t) at every t (Theorem E.2, D = 2)."""
    rng = np.random.default_rng(2)
    n = 400
    X, Y = rng.normal(0, 1, (n, 1)), rng.normal(0.7, 1, (n, 1))
    r = sequential_test(stream_source(X, Y), epsilon=10.0, delta=0.0, max_obs=n,
                        bandwidth=0.8, keep_witness=True, seed=0)
    G = rbf(X, X, 0.8) - rbf(X, Y, 0.8) - rbf(Y, X, 0.8) + rbf(Y, Y, 0.8)
    cs = np.cumsum(np.cumsum(G, axis=0), axis=1)
    reg = np.sqrt(np.maximum(np.diag(cs), 0)) - np.cumsum(r.witness)
    M = np.cumsum(np.diag(G))
    assert np.all(reg <= 3 * np.sqrt(M) + 1e-9)
    assert reg[-1] > 0  # the bound is not met trivially by a zero regret


def test_notebook_conventions_run_and_are_slower_at_eps_01():
    m = make_zoo_mechanism("nondp-laplace-1", 0.1, floor="scale")
    p = sequential_test(mechanism_source(m, *SEED_PAIR), epsilon=0.1, delta=1e-5,
                        max_obs=5000, seed=5)
    nb = sequential_test(mechanism_source(m, *SEED_PAIR), epsilon=0.1, delta=1e-5,
                         max_obs=5000, seed=5, conventions="notebook")
    assert p.rejected
    assert (not nb.rejected) or nb.stopped_at > p.stopped_at
    with pytest.raises(ValueError, match="algorithm=1"):
        sequential_test(mechanism_source(m, *SEED_PAIR), epsilon=0.1, delta=1e-5,
                        max_obs=10, algorithm=2, conventions="ons")


def test_cli_noise_floor_and_conventions(capsys):
    import json

    from semi_core.cli import main

    base = ["seq-audit", "--mechanism", "dp-laplace", "--epsilon", "0.01", "--max-obs", "200",
            "--runs", "2", "--json"]
    assert main(base) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["noise_floor"] == "count" and out["summary"]["degenerate_runs"] == 2
    assert out["summary"]["verdict"].startswith("inconclusive")
    assert out["runs"][0]["degenerate_witness"] is True
    assert main(base + ["--noise-floor", "scale", "--conventions", "notebook"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["mechanism"]["floor"] == "scale" and out["conventions"] == "notebook"
    assert out["summary"]["verdict"] == "no violation found"
    assert main(["seq-audit", "--stream", "semi", "--mechanism", "noisy-mean", "--epsilon", "1",
                 "--noise-floor", "scale"]) != 0
    assert "--noise-floor" in capsys.readouterr().err
    assert main(base + ["--algorithm", "2", "--conventions", "ons"]) != 0
    cap = capsys.readouterr()
    assert "--algorithm 1" in cap.out + cap.err
