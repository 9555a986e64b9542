# `make test` sets everything up on a fresh clone and runs the tests.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup test
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)
