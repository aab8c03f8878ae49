"""``semi-core derive``: print the SymPy-derived closed forms and whether they match the seed."""

from __future__ import annotations

from semi_core import _latex

from ._common import Result
from ._options import LATEX_INLINE, add_json, add_latex, add_progress, reporter_from_args

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
    add_latex(parser, what="each formula")
    parser.add_argument("--name", default=None, metavar="NAME",
                        help="only this derivation (see the list without --name)")
    add_progress(parser)
    add_json(parser)
    parser.set_defaults(func=handler)


def _document_body(rows) -> list[str]:
    """One subsection per derivation: its name, the seed reference, whether it matches the
    seed's printed form, the formula (broken across lines when long) and the erratum."""
    out = []
    for r in rows:
        out += [r"\subsection*{" + _latex.escape(r["name"]) + "}",
                _latex.escape(f"{r['source']}: {_match_word(r['matches_seed'])}."),
                _latex.equation(r["latex"])]
        if r["matches_seed"] is False or "ERRATUM" in r["note"]:
            out.append(_latex.escape(r["note"]))
    return out


def _match_word(flag) -> str:
    return {True: "matches seed", False: "DIFFERS from seed", None: "no seed form"}[flag]


def handler(args) -> Result:
    """Build the derivations (cached) and report them."""
    from semi_core._io import atomic_write_text
    from semi_core._validation import check_output_path
    target = (check_output_path(args.latex, "--latex", suffix=".tex")
              if args.latex not in (None, LATEX_INLINE) else None)
    from semi_core.symbolic import derivation_names, get_derivation  # SymPy: after the refusals

    if args.name is not None:
        try:
            get_derivation(args.name)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"--name: {' '.join(str(exc).split())}") from None
    names = [args.name] if args.name is not None else derivation_names()
    rows = []
    lines = []
    with reporter_from_args(args).stage("derive", total=len(names), unit="derivation") as st:
        for name in names:
            st.set_note(name)
            der = get_derivation(name)  # built once, cached
            rows.append({
                "name": name,
                "latex": der.to_latex(),
                "source": der.source,
                "matches_seed": der.matches_seed(),
                "note": der.note,
            })
            lines.append(f"{name}  [{der.source}]  {_match_word(rows[-1]['matches_seed'])}")
            if args.latex is not None:
                lines.append(f"    {rows[-1]['latex']}")
            if rows[-1]["matches_seed"] is False or "ERRATUM" in der.note:
                lines.append(f"    note: {der.note}")
            st.update(1)
    n_diff = sum(r["matches_seed"] is False for r in rows)
    lines.append(f"{len(rows)} derivations, {n_diff} differ from the seed's printed form")
    payload = {"derivations": rows}
    if target is not None:
        doc = _latex.document(_document_body(rows), title="Closed forms derived by semi_core")
        atomic_write_text(target, doc, name="--latex")  # new file renamed over the path
        payload["written"] = {"latex": args.latex}
        lines.append(f"wrote latex: {args.latex}")
    return Result(payload=payload, text="\n".join(lines))
