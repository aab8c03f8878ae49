"""The one home of the options shared by ``semi-core`` commands: same name => same meaning.

Every command module imports its common flags from here instead of spelling them again, so
one flag has one meaning, one type, one default and one help text everywhere. A new command
(``semi_core/cli/<name>.py``) uses them like this::

    from semi_core.cli._common import Result
    from semi_core.cli._options import add_json, add_seed, add_failure_prob, add_delta

    def register(subparsers):
        p = subparsers.add_parser("my-cmd", help="...")
        add_delta(p, default=1e-5)
        add_failure_prob(p)          # --failure-prob (default 0.05)
        add_seed(p)                  # --seed: an RNG seed, always
        add_json(p)                  # --json: exactly one JSON object
        p.set_defaults(func=handler)

Errors need no handling in the command: raise ``ValueError``/``TypeError`` naming the flag and
:func:`semi_core.cli.main` prints one JSON object ``{"error", "kind"}`` under ``--json`` (exit 2
for user errors) for *every* exception, argparse usage errors included.

The vocabulary
--------------
``--seed INT``
    root seed of the random number generator (``SeedSequence``), a non-negative integer,
    default 0. Never a paper: ``verify`` filters papers with ``--paper``.
``--failure-prob XI``
    failure probability of a certified bound, in (0, 0.5], default
    :data:`semi_core._params.FAILURE_PROB`. ``--alpha`` is a deprecated alias where it existed
    (``alpha`` is a Type-I error elsewhere in the toolkit).
``--delta``
    the delta of (epsilon, delta)-DP, in [0, 1). Required where the answer is meaningless
    without it (``audit``, ``epsilon``); elsewhere the default is the seed experiment's setting
    from :mod:`semi_core._params` (stated in the help).
``--tau``
    insertion time of the canary: an integer in 1..T; default the seed's setting
    ``min(5, T)`` (:data:`semi_core._params.SEED_FIG2`), reported in the output. ``uniform``
    (power, simulate) or ``all`` (audit-dpsgd) where the command supports it.
``--n``, ``--T``
    batch size n >= 2 and number of releases T >= 1 (defaults: the seed's 10 and 10).
``--mu``, ``--sigma``
    data mean (every coordinate) and data standard deviation. (The GDP parameter is
    ``--gdp-mu`` and a noise standard deviation ``--noise``.)
``--dim``
    data dimension d; default: from ``--cov``/``--target-file`` if given, else 1; a mismatch
    with a file is an error.
``--target``
    the canary z*: its first coordinate, the others at the data mean (so the Mahalanobis
    distance does not grow with ``--dim``); ``--target-file`` gives the whole vector.
``--rounds``
    number of games; defaults differ by cost and are stated per command.
``--method``
    certification method ``joint | band | dkw | cp | gdp | one-run | one-run-fdp`` (default ``joint``;
    :func:`semi_core.audit.epsilon_lower_bound`).
``--progress/--no-progress``
    progress on stderr: a bar on a terminal, else a plain line at least every 10 s, and the
    estimated time of long work (default: on, also under ``--json``, whose one object goes to
    stdout). Every command that can run long takes it; its handler reports through
    :func:`reporter_from_args` and :func:`semi_core.cli.main` keeps a heartbeat line going.
``--threads``, ``--workers``, ``--scheduler``, ``--connect-timeout``, ``--worker-timeout``
    where the games run (:class:`semi_core.game.backends.Executor`; every command that plays
    games takes them; the result does not depend on them). Dask: only trusted schedulers (the
    protocol deserialises objects).
``--latex [FILE.tex]``
    LaTeX output: without a value, include it in the output; with a value, write it there.
``--json``
    print exactly one JSON object (also on errors).
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

from semi_core import _params

from ._common import UsageError, add_json_flag, load_npy

__all__ = ["SemiCoreParser", "UsageError", "DeprecatedAlias", "add_json", "add_seed",
           "add_failure_prob", "add_delta", "add_tau", "resolve_tau", "add_mechanism_args",
           "mechanism_from_args", "parse_tau", "add_rounds", "add_method", "add_tradeoff",
           "add_progress",
           "progress_enabled", "reporter_from_args", "command_progress", "add_executor_args",
           "executor_from_args", "add_latex",
           "LATEX_INLINE", "nonneg_int", "positive_int",
           "DEFAULT_TAU"]

#: Value of ``--latex`` given without a file: include the LaTeX in the output.
LATEX_INLINE = "-"

#: Default insertion time (the seed's §3.3 setting), used as ``min(DEFAULT_TAU, T)``.
DEFAULT_TAU = _params.SEED_FIG2.tau

# A negative number in scientific notation ("-1e-5") or "-inf" is a value, not an option.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$",
                              re.IGNORECASE)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help states its default: ``(default: X)`` is appended where the text
    does not already say it (options without a default, flags and aliases are left as they
    are)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (not action.option_strings or default in (None, False, argparse.SUPPRESS)
                or "default" in text.lower() or isinstance(action, DeprecatedAlias)
                or text == argparse.SUPPRESS):
            return text
        shown = ",".join(map(str, default)) if isinstance(default, list | tuple) else default
        return f"{text} (default: {str(shown).replace('%', '%%')})"


class SemiCoreParser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`UsageError` instead of printing and exiting, reads
    ``-1e-5``/``-inf`` as numbers (so ``--delta -1e-5`` is a range error, not a usage error)
    and states every option's default in ``--help`` (:class:`DefaultsHelpFormatter`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(f"{message} (see {self.prog} --help)", self.prog)

    def add_argument(self, *args, **kwargs):
        """As argparse's; an option given without help still lists its choices and default."""
        action = super().add_argument(*args, **kwargs)
        if action.option_strings and action.help is None and action.choices is not None:
            action.help = "one of " + ", ".join(map(str, action.choices))
        return action


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag: stores into the new flag's ``dest`` and warns on stderr."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        kwargs.setdefault("help", f"deprecated alias of {new}")
        kwargs.setdefault("default", argparse.SUPPRESS)  # the new flag's default stands
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"semi-core: warning: {option_string} is deprecated, use {self.new}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


