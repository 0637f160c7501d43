# accelopt: the two commands of the README are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: setup build test demo bench-engine clean

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
demo: build
	$(BUILD)/accelopt calibrate
	$(BUILD)/accelopt optimize $(TASKS)

# Benchmarks of the engine itself (compile time, overhead, timing spread).
bench-engine: build
	$(BUILD)/engine_bench
	$(BUILD)/loop_bench

clean:
	rm -rf $(BUILD)
