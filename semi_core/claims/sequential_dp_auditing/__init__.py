"""Claims of ``sequential_dp_auditing.txt`` (sequential (eps, delta)-DP auditing with the MMD).

Modules, by what they check:

* :mod:`~semi_core.claims.sequential_dp_auditing.formulas` -- Theorem 3.1's bound, the e-value
  and Theorem 3.2 (i), exactly on discrete mechanisms;
* :mod:`~semi_core.claims.sequential_dp_auditing.algorithms` -- Algorithms 1-4 and their proofs
  (App. B, C, E), re-derived: signs and constants of the e-process, the regret bounds, OGA/ONS
  and the Bernstein step;
* :mod:`~semi_core.claims.sequential_dp_auditing.tables` -- Tables 1-2 and the prose about
  them (how N-bar was computed, App. C.3, the abstract and §1's figures, the NonDPGaussian2
  mechanism behind its row);
* :mod:`~semi_core.claims.sequential_dp_auditing.appendices` -- App. F (the perturbed uniform's
  dimension, F.2's run count), App. G's ceiling and §3.3's order of E[T];
* :mod:`~semi_core.claims.sequential_dp_auditing.system` -- the experiments of §4 and Table 1,
  run on the shipped sequential tester and mechanism zoo.
"""