# -- argument types --------------------------------------------------------------------------

def nonneg_int(text: str) -> int:
    """argparse type: an integer >= 0 (``1e3`` accepted when it is a whole number)."""
    try:
        val = float(text) if any(c in str(text).lower() for c in ".e") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if isinstance(val, float):
        if not (np.isfinite(val) and val.is_integer()):
            raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
        val = int(val)
    if val < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return val


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    val = nonneg_int(text)
    if val < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return val


def _seed(text: str) -> int:
    try:
        val = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer RNG seed, got {text!r} (to select a paper in "
            "`verify`, use --paper)") from None
    if val < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer RNG seed, got {val}")
    return val


# -- the shared options ----------------------------------------------------------------------

def add_json(parser) -> None:
    """``--json``: exactly one JSON object (also on errors)."""
    add_json_flag(parser)


def add_seed(parser, *, help_suffix: str = "") -> None:
    """``--seed``: root seed of the RNG (non-negative integer, default 0)."""
    parser.add_argument("--seed", type=_seed, default=0, metavar="INT",
                        help="root seed of the random number generator (integer >= 0, "
                             f"default 0){help_suffix}")


def add_failure_prob(parser, *, alpha_alias: bool = False) -> None:
    """``--failure-prob`` (dest ``failure_prob``); ``--alpha`` as a deprecated alias."""
    parser.add_argument("--failure-prob", dest="failure_prob", type=float,
                        default=_params.FAILURE_PROB, metavar="XI",
                        help="failure probability of the certified bound, in (0, 0.5] "
                             f"(default {_params.FAILURE_PROB})")
    if alpha_alias:
        parser.add_argument("--alpha", dest="failure_prob", type=float, action=DeprecatedAlias,
                            new="--failure-prob", metavar="XI")


def add_delta(parser, *, default: float | None = None, required: bool = False,
              note: str = "") -> None:
    """``--delta`` in [0, 1): required, or a default from :mod:`semi_core._params`."""
    where = "required" if required else f"default {default:g}{note}"
    parser.add_argument("--delta", type=float, default=None if required else default,
                        required=required, help=f"delta of (epsilon, delta)-DP, in [0, 1) ({where})")


