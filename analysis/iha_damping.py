"""How much of IHA's Hessian survives the damping on the bundled stand-ins (seed App. E).

IHA inverts :math:`\\mathbf H+\\epsilon\\mathbf I` with the seed's :math:`\\epsilon=0.2`. When the
Hessian's eigenvalues are small next to :math:`\\epsilon` (largest about .43 on the stand-ins),
:math:`(\\mathbf H+\\epsilon\\mathbf I)^{-1}\\approx\\epsilon^{-1}(\\mathbf I-\\mathbf H/\\epsilon)`
and IHA's terms become gradient norms and alignments (:math:`I_1\\propto\\|\\nabla\\ell\\|^2`,
:math:`I_2\\propto\\nabla L_0^\\top\\nabla\\ell`). This measures, per setting and target model:
the spectrum (largest eigenvalue, median, the fraction below :math:`\\epsilon`), the AUC of IHA
at several :math:`\\epsilon`, the AUC of the *Hessian-free* IHA (:math:`\\mathbf H` replaced by
0: the inverse is :math:`\\mathbf I/\\epsilon`), and the Spearman correlation between the two
scores. Usage::

    python analysis/iha_damping.py --out results/iha            # writes iha_damping.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/iha")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", type=int, default=32)
    parser.add_argument("--target-models", type=int, default=2)
    parser.add_argument("--epsilons", default="0.2,0.05,0.01")
    args = parser.parse_args(argv)
    import numpy as np
    import torch
    from scipy.stats import spearmanr

    from semi_core.attacks.whitebox import AttackConfig, iha_score, run_attacks
    from semi_core.audit.roc import auc
    from semi_core.sgd.hessian import EigenInverse

    torch.set_num_threads(1)
    eps_list = [float(v) for v in args.epsilons.split(",")]
    out: dict = {}
    for dataset, model in (("digits-odd", "logreg-mse"), ("breast-cancer", "mlp"),
                           ("digits", "logreg")):
        cfg = AttackConfig(dataset=dataset, model=model, n_models=args.models,
                           target_models=args.target_models, n_targets=None if
                           dataset == "breast-cancer" else 500)
        run = run_attacks(cfg, ("iha", "loss"), seed=args.seed)
        rows, scores = [], {f"iha@{e:g}": [] for e in eps_list}
        scores.update({"iha-hessian-free@0.2": [], "loss": [], "member": []})
        for wb in run.whitebox:
            ev = torch.linalg.eigvalsh(wb.hessian()).numpy()
            rows.append({"d": int(ev.size), "largest": float(ev[-1]),
                         "median": float(np.median(ev)), "smallest": float(ev[0]),
                         "fraction_below_0.2": float(np.mean(ev < 0.2)),
                         "fraction_below_0.01": float(np.mean(ev < 0.01))})
            for e in eps_list:
                try:   # a damping below -(smallest eigenvalue) is refused: recorded as such
                    inv = wb.inverse(epsilon=e)
                except ValueError as exc:
                    rows[-1][f"refused@{e:g}"] = str(exc)
                    scores.pop(f"iha@{e:g}", None)
                    continue
                if f"iha@{e:g}" in scores:
                    scores[f"iha@{e:g}"].append(iha_score(wb.iha_terms(inv), lr=wb.sgd.lr))
            free = EigenInverse(torch.zeros_like(wb.hessian()), epsilon=0.2)
            scores["iha-hessian-free@0.2"].append(iha_score(wb.iha_terms(free), lr=wb.sgd.lr))
            scores["loss"].append(-wb.losses)
            scores["member"].append(wb.member)
        s = {k: np.concatenate(v) for k, v in scores.items()
             if len(v) == len(scores["member"])}
        m = s.pop("member").astype(bool)
        aucs = {k: float(auc(v[m], v[~m])) for k, v in s.items()}
        rho = float(spearmanr(s["iha@0.2"], s["iha-hessian-free@0.2"])[0])
        out[f"{dataset}/{model}"] = {"spectrum": rows, "auc": aucs,
                                     "spearman_iha0.2_vs_hessian_free": rho,
                                     "n_member": int(m.sum()), "n_nonmember": int((~m).sum())}
        print(dataset, model, json.dumps(out[f"{dataset}/{model}"]), flush=True)
    p = Path(args.out)
    p.mkdir(parents=True, exist_ok=True)
    (p / "iha_damping.json").write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
