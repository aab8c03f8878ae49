"""The data of the update experiment: the user's file or the bundled digits, cut into the
learner's, shadow and reference pools, the distribution shifts and each run's draw.
"""

from __future__ import annotations

import numpy as np

from semi_core.attacks.updates.experiment.config import _SRC, UpdateConfig
from semi_core.sgd.data import load_digits, load_fashion_mnist, load_tabular

__all__ = ["load_update_data", "subpop_targets"]


def load_update_data(path, *, label_column: int | str = 0) -> tuple[np.ndarray, np.ndarray]:
    """The user's data for the update experiment: ``X`` (N, p) float64, ``y`` (N,) in 0..K-1.

    Read with the project's loaders (nothing is downloaded, nothing unpickled): a directory
    holds an IDX pair ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``.gz`` allowed;
    MNIST / Fashion-MNIST layout, pixels scaled to [0, 1]:
    :func:`semi_core.sgd.data.load_fashion_mnist`); a ``.csv`` / ``.txt`` (comma-separated
    numbers, the label in column ``label_column``, an index or, with a header line of column
    names, a name; Purchase-100 style) or an ``.npz`` with
    ``X`` and ``y`` (:func:`semi_core.sgd.data.load_tabular`). Features are used as given (the
    default learning rates are tuned for features in [0, 1], like digits); labels are mapped to
    ``0..K-1`` in sorted order.

    Parameters
    ----------
    path : str or os.PathLike
        Directory (IDX pair), ``.csv``/``.txt`` or ``.npz`` file.
    label_column : int or str
        Column of the label in a text file (index or header name).

    Returns
    -------
    X : ndarray of float64, shape (N, p)
        Features.
    y : ndarray of int, shape (N,)
        Labels in 0..K-1.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        On a malformed file (the message names it) or fewer than two classes.
    """
    from pathlib import Path

    p = Path(path)
    if p.is_dir():
        x, y = load_fashion_mnist(p)
    else:
        x, y = load_tabular(p, label_column=label_column)
    _, y = np.unique(y, return_inverse=True)
    if int(y.max()) + 1 < 2:
        raise ValueError(f"data {p}: the labels hold a single class")
    return x, y.astype(np.int64)


def _pools(cfg: UpdateConfig, rng: np.random.Generator):
    if cfg.data is not None:
        x, y = load_update_data(cfg.data, label_column=cfg.label_column)
    else:
        x, y = load_digits()
    if cfg.shift_alpha > 0 and cfg.shift.startswith("covariate"):
        x, y, src = _covariate(x, y, cfg.shift, rng)
        n = len(y) // 2
        perm = rng.permutation(n)
        cut1, cut2 = int(0.45 * n), int(0.78 * n)
        pools = {k: np.concatenate([p, p + n]) for k, p in
                 (("learner", perm[:cut1]), ("shadow", perm[cut1:cut2]), ("ref", perm[cut2:]))}
        return x, y, src, pools
    if cfg.shift_alpha > 0 and cfg.shift == "subpop-pairs":
        x, y, src = _user_pairs(x, y, cfg.shift_pairs)
    elif cfg.shift_alpha > 0:
        if int(y.max()) + 1 != 10:
            raise ValueError(f"shift_alpha > 0 with shift {cfg.shift!r} needs a 10-class task "
                             f"(digit subclasses); the data have {int(y.max()) + 1} classes")
        if cfg.shift == "subpopulation":
            src = np.isin(y, _SRC)
            y = (y >= 5).astype(np.int64)
        else:
            x, y, src = _subpop_pairs(x, y, cfg.shift)
    else:
        src = np.ones(len(y), dtype=bool)
    perm = rng.permutation(len(y))
    cut1, cut2 = int(0.45 * len(y)), int(0.78 * len(y))
    pools = {"learner": perm[:cut1], "shadow": perm[cut1:cut2], "ref": perm[cut2:]}
    return x, y, src, pools


#: Source classes (A, V) of the Hard / Easy subpopulation pairs.
_PAIR_SOURCES = (0, 1)


def subpop_targets(x, y, shift: str) -> list[int]:
    """Targets ``[t_a, t_v]`` of the Hard / Easy pairs for sources :data:`_PAIR_SOURCES`
    (digits: Hard 0 -> 7, 1 -> 6; Easy 0 -> 9, 1 -> 8).

    Parameters
    ----------
    x : ndarray, shape (N, p)
        Features.
    y : ndarray, shape (N,)
        Labels.
    shift : str
        The shift setting naming the Hard or the Easy pairs.

    Returns
    -------
    list of int
        ``[t_a, t_v]``.
    """
    classes = np.unique(y)
    means = {c: x[y == c].mean(axis=0) for c in classes}
    used = set(_PAIR_SOURCES)
    tgt = []
    for s_ in _PAIR_SOURCES:
        cand = [c for c in classes if c not in used]
        dist = [np.linalg.norm(means[c] - means[s_]) for c in cand]
        t = int(cand[int(np.argmax(dist) if shift == "subpop-hard" else np.argmin(dist))])
        used.add(t)
        tgt.append(t)
    return tgt