def add_tau(parser, *, extra: str | None = "uniform", prior: bool = False) -> None:
    """``--tau``: integer insertion time, or ``extra`` ('uniform'/'all'), or (``prior=True``) an
    insertion-time prior: T comma-separated probabilities or a ``.npy`` file; default min(5, T)."""
    alt = f", or '{extra}'" if extra else ""
    pri = (", or a prior: T comma-separated probabilities summing to 1 (or FILE.npy) from "
           "which the Crafter draws tau") if prior else ""
    parser.add_argument("--tau", type=str, default=None, metavar="TAU",
                        help=f"insertion time of the canary: an integer in 1..T{alt}{pri} "
                             f"(default: the seed's min({DEFAULT_TAU}, T), reported)")


def resolve_tau(value, T: int, *, extra: str | None = "uniform", prior: bool = False):
    """``None`` -> ``min(DEFAULT_TAU, T)``; ``extra`` -> ``extra``; an int in 1..T; with
    ``prior=True`` a comma-separated pmf or a ``.npy`` file -> the pmf (validated, never
    renormalised)."""
    if value is None:
        return min(DEFAULT_TAU, int(T))
    text = str(value).strip().lower()
    if extra and text == extra:
        return extra
    if prior and ("," in text or text.endswith(".npy")):
        from semi_core._validation import check_pmf

        if text.endswith(".npy"):
            pmf = load_npy(str(value).strip(), "--tau")
        else:
            try:
                pmf = np.array([float(v) for v in text.split(",")])
            except ValueError:
                raise ValueError(f"--tau prior must be T comma-separated numbers, got "
                                 f"{value!r}") from None
        return check_pmf(pmf, "--tau (insertion-time prior)", size=int(T))
    alt = f" or '{extra}'" if extra else ""
    try:
        tau = int(text)
    except ValueError:
        raise ValueError(f"--tau must be an integer in 1..{T}{alt}, got {value!r}") from None
    if not 1 <= tau <= T:
        raise ValueError(f"--tau must be in 1..{T}{alt}, got {tau}")
    return tau


def parse_tau(value, T: int):
    """Back-compatible helper: ``'uniform'`` -> None (uniform law), else :func:`resolve_tau`."""
    tau = resolve_tau(value, T)
    return None if tau == "uniform" else tau


def add_rounds(parser, *, default: int, what: str = "games") -> None:
    """``--rounds``: number of games (>= 1)."""
    parser.add_argument("--rounds", type=positive_int, default=default,
                        help=f"number of {what} (>= 1, default {default})")


def add_method(parser) -> None:
    """``--method``: how the epsilon lower bound is certified (the choices and the default are
    those of :func:`semi_core.audit.epsilon_lower_bound`)."""
    from semi_core.audit._methods import DEFAULT_METHOD, METHODS  # not the bounds: --help

    parser.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                        help="certification. Any mechanism, any score law (independent "
                             "games): band (tail-adaptive simultaneous Clopper-Pearson bands), "
                             "joint (one exact test of both error rates per pre-registered "
                             "rank threshold; the tightest of these), dkw (uniform DKW bands), "
                             "cp (Clopper-Pearson; split or pre-registered thresholds). "
                             "Canaries of ONE run, each included independently w.p. 1/2: "
                             "one-run (Steinke et al. 2023), one-run-fdp (Mahloujifar et al. "
                             "2024; the (eps, delta) trade-off curve by default, see "
                             "--tradeoff where offered). Assumes a mu-GDP mechanism (may "
                             "over-claim otherwise): gdp. "
                             f"(default {DEFAULT_METHOD})")


def add_tradeoff(parser) -> None:
    """``--tradeoff``: the trade-off family of ``one-run-fdp`` (default: the one that assumes
    nothing, :data:`semi_core.audit.one_run_fdp.DEFAULT_TRADEOFF`)."""
    from semi_core.audit.one_run_fdp import DEFAULT_TRADEOFF, TRADEOFFS

    parser.add_argument("--tradeoff", choices=TRADEOFFS, default=None,
                        help=f"one-run-fdp only: {DEFAULT_TRADEOFF} (default): the (eps, delta) "
                             "trade-off curve, valid for every (eps, delta)-DP mechanism; gdp: "
                             "the Gaussian curve, ASSUMES a mu-GDP mechanism (over-claims e.g. "
                             "for randomised response or Laplace) and needs --delta > 0")


def add_progress(parser) -> None:
    """``--progress`` / ``--no-progress``: progress on stderr (default on, also under ``--json``:
    the one JSON object goes to stdout, progress to stderr)."""
    bar = parser.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="report progress on stderr: a bar on a terminal, else a plain line "
                          "at least every 10 s (done / total, elapsed, time left), and the "
                          "estimated time before long work (default: on, also with --json)")
    bar.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                     help="report no progress on stderr (default: progress is reported)")


