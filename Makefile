# The two set-up commands of README.md live here: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
RUFF   := $(VENV)/bin/ruff
STAMP  := $(VENV)/.installed
SOURCES := protocol vaultd vaultctl tests scripts reliability benchmarks

# Every process the tests and benchmarks start imports vaultd from this tree: let Python keep its
# bytecode (in the venv, not beside the sources), as an installed wheel does, so a daemon start or a
# vaultctl call is timed and tested as users run it, not recompiled from source each time.
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache

.PHONY: demo test test-loaded test-long test-interop test-packaging dist zipapp interop-matrix bench check format lint types docs venv clean

# `.[test]` brings every optional extra too (console, graph, media, rerank: pyproject.toml), so
# `make demo` and `make test` have the web console and the graph's communities.
venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' --group dev
	touch $(STAMP)

demo: $(STAMP)
	bash scripts/demo.sh

# One worker per core: every test has its own home, socket and daemon, so they share nothing.
test: $(STAMP)
	$(PY) -m pytest -q -n auto -m "not slow and not interop and not packaging"

# The same suite with two CPU hogs beside it (stress-ng, installed with apt-get when missing),
# RUNS times in a row: `make test-loaded RUNS=5`. Not run by CI (it doubles the suite's time).
RUNS ?= 1
test-loaded: $(STAMP)
	bash scripts/test_loaded.sh $(RUNS)

# The release artifacts (packaging/README.md): wheel and sdist, reproducible for one commit.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
export SOURCE_DATE_EPOCH
dist: $(STAMP)
	$(PY) -m pip install --quiet --group packaging
	rm -rf dist
	$(PY) -m build --outdir dist .

# A single file for machines without a venv: dist/vaultctl.pyz (shiv; this Python's version and platform).
zipapp: dist
	$(PY) -m shiv --reproducible --compressed -c vaultctl -o dist/vaultctl.pyz dist/vaultd-*.whl

# Build every artifact and install each as a user would, in fresh environments.
test-packaging: $(STAMP)
	$(PY) -m pip install --quiet --group packaging
	$(PY) -m pytest -q -m packaging

# The MCP clients of other makers, pinned in interop/package.json (npm; Node >= 20).
test-interop: $(STAMP)
	$(PY) -m pip install --quiet --group interop
	cd interop && npm ci --no-audit --no-fund --loglevel=error
	$(PY) -m pytest -q -m interop

# The same run, writing the table of its results to docs/interop-matrix.md.
interop-matrix: $(STAMP)
	VAULTD_INTEROP_MATRIX=docs/interop-matrix.md $(MAKE) test-interop

bench: $(STAMP)
	$(PY) -m benchmarks.run $(BENCH_ARGS)

# The long suites (marked slow), out of the regular suite so that it stays under ten minutes on two
# cores; CI runs them last (.ci/run).
test-long: $(STAMP)
	$(PY) -m pytest -q -m slow

# The quality gate, run before the tests: formatting, lint, types, generated docs up to date.
check: $(STAMP)
	$(RUFF) format --check $(SOURCES)
	$(RUFF) check $(SOURCES)
	$(PY) -m mypy
	$(PY) -m scripts.docs --check

lint: $(STAMP)
	$(PY) -m mypy
	$(RUFF) check $(SOURCES)

types: $(STAMP)
	$(PY) -m mypy

format: $(STAMP)
	$(RUFF) format $(SOURCES)
	$(RUFF) check --fix $(SOURCES)

# Regenerate the reference docs from the code (the protocol table, the typer commands).
docs: $(STAMP)
	$(PY) -m scripts.docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
