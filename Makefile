# Entry points. `make demo` and `make test` each install what is missing,
# configure, build and run; plain `make` only configures and builds.

PRESET ?= dev
JOBS ?= $(shell nproc)

.PHONY: all build deps configure demo test test-asan test-tsan test-unit bench clean

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

# Every test: the warnings-as-errors build, the ASan/UBSan build, then the
# multi-threaded code under ThreadSanitizer.
test: deps
	@$(MAKE) --no-print-directory build PRESET=ci
	@ctest --preset ci
	@scripts/fuzz-traces
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-tsan

test-asan:
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan

# The test binaries whose code runs threads (samplers, guards, locks).
TSAN_TESTS = zeus_monitor_test zeus_device_test zeus_nvml_emulator_test zeus_runtime_test

test-tsan:
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TESTS)
	@set -e; for t in $(TSAN_TESTS); do echo "== TSan: $$t"; TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/$$t --gtest_brief=1; done

test-unit: build
	@ctest --preset $(PRESET) -L unit

bench: build
	@scripts/bench

clean:
	@rm -rf build build-asan build-tsan build-release
