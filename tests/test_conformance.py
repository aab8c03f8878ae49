"""Every mechanism of the package through every rule of the conformance suite, in one place.

One test per (mechanism, rule) pair (:func:`semi_core.testing.parametrize_with_checks`; ids
``<mechanism>-<rule>``). Every mechanism runs in a small configuration: 60 rounds for the shape
and chunking rules (20 where a round is a training run), the ground truth from 2000 games (400
for the quadrature log-LRs of the zoo, 100-200 for training runs, none for the costliest) and the
LR identity from 1000 rounds per hypothesis (tolerance about 0.2; 2000 for the cheap white-box
Dirac game; none where a round is a costly training run).
A log-LR that is a score rather than the exact likelihood ratio is a declared expected failure
of ``lr_identity`` with its reason (or the mechanism declares ``log_lr_exact = False``); where a
round is a training run, that rule runs in the slow tier (cases restricted to it).
"""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.attacks.updates.gap import UpdateMeanGame, update_game_mechanism
from semi_core.mechanisms import zoo
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.mechanisms.noisy_mean import NoisyMean
from semi_core.mechanisms.per_datum import (
    AverageDatumMean,
    PerDatumMean,
    ProductLaw,
    seed_bernoulli,
)
from semi_core.testing import MechanismCase, parametrize_with_checks

#: Options of a mechanism whose round is a training run: 20 rounds for the shape and chunking
#: rules, no ground-truth games unless set, and no LR identity (2 T lr_rounds training runs: 2 to
#: 20 CPU-minutes at the 400 rounds per hypothesis that give a tolerance of 0.4) unless set.
TORCH = {"rounds": 20, "truth_rounds": 0, "lr_rounds": 0}


