"""Score readers: CR-only line ends and one very long field against the plain LF file.

References timed in the same run (CPU time, best of 3):

* ``lf``: a ``score,member`` CSV with LF line ends (the fast, chunked NumPy path);
* ``cr``: the same rows with CR-only line ends (read through the CR-to-LF stream in linear
  time; before, the header search read the whole file and the reader returned no rows);
* ``wide``: the same rows plus a third column whose first cell is 20,000 characters long (its
  chunks are parsed row by row; before, ``np.loadtxt`` made every cell 20,000 characters wide:
  7.9 GB and 29 s for 20,000 rows). Peak traced memory is printed beside it.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of


def _files(d: Path, n: int) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    rows = [f"{a!r},{b}" for a, b in zip(rng.normal(size=n).tolist(),
                                          rng.integers(0, 2, n).tolist(), strict=True)]
    lf = d / "lf.csv"
    lf.write_text("score,member\n" + "\n".join(rows) + "\n")
    cr = d / "cr.csv"
    cr.write_bytes(lf.read_bytes().replace(b"\n", b"\r"))
    wide = d / "wide.csv"
    wide.write_text("score,member,note\n" + rows[0] + "," + "x" * 20_000 + "\n"
                    + "\n".join(r + ",a" for r in rows[1:]) + "\n")
    return {"lf": lf, "cr": cr, "wide": wide}


def main(quick: bool = False) -> list[dict]:
    """Print CPU seconds per file and the ratios to the LF file; return the rows."""
    from semi_core._io import read_scores_csv

    n = 100_000 if quick else 1_000_000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = _files(Path(tmp), n)
        want = read_scores_csv(files["lf"])
        times = {}
        for key, path in files.items():
            got = read_scores_csv(path)
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), key
            times[key] = best_of(lambda p=path: read_scores_csv(p), repeat=3,
                                 clock=time.process_time)
            tracemalloc.start()
            read_scores_csv(path)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append({"file": key, "rows": n, "bytes": path.stat().st_size,
                         "cpu_s": times[key], "ratio_to_lf": times[key] / times["lf"],
                         "peak_mib": peak / 2**20})
    print(f"score readers, {n} rows (CPU s, best of 3; ratio to the LF file in the same run)")
    print("| file | bytes | CPU s | ratio to lf | peak traced MiB |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['file']} | {r['bytes']} | {r['cpu_s']:.3f} | {r['ratio_to_lf']:.2f} | "
              f"{r['peak_mib']:.1f} |")
    return rows


if __name__ == "__main__":  # pragma: no cover
    main()
