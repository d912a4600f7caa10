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
# Modules are compiled once, by the first process that imports them. Where PYTHONDONTWRITEBYTECODE is
# set, nothing ever writes them and every process compiles its imports again (measured: CHANGELOG.md).
unexport PYTHONDONTWRITEBYTECODE
# pip prints one warning per missing local index folder; they are noise, not errors.
QUIET_PIP := { grep -v "is ignored: it is neither a file nor a directory" || true; }

.PHONY: install lock lint run test test-all test-slow test-slurm figures reproduce bench bench-avx2 clean gpu-check browser

$(PY):
	$(PYTHON) -m venv $(VENV)

# uv installs the same pinned releases as pip, resolving and unpacking in parallel and linking from
# its cache (times against pip: CHANGELOG.md). Where uv cannot be installed or cannot reach an
# index, pip installs.
# Everything (the extras `all` and `test`) at the exact versions of constraints.txt; pyproject.toml
# itself only declares ranges.
$(STAMP): pyproject.toml constraints.txt | $(PY)
	{ $(PY) -m pip install -q uv==0.13.9 2>&1 | $(QUIET_PIP) && $(VENV)/bin/uv pip install -q --python $(PY) -c constraints.txt -e '.[test]'; } \
	  || $(PY) -m pip install -q -c constraints.txt -e '.[test]' 2>&1 | $(QUIET_PIP)
	touch $(STAMP)

install: $(STAMP)

lock: install           ## constraints.txt from pyproject.toml's ranges (uv pip compile; current pins kept where they fit)
	cp constraints.txt constraints.txt.new
	$(VENV)/bin/uv pip compile -q --no-header pyproject.toml --extra all --extra test --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 -o constraints.txt.new
	{ sed -n '/^#/!q;p' constraints.txt; grep -v '^# ' constraints.txt.new; } > constraints.txt.tmp
	mv constraints.txt.tmp constraints.txt && rm constraints.txt.new

run: install            ## the main job on the embedded default benchmark (mnist5k)
	$(PY) run.py

lint: install           ## ruff (rules in pyproject.toml): undefined names, unused imports, bugbear; the layout; the layers (import-linter); the types of core/, stopping/, pipeline/ (mypy)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

test: lint              ## lint, then the contributor tier, before every commit (offline, both cores; README states its time)
	$(PY) -m pytest -n 2

test-all: lint browser  ## lint, then everything: also SIGKILL/resume, concurrency, notebooks, statistics, full lattices (CI)
	$(PY) -m pytest -n 2 -m "slow or not slow"

test-slow: test-all     # the old name

figures: install        ## every figure and table from results/ → results/figures, results/tables, results/report.md
	$(PY) scripts/figures.py $(if $(RESULTS),--results $(RESULTS))  # RESULTS=DIR: only DIR's runs, drawn beside them; a fresh clone (no runs) first gets the minimal mnist5k sweep

browser:                ## Debian's chromium, for the test that renders report.html in a real browser (root; else that test skips)
	@if command -v chromium >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "browser: SKIPPED: needs root to install chromium (the browser test will skip)" >&2; exit 0; fi; \
	{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; } >/dev/null \
	  || echo "browser: SKIPPED: could not install chromium from the Debian registry (the browser test will skip)" >&2

SLURM_PKGS := slurmctld slurmd slurm-client munge
test-slurm: install     ## the SLURM launcher test on a throwaway single-node cluster on 127.0.0.1 (root)
	@if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sinfo >/dev/null \
	    || ! command -v munged >/dev/null; then \
	  if [ "$$(id -u)" != 0 ]; then echo "test-slurm: SKIPPED: needs root to install $(SLURM_PKGS)" >&2; exit 0; fi; \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(SLURM_PKGS); } \
	    || { echo "test-slurm: SKIPPED: could not install $(SLURM_PKGS) from the Debian registry" >&2; exit 0; }; \
	fi
	@t0=$$(date +%s%N); \
	trap 'rc=$$?; [ $$rc = 0 ] || tail -n 30 "$${TESTNAV_SLURM_DIR:-/tmp/testnav-slurm}"/log/*.log >&2 || true; slurm/local_cluster.sh stop' EXIT; \
	slurm/local_cluster.sh start || { tail -n 30 "$${TESTNAV_SLURM_DIR:-/tmp/testnav-slurm}"/log/*.log >&2 || true; \
	  echo "test-slurm: SKIPPED: the local cluster did not start (logs above)" >&2; exit 0; }; \
	eval "$$(slurm/local_cluster.sh env)"; \
	TESTNAV_SLURM=1 $(PY) -m pytest tests/e2e/test_slurm.py -s; \
	ms=$$(( ($$(date +%s%N) - t0) / 1000000 )); \
	echo "test-slurm: cluster start to results in $$((ms / 1000)).$$(printf %03d $$((ms % 1000))) s"

reproduce: install      ## regenerate every committed mnist5k number from scratch and compare, line by line
	$(PY) scripts/reproduce.py

bench: install          ## performance as ratios → results/bench.md, results/bench.json
	$(PY) scripts/bench.py

# torch, oneDNN, MKL and numba capped to AVX2 on a host with AVX-512: the instruction set of an AVX2-only
# host (an AMD EPYC's), not its caches or memory; labelled so in the file it writes. numba needs both
# variables: NUMBA_CPU_NAME alone keeps the host's features, AVX-512 included
bench-avx2: install     ## the bench with the instruction set capped to AVX2 → results/bench-avx2-emulated.md
	ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES= \
	  $(PY) scripts/bench.py --out results/bench-avx2-emulated

clean:
	rm -rf results/runs results/multirun results/cache .pytest_cache

gpu-check: install      ## every CUDA path on one GPU (≤ 8 min) → results/gpu.md, results/gpu.json; skips without CUDA
	$(PY) scripts/gpu_check.py
