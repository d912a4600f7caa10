# Everything a fresh machine needs: `make run` and `make test` create .venv, install, and go.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# pip prints one warning per missing local index folder; they are noise, not errors.
QUIET_PIP := { grep -v "is ignored: it is neither a file nor a directory" || true; }

.PHONY: install run test test-slow figures bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test]' 2>&1 | $(QUIET_PIP)
	touch $(STAMP)

install: $(STAMP)

run: install            ## the main job on the embedded default benchmark (mnist5k)
	$(PY) run.py

test: install           ## the test suite (offline, < 10 min on 2 cores)
	$(PY) -m pytest

test-slow: install      ## also the slow tests (full 6^4 lattice)
	RUN_SLOW=1 $(PY) -m pytest

figures: install        ## every figure and table from results/ → results/figures, results/tables, results/report.md
	$(PY) scripts/figures.py  # a fresh clone (no runs) first gets the minimal mnist5k sweep

bench: install          ## performance as ratios → results/bench.md, results/bench.json (~8 min)
	$(PY) scripts/bench.py

clean:
	rm -rf results/runs results/multirun results/cache .pytest_cache
