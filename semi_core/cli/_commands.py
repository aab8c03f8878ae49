"""The table of ``semi-core`` subcommands: name -> (module, one-line help), imported by nobody heavy.

The top-level parser is built from this table without importing any command module, so
``semi-core --help`` costs the Python start-up and the standard library's ``argparse`` only (no
NumPy, SciPy, SymPy, Numba or torch). A command's module is imported when that command is
chosen, and only that one: ``semi-core CMD ...`` and ``semi-core CMD --help`` pay for ``CMD``'s
own imports, and a command that needs no torch runs where torch is not installed.

A new command adds its module ``semi_core/cli/<name>.py`` (with ``register(subparsers)``) and a
row here; a module missing from the table is still discovered and registered (eagerly, so it
works but slows every start-up), and ``tests/cli/test_startup.py`` fails until it has its row.
The help text here is the one ``--help`` prints; the test checks that it is the same text the
module's ``register`` gives its parser.
"""

from __future__ import annotations

#: Exit code after SIGTERM (128 + 15: what ``timeout`` and batch schedulers send). Here, in the
#: light table module, because the SIGTERM watchdog of :mod:`semi_core.cli` runs without
#: importing :mod:`semi_core.cli._common`.
EXIT_TERMINATED = 143

__all__ = ["COMMANDS"]

#: ``command (spelled with "-") -> (module path, one-line help)``, in ``--help`` order.
COMMANDS: dict[str, tuple[str, str]] = {
    "power": ("semi_core.cli.power",
              "closed-form TPR at a given FPR (SeMI*, Final Observation, SeMI-max)"),
    "simulate": ("semi_core.cli.simulate",
                 "Monte Carlo SeMI games (compiled engine): TPR at FPR and AUC per test"),
    "derive": ("semi_core.cli.derive",
               "print the derived formulas (LaTeX, seed reference, match with the seed)"),
    "audit": ("semi_core.cli.audit",
              "certified epsilon lower bound from member/non-member scores (CSV, npy, npz, parquet)"),
    "example-data": ("semi_core.cli.example_data",
                     "write the README tour's example files (SIGMA.npy, Z.npy, scores.csv)"),
    "epsilon": ("semi_core.cli.epsilon",
                "exact epsilon(delta) of mu-GDP or the Gaussian mechanism"),
    "audit-game": ("semi_core.cli.audit_game",
                   "eps lower bounds of SeMI*, SeMI-max, Final Observation vs truth"),
    "audit-dpsgd": ("semi_core.cli.audit_dpsgd",
                    "audit DP-SGD fine-tuning with SeMI-SGD and loss baselines"),
    "verify": ("semi_core.cli.verify",
               "check the seed papers' claims (holds / fails / holds only under a condition)"),
    "reproduce": ("semi_core.cli.reproduce",
                  "write the report (Markdown + PNG figures + JSON)"),
    "attack": ("semi_core.cli.attack",
               "IHA, LOSS, SIF, LiRA, L-attack, LiRA-L on a model trained on bundled data"),
    "audit-checkpoints": ("semi_core.cli.audit_checkpoints",
                          "audit saved checkpoints theta_0..theta_T of your own runs"),
    "audit-opacus": ("semi_core.cli.audit_opacus",
                     "audit Opacus DP-SGD (white-box Dirac / input canaries, bug zoo)"),
    "leakage": ("semi_core.cli.leakage",
                "per-datum membership leakage of a target (seed: per_datum_leakage)"),
    "seq-audit": ("semi_core.cli.seq_audit",
                  "anytime-valid sequential DP audit (MMD test martingale / e-process)"),
    "audit-stream": ("semi_core.cli.audit_stream",
                     "anytime-valid one-run audit of a growing file of scored canaries"),
    "updates": ("semi_core.cli.updates",
                "membership / entry inference from several model updates"),
}
