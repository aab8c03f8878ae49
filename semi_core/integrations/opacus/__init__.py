r"""Audit a user's Opacus DP-SGD training: :func:`audit_opacus`.

Every run of the audit starts from the common :math:`\theta_0` in a model of the user's
``model_fn()`` wrapped, with ``torch.optim.SGD`` and a data loader, by Opacus'
``PrivacyEngine.make_private`` (once per chunk of runs on fixed batches, each run reset to
:math:`\theta_0` and its own noise seed -- bit-identical to a wrapping per run; once per run
under Poisson sampling) (its
``GradSampleModule`` per-sample gradients, ``DPOptimizer`` clipping, noise and scaling, and --
with ``sampler="poisson"`` -- its ``DPDataLoader`` Poisson sampler), trains ``steps`` steps and
records :math:`\theta_0..\theta_T`. The game is played by the one runner
(:func:`semi_core.game.play.play`, through :func:`semi_core.sgd.dirac.play_white_box`):
:class:`OpacusMechanism` is the white-box mechanism of :mod:`semi_core.sgd.dirac` whose
``release`` trains the chunk's runs through Opacus (the Crafter of
:func:`~semi_core.sgd.dirac.draw_runs` decides batches and canary slots, the runner the bits);
scores come from :class:`~semi_core.sgd.dirac.WhiteBoxScorer` (Dirac log-LR and contrast,
SeMI-SGD, SeMI-max, the loss baselines) or :class:`PoissonDiracScorer`; bounds from
:func:`semi_core.audit.games.audit_game_result`. ``executor=`` runs the chunks on threads or a
Dask cluster with an identical result (Opacus runs of one process take turns: the warnings
they raise are collected with process-global state). The configuration is one validated
record, :class:`OpacusAuditConfig`; :func:`audit_opacus` also takes its fields as keywords.

Neighbouring relations and ground truth
---------------------------------------
``sampler="fixed"`` (default; the SeMI game). The Crafter fixes ``T`` disjoint batches of ``n``
records, each record used once; the canary replaces one slot of batch :math:`\tau`
(**replace-one**). Opacus runs with ``poisson_sampling=False`` on those batches. A correct run is
exactly :math:`\mu`-GDP with :math:`\mu = 2/\sigma_{DP}` (:mod:`semi_core.sgd.accounting`):
``epsilon_true`` and the claim under test. With a Dirac canary the auditor also controls the
:math:`H_0` record (the antipodal gradient), so the observed pair is the worst case.

``sampler="poisson"``. Opacus' own ``DPDataLoader`` samples each record of the dataset with
probability :math:`q` at every step; :math:`H_1` adds the canary record to the dataset,
:math:`H_0` does not (**add/remove**), so ``tau`` is not used. ``epsilon_true`` is the
``dp_accounting`` PLD of ``T`` Poisson-subsampled Gaussian steps (add/remove); the claim under
test is Opacus' accountant (PRV, Opacus' default). A Dirac canary is scored by its exact
mixture log-LR :math:`\sum_t\log(1-q+q\,e^{(2s_t-1)/(2\sigma_{DP}^2)})`.

``epsilon_accountant`` is always what Opacus' accountants (RDP and PRV; add/remove, Poisson
rate :math:`q = n/N` for the user's dataset of ``N`` records, ``T`` steps) report for the
configuration: the number a user would quote.

Refutation. ``claim_refuted`` is true when a nonparametric bound (``band``, ``dkw`` or ``cp``, each
(test, method) pair at ``failure_prob / K``, Bonferroni over the ``K`` pairs) exceeds the
claimed :math:`\varepsilon`: the claim is then false with confidence ``1 - failure_prob``.
``claim_refuted_gdp`` uses the Gaussian-score GDP route (``gdp_gaussian``) on the Dirac
statistics only (``dirac``, ``dirac_contrast``; Bonferroni over the two), and only where their
scores are exactly equal-variance Gaussian in both worlds: an isolated Dirac coordinate on
fixed batches (the correct run and every mechanism bug of the zoo shift or rescale Gaussian
noise; ``batch_clip`` is exact while the batch mean is not clipped). Then the scores are a
post-processing whose trade-off curve is exactly :math:`\mu_{obs}`-GDP, so a claimed
:math:`(\varepsilon, \delta)` with :math:`\varepsilon < \varepsilon_{\mu_{LB}}(\delta)` is
false -- no assumption on the mechanism's whole privacy profile is needed. Elsewhere it is
``None`` (not applicable); the ``gdp`` columns of ``epsilon_lower_bound`` (trade-off route)
assume the mechanism is GDP and are reported, not used to refute.

Randomness: noise comes from a ``torch.Generator`` passed as ``noise_generator`` (and, for
Poisson sampling, to the sampler), seeded per run from the runner's stream of the run's chunk;
the data loader gets a generator of its own and the model factory runs under
``torch.random.fork_rng``, so torch's global generator is never moved. This needs
``secure_mode=False``; Opacus warns about it and the warning is reported in
``report.warnings``, never silenced. A model factory is *called* (never unpickled); nothing is
loaded from files.

Modules
-------
One role each; this package hands on their public names:
:mod:`~semi_core.integrations.opacus.config` (:class:`OpacusAuditConfig`, the up-front work and
resolution checks), :mod:`~semi_core.integrations.opacus.prepare` (dataset split,
:math:`\theta_0`, canary: :func:`prepare_opacus_setup`),
:mod:`~semi_core.integrations.opacus.training` (the Opacus training loop),
:mod:`~semi_core.integrations.opacus.mechanism` (:class:`OpacusMechanism`),
:mod:`~semi_core.integrations.opacus.scorer` (:class:`PoissonDiracScorer`),
:mod:`~semi_core.integrations.opacus.bugs` (the bug zoo in Opacus' optimizer:
:func:`install_bug`), :mod:`~semi_core.integrations.opacus.accountants` (Opacus' RDP/PRV),
:mod:`~semi_core.integrations.opacus.claims` (the closed-form numbers and the claim under test),
:mod:`~semi_core.integrations.opacus.report` (:class:`OpacusAuditReport`, certification and
refutation), :mod:`~semi_core.integrations.opacus.audit` (:func:`audit_opacus`),
:mod:`~semi_core.integrations.opacus.example` (:func:`digits_example`) and
:mod:`~semi_core.integrations.opacus.timing` (:func:`time_engines`, read by the report's timing
table and ``python -m benchmarks opacus``).
"""

from semi_core.integrations.opacus._common import CANARIES
from semi_core.integrations.opacus.accountants import opacus_accountant_epsilon, poisson_pld_epsilon
from semi_core.integrations.opacus.audit import audit_opacus
from semi_core.integrations.opacus.bugs import install_bug
from semi_core.integrations.opacus.config import OpacusAuditConfig
from semi_core.integrations.opacus.example import DIGITS_TRAIN_RECORDS, digits_example
from semi_core.integrations.opacus.mechanism import OpacusMechanism
from semi_core.integrations.opacus.prepare import prepare_opacus_setup
from semi_core.integrations.opacus.report import BOUND_METHODS, OpacusAuditReport
from semi_core.integrations.opacus.scorer import PoissonDiracScorer
from semi_core.integrations.opacus.timing import time_engines

__all__ = ["audit_opacus", "OpacusAuditConfig", "OpacusAuditReport", "OpacusMechanism",
           "PoissonDiracScorer", "prepare_opacus_setup", "install_bug",
           "opacus_accountant_epsilon", "poisson_pld_epsilon", "CANARIES", "BOUND_METHODS",
           "digits_example", "DIGITS_TRAIN_RECORDS", "time_engines"]
