# nsys-duck developer commands. First time on a fresh machine:
#   make demo    # venv + install + convert a shipped example report
#   make test    # venv + install + Nsight Systems CLI (when possible) + pytest
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO ?= examples/rodinia_gaussian_8k_kernels/parquet

.PHONY: venv demo test test-fast lint nsys bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test,docs]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/nsys-duck convert $(DEMO)

# Installs Debian's nsight-systems 2023.4 CLI into ~/.cache (see .ci/install_nsys.sh);
# tests that need nsys are skipped when it cannot be installed.
test: $(STAMP)
	@NSYS_BIN=$$(bash .ci/install_nsys.sh | tail -1) || NSYS_BIN=""; \
	if [ -n "$$NSYS_BIN" ] && [ -x "$$NSYS_BIN/nsys" ]; then export PATH="$$NSYS_BIN:$$PATH"; \
	else echo "note: nsys could not be installed; tests needing it will be skipped"; fi; \
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# Python: ruff (rules and formatting in pyproject.toml); SQL: sqlfluff on the
# stages under sql/ (.sqlfluff), and no tab in them. Fixes: ruff check --fix,
# ruff format, sqlfluff fix sql.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint sql --processes 0
	@if grep -rnP '\t' sql --include='*.sql'; then \
	echo "sql/: indent with spaces, not tabs" >&2; exit 1; fi

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not nsys" $(PYTEST_ARGS)

bench: $(STAMP)
	@$(BIN)/python -m pip install -q -e '.[test,docs,bench]' || echo "note: ncompass could not be installed; the bench runs without it"
	@NSYS_BIN=$$(bash .ci/install_nsys.sh | tail -1) || NSYS_BIN=""; \
	export PATH="$$NSYS_BIN:$$PATH"; $(BIN)/python bench/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist .pytest_cache
