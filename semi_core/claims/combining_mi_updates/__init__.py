"""Claims of ``combining_mi_updates.txt`` (Jagielski et al.: membership inference on model
updates).

Modules, by what they check:

* :mod:`~semi_core.claims.combining_mi_updates.formulas` -- the exact loss identities of
  App. B.1;
* :mod:`~semi_core.claims.combining_mi_updates.mean_estimation` -- the Gaussian mean-estimation
  analysis against its own experiment and algorithm (Algorithm 3's IN law, Theorem B.1 at
  App. C's sizes, the chi-square norm events of Lemmas B.2/B.3);
* :mod:`~semi_core.claims.combining_mi_updates.system` -- App. B.2-B.3, Theorem 4.1 and §5.7,
  decided on the shipped model-update mechanism.
"""
