"""Claims of ``iha_parameters_vs_loss.txt`` (Suri, Zhang & Evans: do parameters reveal more
than loss?).

Modules, by what they check:

* :mod:`~semi_core.claims.iha_parameters_vs_loss.formulas` -- Theorems 2.2-3.2 and the
  equations of App. B-C (SGD stationary law, Sherman-Morrison, the IHA score);
* :mod:`~semi_core.claims.iha_parameters_vs_loss.experiments` -- the tables, hyperparameters and
  Hessian spectra of §4 and App. D-E.
"""
