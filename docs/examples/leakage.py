"""Per-datum leakage: how exposed one record is in the empirical mean of n records, in closed
form (its m*) and by simulation, for the seed's easy / medium / hard targets."""
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm

from semi_core.attacks.leakage import simulate_leakage, summarize_leakage
from semi_core.audit import epsilon_lower_bound, roc_curve
from semi_core.mechanisms.per_datum import PerDatumMean, seed_bernoulli, seed_targets

law = seed_bernoulli(d=5000, seed=0)        # d = 5000 independent Bernoulli columns
targets = seed_targets(law, seed=0)         # records of increasing typicality
fig, ax = plt.subplots(figsize=(5, 4))
for colour, name in zip(("C0", "C1", "C2"), ("easy", "medium", "hard")):
    mech = PerDatumMean(law, 1000, targets[name])           # the mean of n = 1000 records
    th = mech.theory(0.01)
    game = simulate_leakage(mech, 2000, seed=0, attacks=("exact",))
    s = summarize_leakage(game, (0.01,))["exact"]
    print(f"{name:6s} m* = {th['m_star']:6.3f}  leakage {th['leakage']:.3f}  "
          f"power at FPR 1%: closed form {th['power']:.3f}, "
          f"2000 games {s['tpr_at_fpr']['0.01']:.3f} +- {s['tpr_se']['0.01']:.3f}")
    # the limit experiment N(-m*/2, m*) vs N(m*/2, m*): a sqrt(m*)-GDP trade-off curve
    f = np.logspace(-4, 0, 200)
    mu = np.sqrt(th["m_star"])
    ax.plot(f, norm.sf(norm.isf(f) - mu), color=colour, label=f"{name}: sqrt(m*) = {mu:.2f}")
    member, nonmember = game.scores("exact")
    fe, te, _ = roc_curve(member, nonmember)
    ax.plot(fe, te, color=colour, ls=":")
    if name == "easy":
        bound = epsilon_lower_bound(member, nonmember, delta=1e-5)
        print(f"easy target: certified epsilon >= {bound.epsilon_lower_bound:.3f} "
              f"({bound.assumption})")
ax.set(xscale="log", xlim=(1e-3, 1), ylim=(0, 1), xlabel="false-positive rate",
       ylabel="true-positive rate", title="one record's exposure (n=1000, d=5000)")
ax.legend(fontsize=8, title="closed form (solid), simulated (dotted)", title_fontsize=8)
fig.tight_layout()