def progress_enabled(args) -> bool:
    """Resolve ``--progress``: the explicit flag, else on (``--json`` does not change it: its
    one JSON object goes to stdout; a bar on a terminal, plain lines otherwise:
    :mod:`semi_core._progress`)."""
    progress = getattr(args, "progress", None)
    return True if progress is None else bool(progress)


def reporter_from_args(args):
    """The command's one :class:`semi_core._progress.Reporter` (created on first use, then the
    same object: the command's heartbeat and every stage of its work report through it)."""
    from semi_core._progress import Reporter

    rep = getattr(args, "_reporter", None)
    if rep is None:
        rep = Reporter(progress_enabled(args))
        args._reporter = rep
    return rep


def command_progress(args, command: str, started: float | None = None):
    """Context manager around a command's work: where the command takes ``--progress``, a
    status line on stderr at least every interval (10 s; ``SEMI_CORE_PROGRESS_INTERVAL``) from
    ``started`` (a ``time.monotonic()`` value; default now) until it ends, unless
    ``--no-progress``."""
    import contextlib

    from semi_core._progress import set_compile_notice

    if not hasattr(args, "progress"):
        return contextlib.nullcontext()
    set_compile_notice(progress_enabled(args))  # the kernels' one-time compile line too
    return reporter_from_args(args).running(f"semi-core {command}", started)


def add_executor_args(parser) -> None:
    """``--threads``, ``--workers``, ``--scheduler``, ``--connect-timeout``, ``--worker-timeout``,
    ``--small-jobs``: where the games run (:func:`executor_from_args`)."""
    parser.add_argument("--threads", type=positive_int, default=1,
                        help="local threads running chunks (result unchanged; default 1)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="run chunks on a local Dask cluster with this many processes "
                             "(result unchanged)")
    parser.add_argument("--scheduler", type=str, default=None, metavar="ADDRESS",
                        help="run chunks on an existing Dask scheduler (tcp://host:port). "
                             "Only connect to a scheduler you trust: the Dask protocol "
                             "deserialises (unpickles) objects it receives")
    parser.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="give up connecting to --scheduler after this many seconds "
                             "(default 10)")
    parser.add_argument("--worker-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="give up when --scheduler has no worker after this many seconds "
                             "(default 60)")
    parser.add_argument("--small-jobs", choices=("in-process", "cluster"), default="in-process",
                        help="with --workers/--scheduler: run a job too small to pay for the "
                             "cluster's start in-process (default; the output says so), or "
                             "'cluster' to use it anyway (result unchanged)")


def executor_from_args(args):
    """The :class:`~semi_core.game.backends.Executor` of :func:`add_executor_args`' flags
    (validated there: the CLI only parses)."""
    from semi_core.game.backends import Executor

    try:
        return Executor(threads=args.threads, workers=args.workers, scheduler=args.scheduler,
                        connect_timeout=args.connect_timeout, worker_timeout=args.worker_timeout,
                        small_jobs=getattr(args, "small_jobs", None))
    except (TypeError, ValueError) as exc:  # the library's message, under the flag's name
        msg = str(exc)
        for name in ("threads", "workers", "scheduler", "connect_timeout", "worker_timeout"):
            if msg.startswith(name + " "):
                raise type(exc)("--" + name.replace("_", "-") + msg[len(name):]) from None
        raise


def add_latex(parser, *, what: str) -> None:
    """``--latex [FILE.tex]``: include LaTeX in the output, or write it to FILE.tex."""
    parser.add_argument("--latex", nargs="?", const=LATEX_INLINE, default=None, metavar="FILE.tex",
                        help=f"LaTeX of {what}: without a value, include it in the output; "
                             "with FILE.tex, write it there (checked before any work)")


# -- the empirical-mean mechanism (power, simulate) -------------------------------------------

