# `make demo` sets everything up on a fresh clone and runs the example workflow end to end
# against the example MCP server; `make test` sets everything up and runs the tests;
# `make lint` runs ruff and mypy over canal/.
VENV ?= .venv
PY := $(VENV)/bin/python
CANAL := $(VENV)/bin/canal

.PHONY: setup test lint demo
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff and mypy read their settings from pyproject.toml (mypy checks canal/).
lint: setup
	$(VENV)/bin/ruff check canal
	$(VENV)/bin/mypy

# The example platform starts empty each time, so the scripted project name is free.
demo: setup
	rm -f .canal/permission-platform.db
	$(CANAL) discover --pretty
	$(CANAL) run create-permission-set --answers examples/permission_platform/answers.yaml --pretty
