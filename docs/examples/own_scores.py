"""Scores you already have: a loss per canary and whether it was trained on, from any attack
or pipeline, turned into a certified epsilon lower bound."""
import matplotlib.pyplot as plt
import numpy as np

from semi_core.audit import ScoreAuditor, roc_curve

# stand-in for your attack's output: 2000 member and 2000 non-member losses, saved as a file
rng = np.random.default_rng(0)
member_loss, nonmember_loss = rng.gamma(2.0, 0.25, 2000), rng.gamma(2.0, 1.0, 2000)
np.savez("my_scores.npz", loss=np.r_[member_loss, nonmember_loss],
         is_member=np.r_[np.ones(2000), np.zeros(2000)])

auditor = ScoreAuditor.from_losses(member_loss, nonmember_loss)   # lower loss = member
print(auditor.summary(delta=1e-5))
for method in ("band", "cp", "gdp"):
    b = auditor.epsilon_lower_bound(delta=1e-5, method=method)
    print(f"{method:4s} epsilon >= {b.epsilon_lower_bound:.3f}  rests on: {b.assumption}")

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8, 3.2))
bins = np.linspace(0, 6, 60)
ax0.hist(member_loss, bins, alpha=0.6, label="members")
ax0.hist(nonmember_loss, bins, alpha=0.6, label="non-members")
ax0.set(xlabel="loss", ylabel="canaries", title="your scores")
ax0.legend(fontsize=8)
fpr, tpr, _ = roc_curve(-member_loss, -nonmember_loss)
ax1.plot(fpr, tpr, drawstyle="steps-post")
ax1.plot([1e-4, 1], [1e-4, 1], color="grey", lw=0.5)
ax1.set(xscale="log", yscale="log", xlim=(1e-3, 1), ylim=(1e-3, 1),
        xlabel="false-positive rate", ylabel="true-positive rate", title="ROC (log axes)")
fig.tight_layout()
