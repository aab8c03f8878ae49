"""``--data-file`` csv with a header line: accepted, and the label column named."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core.attacks.updates.experiment import load_update_data
from semi_core.sgd.data import load_tabular


def _write(path, x, y, header=None):
    lines = [] if header is None else [",".join(header)]
    lines += [",".join(f"{v:.17g}" for v in [*row, lab]) for row, lab in zip(x, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")


def _data(n=120, f=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, f))
    return x, (x[:, 0] > 0.5).astype(int)


def test_header_is_read_and_columns_are_named(tmp_path):
    x, y = _data()
    names = ["f0", "f1", "f2", "label"]
    _write(tmp_path / "h.csv", x, y, header=names)
    _write(tmp_path / "n.csv", x, y)
    for col in ("label", -1, 3):
        xa, ya = load_tabular(tmp_path / "h.csv", label_column=col)
        assert np.array_equal(xa, x) and np.array_equal(ya, y)
    xb, yb = load_tabular(tmp_path / "n.csv", label_column=-1)   # the same data, no header
    assert np.array_equal(xb, x) and np.array_equal(yb, y)
    _write(tmp_path / "q.csv", x, y, header=['"f0"', '"f1"', '"f2"', '"cls"'])
    xq, yq = load_update_data(tmp_path / "q.csv", label_column="cls")
    assert np.array_equal(xq, x) and np.array_equal(yq, y)


def test_header_errors_name_the_problem(tmp_path):
    x, y = _data()
    _write(tmp_path / "h.csv", x, y, header=["f0", "f1", "f2", "label"])
    _write(tmp_path / "n.csv", x, y)
    with pytest.raises(ValueError, match="'target' is not a column"):
        load_tabular(tmp_path / "h.csv", label_column="target")
    with pytest.raises(ValueError, match="no header line"):
        load_tabular(tmp_path / "n.csv", label_column="label")
    _write(tmp_path / "m.csv", x, y, header=["f0", "1.5", "f2", "label"])   # mixed: not a header
    with pytest.raises(ValueError, match="line 1 is not comma-separated numbers"):
        load_tabular(tmp_path / "m.csv")
    _write(tmp_path / "w.csv", x, y, header=["f0", "label"])
    with pytest.raises(ValueError, match="header names 2 columns"):
        load_tabular(tmp_path / "w.csv")
    (tmp_path / "late.csv").write_text("1,2\n3,4\na,b\n")               # names after data
    with pytest.raises(ValueError, match="line 3"):
        load_tabular(tmp_path / "late.csv")
    with pytest.raises(ValueError, match="labels must be non-negative integers"):
        load_tabular(tmp_path / "h.csv", label_column="f0")   # a float column is no label


def test_cli_takes_a_header_and_a_named_label_column(tmp_path, capsys):
    pytest.importorskip("torch")
    from semi_core.cli import main

    x, y = _data(n=300, f=5, seed=1)
    _write(tmp_path / "t.csv", x, y, header=["a", "b", "c", "d", "e", "y"])
    code = main(["updates", "--data-file", str(tmp_path / "t.csv"), "--label-column", "y",
                 "--trials", "2", "--n0", "40", "--n-up", "3", "--json"])
    obj = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, obj
    assert obj["config"]["label_column"] == "y"
