"""The attack ROC figure splits the attacks into panels of a few curves (IHA in each)."""

from types import SimpleNamespace

from semi_core.report.attack_section import _ATTACKS, _roc_panels


def test_attacks_split_into_few_curve_panels():
    names = (*_ATTACKS, "an-attack-in-no-group")
    run = SimpleNamespace(result=SimpleNamespace(stats=dict.fromkeys(names)),
                          loo_result=SimpleNamespace(stats=dict.fromkeys(("iha", "l-attack"))))
    panels = _roc_panels(run)
    target = [p for p in panels if p[0].startswith("target")]
    assert len(target) == 3 and panels[-1][0] == "leave-one-out subset"
    # IHA + at most 4 of its own + the one attack in no group
    assert all(len(shown) <= 6 and shown[0] == "iha" for _, _, shown in target)
    assert {a for _, _, shown in target for a in shown} == set(names)  # every attack drawn
