# The entry points a newcomer uses. Each target first runs scripts/install-deps.sh, which installs
# only what is missing and takes seconds when everything is present.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
DEPS := scripts/install-deps.sh
BUILD := build

.PHONY: all deps build release test test-slow fuzz demo bench format format-check lint asan tsan \
        fresh-clone clean

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

# Every unit and e2e test (ctest labels unit, e2e; docs/testing.md), then what was skipped and
# why. The fuzz, sanitizer and slow runs are separate targets (and steps of .ci/run).
test: build
	@cd $(BUILD)/debug && ctest -L 'unit|e2e' --output-on-failure -j $(JOBS) --timeout 900; \
	  rc=$$?; bash $(CURDIR)/tests/skip_summary.sh . || rc=1; exit $$rc

# Tests labelled slow (*_slow_test.cc: minutes of oracle runs), not part of `make test`.
test-slow: build
	cd $(BUILD)/debug && ctest -L slow --output-on-failure -j $(JOBS) --timeout 1800

# Each libFuzzer target for a fixed time (clang build with ASan+UBSan, label fuzz).
fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	cd $(BUILD)/fuzz && ctest -L fuzz --output-on-failure --timeout 300

# Fetch real data, build a fresh local warehouse with the SQLite catalog, run the main job. Only
# the program is built (not the release tree's tests and benchmarks): a new user's first command.
demo: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target geolake
	bash scripts/demo.sh $(BUILD)/release/src/geolake/cli/geolake $(BUILD)/demo

# GeoPandas, a peer only the benchmarks run, is installed here rather than by every `make`.
bench: release
	@GEOLAKE_DEPS_BENCH=1 bash $(DEPS) $(BUILD)
	bash bench/run.sh $(BUILD)/release

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

lint: build
	@git ls-files 'src/*.cc' | grep -v '_test.cc' | xargs clang-tidy -p $(BUILD)/debug --quiet

# The unit suite under ASan+UBSan (suppressions, third-party only: tests/sanitizers/).
asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	cd $(BUILD)/asan && ctest -L unit --output-on-failure -j $(JOBS) --timeout 1800

# The pipeline and catalog unit tests (labels module.pipeline, module.catalog) and the stress
# tests (label stress) under ThreadSanitizer; only their executables are built (the program
# geolake for stress.ingest_same_source_concurrently, which runs eight of it at once).
TSAN_TARGETS := geolake_pipeline_test geolake_catalog_test geolake_commit_sqlite_test \
                geolake_commit_driver geolake
tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TARGETS)
	cd $(BUILD)/tsan && ctest -L 'module\.(pipeline|catalog)|stress' --output-on-failure \
	  -j $(JOBS) --timeout 1800

# A clone of HEAD with nothing beside it runs `make demo` and `make test` (tests/e2e/fresh_clone.sh).
fresh-clone:
	bash tests/e2e/fresh_clone.sh

clean:
	rm -rf $(BUILD)
