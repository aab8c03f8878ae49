"""`semi-core verify`: check the seed papers' registered claims and report verdicts.

``semi-core verify [--paper NAME] [--claim ID] [--json] [--latex [FILE.tex]] [--errata FILE.md]``

Under ``--json`` one object is printed:
``{"claims": [{"id", "source", "verdict", "detail", "corrected_latex", ...}], "summary": {...}}``.
Output paths are checked before any claim is verified (a link, FIFO or device is refused) and
written atomically (a new file renamed over the path at the end: an interrupted run leaves no
partial file). ``--seed`` is the RNG seed of the
Monte Carlo checks (it was ``--rng-seed``, kept as a deprecated alias); the paper filter is
``--paper`` (was ``--seed NAME``).
"""

from __future__ import annotations

from ._common import Result
from ._options import (
    LATEX_INLINE,
    DeprecatedAlias,
    _seed,
    add_json,
    add_latex,
    add_progress,
    add_seed,
    reporter_from_args,
)


def register(sub) -> None:
    """Add the ``verify`` subcommand."""
    from semi_core._seeds import claim_modules  # the seed names, without importing claims

    p = sub.add_parser("verify", help="check the seed papers' claims (holds / fails / holds "
                                      "only under a condition)")
    p.add_argument("--paper", choices=sorted(claim_modules()), default=None,
                   help="only the claims of this seed paper")
    p.add_argument("--claim", default=None, help="only this claim (id 'paper:label' or label)")
    add_latex(p, what="the verdicts (a standalone document)")
    p.add_argument("--errata", default=None, metavar="FILE.md",
                   help="write the errata page (Markdown) generated from the verdicts")
    p.add_argument("--full", action="store_true",
                   help="larger Monte Carlo sizes (default: quick)")
    add_seed(p, help_suffix="; Monte Carlo checks")
    p.add_argument("--rng-seed", dest="seed", type=_seed, action=DeprecatedAlias, new="--seed")
    p.add_argument("--list", action="store_true", help="list the registered claim ids only")
    add_progress(p)
    add_json(p)
    p.set_defaults(func=run, seed=None)  # None: not given (refused with --list); default 0


def run(args) -> Result:
    """Verify the selected claims; write the LaTeX / errata files if asked."""
    from semi_core._io import atomic_write_text
    from semi_core._validation import check_output_path

    # argument-level refusals first: the claims registry imports SymPy and SciPy
    if args.list:
        given = [f for f, v in (("--latex", args.latex), ("--errata", args.errata),
                                ("--full", args.full or None),
                                ("--seed", args.seed)) if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                             "apply to --list (it lists the claim ids and verifies nothing); "
                             "remove it")
    targets = {}
    if args.latex is not None and args.latex != LATEX_INLINE:
        targets["latex"] = check_output_path(args.latex, "--latex", suffix=".tex")
    if args.errata is not None:
        targets["errata"] = check_output_path(args.errata, "--errata", suffix=".md")

    from semi_core.claims import errata_markdown, select_claims, summary, to_latex, verify

    try:
        claims = select_claims(args.paper, args.claim)
    except KeyError as exc:
        raise ValueError(f"--claim: no registered claim {args.claim!r} ({exc}); see "
                         "`semi-core verify --list`") from None
    if args.list:
        rows = [{"id": c.id, "location": c.location, "title": c.title, "method": c.method}
                for c in claims]
        return Result({"claims": rows, "count": len(rows)},
                      "\n".join(f"{c.id:45s} {c.location}" for c in claims))
    with reporter_from_args(args).stage("verify", total=len(claims), unit="claim") as st:
        def before(claim_id: str) -> None:  # called before each claim: the previous one is done
            if st.note:
                st.update(1)
            st.set_note(claim_id)

        results = verify(args.paper, args.claim, quick=not args.full,
                         rng_seed=0 if args.seed is None else args.seed, progress=before)
    summ = summary(results)
    written = {}
    if "latex" in targets:
        atomic_write_text(targets["latex"], to_latex(results), name="--latex")
        written["latex"] = args.latex
    if "errata" in targets:
        atomic_write_text(targets["errata"], errata_markdown(results), name="--errata")
        written["errata"] = args.errata
    payload = {"claims": [r.as_json() for r in results], "summary": summ}
    if args.latex == LATEX_INLINE:
        payload["latex"] = to_latex(results)
    if written:
        payload["written"] = written
    lines = [f"{r.verdict[:60]:62s} {r.id}" for r in results]
    lines += ["", f"{summ['total']} claims: {summ['holds']} hold, {summ['fails']} fail, "
                  f"{summ['holds_only_under']} hold only under a condition"]
    for r in results:
        if r.verdict != "holds":
            lines.append(f"- {r.id}: {r.detail[:300]}")
    lines += [f"wrote {k}: {v}" for k, v in written.items()]
    if args.latex == LATEX_INLINE:
        lines += ["", payload["latex"]]
    return Result(payload, "\n".join(lines))
