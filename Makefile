# Both targets build their own virtual environment from scratch if it is missing.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench clean

$(BIN)/jaxarc: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(BIN)/jaxarc

run: $(BIN)/jaxarc  ## the main job on the embedded default data
	$(BIN)/jaxarc train --preset quick

test: $(BIN)/jaxarc  ## the whole test suite
	$(BIN)/ruff check jaxarc tests examples benchmarks
	$(BIN)/python -m pytest -n 2 -q

lint: $(BIN)/jaxarc
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(BIN)/jaxarc
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
