# The two commands: `make run` (set up, build, run the main job) and
# `make test` (set up, build, run every test).
.PHONY: run test setup build test-cpp test-python test-docs clean

run: setup
	scabench paper --quick --out results/paper-quick

test: setup test-cpp test-python test-docs

setup:
	./scripts/setup.sh

build:
	cmake --build build -j 2

test-cpp:
	cd build && ctest --output-on-failure -j 1

test-python:
	.venv/bin/python -m pytest -q tests/python

# The documentation site, --strict: a broken link or anchor fails it. Its
# reference pages are generated from the code and the built programs
# (scripts/docs_hooks.py); the site goes to site/, git-ignored.
test-docs:
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

clean:
	rm -rf build .venv site
