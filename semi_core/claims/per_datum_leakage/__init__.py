"""Claims of ``per_datum_leakage.txt`` (Azize & Basu: per-datum membership leakage).

Modules, by what they check:

* :mod:`~semi_core.claims.per_datum_leakage.formulas` -- the asymptotic laws, leakage, power and
  privacy curves of §3-§4 (Theorems 3.1-4.5, Corollary 3.2, Remarks 3.3-4.4);
* :mod:`~semi_core.claims.per_datum_leakage.appendix_c` -- the proofs and restatements of
  App. C (Edgeworth terms, Lemmas C.7 and C.9, Theorem C.5, the restated §3-§4 results);
* :mod:`~semi_core.claims.per_datum_leakage.auditing` -- the application to DP-SGD (§4.4,
  App. D: the noisy-mean reading of one step, Alg. 7's covariance);
* :mod:`~semi_core.claims.per_datum_leakage.experiments` -- the set-up of the experiments
  (§5 / App. E.1);
* :mod:`~semi_core.claims.per_datum_leakage.games` -- the games of §2 and App. B (Theorem 2.2's
  optimal adversaries, the average-datum advantage as the mean per-datum advantage);
* :mod:`~semi_core.claims.per_datum_leakage.remarks` -- the prose around the theorems (Table 1's
  noise row, Remark 3.3's average-datum law, §4.3's geometry, §5's monotonicity sentences);
* :mod:`~semi_core.claims.per_datum_leakage.system` -- the statements decided by what the
  shipped per-datum system measures (mechanism, attacks, simulation).
"""
