# accelopt: the two commands of the README are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: setup build test demo bench-engine fuzz dist clean

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Unit and end-to-end tests (no GPU, no network).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The main job: measure this machine, then optimize with the configured model
# (accelopt.yaml or $$ACCELOPT_CONFIG), or, when none is configured, replay the
# recorded demo on silu, matmul and rmsnorm_matmul. TASKS= names the tasks for a real model.
TASKS ?=
# On a busy machine calibrate waits up to a minute for a quiet moment, then
# goes on unscored (saying why) rather than stopping the demo.
demo: build
	$(BUILD)/accelopt calibrate --wait-quiet 60 --or-unscored
	$(BUILD)/accelopt optimize --anchors $(TASKS)

# Benchmarks of the engine itself (compile time, overhead, timing spread).
bench-engine: build
	$(BUILD)/engine_bench
	$(BUILD)/loop_bench
	$(BUILD)/queue_bench

# Coverage-guided fuzzing of the parsers that read outside input (fuzz/README.md):
# each target runs FUZZ_SECONDS; a crash leaves its input in build-fuzz/crashes.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/setup.sh fuzz
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DACCELOPT_FUZZ=ON
	cmake --build build-fuzz --target fuzzers -j $(JOBS)
	scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

# A relocatable tarball for a machine without this project's packages (a cluster
# node): dist/accelopt-VERSION-ARCH.tar.xz, the binaries, the libraries they need
# beyond glibc and libstdc++, and the data (README.md, "Running elsewhere: make dist").
DIST_VERSION ?= $(shell sed -n 's/^project.accelopt VERSION \([^ ]*\).*/\1/p' CMakeLists.txt)-g$(shell git describe --always --dirty 2>/dev/null || echo unknown)
dist: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target accelopt accelopt-harness
	scripts/dist.sh $(BUILD) dist/accelopt-$(DIST_VERSION)-$(shell uname -m).tar.xz

clean:
	rm -rf $(BUILD) build-fuzz dist
