"""Data for the DP-SGD audit: scikit-learn's bundled digits and Fashion-MNIST IDX files.

Nothing is downloaded: digits ships with scikit-learn; Fashion-MNIST is read from the standard
IDX files (``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``, optionally ``.gz``) in a
directory the user provides.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semi_core._validation import check_int

__all__ = ["read_idx", "load_fashion_mnist", "load_digits", "AuditSplits", "make_splits",
           "load_dataset", "DEFAULT_SIZES", "MAX_IDX_BYTES"]

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

#: Largest IDX payload read (bytes): Fashion-MNIST's training images are 47 MB.
MAX_IDX_BYTES = 512 * 2**20

#: Split sizes (public, private, reference, candidates) per dataset.
DEFAULT_SIZES = {"digits": (600, 700, 300, 197), "fashion-mnist": (5000, 5000, 1000, 500)}


def _read_capped(fh, n: int, p: Path) -> bytes:
    try:
        return fh.read(n)
    except (zlib.error, EOFError, gzip.BadGzipFile, OSError) as exc:
        raise ValueError(f"{p}: corrupt or truncated gzip data ({type(exc).__name__}: {exc})") \
            from None


def read_idx(path, *, max_bytes: int = MAX_IDX_BYTES) -> np.ndarray:
    """Read one IDX file (``magic = 0 0 dtype ndim``, big-endian ``uint32`` dims, raw data).

    The header's declared size is checked against ``max_bytes`` before the payload is read,
    and only that many bytes (plus one, to detect trailing data) are read, so a small ``.gz``
    cannot inflate without bound.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.idx`` file, optionally gzip-compressed (``.gz``).
    max_bytes : int
        Largest payload accepted, >= 1.

    Returns
    -------
    ndarray
        The array with the declared dtype and dimensions.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the header is malformed, the declared size exceeds ``max_bytes``, the payload is
        shorter or longer than the dimensions say, or the gzip stream is corrupt.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such IDX file: {p}")
    max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as fh:
        head = _read_capped(fh, 4, p)
        if len(head) < 4 or head[0] != 0 or head[1] != 0 or head[2] not in _IDX_DTYPES:
            raise ValueError(f"{p}: not an IDX file (bad magic number {head[:4]!r})")
        ndim = head[3]
        dims_raw = _read_capped(fh, 4 * ndim, p) if ndim else b""
        if ndim < 1 or len(dims_raw) < 4 * ndim:
            raise ValueError(f"{p}: truncated IDX header")
        dims = tuple(int(v) for v in np.frombuffer(dims_raw, dtype=">u4", count=ndim))
        dtype = np.dtype(_IDX_DTYPES[head[2]])
        expected = int(np.prod(dims, dtype=object)) * dtype.itemsize
        if expected > max_bytes:
            raise ValueError(f"{p}: header declares dims {dims} = {expected} bytes, more than "
                             f"the limit of {max_bytes} bytes (max_bytes)")
        payload = _read_capped(fh, expected + 1, p)
    if len(payload) != expected:
        more = "more than" if len(payload) > expected else f"{len(payload)} bytes,"
        raise ValueError(f"{p}: payload has {more} the {expected} bytes dims {dims} need")
    return np.frombuffer(payload, dtype=dtype).reshape(dims)


def _find(data_dir: Path, stem: str) -> Path:
    alt = stem.replace("-idx", ".idx")
    for name in (stem, stem + ".gz", alt, alt + ".gz"):
        if (data_dir / name).is_file():
            return data_dir / name
    raise FileNotFoundError(f"{data_dir}: no {stem}[.gz] (Fashion-MNIST IDX files are not "
                            "downloaded; place them there)")


