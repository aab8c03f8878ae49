"""Shared test helpers."""

import numpy as np
import pytest


def binomial_se(p: float, n: int) -> float:
    """Standard error of a binomial proportion p estimated from n trials (floored at 1/n)."""
    return max(np.sqrt(p * (1 - p) / n), 1.0 / n)


#: Monte Carlo tolerance in standard errors. With ~100 comparisons per run the chance that any
#: one exceeds 4.5 SE under a correct formula is < 1e-3 (two-sided normal tail 6.8e-6 each).
MC_SIGMAS = 4.5


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(scope="session")
def dask_client():
    """One 2-worker Dask ``LocalCluster`` (processes) shared by every test that needs one."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


# -- an interrupt raised by a test is that test's failure, never the end of the run ----------
class _StopSignals:
    """Whether SIGINT or SIGTERM reached this process: a pipe set as the signal wakeup fd,
    into which CPython's C-level handler writes the number of every signal it catches, whatever
    Python handler is installed at the time (the CLI's, a test's or the default one).

    Set up only in the main thread and only when no one else uses the wakeup fd; ``usable``
    says whether it is still ours (something may replace it): when it is not, nothing is
    converted, so a real Ctrl-C is never taken for a test's own ``KeyboardInterrupt``.
    """

    def __init__(self):
        self.r = self.w = -1
        self.started = False

    def start(self) -> None:
        import os
        import signal
        import threading

        if self.started:
            return
        self.started = True
        if threading.current_thread() is not threading.main_thread():
            return
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError):  # pragma: no cover - not the main thread / platform
            os.close(r), os.close(w)
            return
        if old != -1:  # someone else's: leave it in place and stay out
            signal.set_wakeup_fd(old)
            os.close(r), os.close(w)
            return
        self.r, self.w = r, w

    def usable(self) -> bool:
        import signal

        if self.w < 0:
            return False
        try:
            cur = signal.set_wakeup_fd(self.w, warn_on_full_buffer=False)
        except (ValueError, OSError):  # pragma: no cover - not the main thread
            return False
        if cur != self.w:  # replaced: put theirs back
            signal.set_wakeup_fd(cur)
            return False
        return True

    def drain(self) -> set[int]:
        import os

        seen: set[int] = set()
        if self.r < 0:
            return seen
        while True:
            try:
                chunk = os.read(self.r, 4096)
            except BlockingIOError:
                return seen
            if not chunk:
                return seen
            seen.update(chunk)


_STOP = _StopSignals()


def pytest_sessionstart(session):
    _STOP.start()


def _guard_interrupts(when: str):
    import signal

    _STOP.start()  # once (also when this conftest was not loaded at session start)
    _STOP.drain()
    try:
        return (yield)
    except KeyboardInterrupt as exc:
        real = _STOP.drain() & {int(signal.SIGINT), int(signal.SIGTERM)}
        if real or not _STOP.usable():
            raise  # a Ctrl-C / SIGTERM of the run (or we cannot tell): stop the session
        pytest.fail(f"{type(exc).__name__}({exc}) escaped the test's {when} although no SIGINT "
                    "or SIGTERM reached the process: a test must catch the interrupts it "
                    "provokes (pytest.raises), or it would end the whole run", pytrace=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guard_interrupts("setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guard_interrupts("body"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _guard_interrupts("teardown"))


# -- the twin pass re-runs the tests that reach a kernel, not the whole tier -------------------
# ``make test`` runs the tier once with the compiled kernels, recording (``--record-kernel-tests
# FILE``) every test that reached a kernel dispatcher — in its body, in a fixture it uses (a
# module fixture's games count for every test that reads them), in a subprocess it started
# (the environment carries the trace path) or on the shared Dask cluster — and then, with
# ``SEMI_CORE_FORCE_TWIN=1``, runs just those (``--only-kernel-tests FILE``) plus any test
# marked ``twin``. See ``semi_core.kernels._trace``.
_TRACE_ENV = "SEMI_CORE_KERNEL_TRACE"
_ALWAYS_KERNEL_FIXTURES = {"dask_client"}  # work runs in worker processes started earlier


def pytest_addoption(parser):
    group = parser.getgroup("semi_core kernels")
    group.addoption("--record-kernel-tests", metavar="FILE", default=None,
                    help="write the node ids of the tests that reach a compiled kernel to FILE")
    group.addoption("--only-kernel-tests", metavar="FILE", default=None,
                    help="run only the tests listed in FILE (written by --record-kernel-tests) "
                         "and those marked 'twin'")


class _KernelTrace:
    def __init__(self, out: str):
        import tempfile

        self.out = out
        self.dir = tempfile.mkdtemp(prefix="semi-core-kernel-trace-")
        self.count = 0
        self.fixtures: set[str] = set(_ALWAYS_KERNEL_FIXTURES)
        self.tests: list[str] = []

    def _path(self) -> str:
        import os

        self.count += 1
        return os.path.join(self.dir, str(self.count))

    def watch(self, on_hit, *, outermost: bool = False):
        """Generator body for a hook wrapper: a fresh trace file while the wrapped code runs
        (``outermost``: a whole test, whose fixtures' own settings are undone by then)."""
        import os

        prev = os.environ.get(_TRACE_ENV)
        path = os.environ[_TRACE_ENV] = self._path()
        try:
            return (yield)
        finally:
            if os.path.exists(path):
                on_hit()
            # restore only our own setting: a fixture that set the variable itself (the trace's
            # own tests do, through monkeypatch) keeps it until its teardown undoes it
            if outermost or os.environ.get(_TRACE_ENV) == path:
                if prev is None:
                    os.environ.pop(_TRACE_ENV, None)
                else:
                    os.environ[_TRACE_ENV] = prev

    def write(self) -> None:
        import os
        import shutil

        os.makedirs(os.path.dirname(os.path.abspath(self.out)), exist_ok=True)
        with open(self.out, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{t}\n" for t in self.tests))
        shutil.rmtree(self.dir, ignore_errors=True)


_TRACE: _KernelTrace | None = None


def pytest_configure(config):
    global _TRACE
    out = config.getoption("--record-kernel-tests")
    if out:
        _TRACE = _KernelTrace(out)


def pytest_collection_modifyitems(config, items):
    src = config.getoption("--only-kernel-tests")
    if not src:
        return
    try:
        with open(src, encoding="utf-8") as fh:
            wanted = {line.strip() for line in fh if line.strip()}
    except OSError as exc:
        raise pytest.UsageError(f"--only-kernel-tests: cannot read {src!r} ({exc}); write it "
                                "with a compiled pass run with --record-kernel-tests") from None
    keep, drop = [], []
    for item in items:
        (keep if item.nodeid in wanted or item.get_closest_marker("twin") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if _TRACE is None:
        return (yield)
    return (yield from _TRACE.watch(lambda: _TRACE.fixtures.add(fixturedef.argname)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _TRACE is None:
        return (yield)
    hit = []
    try:
        return (yield from _TRACE.watch(lambda: hit.append(True), outermost=True))
    finally:
        if hit or _TRACE.fixtures.intersection(item.fixturenames) \
                or item.get_closest_marker("twin"):
            _TRACE.tests.append(item.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _TRACE is not None:
        _TRACE.write()