def _torch():
    """torch on one thread (tiny models; the results do not depend on it), or skip."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return torch


def _gauss(d: int, seed: int = 0):
    law = ProductLaw.gaussian(np.zeros(d), 1.0)
    return law, law.sample(np.random.default_rng(seed), 1)[0]


def _white_box(kind: str = "dirac", k: int = 1, bug=None):
    def build():
        _torch()
        from semi_core.sgd.bugs import get_bug
        from semi_core.sgd.dirac import WhiteBoxMechanism
        from tests.integrations.conftest import make_problem, white_box_setup

        setup, _ = white_box_setup(make_problem(), kind=kind, k=k, sigma=1.5)
        return WhiteBoxMechanism(setup, bug=get_bug(bug))
    return build


def _opacus(sampler: str, k: int):
    def build():
        _torch()
        pytest.importorskip("opacus")
        from semi_core.integrations.opacus import OpacusMechanism, prepare_opacus_setup
        from tests.integrations.conftest import dpsgd_cfg, make_problem

        model_fn, data = make_problem()
        ctx = prepare_opacus_setup(model_fn, data, cfg=dpsgd_cfg(1.5), canary="dirac",
                                   sampler=sampler, canaries_per_run=k, seed=0)
        return OpacusMechanism(ctx)
    return build


def _training_loop(train: str = "user_train", **kw):
    def build():
        _torch()
        from semi_core.integrations.training import TrainingLoop
        from tests.integrations import user_loop as u

        if train == "opacus_train":
            pytest.importorskip("opacus")
        args = {"canary": "dirac", "noise_multiplier": u.SIGMA, **kw}
        if args.get("sampler") == "poisson":
            args = {"sample_rate": u.Q, **args}
        fn = u.poisson_train if args.get("sampler") == "poisson" else getattr(u, train)
        return TrainingLoop(fn, u.make_model(), reference=(u.X[:64], u.Y[:64]),
                            steps=u.STEPS, lr=u.LR, batch_size=u.BATCH, max_grad_norm=u.CLIP,
                            **args)
    return build


def _dpsgd():
    _torch()
    from semi_core.sgd.audit import prepare_audit
    from semi_core.sgd.dpsgd import DPSGDConfig
    from semi_core.sgd.mechanism import DPSGDMechanism

    cfg = DPSGDConfig(batch_size=16, steps=4, lr=0.5, clip=1.0, sigma_dp=1.0)
    return DPSGDMechanism(prepare_audit(model="logreg", cfg=cfg, seed=3, pretrain_epochs=5,
                                        n_reference=32))


def _linreg():
    _torch()
    from semi_core.sgd.linreg import H2Config, LinRegSGDMechanism

    return LinRegSGDMechanism(H2Config())


def _dp_update():
    _torch()
    from semi_core.attacks.updates import UpdateConfig
    from semi_core.attacks.updates.dp import dp_mechanism

    return dp_mechanism(UpdateConfig(clip=1.0, sigma_dp=1.0, n0=60, trials=2, n_ref=2,
                                     base_epochs=4, new_epochs=2, full_epochs=1, n_up=4))


def _trained_model():
    torch = _torch()
    from semi_core.attacks.whitebox import TrainedModelMechanism
    from semi_core.sgd.data import load_bundled
    from semi_core.sgd.momentum import SGDConfig
    from semi_core.sgd.reference_models import build_attack_model

    x, y, _ = load_bundled("digits-odd")
    x, y = x[:41].copy(), y[:41].astype(float)
    fm = build_attack_model("logreg-mse", 64, 2)
    return TrainedModelMechanism(fm, torch.as_tensor(x), torch.as_tensor(y), np.arange(40), 40,
                                 SGDConfig(lr=0.05, batch_size=16, epochs=2))


BERN = ProductLaw.bernoulli(np.full(30, 0.3))
UPDATE_GAME = UpdateMeanGame(n0=30, n1=4, d=5, sigma=1.0, distance=3.0, c=0.05)
SCORE = "log_lr_steps is a score, not the exact log-likelihood ratio of the releases"

MECHANISMS = [
    # mechanisms/: exact log-LRs, cheap
    MechanismCase(EmpiricalMean.isotropic(10, 5, distance=3.0), "empirical-mean-iso"),
    MechanismCase(EmpiricalMean(n=[20, 5, 5], T=3, mu=0.0, cov=1.0, target=4.0),
                  "empirical-mean-steps"),
    MechanismCase(NoisyMean(10, 4, noise=0.5, data_mean=-1.0, data_std=0.1), "noisy-mean"),
    MechanismCase(PerDatumMean(BERN, n=50, target=np.ones(30)), "per-datum"),
    MechanismCase(PerDatumMean(BERN, n=50, target=np.ones(30), rho=0.5), "per-datum-rho"),
    MechanismCase(PerDatumMean(BERN, n=50, target=np.ones(30), rho=0.5,
                               inclusion="per-coordinate"), "per-datum-per-coordinate"),
    MechanismCase(PerDatumMean(_gauss(20)[0], 30, _gauss(20)[1], rho=0.5, mode="exact",
                               inclusion="per-coordinate"), "per-datum-gauss-exact"),
    MechanismCase(PerDatumMean(seed_bernoulli(30, seed=1), 50, np.ones(30), noise_std=0.3,
                               rho=0.5), "per-datum-noisy"),
    MechanismCase(AverageDatumMean(ProductLaw.bernoulli(np.full(10, 0.3)), 20),
                  "average-datum"),
    MechanismCase(AverageDatumMean(_gauss(10)[0], 20, noise_std=0.7), "average-datum-noisy"),
    *(MechanismCase(zoo.make_zoo_mechanism(name, 1.0), name, {"truth_rounds": 400})
      for name in sorted(zoo.ZOO)),
    MechanismCase(zoo.RandomizedResponse(1.0), "randomized-response"),
    # attacks/updates: the update games
    MechanismCase(update_game_mechanism(UPDATE_GAME, "sufficient"), "update-sufficient"),
    MechanismCase(update_game_mechanism(UPDATE_GAME, "exact"), "update-exact"),
    # torch: one round is a training run
    MechanismCase(_white_box(), "white-box-dirac", {**TORCH, "truth_rounds": 200,
                                                     "lr_rounds": 2000}),
    MechanismCase(_white_box(k=2), "white-box-dirac-k2", {**TORCH, "lr_rounds": 1000}),
    MechanismCase(_white_box(k=2, bug="noise_unscaled"), "white-box-bug",
                  {**TORCH, "truth_rounds": 200, "lr_rounds": 1000}),
    MechanismCase(_white_box(kind="input"), "white-box-input", TORCH),
    MechanismCase(_opacus("fixed", 2), "opacus-fixed", TORCH),
    MechanismCase(_opacus("poisson", 1), "opacus-poisson", TORCH),
    MechanismCase(_training_loop(), "training-loop-dirac", {**TORCH, "truth_rounds": 100}),
    MechanismCase(_training_loop(canary="input", canary_record=(np.r_[np.zeros(5), 4.0], 2)),
                  "training-loop-input", TORCH),
    MechanismCase(_training_loop(sampler="poisson"), "training-loop-poisson",
                  {**TORCH, "truth_rounds": 100}),
    MechanismCase(_training_loop("opacus_train"), "training-loop-opacus", TORCH,
                  marks=(pytest.mark.slow,)),
    MechanismCase(_dpsgd, "dpsgd", {**TORCH, "truth_rounds": 100}),
    MechanismCase(_linreg, "linreg-sgd", {**TORCH, "rounds": 60}),
    MechanismCase(_dp_update, "dp-update", TORCH),
    MechanismCase(_trained_model, "trained-model", TORCH, marks=(pytest.mark.slow,)),
    # slow: the LR identity of mechanisms whose round is a training run (1000 rounds per
    # hypothesis, 10-40 CPU-s each); a log-LR that is a score is a declared expected failure
    MechanismCase(_white_box(kind="input"), "white-box-input-lr", {**TORCH, "lr_rounds": 1000},
                  marks=(pytest.mark.slow,), rules=("lr_identity",)),
    MechanismCase(_dpsgd, "dpsgd-lr", {**TORCH, "lr_rounds": 1000}, marks=(pytest.mark.slow,),
                  rules=("lr_identity",), expected_failures={"lr_identity": (
                      "a plug-in log-LR: the law of the batch gradient is estimated from 32 "
                      "reference records (seed 4.2, shrinkage), so it is not the exact ratio "
                      "(E_H1[1/LR; LR>1] + P_H0(LR<=1) = 0.79-0.82 at 1000 rounds, tolerance 0.19)")}),
    MechanismCase(_dp_update, "dp-update-lr", {**TORCH, "lr_rounds": 1000},
                  marks=(pytest.mark.slow,), rules=("lr_identity",), expected_failures={
                      "lr_identity": "log_lr_steps is the canary's loss decrease per step, a "
                                     "statistic for the protocol's checks, not a log-LR "
                                     "(UpdateCanaryMechanism offers no SeMI test)"}),
]


@parametrize_with_checks(MECHANISMS, rounds=60, lr_rounds=1000)
def test_conformance(mechanism, check):
    # a failed rule raises MechanismCheckError (an AssertionError); a rule that does not apply
    # is a pytest skip; what is left must say it passed
    assert check(mechanism).startswith("passed")
