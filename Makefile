# Entry points. `make demo` and `make test` each install what is missing,
# configure, build and run; plain `make` only configures and builds.

PRESET ?= dev
JOBS ?= $(shell nproc)

.PHONY: all build deps configure demo test test-asan test-tsan test-stress test-unit bench clean package test-packages wheel test-wheel

all: build

deps:
	@scripts/install-deps

configure:
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The main job: `zeus reproduce` on the Zeus NSDI '23 traces, then `zeus info`
# on an emulated four-GPU machine, the batch-size service with recurring jobs,
# and PyTorch with the Python package. Builds only what it runs, in build/.
DEMO_TARGETS = zeus zeus_emulated_train zeus_nvml_emulator zeus_amdsmi_emulator zeus_python

demo: deps
	@$(MAKE) --no-print-directory configure
	@cmake --build --preset $(PRESET) -j $(JOBS) --target $(DEMO_TARGETS)
	@scripts/demo

# Every test, in timed stages that end with a table (scripts/test-all): the
# release tree (warnings as errors) with the pytest suite, the Debian
# packages installed, used and purged, the CMake package, the wheel and pip;
# the fuzzers; every C++ test under ASan/UBSan (with a throwaway PostgreSQL 15,
# scripts/with-test-postgres); the multi-threaded code under TSan.
test: deps
	@scripts/test-all

test-asan:
	@ZEUS_TEST_STAGES="asan-build asan-unit asan-ctest" scripts/test-all

# The test binaries whose code runs threads (the list is in scripts/test-all).
test-tsan:
	@ZEUS_TEST_STAGES="tsan-build tsan-run" scripts/test-all

# The suite on a loaded machine: builds the ci preset (and the asan preset
# when build-asan/ exists), then runs their ctest while stress-ng keeps every
# core busy, and prints the elapsed time. Extra ctest arguments:
# `make test-stress CTEST_ARGS='-R ClockTest'`. See scripts/test-stress.
test-stress: deps
	@scripts/test-stress $(CTEST_ARGS)

test-unit: build
	@ctest --preset $(PRESET) -L unit

bench: build
	@scripts/bench

# Debian packages into dist/deb (scripts/build-packages), and their
# install/run/lintian/purge check (as root: scripts/test-packages).
package: deps
	@scripts/build-packages

test-packages: package
	@scripts/test-packages

# The self-contained wheel into dist/ (scripts/build-wheel) and its check in a
# fresh virtual environment (scripts/test-wheel).
wheel: deps
	@scripts/build-wheel

test-wheel: wheel
	@scripts/test-wheel

clean:
	@rm -rf build build-ci build-asan build-tsan build-release build-wheel build-fuzz dist
