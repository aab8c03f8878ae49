"""Per-group accuracy (disparate impact: Fig. 11, Fig. 12, §5.6 new vs old) against a literal
loop, and the mixture identity that ties the groups to the overall accuracy."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from semi_core.attacks.updates import UpdateConfig, UpdateRun  # noqa: E402
from semi_core.attacks.updates.experiment import group_accuracy  # noqa: E402
from semi_core.stats.update_combination import back_front_scores  # noqa: E402


def _fake_run(seed=0, R=5, k=3, n_up=6, shift=0.0):
    rng = np.random.default_rng(seed)
    N = 2 * k * n_up
    member = np.r_[np.ones(k * n_up, bool), np.zeros(k * n_up, bool)]
    entry = np.r_[np.repeat(np.arange(1, k + 1), n_up), np.zeros(k * n_up, np.int64)]
    loss = rng.exponential(1.0, size=(R, k + 1, N))
    loss[:, -1, member] *= 0.6                                  # members' loss drops
    cfg = UpdateConfig(k=k, n_up=n_up, trials=R, shift_alpha=shift,
                       shift="subpop-hard" if shift else "subpopulation")
    extra = {"candidate_label": rng.integers(0, 4, size=(R, N)),
             "candidate_source": rng.random((R, N)) < 0.7}
    return UpdateRun(cfg=cfg, scores={"loss": loss}, shadow={"loss": loss},
                     rank_out={"loss": loss[:, :, ~member]}, member=member, entry=entry,
                     correct_final=np.ones((R, N), bool), test_accuracy={}, seconds=0.0,
                     extra=extra)


def _literal(run, by):
    bf = back_front_scores(np.moveaxis(run.scores["loss"], 1, -1), "diff", c=run.cfg.c)
    m = run.member
    out = {}
    R, N = bf.shape
    for r in range(R):
        thr = np.quantile(bf[r], 0.5, method="lower")  # the Batch rule: top half called IN
        called = bf[r] > thr
        if by == "entry":
            groups = {str(i): ([j for j in range(N) if m[j] and run.entry[j] == i],
                               [j for j in range(N) if not m[j]]) for i in range(1, 4)}
        else:
            lab = (run.extra["candidate_label"][r] if by == "class"
                   else np.where(run.extra["candidate_source"][r], "old", "new"))
            groups = {str(g): ([j for j in range(N) if m[j] and str(lab[j]) == str(g)],
                               [j for j in range(N) if not m[j] and str(lab[j]) == str(g)])
                      for g in np.unique(lab)}
        for g, (gi, go) in groups.items():
            if gi and go:
                tpr = sum(called[j] for j in gi) / len(gi)
                tnr = sum(not called[j] for j in go) / len(go)
                out.setdefault(g, []).append(0.5 * (tpr + tnr))
    return {g: float(np.mean(v)) for g, v in out.items()}


@pytest.mark.parametrize("by", ["class", "source", "entry"])
def test_group_accuracy_equals_the_literal_loop(by):
    run = _fake_run(shift=0.3 if by == "source" else 0.0)
    got = group_accuracy(run, by)
    want = _literal(run, by)
    assert set(got) == set(want)
    for g, v in want.items():
        assert got[g]["mean"] == pytest.approx(v, abs=1e-12)


def test_groups_mix_back_to_the_overall_accuracy():
    """With a group's share the same among members and non-members, the overall accuracy is
    the share-weighted mean of the group accuracies."""
    run = _fake_run(seed=3, R=2)
    run.scores["loss"] = run.scores["loss"][:1]                 # one trial
    m = run.member
    rng = np.random.default_rng(4)
    half = rng.integers(0, 4, size=m.sum())
    run.extra["candidate_label"] = np.r_[half, rng.permutation(half)][None, :]
    bf = back_front_scores(np.moveaxis(run.scores["loss"], 1, -1), "diff", c=run.cfg.c)[0]
    called = bf > np.quantile(bf, 0.5, method="lower")
    overall = 0.5 * (called[m].mean() + (~called[~m]).mean())
    parts = group_accuracy(run, "class")
    weights = {g: float(np.mean(half == int(g))) for g in parts}
    assert sum(weights.values()) == pytest.approx(1.0)
    mix = sum(weights[g] * parts[g]["mean"] for g in parts)
    assert mix == pytest.approx(overall, abs=1e-12)


def test_group_accuracy_refuses_what_it_cannot_compute():
    run = _fake_run()
    with pytest.raises(ValueError, match="by must be one of"):
        group_accuracy(run, "colour")
    with pytest.raises(ValueError, match="shifted run"):
        group_accuracy(run, "source")
    run.extra.clear()
    with pytest.raises(ValueError, match="rerun"):
        group_accuracy(run, "class")
