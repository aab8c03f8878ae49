"""Audit while you train: grade each canary as soon as its score exists and stop the run the
moment its privacy claim is refuted (a test supermartingale: valid at every step at once)."""
import matplotlib.pyplot as plt
import numpy as np

from semi_core.audit import AnytimeOneRun

fig, ax = plt.subplots(figsize=(5, 3.2))
for leak in (8.0, 2.0):          # stand-in runs whose canaries leak like epsilon = 8, then 2
    rng = np.random.default_rng(0)                   # 1000 canaries, 10 graded per step
    member = rng.random(1000) < 0.5                  # each included with probability 1/2
    flip = rng.random(1000) < 1 / (1 + np.exp(leak))  # randomised response at epsilon = leak
    score = np.where(member ^ flip, 1.0, -1.0)
    audit = AnytimeOneRun(claimed_epsilon=2.0, delta=1e-5, failure_prob=0.05, n_canaries=1000)
    path = []
    for step in range(100):
        # ... one training step of your loop, then the scores of its canaries:
        audit.update(score[10 * step:10 * step + 10], member[10 * step:10 * step + 10])
        path.append(audit.epsilon_lower_bound)
    print(f"leaks like {leak:g}: {audit}")
    print(f"  refuted at canary {audit.refuted_at}" if audit.refuted else "  not refuted")
    ax.plot(np.arange(1, 101), path, label=f"canaries leak like eps = {leak:g}")
ax.axhline(2.0, color="k", ls="--", lw=0.8, label="claimed eps = 2")
ax.set(xlabel="training step", ylabel="certified eps lower bound",
       title="anytime one-run audit (1000 canaries)")
ax.legend(fontsize=8)
fig.tight_layout()
np.savetxt("canaries.csv", np.c_[score, member], delimiter=",", header="score,member",
           comments="", fmt="%g")                   # the last run's canaries, as a file
