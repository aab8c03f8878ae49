"""``semi-core example-data DIR``: write the small example files the README's tour uses.

Files (all generated here from a fixed seed, nothing downloaded):

``SIGMA.npy``
    a 5 x 5 covariance (AR(1), correlation 0.5) for ``power --cov``;
``Z.npy``
    a target record of dimension 5 at Mahalanobis distance 3 from the data mean, for
    ``power --target-file``;
``scores.csv``
    2,000 member and 2,000 non-member scores (columns ``score,member``): a Gaussian-score
    attack with separation 1.5, for ``audit --scores``.

Existing files are not overwritten unless ``--force`` is given; each is written atomically.
"""

from __future__ import annotations

from ._common import Result
from ._options import add_json

__all__ = ["register", "handler", "FILES"]

#: The files written, in order.
FILES = ("SIGMA.npy", "Z.npy", "scores.csv")


def register(subparsers) -> None:
    """Add the ``example-data`` subcommand."""
    p = subparsers.add_parser(
        "example-data", help="write the README tour's example files (SIGMA.npy, Z.npy, scores.csv)",
        description="Write the small example files the README's tour reads: a covariance, a "
                    "target record and a CSV of attack scores (fixed seed; nothing downloaded).")
    p.add_argument("dir", metavar="DIR", nargs="?", default=".",
                   help="existing directory to write into (default: the current one)")
    p.add_argument("--force", action="store_true",
                   help="overwrite files that exist (default: refuse)")
    add_json(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Write the files; payload ``{"written": [paths]}``."""
    import io
    from pathlib import Path

    import numpy as np

    from semi_core._io import atomic_write_bytes, atomic_write_text
    from semi_core._validation import check_output_path

    d = Path(args.dir)
    if not d.is_dir() or d.is_symlink():
        raise ValueError(f"DIR must be an existing directory (not a link), got {args.dir!r}")
    paths = [check_output_path(d / f, "DIR") for f in FILES]
    existing = [str(p) for p in paths if p.exists() or p.is_symlink()]
    if existing and not args.force:
        raise ValueError(f"{existing} exist; pass --force to overwrite")
    rng = np.random.default_rng(np.random.SeedSequence(20261126))
    dim = 5
    idx = np.arange(dim)
    sigma = 0.5 ** np.abs(idx[:, None] - idx[None, :])   # AR(1) covariance, positive definite
    direction = rng.standard_normal(dim)
    L = np.linalg.cholesky(sigma)
    z = L @ (3.0 * direction / np.linalg.norm(direction))  # Mahalanobis distance 3 from 0
    member = rng.normal(1.5, 1.0, 2000)
    nonmember = rng.normal(0.0, 1.0, 2000)
    for path, arr in ((paths[0], sigma), (paths[1], z)):
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        atomic_write_bytes(path, buf.getvalue(), name="DIR")
    rows = ["score,member"] + [f"{s:.6f},1" for s in member] + [f"{s:.6f},0" for s in nonmember]
    atomic_write_text(paths[2], "\n".join(rows) + "\n", name="DIR")
    written = [str(p) for p in paths]
    return Result({"written": written}, text="wrote " + ", ".join(written))
