# SPDX-License-Identifier: MIT
# Thin wrapper over CMake. `make demo` and `make check` install missing Debian packages first.
PREFIX ?= /usr/local
JOBS ?= 2
BUILD := build
ASAN := build-asan
TSAN := build-tsan
FUZZ := build-fuzz
FUZZ_SECONDS ?= 600
NETFAB := $(BUILD)/netfab

.PHONY: all deps build asan tsan demo check test test-quick bench fuzz install clean format

all: build

deps:
	@sh scripts/deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

asan: deps
	@cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DNF_SANITIZE=ON -DNF_MPI=OFF >/dev/null
	@cmake --build $(ASAN) -j $(JOBS) -- --no-print-directory

# ThreadSanitizer: clang and LLVM's OpenMP runtime (libgomp is not instrumented); builds only
# what scripts/tsan.sh runs (the threaded unit tests and the program). Part of `make check`.
tsan:
	@sh scripts/deps.sh build tsan
	@CC=clang cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNF_TSAN=ON -DNF_MPI=OFF >/dev/null
	@cmake --build $(TSAN) -j $(JOBS) --target netfab_cli test_sim test_hops test_lft test_fabric \
		-- --no-print-directory
	@sh scripts/tsan.sh $(TSAN)

demo: build
	@sh scripts/demo.sh $(NETFAB)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# the unit tests and the fast end-to-end scripts (ctest label quick), release build only: for
# every edit; `make check` is the whole gate
test-quick: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L quick

check: build asan
	@echo "== tests, release build"
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@echo "== tests, AddressSanitizer + UndefinedBehaviorSanitizer build"
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)
	@echo "== threaded paths, ThreadSanitizer build"
	@$(MAKE) --no-print-directory tsan

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
	rm -rf $(BUILD) $(ASAN) $(TSAN) $(FUZZ)
