"""``semi-core derive``: print the SymPy-derived closed forms and whether they match the seed."""

from __future__ import annotations

from ._common import Result, add_json_flag

__all__ = ["register", "handler"]


def register(subparsers) -> None:
    """Add the ``derive`` subcommand."""
    parser = subparsers.add_parser(
        "derive",
        help="print the derived formulas (LaTeX, seed reference, match with the seed)",
        description="Print the SymPy derivations of the SeMI closed forms: name, seed reference, "
                    "whether the derived expression equals the seed's printed form, and notes "
                    "(errata).",
    )
    parser.add_argument("--latex", action="store_true", help="include the LaTeX of each formula")
    parser.add_argument("--name", default=None, metavar="NAME",
                        help="only this derivation (see the list without --name)")
    add_json_flag(parser)
    parser.set_defaults(func=handler)


def _match_word(flag) -> str:
    return {True: "matches seed", False: "DIFFERS from seed", None: "no seed form"}[flag]


def handler(args) -> Result:
    """Build the derivations (cached) and report them."""
    from semi_core.symbolic import all_derivations, get_derivation

    if args.name is not None:
        items = {args.name: get_derivation(args.name)}
    else:
        items = all_derivations()
    rows = []
    lines = []
    for name, der in items.items():
        rows.append({
            "name": name,
            "latex": der.to_latex(),
            "source": der.source,
            "matches_seed": der.matches_seed(),
            "note": der.note,
        })
        lines.append(f"{name}  [{der.source}]  {_match_word(rows[-1]['matches_seed'])}")
        if args.latex:
            lines.append(f"    {rows[-1]['latex']}")
        if rows[-1]["matches_seed"] is False or "ERRATUM" in der.note:
            lines.append(f"    note: {der.note}")
    n_diff = sum(r["matches_seed"] is False for r in rows)
    lines.append(f"{len(rows)} derivations, {n_diff} differ from the seed's printed form")
    return Result(payload={"derivations": rows}, text="\n".join(lines))
