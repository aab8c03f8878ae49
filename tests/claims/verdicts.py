"""The statements that must stay registered and our conclusions on them, per claim id.

Each conclusion is still decided by its check; pinning it here makes a regression in a check
show up as a changed verdict. A claim module may add to the pinned sets with its own
``EXPECTED_FAILS`` / ``EXPECTED_CONDITIONAL`` (sets of full claim ids).
"""

from __future__ import annotations

import importlib

from semi_core.claims import SEED_MODULES

#: Statements that must stay registered, per seed (labels as in the registry).
REQUIRED = {
    "semi_sequential_mi": {
        "lem2.1", "eq2", "thm3.1", "thm3.4", "thm3.10", "lem3.2", "lem3.5", "lem3.6", "lem3.7",
        "lem3.8", "propD.2", "corD.1", "thmE.1", "corE.2", "corE.3", "lemB.1", "lemB.4",
        "lemB.5", "thmB.2", "corB.3", "corB.6", "thmC.1", "lemF.1", "lemF.2", "lemF.6",
        "lemF.7", "lemF.9", "corF.8", "thmF.3", "thmF.4", "thmF.5", "thmF.10", "thm4.1",
        "lem5.1", "appG.dkw", "appH.4.auc"},
    "per_datum_leakage": {
        "thm3.1", "cor3.2.eq8", "cor3.2.eq9", "eq10", "rem3.3", "gdp.sec3", "thm4.1", "rem4.2",
        "thm4.3", "thm4.3.eq16", "rem4.4", "thm4.5", "thm4.5.adv", "appC.h1", "appC.h2",
        "appC.eq48", "appC.4.threshold", "appC.6.restated", "remC.12.var", "thmC.5.lattice",
        "secE.1.easy"},
    "sequential_dp_auditing": {"thm3.1", "sec3.4.evalue", "table1.nbar_reading",
                               "table1.nondp2_gaussian_reading", "appF.1.dimension",
                               "appG.fig8_ceiling"},
    "combining_mi_updates": {"B1.l2sq", "B1.l2sq.expansion", "B1.l2", "alg3.p_in",
                             "thmB.1.appC", "lemB.2.chi2", "thmB.1.combine",
                             "sec3.3.entry_random", "sec5.3.generic", "sec5.3.x_random",
                             "appC.table7_vs_table3", "sec5.6.disparate", "sec4.1.rank",
                             "sec4.3.delta", "sec5.7.eps_floor", "sec5.6.easy_decreases"},
    "iha_parameters_vs_loss": {"tab7.purchase100", "sec4.1.eq4.spectrum", "appE.grad_L0"},
}

#: Claims that fail as stated.
EXPECTED_FAILS = {
    "semi_sequential_mi:lemB.5", "semi_sequential_mi:corB.6", "semi_sequential_mi:lem5.1",
    "semi_sequential_mi:appG.dkw", "semi_sequential_mi:appA.5.roots", "semi_sequential_mi:appH.3",
    "per_datum_leakage:thm4.3", "per_datum_leakage:thm4.3.eq16",
    "per_datum_leakage:rem4.4", "per_datum_leakage:appC.h1", "per_datum_leakage:appC.eq48",
    "sequential_dp_auditing:remA.1",
}
#: Claims that hold only under a condition.
EXPECTED_CONDITIONAL = {"per_datum_leakage:thm4.5.adv", "combining_mi_updates:B1.l2",
                        "semi_sequential_mi:thm4.1.dpsgd"}

for _mods in SEED_MODULES.values():
    for _name in _mods:
        _mod = importlib.import_module(_name)
        EXPECTED_FAILS |= set(getattr(_mod, "EXPECTED_FAILS", ()))
        EXPECTED_CONDITIONAL |= set(getattr(_mod, "EXPECTED_CONDITIONAL", ()))