def add_mechanism_args(parser, *, tau_extra: str | None = "uniform") -> None:
    """--n --T --mu --sigma --target --dim --cov --target-file --tau (one meaning each)."""
    case = _params.SEED_FIG2
    parser.add_argument("--n", type=int, default=case.n,
                        help=f"batch size n >= 2 (default {case.n})")
    parser.add_argument("--T", type=int, default=case.T,
                        help=f"number of released updates T >= 1 (default {case.T})")
    parser.add_argument("--mu", type=float, default=case.mu,
                        help=f"data mean, every coordinate (default {case.mu:g})")
    parser.add_argument("--sigma", type=float, default=case.sigma,
                        help="data standard deviation: covariance sigma^2 I unless --cov "
                             f"(default {case.sigma:g})")
    parser.add_argument("--target", type=float, default=case.mu + case.distance * case.sigma,
                        help="canary z*: its first coordinate, the others at --mu (default "
                             f"{case.mu + case.distance * case.sigma:g}); see --target-file")
    parser.add_argument("--dim", type=int, default=None,
                        help="data dimension d (default: from --cov/--target-file, else 1)")
    parser.add_argument("--cov", metavar="FILE.npy", default=None,
                        help="(d, d) covariance matrix, overrides --sigma (np.load, no pickles)")
    parser.add_argument("--target-file", metavar="FILE.npy", default=None,
                        help="(d,) canary vector, overrides --target (np.load, no pickles)")
    parser.add_argument("--shift", type=float, default=0.0,
                        help="distribution shift: the data mean moves by this much per step "
                             "along the first axis, mu_t = mu + shift (t - 1) (default 0)")
    add_tau(parser, extra=tau_extra, prior=True)


def mechanism_from_args(args):
    """The :class:`~semi_core.mechanisms.empirical_mean.EmpiricalMean` the flags describe.

    Checks the dimensions agree (``--dim`` vs ``--cov`` vs ``--target-file``) and estimates
    the memory of the per-step covariances before building anything.
    """
    from semi_core._validation import (
        check_finite_array,
        check_int,
        check_memory,
        check_positive,
        check_real,
    )
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    T = check_int(args.T, "--T", minimum=1)
    check_int(args.n, "--n", minimum=2)
    mu_val = check_real(args.mu, "--mu")
    d = None if args.dim is None else check_int(args.dim, "--dim", minimum=1)
    cov = target = None
    if args.cov is not None:
        cov = load_npy(args.cov, "--cov")
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.size == 0:
            raise ValueError(f"--cov must hold a non-empty square (d, d) matrix, got shape "
                             f"{cov.shape}")
        if d is not None and cov.shape != (d, d):
            raise ValueError(f"--cov has shape {cov.shape}, expected ({d}, {d}) from --dim")
        cov = check_finite_array(cov, "--cov")
        d = cov.shape[0]
    if args.target_file is not None:
        target = load_npy(args.target_file, "--target-file")
        if target.ndim != 1 or target.size == 0:
            raise ValueError(f"--target-file must hold a non-empty (d,) vector, got shape "
                             f"{target.shape}")
        if d is not None and target.size != d:
            raise ValueError(f"--target-file has {target.size} entries, expected d = {d}")
        target = check_finite_array(target, "--target-file")
        d = target.size
    d = 1 if d is None else d
    # cov_t, chol_t (T x d x d each) plus temporaries: refuse before allocating
    check_memory(4.0 * (T + 1) * d * d * 8, f"the mechanism's per-step covariances (d = {d}, "
                 f"T = {T})", hint="use a smaller --dim (the closed forms and the sufficient "
                 "mode depend on d only through the Mahalanobis distance for isotropic data)")
    if cov is None:
        sigma = check_positive(args.sigma, "--sigma")
        if not 0.0 < sigma * sigma < np.inf:
            raise ValueError(f"--sigma squared must be a finite positive variance, got {sigma}")
        cov = sigma * sigma * np.eye(d)
    if target is None:
        target = np.full(d, mu_val)
        target[0] = check_real(args.target, "--target")
    mu = np.full(d, mu_val)
    shift = check_real(getattr(args, "shift", 0.0) or 0.0, "--shift")
    if shift != 0.0:  # distribution shift: the data mean drifts along the first axis
        mu = np.tile(mu, (T, 1))
        with np.errstate(over="ignore", invalid="ignore"):
            mu[:, 0] += shift * np.arange(T)
        if not np.isfinite(mu).all():
            raise ValueError(f"--shift {shift} makes the data mean overflow over T = {T} steps")
    return EmpiricalMean(args.n, T, mu=mu, cov=cov, target=target)