def _subpop_pairs(x, y, shift: str):
    r"""Hard / Easy subpopulation pairs :math:`(s_a \to t_a), (s_v \to t_v)` (§5.6): sources
    digits 0 and 1; each target is the remaining digit whose mean image is farthest from
    (Hard: the source model does poorly on it) or nearest to (Easy) its source's, chosen
    greedily without reuse. Binary task A = {s_a, t_a} vs V = {s_v, t_v}; only these four
    digits are kept (the returned ``x``, ``y`` are subsets, ``src`` marks the sources)."""
    tgt = subpop_targets(x, y, shift)
    keep = np.isin(y, [*_PAIR_SOURCES, *tgt])
    xa, ya = x[keep], y[keep]
    lab = np.isin(ya, [_PAIR_SOURCES[1], tgt[1]]).astype(np.int64)
    return xa, lab, np.isin(ya, _PAIR_SOURCES)


def _user_pairs(x, y, pairs):
    r"""The user's subpopulation pairs (App. C, Tables 8 / 9: CINIC-10 classes, each an
    ImageNet source subclass with an Easy or a Hard target subclass): pair :math:`i =
    (s_i, t_i)` of labels (``0..K-1`` after the file's label values are sorted) becomes class
    :math:`i` of the task; only these labels are kept, ``src`` marks the sources."""
    K = int(y.max()) + 1
    bad = [v for pr in pairs for v in pr if v >= K]
    if bad:
        raise ValueError(f"shift_pairs labels {bad} are not among the data's {K} classes "
                         f"(0..{K - 1}, the file's label values in sorted order)")
    lab_of = {v: i for i, pr in enumerate(pairs) for v in pr}
    keep = np.isin(y, list(lab_of))
    ya = y[keep]
    lab = np.array([lab_of[int(v)] for v in ya], dtype=np.int64)
    return x[keep], lab, np.isin(ya, [s_ for s_, _ in pairs])


def _covariate(x, y, shift: str, rng):
    r"""Covariate shift (§5.6; the seed's is CIFAR-10 <-> ImageNet): every record gets a
    shifted twin with the same label, index ``i + N``. Hard: inverted intensities
    :math:`1 - x` (a model trained on the source does poorly on them); Easy: additive
    :math:`\mathcal N(0, 0.1^2)` pixel noise (it does well). Features are expected in [0, 1]."""
    if shift == "covariate-hard":
        xt = 1.0 - x
    else:
        xt = x + 0.1 * rng.standard_normal(x.shape)
    return (np.concatenate([x, xt]), np.concatenate([y, y]),
            np.r_[np.ones(len(y), bool), np.zeros(len(y), bool)])


def _draw(rng, pool, src, cfg: UpdateConfig, n_cand: int, *, replace_ok: bool = False):
    """D0 (source subclasses) and ``n_cand`` candidates from the update distribution."""
    psrc = pool[src[pool]]
    if len(psrc) < cfg.n0 and not replace_ok:
        raise ValueError(f"n0 = {cfg.n0} exceeds the {len(psrc)} source records of a data pool")
    d0 = rng.choice(psrc, size=cfg.n0, replace=len(psrc) < cfg.n0)
    rest = np.setdiff1d(pool, d0)
    if cfg.shift_alpha > 0 and cfg.shift.startswith("covariate"):  # no twin of a D0 record
        n = len(src) // 2
        rest = rest[~np.isin(rest % n, d0 % n)]
    if cfg.shift_alpha > 0:
        n_t = int(rng.binomial(n_cand, cfg.shift_alpha))
        r_src, r_tgt = rest[src[rest]], rest[~src[rest]]
        need = [(r_src, n_cand - n_t, "source"), (r_tgt, n_t, "target")]
    else:
        need = [(rest, n_cand, "")]
    parts = []
    for avail, m, what in need:
        if m > len(avail) and not replace_ok:
            raise ValueError(f"k * n_up = {n_cand // 2} needs {m} {what} candidate records, a "
                             f"data pool has {len(avail)} left after D0 (lower --k / --n-up "
                             "or n0)")
        parts.append(rng.choice(avail, size=m, replace=m > len(avail)))
    cand = np.concatenate(parts)
    return d0, rng.permutation(cand)