def load_fashion_mnist(data_dir, *, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST from IDX files: ``X`` (N, 784) float64 in [0, 1], ``y`` (N,) int64.

    Parameters
    ----------
    data_dir : str or os.PathLike
        Directory with the user's IDX files (nothing is downloaded).
    split : {"train", "t10k"}
        Which file pair to read.

    Returns
    -------
    X : ndarray, shape (N, 784)
        Pixels in [0, 1].
    y : ndarray of int64, shape (N,)
        Labels in 0..9.
    """
    if split not in ("train", "t10k"):
        raise ValueError(f"split must be 'train' or 't10k', got {split!r}")
    d = Path(data_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"data_dir {d} is not a directory")
    images = read_idx(_find(d, f"{split}-images-idx3-ubyte"))
    labels = read_idx(_find(d, f"{split}-labels-idx1-ubyte"))
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(f"inconsistent IDX shapes: images {images.shape}, labels {labels.shape}")
    if images.dtype != np.uint8:
        raise ValueError(f"Fashion-MNIST images must be unsigned bytes (IDX type 0x08), got "
                         f"{images.dtype}")
    if images.shape[0] == 0:
        raise ValueError("the IDX files hold no images")
    if labels.dtype.kind not in "iu" or labels.min() < 0 or labels.max() > 9:
        raise ValueError(f"Fashion-MNIST labels must be integers in 0..9, got dtype "
                         f"{labels.dtype} with values {labels.min()}..{labels.max()}")
    x = images.reshape(images.shape[0], -1).astype(np.float64) / 255.0
    return x, labels.astype(np.int64)


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits: ``X`` (1797, 64) in [0, 1], ``y`` in 0..9.

    Returns
    -------
    X : ndarray, shape (1797, 64)
        Pixels in [0, 1].
    y : ndarray of int64, shape (1797,)
        Labels in 0..9.
    """
    import gzip
    import importlib.util
    from pathlib import Path

    # scikit-learn's own file, read as its load_digits reads it (np.loadtxt of the gzipped
    # CSV, the label in the last column) without importing scikit-learn (~0.7 s CPU)
    spec = importlib.util.find_spec("sklearn")
    path = (Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"
            if spec is not None and spec.origin else None)
    if path is None or not path.is_file():
        from sklearn.datasets import load_digits as _ld  # names the missing package

        bunch = _ld()
        return bunch.data.astype(np.float64) / 16.0, bunch.target.astype(np.int64)
    with gzip.open(path, mode="rt", encoding="utf-8") as f:
        data = np.loadtxt(f, delimiter=",")
    return data[:, :-1] / 16.0, data[:, -1].astype(np.int64)


@dataclass
class AuditSplits:
    """Disjoint splits: public (pretraining), private pool (DP-SGD batches), held-out
    reference (gradient statistics), candidates (canary pool)."""

    public: tuple[np.ndarray, np.ndarray]
    private: tuple[np.ndarray, np.ndarray]
    reference: tuple[np.ndarray, np.ndarray]
    candidates: tuple[np.ndarray, np.ndarray]
    n_classes: int


def make_splits(x, y, *, sizes: tuple[int, int, int, int], rng: np.random.Generator) -> AuditSplits:
    """Shuffle and cut ``(x, y)`` into public / private / reference / candidate splits.

    Parameters
    ----------
    x : array_like, shape (N, ...)
        Features.
    y : array_like, shape (N,)
        Labels.
    sizes : tuple of 4 int
        Sizes of the public, private, reference and candidate splits, each >= 1, sum <= N.
    rng : numpy.random.Generator
        Source of the shuffle.

    Returns
    -------
    AuditSplits
        The four splits.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    sizes = tuple(check_int(s, "sizes entry", minimum=1) for s in sizes)
    if sum(sizes) > len(x):
        raise ValueError(f"sizes {sizes} need {sum(sizes)} samples, dataset has {len(x)}")
    perm = rng.permutation(len(x))
    cuts = np.cumsum((0,) + sizes)
    parts = [(x[perm[a:b]], y[perm[a:b]]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    return AuditSplits(*parts, n_classes=int(y.max()) + 1)


def load_dataset(name: str, *, data_dir=None, rng: np.random.Generator,
                 sizes: tuple[int, int, int, int] | None = None) -> AuditSplits:
    """Splits for ``name`` in {"digits", "fashion-mnist"}.

    Digits (1797 samples) default to sizes (600, 700, 300, 197); Fashion-MNIST defaults to
    (5000, 5000, 1000, 500) from its training file.

    Parameters
    ----------
    name : {"digits", "fashion-mnist"}
        The dataset.
    data_dir : str or os.PathLike, optional
        Directory of the Fashion-MNIST IDX files (required for it, refused for digits).
    rng : numpy.random.Generator
        Source of the shuffle.
    sizes : tuple of 4 int, optional
        Split sizes; None = the defaults above.

    Returns
    -------
    AuditSplits
        The four splits.
    """
    if name == "digits":
        if data_dir is not None:
            raise ValueError("data_dir applies to fashion-mnist only (digits ships with "
                             "scikit-learn)")
        x, y = load_digits()
        return make_splits(x, y, sizes=sizes or DEFAULT_SIZES["digits"], rng=rng)
    if name in ("fashion-mnist", "fashion_mnist", "fmnist"):
        if data_dir is None:
            raise ValueError("data_dir is required for fashion-mnist (nothing is downloaded)")
        x, y = load_fashion_mnist(data_dir)
        return make_splits(x, y, sizes=sizes or DEFAULT_SIZES["fashion-mnist"], rng=rng)
    raise ValueError(f"dataset must be 'digits' or 'fashion-mnist', got {name!r}")


# ----------------------------------------------------------------------------- attack datasets
# (appended for the white-box / reference-model attacks of ``iha_parameters_vs_loss``)

#: Bundled datasets of the attack experiments (scikit-learn ships them; nothing is downloaded).
ATTACK_DATASETS = ("digits-odd", "digits", "breast-cancer", "wine")


def _standardize(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def load_bundled(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """``(X, y, n_classes)`` of a bundled dataset for the attack experiments.

    ``"digits-odd"``: the 8x8 digits in [0, 1] with label ``digit mod 2`` (the seed's MNIST-Odd
    analogue); ``"digits"``: 10 classes; ``"breast-cancer"`` and ``"wine"``: standardised
    tabular features (the Purchase-100 analogue).

    Parameters
    ----------
    name : {"digits-odd", "digits", "breast-cancer", "wine"}
        The dataset.

    Returns
    -------
    X : ndarray, shape (N, features)
        Features.
    y : ndarray of int64, shape (N,)
        Labels.
    n_classes : int
        Number of classes.
    """
    if name in ("digits", "digits-odd"):
        x, y = load_digits()
        return (x, y % 2, 2) if name == "digits-odd" else (x, y, 10)
    if name in ("breast-cancer", "wine"):
        from sklearn.datasets import load_breast_cancer, load_wine

        bunch = load_breast_cancer() if name == "breast-cancer" else load_wine()
        y = bunch.target.astype(np.int64)
        return _standardize(bunch.data.astype(np.float64)), y, int(y.max()) + 1
    raise ValueError(f"dataset must be one of {ATTACK_DATASETS}, got {name!r}")


def _check_xy(x: np.ndarray, y: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{where}: features must be a non-empty 2-D array, got shape {x.shape}")
    if y.shape != (x.shape[0],):
        raise ValueError(f"{where}: {x.shape[0]} rows of features but labels of shape {y.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{where}: features contain NaN or infinite values")
    yf = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(yf)) or np.any(yf != np.round(yf)) or np.any(yf < 0):
        raise ValueError(f"{where}: labels must be non-negative integers")
    return x.astype(np.float64), yf.astype(np.int64)


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def load_tabular(path, *, label_column: int | str = 0) -> tuple[np.ndarray, np.ndarray]:
    """Tabular data from a local file (Purchase-100 style): ``X`` (N, F) float64, ``y`` (N,) int64.

    ``.csv`` / ``.txt``: comma-separated numbers, one record per line, the label in column
    ``label_column`` (Purchase-100's ``dataset_purchase`` has the class first; labels 1..100 are
    kept as given). A first line of column names (no field a number) is a header: then
    ``label_column`` may also be a name from it. A first line mixing names and numbers is an
    error. ``.npz``: arrays ``X`` and ``y`` (or ``features`` and ``labels``), read with
    ``allow_pickle=False``.

    Parameters
    ----------
    path : str or Path
    label_column : int or str
        Index of the label's column (negative counts from the end), or its name in the header.

    Returns
    -------
    X : ndarray of shape (N, F)
    y : ndarray of shape (N,)

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        On an unknown extension, missing arrays, ragged or non-numeric rows, NaN/inf features,
        or non-integer labels (the message names the file).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such data file: {p}")
    suffix = p.suffix.lower()
    if suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            keys = set(z.files)
            for kx, ky in (("X", "y"), ("features", "labels")):
                if {kx, ky} <= keys:
                    return _check_xy(np.asarray(z[kx], dtype=np.float64), np.asarray(z[ky]), str(p))
        raise ValueError(f"{p}: an .npz needs arrays 'X' and 'y' (or 'features' and 'labels'), "
                         f"found {sorted(keys)}")
    if suffix in (".csv", ".txt"):
        rows, header = [], None
        with open(p) as fh:
            for k, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                fields = line.strip().split(",")
                try:
                    rows.append([float(v) for v in fields])
                except ValueError:
                    if header is None and not rows and not any(_is_number(v) for v in fields):
                        header = [v.strip().strip('"').strip("'") for v in fields]
                        continue
                    raise ValueError(f"{p}: line {k} is not comma-separated numbers") from None
        if not rows:
            raise ValueError(f"{p}: no records")
        width = {len(r) for r in rows}
        if len(width) != 1:
            raise ValueError(f"{p}: rows have different numbers of columns {sorted(width)}")
        arr = np.asarray(rows)
        if header is not None and len(header) != arr.shape[1]:
            raise ValueError(f"{p}: the header names {len(header)} columns, the rows have "
                             f"{arr.shape[1]}")
        if isinstance(label_column, str):
            if header is None:
                raise ValueError(f"label_column {label_column!r} is a name but {p} has no "
                                 "header line; give the column's index")
            if label_column not in header:
                raise ValueError(f"label_column {label_column!r} is not a column of {p}; "
                                 f"its header names {header}")
            label_column = header.index(label_column)
        label_column = check_int(label_column, "label_column", minimum=-arr.shape[1],
                                 maximum=arr.shape[1] - 1)
        y = arr[:, label_column]
        x = np.delete(arr, label_column % arr.shape[1], axis=1)
        return _check_xy(x, y, str(p))
    raise ValueError(f"{p}: unknown extension {suffix!r} (expected .csv, .txt or .npz)")
