# Two commands do all the set-up on a fresh machine:
#   make reproduce   -> builds .venv, runs the main job (semi-core reproduce --quick) into ./report
#   make test        -> builds .venv, runs the fast test tier with the compiled kernels, then again,
#                       with the NumPy twins forced (SEMI_CORE_FORCE_TWIN=1), every test of it that
#                       reached a kernel (recorded by the first pass; see tests/conftest.py)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: reproduce test test-slow bench lint docs clean

$(STAMP): pyproject.toml setup.py constraints.txt $(wildcard semi_core_ext/*.pyx)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[all]'
	touch $(STAMP)

reproduce: $(STAMP)
	$(VENV)/bin/semi-core reproduce --quick --out report

KERNEL_TESTS := .pytest_cache/semi-core-kernel-tests.txt

test: $(STAMP)
	$(PY) -m pytest -q --record-kernel-tests=$(KERNEL_TESTS)
	SEMI_CORE_FORCE_TWIN=1 $(PY) -m pytest -q --only-kernel-tests=$(KERNEL_TESTS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(PY) -m benchmarks

lint: $(STAMP)
	$(VENV)/bin/ruff check semi_core tests benchmarks analysis
	$(VENV)/bin/lint-imports --no-cache

# The HTML documentation (API reference from the numpydoc docstrings, CLI reference from the
# commands' help, the errata page); any warning fails the build.
docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf $(VENV) build report docs/_build docs/_generated *.egg-info semi_core_ext/*.c semi_core_ext/*.so
