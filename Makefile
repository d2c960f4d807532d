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
# on an emulated four-GPU machine.
demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo

# Every test: the warnings-as-errors build (C++ tests and the Python package's
# pytest suite), the Python package installed with pip into a venv, the fuzzers, the ASan/UBSan
# build, then the multi-threaded code under ThreadSanitizer. Tests that need
# PostgreSQL get a throwaway PostgreSQL 15 server (scripts/with-test-postgres).
test: deps
	@$(MAKE) --no-print-directory build PRESET=ci
	@scripts/with-test-postgres ctest --preset ci
	@scripts/test-python-install
	@scripts/fuzz-traces
	@scripts/fuzz-bso
	@scripts/fuzz-zeusd
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-tsan

test-asan:
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@scripts/with-test-postgres ctest --preset asan

# The test binaries whose code runs threads (samplers, guards, locks, the
# HTTP server's workers, the service's connection pool).
TSAN_TESTS = zeus_monitor_test zeus_device_test zeus_nvml_emulator_test zeus_runtime_test zeus_http_test \
             zeus_bso_sql_test \
             zeus_bso_test zeus_zeusd_test zeus_http_stream_test zeus_power_streaming_test

test-tsan:
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TESTS)
	@scripts/with-test-postgres bash -c 'set -e; for t in $(TSAN_TESTS); do echo "== TSan: $$t"; \
	  TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/$$t --gtest_brief=1; done'

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
	@rm -rf build build-asan build-tsan build-release build-wheel dist
