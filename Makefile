# Entry points. `make demo` and `make test` each install what is missing,
# configure, build and run; plain `make` only configures and builds.

PRESET ?= dev
JOBS ?= $(shell nproc)

.PHONY: all build deps configure demo test test-asan test-unit bench clean

all: build

deps:
	@scripts/install-deps

configure:
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The main job: `zeus info` on a small emulated four-GPU machine.
demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo

# Every test: the warnings-as-errors build, then the ASan/UBSan build.
test: deps
	@$(MAKE) --no-print-directory build PRESET=ci
	@ctest --preset ci
	@$(MAKE) --no-print-directory test-asan

test-asan:
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan

test-unit: build
	@ctest --preset $(PRESET) -L unit

bench: build
	@scripts/bench

clean:
	@rm -rf build build-asan build-tsan build-release
