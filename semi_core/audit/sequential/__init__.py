"""Anytime-valid sequential DP auditing (sequential_dp_auditing seed) and SeMI stream audits.

* :mod:`.tau` -- :math:`\\tau(\\varepsilon,\\delta)` (Thm 3.1), the DP-Auditorium bound, the
  success bound :math:`p^*` of a DP guessing game;
* :mod:`.rbf` -- RBF kernel, median heuristic, closed-form MMDs (oracles);
* :mod:`.rff` -- the random-Fourier-feature witness (``witness="rff"``: O(N D^2) per run, the
  kernel :math:`K_D^2` in [0, 1] keeps Theorem 3.1 exactly valid);
* :mod:`.ons` -- 1-D Online Newton Step (Alg. 3);
* :mod:`.tester` -- Alg. 1 (ONS test supermartingale), Alg. 2 (e-process), epsilon grids with
  an anytime-valid lower bound, runs and summaries;
* :mod:`.ceiling` -- the largest epsilon an MMD audit can ever certify (tau^{-1} of the MMD its
  witness statistic converges to);
* :mod:`.conventions` -- the authors' notebook's threshold/ONS/OGA and the readings of the mean
  mechanisms (DP-Auditorium's MeanMechanism code);
* :mod:`.batch` -- the fixed-sample MMD tester (DP-Auditorium style) for the Table 3 ablation;
* :mod:`.semi_stream` -- anytime-valid audits of SeMI games fed as a stream of guesses.
"""

from .batch import batch_mmd_test
from .ceiling import epsilon_ceiling, gaussian_shift_ceiling, mechanism_ceiling
from .ons import OnlineNewtonStep
from .rbf import median_bandwidth, mmd_gaussian_shift, mmd_v_statistic, rbf
from .rff import WITNESSES, rff_witness_values
from .semi_stream import SemiStreamResult, semi_stream_audit
from .tau import success_bound, tau_auditorium, tau_mmd, tv_bound
from .tester import (
    GridResult,
    PairSource,
    SequentialResult,
    mechanism_source,
    run_audits,
    sampler_source,
    sequential_grid,
    sequential_test,
    stream_source,
    summarize,
)

__all__ = [
    "tau_mmd", "tau_auditorium", "tv_bound", "success_bound", "rbf", "median_bandwidth",
    "mmd_gaussian_shift", "mmd_v_statistic", "OnlineNewtonStep", "PairSource",
    "mechanism_source", "stream_source", "sampler_source", "SequentialResult", "GridResult",
    "sequential_test", "sequential_grid", "run_audits", "summarize", "batch_mmd_test",
    "semi_stream_audit", "SemiStreamResult", "WITNESSES", "rff_witness_values",
    "epsilon_ceiling", "mechanism_ceiling", "gaussian_shift_ceiling",
]
