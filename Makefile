# citegraph: `make demo` (set up and run the main job offline) and `make test` (set up and test).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Core install: enough for the demo (embedded KG, parsers, metrics, lexical matcher).
$(VENV)/.core-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# Everything the tests need. torch is pinned first so nothing pulls a multi-GB CUDA build.
$(VENV)/.full-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[nli,dev]'
	touch $(VENV)/.core-installed $@

demo: $(VENV)/.core-installed
	$(BIN)/citegraph demo --out runs/demo

test: $(VENV)/.full-installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(VENV)/.full-installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(VENV)/.full-installed
	$(BIN)/python benchmarks/kg_load_query.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
