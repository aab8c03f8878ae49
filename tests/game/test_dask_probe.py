"""A task the Dask workers cannot load is refused with a clear error, not waited on for ever
(a worker that fails to unpickle a task dies and is restarted; the run would hang)."""

from __future__ import annotations

import importlib
import sys

import pytest

from semi_core.game.backends import Executor


def test_task_workers_cannot_import_is_refused(dask_client, tmp_path, monkeypatch):
    # the module exists only on the client's path (the workers started before it was added)
    (tmp_path / "only_on_client_mod.py").write_text("def double(task):\n    return 2 * task\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("only_on_client_mod")
    try:
        with pytest.raises(RuntimeError, match="workers cannot load the task of double"):
            Executor(client=dask_client, worker_timeout=60).run(mod.double, [1, 2, 3])
        # the cluster is still usable afterwards
        assert Executor(client=dask_client).run(abs, [-1, -2]) == [1, 2]
    finally:
        sys.modules.pop("only_on_client_mod", None)


def test_unpicklable_task_is_refused(dask_client):
    import threading

    with pytest.raises(TypeError, match="serialize"):  # Dask's own refusal, at once
        Executor(client=dask_client).run(abs, [threading.Lock()])


@pytest.mark.parametrize("kw", [{"workers": 10**6}, {"threads": 10**6}, {"workers": 0}])
def test_local_parallelism_is_bounded(kw):
    from semi_core.game.backends import MAX_LOCAL_PARALLELISM

    bound = "" if kw.get("workers") == 0 else str(MAX_LOCAL_PARALLELISM)
    with pytest.raises(ValueError, match=rf"must be in 1\.\.{bound}"):
        Executor(**kw)


def test_cli_names_the_executor_flag():
    import contextlib
    import io
    import json

    from semi_core.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["simulate", "--workers", "1000000", "--json"])
    assert code != 0 and "--workers must be in 1.." in json.loads(out.getvalue())["error"]
