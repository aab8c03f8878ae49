"""Every public function of the API reference has a numpydoc ``Parameters`` / ``Returns`` section.

The API reference (``docs/conf.py``) documents every public module of ``API_PACKAGES`` plus
``semi_core.testing``. For each public function and public method defined there (not imported),
numpydoc's ``FunctionDoc`` parses the docstring (of the wrapped function for a decorated one,
such as a cached derivation builder) and this test requires:

- a ``Parameters`` (or ``Other Parameters``) section naming every parameter of the signature
  (``self``/``cls`` excluded; ``*args``/``**kwargs`` under their own names);
- a ``Returns`` (or ``Yields``) section when the function returns something: its return
  annotation is not ``None``/``NoReturn``, or, unannotated, its body has a ``return <value>``.

``python tests/test_docstrings.py`` prints the coverage per module and the missing entries.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
import textwrap
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

ROOT = Path(__file__).resolve().parents[1]

#: Mirrors ``docs/conf.py``: the packages of the API reference (checked equal below).
API_PACKAGES = ["semi_core.game", "semi_core.mechanisms", "semi_core.audit", "semi_core.stats",
                "semi_core.symbolic", "semi_core.claims", "semi_core.integrations",
                "semi_core.sgd", "semi_core.attacks", "semi_core.kernels", "semi_core.report"]
EXTRA_MODULES = ["semi_core.testing"]

#: Optional dependencies: a module that needs a missing one is not checked here (the
#: documentation build, which installs every extra, imports it).
OPTIONAL = {"torch", "opacus", "dask", "distributed", "sklearn", "matplotlib", "pandas",
            "dp_accounting"}

#: Functions allowed to lack a section, each with the reason (qualified name -> reason).
ALLOWED: dict[str, str] = {}


def api_modules() -> list[str]:
    """Names of the modules the API reference documents, as ``docs/conf.py`` walks them."""
    out: list[str] = []
    for pkg in API_PACKAGES:
        mod = importlib.import_module(pkg)
        out.append(pkg)
        for m in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if not any(p.startswith("_") for p in m.name.split(".")[1:]):
                out.append(m.name)
    return out + EXTRA_MODULES


@dataclass
class Entry:
    """One public function or method and what its docstring lacks."""

    qualname: str
    has_doc: bool
    has_params: bool
    returns_value: bool
    missing_params: list[str] = field(default_factory=list)
    missing_returns: bool = False
    no_params_section: bool = False

    @property
    def ok(self) -> bool:
        return self.has_doc and not self.missing_params and not self.missing_returns


def _returns_value(func) -> bool:
    ann = inspect.signature(func).return_annotation
    if ann is not inspect.Signature.empty:
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        return text not in ("None", "NoReturn", "Never", "typing.NoReturn")
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    fn = tree.body[0]
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a nested function's return is not ours
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _documented_names(doc) -> set[str]:
    names: set[str] = set()
    for section in ("Parameters", "Other Parameters"):
        for p in doc[section]:
            for n in p.name.split(","):
                names.add(n.strip().lstrip("*"))
    return names


def _check(qualname: str, func) -> Entry | None:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = [p for i, p in enumerate(sig.parameters.values())
              if not (i == 0 and p.name in ("self", "cls"))]
    returns_value = _returns_value(func)
    raw = inspect.getdoc(func)
    entry = Entry(qualname, bool(raw and raw.strip()), bool(params), returns_value)
    if not entry.has_doc:
        entry.missing_params = [p.name for p in params]
        entry.missing_returns = returns_value
        entry.no_params_section = bool(params)
        return entry
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = numpydoc_docscrape.FunctionDoc(func, doc=raw)
    documented = _documented_names(doc)
    entry.no_params_section = bool(params) and not (doc["Parameters"] or doc["Other Parameters"])
    entry.missing_params = [p.name for p in params if p.name not in documented]
    entry.missing_returns = returns_value and not (doc["Returns"] or doc["Yields"])
    return entry


def collect() -> list[Entry]:
    """Every public function and method of the API reference, checked."""
    entries: list[Entry] = []
    seen: set[int] = set()
    for modname in api_modules():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # a layer of an optional extra that is not installed
            if (exc.name or "").split(".")[0] in OPTIONAL:
                continue
            raise
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != modname:
                continue
            if callable(obj) and hasattr(obj, "__wrapped__"):
                obj = inspect.unwrap(obj)  # e.g. a cached (lru_cache) derivation builder
            if inspect.isfunction(obj):
                if id(obj) not in seen:
                    seen.add(id(obj))
                    e = _check(f"{modname}.{name}", obj)
                    if e is not None:
                        entries.append(e)
            elif inspect.isclass(obj):
                for mname, raw in vars(obj).items():
                    if mname.startswith("_"):
                        continue
                    func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                    if not inspect.isfunction(func) or id(func) in seen:
                        continue
                    if func.__qualname__ != f"{obj.__qualname__}.{mname}":
                        continue  # a lambda default or a function assigned from elsewhere
                    seen.add(id(func))
                    e = _check(f"{modname}.{name}.{mname}", func)
                    if e is not None:
                        entries.append(e)
    return entries


def _module_of(qualname: str, modules: list[str]) -> str:
    return max((m for m in modules if qualname.startswith(m + ".")), key=len)


def report(entries: list[Entry]) -> str:
    """Coverage figures: docstrings, Parameters sections, complete sections."""
    n = len(entries)
    with_params = [e for e in entries if e.has_params]
    returning = [e for e in entries if e.returns_value]
    lines = [
        f"public functions/methods: {n}",
        f"  with a docstring: {sum(e.has_doc for e in entries)} "
        f"({100 * sum(e.has_doc for e in entries) / n:.0f} %)",
        f"  with parameters: {len(with_params)}; with a Parameters section: "
        f"{sum(not e.no_params_section for e in with_params)} "
        f"({100 * sum(not e.no_params_section for e in with_params) / len(with_params):.0f} %); "
        f"naming every parameter: {sum(not e.missing_params for e in with_params)} "
        f"({100 * sum(not e.missing_params for e in with_params) / len(with_params):.0f} %)",
        f"  returning a value: {len(returning)}; with a Returns/Yields section: "
        f"{sum(not e.missing_returns for e in returning)} "
        f"({100 * sum(not e.missing_returns for e in returning) / len(returning):.0f} %)",
        f"  complete: {sum(e.ok for e in entries)} ({100 * sum(e.ok for e in entries) / n:.0f} %)",
    ]
    return "\n".join(lines)


def test_api_packages_match_docs_conf():
    """The list above is the one the documentation builds from."""
    text = (ROOT / "docs" / "conf.py").read_text()
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "API_PACKAGES":
            assert ast.literal_eval(node.value) == API_PACKAGES
            return
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "API_PACKAGES":
            assert ast.literal_eval(node.value) == API_PACKAGES
            return
    raise AssertionError("API_PACKAGES not found in docs/conf.py")


def test_checker_flags_missing_sections():
    """The checker itself: a missing parameter and a missing Returns section are both caught."""

    def documented(x: int, y: int = 0) -> int:
        """Sum.

        Parameters
        ----------
        x, y : int
            Terms.

        Returns
        -------
        int
            ``x + y``.
        """
        return x + y

    def undocumented(x, *args, **kwargs):
        """Sum.

        Parameters
        ----------
        x : int
            Term.
        """
        return x

    good = _check("documented", documented)
    bad = _check("undocumented", undocumented)
    assert good is not None and good.ok
    assert bad is not None and not bad.ok
    assert bad.missing_params == ["args", "kwargs"] and bad.missing_returns


def test_every_public_function_has_parameters_and_returns():
    entries = collect()
    stale = sorted(set(ALLOWED) - {e.qualname for e in entries})
    assert not stale, f"allowed entries that no longer exist: {stale}"
    bad = [e for e in entries if not e.ok and e.qualname not in ALLOWED]
    msg = []
    for e in bad:
        what = []
        if not e.has_doc:
            what.append("no docstring")
        if e.missing_params:
            what.append("Parameters lacks " + ", ".join(e.missing_params))
        if e.missing_returns:
            what.append("no Returns section")
        msg.append(f"{e.qualname}: {'; '.join(what)}")
    assert not bad, f"{len(bad)} public functions lack numpydoc sections:\n" + "\n".join(msg)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    found = collect()
    print(report(found))
    if "-v" in sys.argv:
        mods = api_modules()
        by_mod: dict[str, list[Entry]] = {}
        for e in found:
            by_mod.setdefault(_module_of(e.qualname, mods), []).append(e)
        for m, es in sorted(by_mod.items(), key=lambda kv: -sum(not e.ok for e in kv[1])):
            nbad = sum(not e.ok for e in es)
            if nbad:
                print(f"{nbad:4d}/{len(es):4d}  {m}")
