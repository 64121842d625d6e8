# fpdeep: `make setup` installs everything into .venv, `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# PyTorch is optional: it enables the export and float-parity tests. `make setup TORCH=` skips it.
TORCH ?= torch==2.13.0 onnxscript
PYTEST_ARGS ?=
# One pytest worker per core; tests that share a simulator build stay on one worker.
PARALLEL ?= -n auto --dist loadgroup

.PHONY: setup test test-fast test-full lint bench demo clean

setup: $(BIN)/python
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -e ".[dev,synth]"
ifneq ($(strip $(TORCH)),)
	$(BIN)/pip install $(TORCH) || echo "fpdeep: PyTorch not installed; its tests will be skipped"
endif

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Everything CI runs; long runs (marker `full`) only in test-full.
test:
	$(BIN)/python -m pytest $(PARALLEL) -m "not full" $(PYTEST_ARGS)

test-full:
	$(BIN)/python -m pytest $(PARALLEL) $(PYTEST_ARGS)

test-fast:
	$(BIN)/python -m pytest $(PARALLEL) -m "not sim and not slow" $(PYTEST_ARGS)

lint:
	$(BIN)/ruff check .

bench:
	$(BIN)/python bench/bench_inspect.py

demo:
	$(BIN)/fpdeep demo

clean:
	rm -rf build dist .pytest_cache .ruff_cache sim_build
