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

from __future__ import annotations

from typing import TYPE_CHECKING

from semi_core._lazy import lazy_names

# NumPy only, and eager: ``rbf`` is both a submodule and a function, and the function must win
from .rbf import median_bandwidth, mmd_gaussian_shift, mmd_v_statistic, rbf

#: public name -> the submodule that defines it, imported on first use (PEP 562): importing
#: one submodule (``seq-audit`` needs :mod:`.tau` and :mod:`.tester`) does not pay for the
#: others (the batch tester, the ceilings, the stream audits).
_HOMES = {
    "batch_mmd_test": ".batch",
    "epsilon_ceiling": ".ceiling",
    "gaussian_shift_ceiling": ".ceiling",
    "mechanism_ceiling": ".ceiling",
    "OnlineNewtonStep": ".ons",
    "WITNESSES": ".rff",
    "rff_witness_values": ".rff",
    "SemiStreamResult": ".semi_stream",
    "semi_stream_audit": ".semi_stream",
    "success_bound": ".tau",
    "tau_auditorium": ".tau",
    "tau_mmd": ".tau",
    "tv_bound": ".tau",
    "GridResult": ".tester",
    "PairSource": ".tester",
    "SequentialResult": ".tester",
    "mechanism_source": ".tester",
    "run_audits": ".tester",
    "sampler_source": ".tester",
    "sequential_grid": ".tester",
    "sequential_test": ".tester",
    "stream_source": ".tester",
    "summarize": ".tester",
}

if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs
    from .batch import batch_mmd_test
    from .ceiling import epsilon_ceiling, gaussian_shift_ceiling, mechanism_ceiling
    from .ons import OnlineNewtonStep
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

__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals(), __all__)
