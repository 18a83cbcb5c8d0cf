# The two commands: `make run` (set up, build, run the main job) and
# `make test` (set up, build, run every test). `make test-unit`: the Python
# unit tests alone (tests/python/unit: no run and no omniNames started; seconds).
.PHONY: run test setup build lint test-cpp test-python test-unit test-docs clean

run: setup
	scabench paper --quick --out results/paper-quick

test: setup lint test-cpp test-python test-docs

setup:
	./scripts/setup.sh

build:
	cmake --build build -j 2

# Lint, format and type checks: Python (ruff, mypy; configured in python/pyproject.toml)
# and C++ (clang-format, .clang-format).
lint:
	.venv/bin/ruff check --config python/pyproject.toml python tests scripts examples
	.venv/bin/ruff format --check --config python/pyproject.toml python tests scripts examples
	cd python && ../.venv/bin/mypy
	clang-format --dry-run --Werror $$(git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'tests/cpp/*.cpp' 'tests/cpp/*.hpp' 'examples/*.cpp' 'examples/*.hpp')

test-cpp:
	cd build && ctest --output-on-failure -j 1

test-python:
	.venv/bin/python -m pytest -q tests/python

test-unit: setup
	.venv/bin/python -m pytest -q -m "not system" tests/python/unit

# The documentation site, --strict: a broken link or anchor fails it. Its
# reference pages are generated from the code and the built programs
# (scripts/docs_hooks.py); the site goes to site/, git-ignored.
test-docs:
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

clean:
	rm -rf build .venv site
