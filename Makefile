# The entry points a newcomer uses. Each target first runs scripts/install-deps.sh, which installs
# only what is missing and takes seconds when everything is present.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
DEPS := scripts/install-deps.sh
BUILD := build

.PHONY: all deps build release test fuzz demo bench format format-check lint asan tsan clean

all: build

deps:
	@bash $(DEPS) $(BUILD)
	@bash scripts/fetch-data.sh $(BUILD)/data

build: deps
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j $(JOBS)

release: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# Every unit and e2e test (ctest labels unit, e2e), then each libFuzzer target for a short fixed
# time (clang build, label fuzz). Slow soak runs are in `make bench`.
test: build fuzz
	cd $(BUILD)/debug && ctest -L 'unit|e2e' --output-on-failure -j $(JOBS) --timeout 900

fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	cd $(BUILD)/fuzz && ctest -L fuzz --output-on-failure --timeout 300

# Fetch real data, build a fresh local warehouse with the SQLite catalog, run the main job.
demo: release
	bash scripts/demo.sh $(BUILD)/release/src/geolake/cli/geolake $(BUILD)/demo

bench: release
	bash bench/run.sh $(BUILD)/release

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

lint: build
	@git ls-files 'src/*.cc' | grep -v '_test.cc' | xargs clang-tidy -p $(BUILD)/debug --quiet

asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	cd $(BUILD)/asan && ctest -L 'unit|e2e' --output-on-failure -j $(JOBS) --timeout 1800

tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	cd $(BUILD)/tsan && ctest -L 'unit|e2e' --output-on-failure -j $(JOBS) --timeout 1800

clean:
	rm -rf $(BUILD)
