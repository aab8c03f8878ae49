"""``semi-core audit-stream``: audit while you train, from a growing file of scored canaries.

Examples::

    semi-core audit-stream --scores canaries.csv --claimed-epsilon 2 --json
    semi-core audit-stream --scores canaries.csv --claimed-epsilon 2 --delta 1e-5 \\
        --n-canaries 1000 --follow --poll-seconds 1 --max-wait 60 --json

The file holds one row per graded canary, **in the order fixed in advance** (canary index or
insertion step): a CSV with a header (columns ``score`` and ``member`` by default; a last line
without its line end is not read yet) or an ``.npz`` with those two arrays (rewrite it
atomically as it grows). Rows are fed to :class:`semi_core.audit.AnytimeOneRun`; the bound and
the refutation are valid at every time at once, so ``--follow`` may stop at the first
refutation. ``--follow`` re-reads the file every ``--poll-seconds`` and stops when the claim is
refuted, when ``--n-canaries`` rows were graded, or after ``--max-wait`` seconds without a new
row (the wait is bounded). Following a checkpoint folder is not offered: score the checkpoints
into this file (``semi-core audit-checkpoints`` scores one target per run).
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import numpy as np

from semi_core.cli._common import Result
from semi_core.cli._options import add_delta, add_failure_prob, add_json

__all__ = ["register", "handler", "read_stream"]

#: Largest stream file read (bytes).
MAX_STREAM_BYTES = 1 << 30


def register(subparsers) -> None:
    """Add the ``audit-stream`` subcommand."""
    p = subparsers.add_parser(
        "audit-stream", help="anytime-valid one-run audit of a growing file of scored canaries",
        description="Grade canaries as their scores arrive (a CSV or .npz that grows during "
                    "training) and refute the claimed epsilon the moment the evidence allows; "
                    "the epsilon lower bound is valid at every time at once (Ville).")
    p.add_argument("--scores", required=True,
                   help="CSV (header; columns --score-col, --label-col) or .npz, rows in the "
                        "grading order fixed in advance")
    p.add_argument("--score-col", default="score", help="score column / array (default score)")
    p.add_argument("--label-col", default="member",
                   help="membership column / array, 1/0 or true/false (default member)")
    p.add_argument("--lower-is-member", action="store_true",
                   help="lower scores mean member (losses)")
    p.add_argument("--claimed-epsilon", type=float, required=True,
                   help="the epsilon claimed for the whole run, >= 0")
    add_delta(p, default=0.0)
    add_failure_prob(p)
    p.add_argument("--n-canaries", type=int, default=None,
                   help="canaries in the run, fixed in advance (required when --delta > 0)")
    p.add_argument("--guess-fraction", type=float, default=0.2,
                   help="fraction of canaries guessed by the quantile rule, in (0, 1] "
                        "(default 0.2)")
    p.add_argument("--threshold", default=None, metavar="LOW,HIGH",
                   help="fixed thresholds instead: guess in at score >= HIGH, out at <= LOW")
    p.add_argument("--follow", action="store_true", help="poll the file until a stop condition")
    p.add_argument("--poll-seconds", type=float, default=1.0,
                   help="seconds between reads with --follow, in (0, 3600] (default 1)")
    p.add_argument("--max-wait", type=float, default=60.0,
                   help="stop following after this many seconds without a new row, in "
                        "(0, 86400] (default 60)")
    add_json(p)
    p.set_defaults(func=handler)


def _column(header: list[str], col: str, name: str) -> int:
    norm = [h.strip().lower() for h in header]
    want = col.strip().lower()
    hits = [i for i, h in enumerate(norm) if h == want]
    if len(hits) != 1:
        raise ValueError(f"{name}: the header {header} has {len(hits)} columns named {col!r} "
                         "(need exactly one; name it with --score-col / --label-col)")
    return hits[0]


def read_stream(path, *, score_col: str = "score", label_col: str = "member",
                name: str = "--scores") -> tuple[np.ndarray, np.ndarray]:
    """Every complete row of a stream file, in file order: ``(scores, member)``.

    Parameters
    ----------
    path : path-like
        A CSV with a header (a last line without its line end is left for the next read) or
        an ``.npz`` (``allow_pickle=False``).
    score_col, label_col : str
        The columns / arrays read.
    name : str
        The argument named in errors.

    Returns
    -------
    scores : ndarray of float
    member : ndarray of bool
    """
    from semi_core._io import _BROKEN, _csv_error, labels_to_bool

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{name}: no such file {path}")
    if p.stat().st_size > MAX_STREAM_BYTES:
        raise ValueError(f"{name}: {path} is larger than {MAX_STREAM_BYTES >> 30} GiB")
    if p.suffix.lower() == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                missing = [c for c in (score_col, label_col) if c not in z.files]
                if missing:
                    raise ValueError(f"{name}: {path} has no array {missing[0]!r} (arrays: "
                                     f"{z.files})")
                s, m = np.asarray(z[score_col]), np.asarray(z[label_col])
        except MemoryError:
            raise
        except _BROKEN as exc:  # the score readers' rule: a damaged archive is a user error
            raise ValueError(f"{name}: {path} is not a readable .npz archive "
                             f"({type(exc).__name__}: {exc}); is the file complete?") from None
        if s.ndim != 1 or s.dtype.kind not in "iuf":
            raise ValueError(f"{name}: array {score_col!r} must be 1-D real numbers")
        mem = labels_to_bool(m, f"{name}: array {label_col!r}")
        if mem.shape != s.shape:
            raise ValueError(f"{name}: {s.size} scores but {mem.size} labels")
        return s.astype(float), mem
    raw = p.read_bytes()
    end = max(raw.rfind(b"\n"), raw.rfind(b"\r"))
    try:
        text = raw[:end + 1].decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: {path} is not UTF-8 text ({exc})") from None
    reader = csv.reader(io.StringIO(text))
    try:
        rows = list(reader)
    except csv.Error as exc:  # e.g. a field over the csv module's limit
        raise _csv_error(name, reader.line_num, exc) from None
    if not rows:
        return np.empty(0), np.empty(0, dtype=bool)
    i_s = _column(rows[0], score_col, name)
    i_m = _column(rows[0], label_col, name)
    body = [r for r in rows[1:] if r]
    if any(len(r) != len(rows[0]) for r in body):
        bad = next(j for j, r in enumerate(rows[1:], start=2) if r and len(r) != len(rows[0]))
        raise ValueError(f"{name}: line {bad} has a different number of fields than the header")
    try:
        s = np.array([float(r[i_s]) for r in body], dtype=float)
    except ValueError as exc:
        raise ValueError(f"{name}: column {score_col!r}: {exc}") from None
    mem = labels_to_bool(np.array([r[i_m] for r in body], dtype=str) if body
                         else np.empty(0, dtype=bool), f"{name}: column {label_col!r}")
    return s, mem


def _threshold(text):
    if text is None:
        return None
    try:
        lo, hi = (float(v) for v in str(text).split(","))
    except ValueError:
        raise ValueError(f"--threshold must be LOW,HIGH (two numbers), got {text!r}") from None
    return (lo, hi)


def handler(args) -> Result:
    """Run the stream audit; the result payload is :meth:`AnytimeOneRun.to_dict` plus the
    fixed-time bound on the same canaries and why it stopped."""
    from semi_core._validation import check_real
    from semi_core.audit import AnytimeOneRun

    audit = AnytimeOneRun(args.claimed_epsilon, delta=args.delta,
                          failure_prob=args.failure_prob, n_canaries=args.n_canaries,
                          guess_fraction=args.guess_fraction, threshold=_threshold(args.threshold),
                          higher_is_member=not args.lower_is_member)
    poll = check_real(args.poll_seconds, "--poll-seconds")
    wait = check_real(args.max_wait, "--max-wait")
    if not 0 < poll <= 3600:
        raise ValueError(f"--poll-seconds must be in (0, 3600], got {poll}")
    if not 0 < wait <= 86400:
        raise ValueError(f"--max-wait must be in (0, 86400], got {wait}")
    reads, last_new = 0, time.monotonic()
    while True:
        s, m = read_stream(args.scores, score_col=args.score_col, label_col=args.label_col)
        reads += 1
        if s.size < audit.canaries_seen:
            raise ValueError(f"--scores: the stream shrank from {audit.canaries_seen} to "
                             f"{s.size} rows; rows must only be appended")
        if s.size > audit.canaries_seen:
            new = slice(audit.canaries_seen, s.size)
            if args.n_canaries is not None and s.size > args.n_canaries:
                raise ValueError(f"--scores holds {s.size} rows but --n-canaries is "
                                 f"{args.n_canaries}")
            audit.update(s[new], m[new])
            last_new = time.monotonic()
        if audit.refuted:
            reason = "refuted"
        elif args.n_canaries is not None and audit.canaries_seen >= args.n_canaries:
            reason = "all canaries graded"
        elif not args.follow:
            reason = "end of file"
        elif time.monotonic() - last_new >= wait:
            reason = f"no new row for {wait:g} s"
        else:
            time.sleep(poll)
            continue
        break
    payload = audit.to_dict()
    payload.update(fixed_time_epsilon=audit.fixed_time_epsilon(), stop_reason=reason,
                   reads=reads)
    verdict = (f"REFUTED after {audit.refuted_at} canaries" if audit.refuted
               else "not refuted")
    text = (f"claimed epsilon {audit.claimed_epsilon:g}: {verdict}; anytime-valid epsilon >= "
            f"{audit.epsilon_lower_bound:g} from {audit.canaries_seen} canaries "
            f"({audit.correct}/{audit.guesses} guesses right; failure probability "
            f"{audit.failure_prob:g}, delta {audit.delta:g}; stopped: {reason})")
    return Result(payload, text=text)
