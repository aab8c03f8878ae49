"""Anytime-valid DP auditing: a test martingale bets against the claim "the mechanism is
(epsilon, delta)-DP" and stops as soon as its wealth reaches 1/alpha."""
import matplotlib.pyplot as plt
import numpy as np

from semi_core.audit.sequential import mechanism_source, sequential_grid
from semi_core.mechanisms.zoo import SEED_PAIR, make_zoo_mechanism

grid = [0.0, 0.05, 0.1, 0.2, 0.4]                 # claims tested on one stream of outputs
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
# a correct Laplace mean built for epsilon = 1, and one built for 0.1 with a bug (its noise
# is scaled by the private dataset size)
for ax, (name, eps) in zip(axes, (("dp-laplace", 1.0), ("nondp-gaussian-1", 0.1))):
    mech = make_zoo_mechanism(name, eps)
    src = mechanism_source(mech, *SEED_PAIR)      # outputs on two neighbouring datasets
    res = sequential_grid(src, grid, delta=1e-5, failure_prob=0.05, max_obs=1500, seed=0)
    print(f"{name} (built for epsilon {eps:g}): certified epsilon >= {res.epsilon_lower_bound:g} "
          f"after {res.n_observed} pairs")
    for r in res.results:
        print(f"  claim eps={r.epsilon:<5g} {r.verdict:20s} stopped at {r.stopped_at}")
        ax.plot(np.arange(1, r.log_wealth.size + 1), r.log_wealth, label=f"eps = {r.epsilon:g}")
    ax.axhline(np.log(1 / 0.05), color="k", ls="--", lw=0.8)
    ax.set(title=f"{name}, built for eps = {eps:g}", xlabel="pairs observed")
axes[0].set_ylabel("log wealth (reject at log 1/alpha)")
axes[1].legend(fontsize=7)
fig.tight_layout()
