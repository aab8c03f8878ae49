"""`semi-core verify`: check the seed papers' registered claims and report verdicts.

``semi-core verify [--seed NAME] [--claim ID] [--json] [--latex FILE.tex] [--errata FILE.md]``

Under ``--json`` one object is printed:
``{"claims": [{"id", "source", "verdict", "detail", "corrected_latex", ...}], "summary": {...}}``.
"""

from __future__ import annotations

from pathlib import Path

from ._common import Result, add_json_flag


def register(sub) -> None:
    from semi_core.claims import SEED_MODULES

    p = sub.add_parser("verify", help="check the seed papers' claims (holds / fails / holds "
                                      "only under a condition)")
    p.add_argument("--seed", choices=sorted(SEED_MODULES), default=None,
                   help="only the claims of this seed paper")
    p.add_argument("--claim", default=None, help="only this claim (id 'seed:label' or label)")
    p.add_argument("--latex", default=None, metavar="FILE.tex",
                   help="write a standalone LaTeX document of the verdicts")
    p.add_argument("--errata", default=None, metavar="FILE.md",
                   help="write the errata page (Markdown) generated from the verdicts")
    p.add_argument("--full", action="store_true",
                   help="larger Monte Carlo sizes (default: quick)")
    p.add_argument("--rng-seed", type=int, default=0, help="root seed of Monte Carlo checks")
    p.add_argument("--list", action="store_true", help="list the registered claim ids only")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> Result:
    from semi_core.claims import errata_markdown, select_claims, summary, to_latex, verify

    if args.list:
        claims = select_claims(args.seed, args.claim)
        rows = [{"id": c.id, "location": c.location, "title": c.title, "method": c.method}
                for c in claims]
        return Result({"claims": rows, "count": len(rows)},
                      "\n".join(f"{c.id:45s} {c.location}" for c in claims))
    for flag, path, ext in (("--latex", args.latex, ".tex"), ("--errata", args.errata, ".md")):
        if path is not None and not str(path).endswith(ext):
            raise ValueError(f"{flag} must name a {ext} file, got {path!r}")
    results = verify(args.seed, args.claim, quick=not args.full, rng_seed=args.rng_seed)
    summ = summary(results)
    written = {}
    if args.latex:
        Path(args.latex).write_text(to_latex(results))
        written["latex"] = args.latex
    if args.errata:
        Path(args.errata).write_text(errata_markdown(results))
        written["errata"] = args.errata
    payload = {"claims": [r.as_json() for r in results], "summary": summ}
    if written:
        payload["written"] = written
    lines = [f"{r.verdict[:60]:62s} {r.id}" for r in results]
    lines += ["", f"{summ['total']} claims: {summ['holds']} hold, {summ['fails']} fail, "
                  f"{summ['holds_only_under']} hold only under a condition"]
    for r in results:
        if r.verdict != "holds":
            lines.append(f"- {r.id}: {r.detail[:300]}")
    lines += [f"wrote {k}: {v}" for k, v in written.items()]
    return Result(payload, "\n".join(lines))
