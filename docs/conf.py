"""Sphinx configuration: ``make docs`` builds the HTML documentation with warnings as errors.

The API reference is generated from the numpydoc docstrings (autodoc + numpydoc); the CLI
reference from the commands' own argparse help (written to ``_generated/cli.rst`` here, so it
cannot drift from the tool); the errata page and the developer guide are the Markdown files
the repository keeps (MyST).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLBACKEND", "Agg")

import semi_core  # noqa: E402

project = "semi_core"
author = "the semi_core developers"
copyright = "2026, the semi_core developers"
release = getattr(semi_core, "__version__", "")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "matplotlib.sphinxext.plot_directive",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "alabaster"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]

# the systems' figures are drawn at build time by the example scripts the pages include
# (docs/examples/*.py, whose printed output tests/test_docs_examples.py checks)
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_working_directory = tempfile.mkdtemp(prefix="semi_core_docs_")   # examples write files

# --------------------------------------------------------------------------- generated pages
GEN = HERE / "_generated"
GEN.mkdir(exist_ok=True)

#: Packages of the API reference, in reading order (the CLI is documented from its help).
API_PACKAGES = ["semi_core.game", "semi_core.mechanisms", "semi_core.audit", "semi_core.stats",
                "semi_core.symbolic", "semi_core.claims", "semi_core.integrations",
                "semi_core.sgd", "semi_core.attacks", "semi_core.kernels", "semi_core.report"]


def _modules(pkg: str) -> list[str]:
    mod = importlib.import_module(pkg)
    out = [pkg]
    for m in pkgutil.walk_packages(mod.__path__, pkg + "."):
        if not any(p.startswith("_") for p in m.name.split(".")[1:]):
            out.append(m.name)
    return out


def _write_api() -> None:
    lines = ["API reference", "=============", "",
             "Generated from the numpydoc docstrings of every public module.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    for pkg in API_PACKAGES:
        lines.append(f"   api_{pkg.split('.')[-1]}")
        body = [pkg, "=" * len(pkg), ""]
        for name in _modules(pkg):
            body += [name, "-" * len(name), "", f".. automodule:: {name}"]
            if hasattr(importlib.import_module(name), "__path__"):
                # a package re-exports its submodules' names: documented where defined
                body.append("   :no-members:")
            body.append("")
        (GEN / f"api_{pkg.split('.')[-1]}.rst").write_text("\n".join(body))
    lines.append("   api_testing")
    (GEN / "api_testing.rst").write_text("semi_core.testing\n=================\n\n"
                                         ".. automodule:: semi_core.testing\n")
    (GEN / "api.rst").write_text("\n".join(lines) + "\n")


def _write_cli() -> None:
    from semi_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    lines = ["Command-line reference", "======================", "",
             "The help of every ``semi-core`` command, as the tool prints it.", "",
             ".. code-block:: text", ""]
    lines += ["   " + ln for ln in parser.format_help().splitlines()]
    for name in sorted(sub.choices):
        lines += ["", name, "-" * len(name), "", ".. code-block:: text", ""]
        lines += ["   " + ln for ln in sub.choices[name].format_help().splitlines()]
    (GEN / "cli.rst").write_text("\n".join(lines) + "\n")


_write_api()
_write_cli()
