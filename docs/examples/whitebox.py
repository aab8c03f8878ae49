# docs: slow
"""White-box membership inference on one trained model: the inverse-Hessian attack (IHA)
reads the target model's parameters; LiRA needs reference models trained on other subsets."""
import matplotlib.pyplot as plt

from semi_core.attacks.whitebox import AttackConfig, run_attacks
from semi_core.audit import roc_curve

# 32 logistic-regression models (squared loss), each on a random half of a 160-record pool of
# digits; the records of 4 target models are scored (160 each: members and non-members)
cfg = AttackConfig(dataset="digits-odd", model="logreg-mse", n_models=32, n_targets=None,
                   target_models=4, pool_size=160, damping=0.2)
run = run_attacks(cfg, ("iha", "loss", "lira-offline", "lira-online"), seed=0)
print(run.summary())

fig, ax = plt.subplots(figsize=(5, 4))
for name in ("iha", "loss", "lira-offline", "lira-online"):
    fpr, tpr, _ = roc_curve(*run.result.scores(name))
    ax.plot(fpr, tpr, label=name, drawstyle="steps-post")
ax.plot([0, 1], [0, 1], color="grey", lw=0.5)
ax.set(xlabel="false-positive rate", ylabel="true-positive rate",
       title="attacks on 4 target models (640 records)")
ax.legend(fontsize=8)
fig.tight_layout()
