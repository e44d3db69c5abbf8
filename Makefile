# One-command set-up: every target bootstraps .venv on first use (or when the pins change).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
N      ?= 256
OUT    ?= reports

.PHONY: venv test test-fast coverage performance audit audit-tilematch audit-daily bench bench-tilematch validate clean

venv: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip==26.3
	$(PY) -m pip install -q -c requirements.lock -e '.[dev]'
	touch $(STAMP)

# The test command (.ci/run calls it): two pytest-xdist workers; tests that share a module's
# fixture run on one worker (conftest.py). pytest exit 5 = "no tests collected": a failure here.
# Bytecode is kept (__pycache__, ignored by git) even where the environment sets
# PYTHONDONTWRITEBYTECODE: without it every worker rewrites the assertions of every test
# module again (collection 6 s instead of 2 s), and every CLI or Dask process the tests
# start compiles the project's modules again.
# It ends on the 30 slowest tests (set-up and call each), so CI's own record says where the
# suite's time goes.
XDIST  ?= -n 2 --dist loadgroup
KEEPPYC := PYTHONDONTWRITEBYTECODE=
DURATIONS ?= --durations=30
test: $(STAMP)
	@$(KEEPPYC) $(PY) -m pytest -q $(XDIST) $(DURATIONS) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The quick lane for a developer's loop: no cluster, nothing marked slow (about a minute).
test-fast: $(STAMP)
	@$(KEEPPYC) MINEGEN_FUZZ_SCALE=0.2 $(PY) -m pytest -q $(XDIST) -m "not cluster and not slow" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test-fast: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# Line coverage of the whole suite (one process, subprocesses and Dask workers measured
# too): the figure a change to the suite must not lower. Data under .coverage_data/.
coverage: $(STAMP)
	rm -rf .coverage_data && mkdir -p .coverage_data
	COVERAGE_FILE=$(CURDIR)/.coverage_data/.coverage $(PY) -m coverage run -m pytest -q -p no:xdist $(PYTEST_ARGS) || true
	COVERAGE_FILE=$(CURDIR)/.coverage_data/.coverage $(PY) -m coverage combine -q
	COVERAGE_FILE=$(CURDIR)/.coverage_data/.coverage $(PY) -m coverage report | tail -1

# The main job: the F4 audit of the default table on the embedded LocalCluster.
audit: $(STAMP)
	$(VENV)/bin/minegen audit --n $(N) --out $(OUT)

# The same audit of the tile-match presets (tables/tilematch) on the same engine.
audit-tilematch: $(STAMP)
	$(VENV)/bin/minegen audit --generator tilegen --n $(N) --out $(OUT)

# The tile-match daily boards of every city from today (UTC) for DAYS days, before they ship.
DAYS   ?= 365
FROM   ?= $(shell date -u +%F)
audit-daily: $(STAMP)
	$(VENV)/bin/minegen audit --generator tilegen --daily $(FROM):$(DAYS) --out $(OUT)

bench: $(STAMP)
	$(VENV)/bin/minegen bench --width 12 --height 12 --density 0.15
	$(VENV)/bin/minegen bench --width 30 --height 16 --density 0.206

# tilegen: microseconds per attempt, kernel vs the plain-Python reading, per reference level.
bench-tilematch: $(STAMP)
	$(VENV)/bin/tilegen bench --levels 1,2,3,4,5,6 --city beijing --plain benchmarks/tilegen_plain.py

# docs/performance.md, every section measured again and written by its own script (about
# 45 minutes on 2 cores; each script alone: .venv/bin/python benchmarks/NAME.py --doc).
performance: $(STAMP)
	$(PY) benchmarks/kernels.py --doc
	$(PY) benchmarks/compile.py --doc
	$(PY) benchmarks/audit_scaling.py --doc
	$(PY) benchmarks/house_scale.py --doc
	$(PY) benchmarks/tilegen_js.py --doc
	$(PY) benchmarks/tune_time.py --doc
	$(PY) benchmarks/tune_holdout.py --doc
	$(PY) benchmarks/history_index.py --doc
	$(PY) benchmarks/idle_cluster.py --doc
	$(PY) benchmarks/cluster_start.py --doc
	$(VENV)/bin/minegen audit --generator tilegen --out $(OUT) || test $$? -eq 1
	$(PY) benchmarks/reconcile_scale.py --run $(OUT)/tilegen/metric_v1/$$(cat $(OUT)/tilegen/metric_v1/LATEST) --doc
	$(PY) benchmarks/reconcile_scale.py --run $(OUT)/tilegen/metric_v1/$$(cat $(OUT)/tilegen/metric_v1/LATEST) --engine dask --doc
	$(PY) benchmarks/suite.py --doc

validate: $(STAMP)
	$(VENV)/bin/minegen validate

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .coverage_data
