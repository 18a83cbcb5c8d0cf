# The two commands: `make run` (set up, build, run the main job) and
# `make test` (set up, build, run every test).
.PHONY: run test setup build test-cpp test-python clean

run: setup
	scabench paper --quick --out results/paper-quick

test: setup test-cpp test-python

setup:
	./scripts/setup.sh

build:
	cmake --build build -j 2

test-cpp:
	cd build && ctest --output-on-failure -j 1

test-python:
	.venv/bin/python -m pytest -q tests/python

clean:
	rm -rf build .venv
