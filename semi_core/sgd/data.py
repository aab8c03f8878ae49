"""Data for the DP-SGD audit: scikit-learn's bundled digits and Fashion-MNIST IDX files.

Nothing is downloaded: digits ships with scikit-learn; Fashion-MNIST is read from the standard
IDX files (``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``, optionally ``.gz``) in a
directory the user provides.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semi_core._validation import check_int

__all__ = ["read_idx", "load_fashion_mnist", "load_digits", "AuditSplits", "make_splits",
           "load_dataset"]

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path) -> np.ndarray:
    """Read one IDX file (``magic = 0 0 dtype ndim``, big-endian ``uint32`` dims, raw data).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the header is malformed or the payload size does not match the dimensions.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such IDX file: {p}")
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{p}: not an IDX file (bad magic number {raw[:4]!r})")
    ndim = raw[3]
    if ndim < 1 or len(raw) < 4 + 4 * ndim:
        raise ValueError(f"{p}: truncated IDX header")
    dims = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    expected = int(np.prod(dims)) * dtype.itemsize
    payload = raw[4 + 4 * ndim:]
    if len(payload) != expected:
        raise ValueError(f"{p}: payload has {len(payload)} bytes, dims {dims} need {expected}")
    return np.frombuffer(payload, dtype=dtype).reshape(dims)


def _find(data_dir: Path, stem: str) -> Path:
    alt = stem.replace("-idx", ".idx")
    for name in (stem, stem + ".gz", alt, alt + ".gz"):
        if (data_dir / name).is_file():
            return data_dir / name
    raise FileNotFoundError(f"{data_dir}: no {stem}[.gz] (Fashion-MNIST IDX files are not "
                            "downloaded; place them there)")


def load_fashion_mnist(data_dir, *, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST from IDX files: ``X`` (N, 784) float64 in [0, 1], ``y`` (N,) int64."""
    if split not in ("train", "t10k"):
        raise ValueError(f"split must be 'train' or 't10k', got {split!r}")
    d = Path(data_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"data_dir {d} is not a directory")
    images = read_idx(_find(d, f"{split}-images-idx3-ubyte"))
    labels = read_idx(_find(d, f"{split}-labels-idx1-ubyte"))
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(f"inconsistent IDX shapes: images {images.shape}, labels {labels.shape}")
    x = images.reshape(images.shape[0], -1).astype(np.float64) / 255.0
    return x, labels.astype(np.int64)


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits: ``X`` (1797, 64) in [0, 1], ``y`` in 0..9."""
    from sklearn.datasets import load_digits as _ld

    bunch = _ld()
    return bunch.data.astype(np.float64) / 16.0, bunch.target.astype(np.int64)


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
    """Shuffle and cut ``(x, y)`` into public / private / reference / candidate splits."""
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
    """
    if name == "digits":
        x, y = load_digits()
        return make_splits(x, y, sizes=sizes or (600, 700, 300, 197), rng=rng)
    if name in ("fashion-mnist", "fashion_mnist", "fmnist"):
        if data_dir is None:
            raise ValueError("data_dir is required for fashion-mnist (nothing is downloaded)")
        x, y = load_fashion_mnist(data_dir)
        return make_splits(x, y, sizes=sizes or (5000, 5000, 1000, 500), rng=rng)
    raise ValueError(f"dataset must be 'digits' or 'fashion-mnist', got {name!r}")
