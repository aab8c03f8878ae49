# docs: slow
"""Membership and entry inference from a model and its updates: a logistic regression on
digits is updated k = 4 times with 10 new records each; attacks that compare the snapshots
beat the attack that sees only the final model."""
import matplotlib.pyplot as plt

from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize

cfg = UpdateConfig(update="sgd-new", k=4, n_up=10, trials=20, seed=0)
run = run_experiment(cfg, scores=("loss",))       # 20 trials, each with its shadow runs
rows = {}
for combiner in ("diff", "ratio"):                 # ScoreDiff / ScoreRatio across snapshots
    s = summarize(run, score="loss", combiner=combiner, threshold="batch")
    rows[f"Back-Front ({combiner})"] = s["mi_accuracy"]
    print(f"{combiner:5s}: membership accuracy {s['mi_accuracy']['mean']:.3f} "
          f"+- {s['mi_accuracy']['se']:.3f}, AUC {s['auc']['mean']:.3f}, "
          f"entry accuracy {s['entry_accuracy']['mean']:.3f} "
          f"(random {s['entry_baselines']['random']:.3f})")
rows["final model only (loss)"] = s["no_update"]["loss"]
rows["final model only (gap)"] = s["no_update"]["gap"]
print(f"final model only: loss {s['no_update']['loss']['mean']:.3f}, "
      f"gap {s['no_update']['gap']['mean']:.3f}")

fig, ax = plt.subplots(figsize=(5, 3))
names = list(rows)
ax.barh(names, [rows[n]["mean"] - 0.5 for n in names], left=0.5,
        xerr=[2 * rows[n]["se"] for n in names], color=["C0", "C0", "C7", "C7"])
ax.axvline(0.5, color="k", lw=0.8)
ax.set(xlabel="membership accuracy (20 trials, +- 2 s.e.)", xlim=(0.4, 0.7),
       title="SGD-New, k = 4 updates of 10 records")
fig.tight_layout()
