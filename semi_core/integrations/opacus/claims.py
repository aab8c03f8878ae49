"""The closed-form numbers of an Opacus audit, computed before any training: Opacus'
accountants, the exact epsilon where known and the claim under test.
"""

from __future__ import annotations

import math

from semi_core._validation import (
    ResourceLimitError,
)
from semi_core.integrations.opacus.accountants import opacus_accountant_epsilon
from semi_core.integrations.opacus.config import OpacusAuditConfig
from semi_core.sgd.bugs import get_bug
from semi_core.sgd.dirac import (
    WhiteBoxMechanism,
)
from semi_core.stats.gdp import gdp_epsilon


def _claims(cfg: OpacusAuditConfig, mech: WhiteBoxMechanism, n_dataset: int) -> dict:
    """Every closed-form number of the report, computed before any training (a delta that an
    accountant cannot handle is an error naming delta, not a failure after the games)."""
    the_bug = get_bug(cfg.bug)
    delta, steps = cfg.delta, cfg.steps
    q_user = min(1.0, cfg.batch_size / n_dataset)
    caught: list[str] = []
    try:
        eps_acc = opacus_accountant_epsilon(cfg.noise_multiplier, q_user, steps, delta,
                                            warnings_out=caught)
        if cfg.sampler == "fixed":
            eps_true = mech.epsilon(delta, cfg.tau)
            if the_bug is not None and the_bug.misreports_accounting:
                claimed = eps_acc["prv"]
                source = (f"Opacus PRV accountant told the batches were Poisson-sampled at "
                          f"q = n/N = {q_user:.4g} (bug)")
            else:
                claimed = gdp_epsilon(2.0 / cfg.noise_multiplier, delta)
                source = "exact epsilon of a correct run (mu = 2/sigma_DP GDP, replace-one)"
            relation = ("replace-one: the canary replaces one slot of batch tau; fixed disjoint "
                        "batches, each record used in exactly one step (no sub-sampling)")
        else:
            q = mech.sample_rate
            eps_true = None if the_bug is not None else mech.epsilon(delta)
            claimed = opacus_accountant_epsilon(cfg.noise_multiplier, q, steps, delta)["prv"]
            source = "Opacus PRV accountant (add/remove, Poisson rate q, T steps)"
            relation = ("add/remove: the canary is in the dataset (H1) or not (H0); Opacus' "
                        "DPDataLoader samples every record with probability q at every step")
    except MemoryError:
        raise ResourceLimitError(f"Opacus' accountants ran out of memory for steps = {steps}: "
                                 "use fewer steps") from None
    except (RuntimeError, ValueError, OverflowError, FloatingPointError) as exc:
        raise ValueError(f"delta = {delta!r} (with noise_multiplier = {cfg.noise_multiplier!r}, "
                         f"{steps} steps): the accountants cannot compute epsilon ({exc}); use "
                         "a delta well inside (0, 1), e.g. 1e-5") from None
    for name, v in (("epsilon_accountant", eps_acc["rdp"]), ("epsilon_accountant", eps_acc["prv"]),
                    ("epsilon_claimed", claimed)):
        if not (isinstance(v, float) and v >= 0 and not math.isnan(v)):
            raise ValueError(f"delta = {delta!r}: {name} is {v!r}, not a number >= 0; use a "
                             "delta well inside (0, 1), e.g. 1e-5")
    return {"q_user": q_user, "epsilon_accountant": eps_acc, "epsilon_true": eps_true,
            "claimed": float(claimed), "claim_source": source, "relation": relation,
            "warnings": caught}
