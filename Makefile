# Every target builds the virtual environment it needs if it is missing: `run` installs jaxarc
# with the plot extra only; `test` and `lint` add the dev extra (the test tools and the RL
# libraries the ecosystem tests train, no PyTorch); `docs` adds the docs toolchain only.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin

# Every `make run` starts a new run: runs/quick, then runs/quick-2, ... (--fresh-run-dir).
# `make run TRAIN_ARGS="--preset quick --num-updates 20"` changes the run.
TRAIN_ARGS ?= --preset quick --run-dir runs/quick --fresh-run-dir

.PHONY: run test test-long docs lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.run-installed: pyproject.toml $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[plot]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.run-installed

run: $(VENV)/.run-installed  ## the main job on the embedded default data
	$(BIN)/jaxarc train $(TRAIN_ARGS)

test: $(VENV)/.dev-installed  ## the whole test suite, then how long it took
	$(BIN)/ruff check jaxarc tests examples benchmarks
	@start=$$(date +%s); $(BIN)/python -m pytest -n 2 -q --durations=15 -m "not long"; status=$$?; \
	took=$$(( $$(date +%s) - start )); \
	echo "make test: the test suite took $$((took / 60)) min $$((took % 60)) s (pytest exit code $$status)"; \
	exit $$status

test-long: $(VENV)/.dev-installed  ## the long runs that shorter tests back up (CI runs them)
	$(BIN)/python -m pytest -n 2 -q -m long

# the docs tools and the package itself (mkdocstrings reads its docstrings)
$(VENV)/.docs-installed: pyproject.toml $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[docs]'
	touch $@

docs: $(VENV)/.docs-installed  ## the documentation site (guides + API reference) into site/, warnings are errors
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.run-installed
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build site *.egg-info
