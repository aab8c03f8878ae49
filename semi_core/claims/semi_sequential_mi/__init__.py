"""Claims of ``semi_sequential_mi.txt`` (Michel, Basu, Kaufmann: Sequential Membership Inference).

Modules, by what they check:

* :mod:`~semi_core.claims.semi_sequential_mi.formulas` -- the lemmas, theorems and corollaries
  of §2-§5 and App. A-G (log LRs, error forms, SGD statistics, confidence radii);
* :mod:`~semi_core.claims.semi_sequential_mi.proofs` -- the steps of the proofs of App. A, D and
  E (coefficients, discriminants, roots, SeMI-max's level) and §4.1's correspondence between
  Theorems 3.1 and 4.1;
* :mod:`~semi_core.claims.semi_sequential_mi.qualitative` -- the sentences of §3.2-3.3, §5.1 and
  App. H ("X outperforms Y", "power is constant in ..."), turned into inequalities;
* :mod:`~semi_core.claims.semi_sequential_mi.experiments` -- what App. H's experiments report
  (power against the dimension, AUCs under DP).
"""
