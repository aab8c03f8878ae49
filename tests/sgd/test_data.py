"""Fashion-MNIST IDX loader (on tiny IDX files written here) and digits splits."""

import gzip
import struct

import numpy as np
import pytest

from semi_core.sgd.data import load_dataset, load_fashion_mnist, make_splits, read_idx


def _write_idx(path, arr, dtype_code=0x08, compress=False):
    header = bytes([0, 0, dtype_code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    data = header + arr.astype(">u1" if dtype_code == 0x08 else arr.dtype).tobytes()
    if compress:
        with gzip.open(path, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("compress", [False, True])
def test_fashion_mnist_idx_round_trip(tmp_path, rng, compress):
    images = rng.integers(0, 256, size=(5, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, size=5).astype(np.uint8)
    suffix = ".gz" if compress else ""
    _write_idx(tmp_path / f"train-images-idx3-ubyte{suffix}", images, compress=compress)
    _write_idx(tmp_path / f"train-labels-idx1-ubyte{suffix}", labels, compress=compress)
    x, y = load_fashion_mnist(tmp_path)
    assert x.shape == (5, 784) and x.dtype == np.float64
    np.testing.assert_allclose(x * 255, images.reshape(5, -1))
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_array_equal(read_idx(tmp_path / f"train-labels-idx1-ubyte{suffix}"),
                                  labels)


def test_idx_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="IDX"):
        load_fashion_mnist(tmp_path)
    bad = tmp_path / "train-images-idx3-ubyte"
    bad.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="magic"):
        read_idx(bad)
    _write_idx(bad, np.zeros((2, 3, 3), dtype=np.uint8))
    bad.write_bytes(bad.read_bytes()[:-1])
    with pytest.raises(ValueError, match="payload"):
        read_idx(bad)
    with pytest.raises(ValueError, match="data_dir"):
        load_dataset("fashion-mnist", rng=np.random.default_rng(0))


def test_digits_splits_are_disjoint(rng):
    pytest.importorskip("sklearn")
    s = load_dataset("digits", rng=rng)
    sizes = [len(p[0]) for p in (s.public, s.private, s.reference, s.candidates)]
    assert sizes == [600, 700, 300, 197] and s.n_classes == 10
    rows = np.concatenate([s.public[0], s.private[0], s.reference[0], s.candidates[0]])
    assert len(np.unique(rows, axis=0)) >= len(rows) - 20  # digits has a few duplicate images
    with pytest.raises(ValueError, match="sizes"):
        make_splits(np.zeros((10, 2)), np.zeros(10), sizes=(5, 5, 1, 1), rng=rng)


def test_load_digits_equals_scikit_learns_without_importing_it():
    """The bundled digits are read from scikit-learn's file without importing scikit-learn
    (a start-up cost of the digits audits) and equal, bit for bit, what its loader gives."""
    import subprocess
    import sys

    pytest.importorskip("sklearn")
    code = ("import sys; from semi_core.sgd.data import load_digits; x, y = load_digits(); "
            "print(x.shape, y.dtype, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert " ".join(out) == "(1797, 64) int64 False"
    from sklearn.datasets import load_digits as sk_load

    from semi_core.sgd.data import load_digits

    x, y = load_digits()
    bunch = sk_load()
    assert np.array_equal(x, bunch.data / 16.0) and x.dtype == np.float64
    assert np.array_equal(y, bunch.target) and y.dtype == np.int64
