"""Peak memory of ``semi-core simulate --bounded-memory`` against the number of games.

Setting: the CLI's default mechanism, ``--mode sufficient --bounded-memory --json``, chunk size
16384, ``--threads 1`` and ``--threads 2``. Each run is a fresh process (``python -c`` calling
:func:`semi_core.cli.main`) that reports its own peak resident set
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) when the command returns, so nothing of one run
(imports, Numba compilation, the allocator's pools) counts in another.

Printed per thread count: peak RSS at each number of games, its ratio to the peak of the
smallest run (the reference, measured in the same run) and the growth per game between the
smallest and each larger run. Bounded memory means the ratio stays near 1 and the growth near
0 bytes per game; before chunk results were dropped as they were folded, 2 threads grew by about
21 bytes per game (5.7 GiB at 3e8 games) while 1 thread stayed flat.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

_CHILD = (
    "import json, resource, sys\n"
    "from semi_core.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(json.dumps({'rc': rc, 'maxrss_kib': kib}), file=sys.stderr)\n"
)


def peak_rss(rounds: int, threads: int, *, seed: int = 0) -> dict:
    """Run one bounded-memory simulation in a fresh process: ``{"rss_mib", "seconds", "rc"}``."""
    argv = ["simulate", "--mode", "sufficient", "--bounded-memory", "--threads", str(threads),
            "--rounds", str(int(rounds)), "--seed", str(seed), "--json", "--no-progress"]
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True,
                         check=False)
    seconds = time.perf_counter() - t0
    last = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
    try:
        info = json.loads(last)
    except json.JSONDecodeError:
        raise RuntimeError(f"simulate failed (exit {res.returncode}): {res.stderr[-2000:]}"
                           ) from None
    if info["rc"] != 0:
        raise RuntimeError(f"simulate returned {info['rc']}: {res.stdout[-2000:]}")
    return {"rss_mib": info["maxrss_kib"] / 1024.0, "seconds": seconds, "rc": info["rc"]}


def main(quick: bool = False) -> list[dict]:
    sizes = [200_000, 1_000_000, 3_000_000] if quick else \
        [1_000_000, 10_000_000, 30_000_000, 100_000_000]
    rows = []
    print(__doc__.splitlines()[0])
    print(f"{'threads':>7} {'games':>12} {'peak MiB':>9} {'x ref':>6} {'B/game growth':>14} "
          f"{'wall s':>7}")
    for threads in (1, 2):
        ref = None
        for n in sizes:
            r = peak_rss(n, threads)
            if ref is None:
                ref = (n, r["rss_mib"])
            growth = (r["rss_mib"] - ref[1]) * 2**20 / (n - ref[0]) if n > ref[0] else 0.0
            ratio = r["rss_mib"] / ref[1]
            print(f"{threads:>7} {n:>12.3g} {r['rss_mib']:>9.1f} {ratio:>6.2f} {growth:>14.3f} "
                  f"{r['seconds']:>7.1f}")
            rows.append({"threads": threads, "games": n, "rss_mib": r["rss_mib"],
                         "ratio_to_smallest": ratio, "bytes_per_game_growth": growth,
                         "seconds": r["seconds"]})
    return rows


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
