# nsys-duck developer commands. First time on a fresh machine:
#   make demo    # venv + install + convert a shipped example report
#   make test    # venv + install + Nsight Systems CLI (when possible) + pytest
#   make test-fast  # the rule tests only (tests/rules/), on the light test extra
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# the light install of make test-fast (done too by the full one, $(STAMP))
FAST_STAMP := $(VENV)/.installed-fast-stamp
# every extra make test needs: the light test tools, HTA (tests/test_kineto.py),
# Dask (tests/test_parallel.py), matplotlib (tests/test_overview_image.py)
EXTRAS := test,hta,dask,docs
DEMO ?= examples/rodinia_gaussian_8k_kernels/parquet
# make test's pytest-xdist workers: a test file runs whole on one of them
# (--dist loadfile: its module fixtures, a conversion each, are made once);
# 2 fits these 2-core, 24 GB machines (each worker's DuckDB has its own
# memory limit); TEST_WORKERS=0 runs the suite in one process
TEST_WORKERS ?= 2

.PHONY: venv demo test test-fast lint nsys bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP) $(FAST_STAMP)

$(FAST_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(FAST_STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/nsys-duck convert $(DEMO)

# Installs Debian's nsight-systems 2023.4 CLI into ~/.cache (see .ci/install_nsys.sh);
# tests that need nsys are skipped when it cannot be installed.
test: $(STAMP)
	@NSYS_BIN=$$(bash .ci/install_nsys.sh | tail -1) || NSYS_BIN=""; \
	if [ -n "$$NSYS_BIN" ] && [ -x "$$NSYS_BIN/nsys" ]; then export PATH="$$NSYS_BIN:$$PATH"; \
	else echo "note: nsys could not be installed; tests needing it will be skipped"; fi; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# Python: ruff (rules and formatting in pyproject.toml); SQL: sqlfluff on the
# stages under sql/ (.sqlfluff), and no tab in them. Fixes: ruff check --fix,
# ruff format, sqlfluff fix sql.
lint: $(FAST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint sql --processes 0
	@if grep -rnP '\t' sql --include='*.sql'; then \
	echo "sql/: indent with spaces, not tabs" >&2; exit 1; fi

# The rule tier: one SQL view at a time on a few given rows (tests/rules/,
# marker rules); no dev report, nsys or Perfetto needed; a minute or two.
test-fast: $(FAST_STAMP)
	$(BIN)/python -m pytest -q -m rules tests/rules $(PYTEST_ARGS)

bench: $(STAMP)
	@$(BIN)/python -m pip install -q -e '.[$(EXTRAS),bench]' || echo "note: ncompass could not be installed; the bench runs without it"
	@NSYS_BIN=$$(bash .ci/install_nsys.sh | tail -1) || NSYS_BIN=""; \
	export PATH="$$NSYS_BIN:$$PATH"; $(BIN)/python bench/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist .pytest_cache
