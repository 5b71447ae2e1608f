# The two commands a new user needs: `make demo` and `make test`.
# Both create .venv (python3 -m venv) when missing and install the project with its dev
# extra; the install is redone only when pyproject.toml changes.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.iclr25-installed
PYTEST_ARGS ?=
# pytest processes for `make test` (pytest-xdist; worksteal: an idle process takes queued
# tests from a busy one, so one slow module does not leave a core idle); auto = one per core
TEST_WORKERS ?= auto

.PHONY: demo test test-slow test-gpu lint bench imitation-env docs studies setup clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/iclr25 demo

test: setup
	$(BIN)/python -m ruff check .
	$(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

test-slow: setup
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

test-gpu: setup
	$(BIN)/python -m pytest -m gpu $(PYTEST_ARGS)

lint: setup
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .

# the peers benchmarks measure (extra `bench`), on top of the dev set-up
BENCH_STAMP := $(VENV)/.iclr25-bench-installed
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

# imitation 1.0.1 (a peer of the pn-gail benchmark) pins stable-baselines3 ~2.2 and
# gymnasium ~0.29, so it gets an environment of its own (~6 GB with torch), made only on
# request; `make bench` uses it when present (or $ICLR25_IMITATION_PYTHON) and says why
# it skipped that peer otherwise
IMITATION_VENV ?= .venv-imitation
$(IMITATION_VENV)/.installed:
	$(PYTHON) -m venv $(IMITATION_VENV)
	$(IMITATION_VENV)/bin/python -m pip install --quiet 'imitation==1.0.1' 'sb3-contrib~=2.2.1'
	touch $@

imitation-env: $(IMITATION_VENV)/.installed

# the studies the docs quote (experiments/), e.g. STUDIES=diffusion-at-compare
studies: setup
	$(BIN)/python -m experiments run $(STUDIES)

# render the measured sections of README.md and docs/*.md from the result files
docs: setup
	$(BIN)/python -m docs

clean:
	rm -rf $(VENV) $(IMITATION_VENV) build dist .pytest_cache .ruff_cache
