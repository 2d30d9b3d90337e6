# The two set-up commands of README.md live here: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-long test-interop bench lint venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	bash scripts/demo.sh

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not interop"

# The MCP clients of other makers, pinned in interop/package.json (npm; Node >= 20).
test-interop: $(STAMP)
	cd interop && npm ci --no-audit --no-fund --loglevel=error
	$(PY) -m pytest -q -m interop

bench: $(STAMP)
	$(PY) -m benchmarks.run $(BENCH_ARGS)

test-long: $(STAMP)
	$(PY) -m pytest -q -m slow

lint: $(STAMP)
	$(PY) -m mypy
	$(VENV)/bin/ruff check protocol vaultd vaultctl tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis
