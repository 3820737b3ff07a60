# Both targets build their own virtual environment from scratch if it is missing.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin

# `make run TRAIN_ARGS="--preset quick --num-updates 20"` changes the run.
TRAIN_ARGS ?= --preset quick --run-dir runs/quick

.PHONY: run test docs lint bench clean

$(BIN)/jaxarc: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(BIN)/jaxarc

run: $(BIN)/jaxarc  ## the main job on the embedded default data
	$(BIN)/jaxarc train $(TRAIN_ARGS)

test: $(BIN)/jaxarc  ## the whole test suite
	$(BIN)/ruff check jaxarc tests examples benchmarks
	$(BIN)/python -m pytest -n 2 -q

$(BIN)/mkdocs: pyproject.toml $(BIN)/jaxarc
	$(BIN)/python -m pip install -q -e '.[dev,docs]'
	touch $(BIN)/mkdocs

docs: $(BIN)/mkdocs  ## the documentation site (guides + API reference) into site/, warnings are errors
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

lint: $(BIN)/jaxarc
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(BIN)/jaxarc
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build site *.egg-info
