# SPDX-License-Identifier: MIT
# Thin wrapper over CMake. `make demo` and `make check` install missing Debian packages first.
PREFIX ?= /usr/local
JOBS ?= 2
BUILD := build
ASAN := build-asan
FUZZ := build-fuzz
FUZZ_SECONDS ?= 600
NETFAB := $(BUILD)/netfab

.PHONY: all deps build asan demo check test bench fuzz install clean format

all: build

deps:
	@sh scripts/deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

asan: deps
	@cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DNF_SANITIZE=ON -DNF_MPI=OFF >/dev/null
	@cmake --build $(ASAN) -j $(JOBS) -- --no-print-directory

demo: build
	@sh scripts/demo.sh $(NETFAB)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check: build asan
	@echo "== tests, release build"
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@echo "== tests, AddressSanitizer + UndefinedBehaviorSanitizer build"
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)

bench: build
	@sh scripts/deps.sh bench
	@sh bench/run.sh $(BUILD)

fuzz:
	@sh scripts/deps.sh fuzz
	@CC=clang cmake -S . -B $(FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNF_FUZZ=ON -DNF_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ) -j $(JOBS)
	@sh fuzz/run.sh $(FUZZ) $(FUZZ_SECONDS)

install: build
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory
	@cmake --install $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
