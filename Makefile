# tessera: a thin wrapper over CMake and CTest.
#
#   make setup           install the missing Debian packages the build and the tests need
#                        (scripts/setup.sh, as root); make build and make demo install only
#                        what the build needs (setup-build)
#   make build           configure build/ (Release) and compile
#   make demo            factor and solve a generated SPD system on every device found
#   make test            the format check, ctest in build/, the sanitizer stages, then pytest
#                        (tests/python), one after another; ends with each stage's wall time
#   make test-sanitize   build-asan/ (ASan + UBSan, Debug: every test), TSan: unit tests without
#                        devices, build-sim/ (TSan, simulated devices: every test, those over
#                        processes at up to 3 of them); the TSan stage
#                        runs in build-sim/ with its devices turned off (in build-tsan/, a build
#                        of its own, when SANITIZE_CUDA is not OFF)
#   make install PREFIX=/usr/local
#   make clean           removes every build folder these targets make (BUILD_DIRS) and what the
#                        tests leave in the tree (TEST_LEFTOVERS)
#   make format | format-check
#
# Variables: PREFIX, JOBS (default: all cores), CTEST_JOBS (tests ctest runs at once, default
# six times JOBS), PYTEST_JOBS (pytest-xdist workers, default JOBS), V=1 (show every compile line),
# SANITIZE_CUDA=OFF|AUTO (the CUDA backend in the sanitizer builds; OFF keeps them quick),
# TESSERA_SKIP_SETUP=1 (environment: skip the package check). Warnings are errors when CI is set.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
MAKEFLAGS += --no-print-directory

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Most tests wait more than they compute (MPI start-up, timeouts, late processes), so ctest runs
# six times as many as there are cores (no test's verdict hangs on a clock a loaded machine can
# miss); an MPI test counts as many as its processes (PROCESSORS), so with fewer slots the tests
# of 3 and 4 processes run one at a time.
CTEST_JOBS ?= $(shell echo $$((6 * $(JOBS))))
PYTEST_JOBS ?= $(JOBS)
SANITIZE_CUDA ?= OFF
V ?= 0

WERROR := $(if $(filter-out 0 false False FALSE no off OFF,$(CI)),ON,OFF)
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo 1)
# GPU-labelled tests run only where a GPU is found.
CTEST_GPU := $(if $(HAVE_GPU),,-LE gpu)
CTEST := ctest --output-on-failure -j$(CTEST_JOBS) $(CTEST_GPU)

CMAKE_CONFIGURE = cmake -S . -B $(1) --log-level=NOTICE -DTESSERA_WERROR=$(WERROR) $(2)
# Progress lines hidden unless V=1; warnings and errors always show.
ifeq ($(V),0)
CMAKE_BUILD = cmake --build $(1) -j$(JOBS) | { grep -Ev '^\[ *[0-9]+%\] (Building|Linking|Built target)' || true; }
else
CMAKE_BUILD = cmake --build $(1) -j$(JOBS)
endif

FORMAT_DIRS := include src tools tests bench examples python
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -path '*/vendor' -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) -print 2>/dev/null)

# Every folder a target below configures; make clean removes them all, and what the tests
# leave in the tree (pytest's cache, the bytecode Python writes next to the modules they import).
BUILD_DIRS := build build-asan build-tsan build-sim
TEST_LEFTOVERS := .pytest_cache tests/python/__pycache__ python/tessera/__pycache__ .build-asan.log \
                  .build-sim.log

# make test's stages, in order; each one's wall time is printed at the end.
TEST_STAGES := format-check build test-main test-asan test-tsan test-sim test-python

.PHONY: all setup setup-build configure build build-asan build-sim demo test test-main test-sanitize test-asan \
        test-tsan test-sim test-python install clean format format-check

all: build

setup:
	@bash scripts/setup.sh test

setup-build:
	@bash scripts/setup.sh build

configure: setup-build
	@$(call CMAKE_CONFIGURE,build,-DCMAKE_BUILD_TYPE=Release)

build: configure
	@$(call CMAKE_BUILD,build)

demo: build
	./build/tessera demo

# Runs the stages in order and stops at the first that fails; the table of wall times covers
# the stages that ran. Each sanitizer build compiles while the stage before runs its tests
# (they mostly wait: MPI start-up, timeouts): build-asan beside test-main, build-sim beside
# test-asan; its output shown when its own stage starts, whose build then finds nothing left to
# do.
test:
	@rc=0; table=""; bg=""; log=""; \
	for stage in $(TEST_STAGES); do \
	  if [ -n "$$bg" ] && { [ $$stage = test-asan ] || [ $$stage = test-tsan ]; }; then \
	    wait $$bg; cat $$log; rm -f $$log; bg=""; fi; \
	  if [ $$stage = test-main ]; then log=$(ASAN_LOG); ( $(MAKE) build-asan > $$log 2>&1 ) & bg=$$!; fi; \
	  if [ $$stage = test-asan ]; then log=$(SIM_LOG); ( $(MAKE) build-sim > $$log 2>&1 ) & bg=$$!; fi; \
	  t0=$$SECONDS; $(MAKE) $$stage || rc=$$?; \
	  table+=$$(printf '  %-13s %4d s%s' $$stage $$((SECONDS - t0)) "$$([ $$rc -eq 0 ] || echo '  FAILED')")$$'\n'; \
	  [ $$rc -eq 0 ] || break; \
	done; \
	if [ -n "$$bg" ]; then wait $$bg; fi; rm -f $(ASAN_LOG) $(SIM_LOG); \
	echo "== make test: wall time per stage =="; printf '%s' "$$table"; \
	printf '  %-13s %4d s\n' total $$SECONDS; \
	exit $$rc

test-main: setup build
	@echo "== ctest: build (Release)$(if $(HAVE_GPU),, without GPU tests) =="
	@$(CTEST) --test-dir build

test-sanitize: test-asan test-tsan test-sim

# build-asan/ configured and compiled (no package check: `make test` runs it beside test-main,
# whose own check has the packages in place).
ASAN_LOG := .build-asan.log
build-asan:
	@$(call CMAKE_CONFIGURE,build-asan,-DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=address -DTESSERA_CUDA=$(SANITIZE_CUDA) -DTESSERA_BUILD_BENCH=OFF)
	@$(call CMAKE_BUILD,build-asan)

test-asan: setup
	@$(MAKE) build-asan
	@echo "== ctest: build-asan (AddressSanitizer + UndefinedBehaviorSanitizer, every test) =="
	@ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(CTEST) --test-dir build-asan

# The unit tests under TSan on CPU cores only. build-sim (below) serves: TESSERA_SIM_DEVICES=0
# gives its simulated backend no device, so the runtime runs as in a build without one (the tile
# kernels' tests run under TSan in test-sim). With the CUDA backend in the sanitizer builds
# (SANITIZE_CUDA not OFF) they run in build-tsan, which has it, and on the GPUs found, with the
# kernels' tests (the CUDA kernels' among them, which build-sim does not build).
ifeq ($(SANITIZE_CUDA),OFF)
test-tsan: setup
	@$(MAKE) build-sim
	@echo "== ctest: build-sim with no simulated device (ThreadSanitizer, unit tests) =="
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 TESSERA_SIM_DEVICES=0 \
	  $(CTEST) --test-dir build-sim -L unit
else
test-tsan: setup
	@$(call CMAKE_CONFIGURE,build-tsan,-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=thread -DTESSERA_CUDA=$(SANITIZE_CUDA) -DTESSERA_BUILD_BENCH=OFF)
	@$(call CMAKE_BUILD,build-tsan)
	@echo "== ctest: build-tsan (ThreadSanitizer, unit and kernel tests) =="
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(CTEST) --test-dir build-tsan -L 'unit|kernels'
endif

# Simulated devices (host memory standing in for GPUs) under TSan: the runtime's device paths
# (pools, eviction, transfers, tasks in flight) on a machine without GPUs. 3 devices with 1 MiB
# pools, so every linalg test moves and evicts tiles. The MPI and Gloo tests over 2 and 3
# processes (SIM_SKIP): TSan's races are within a process, and at 3 each process already has two
# peers at once; one process (no peer: no transfer beside the tasks) and the layouts of 4 run in
# build/ and build-asan/.
SIM_CONFIG := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=thread -DTESSERA_SIM_DEVICES=ON \
              -DTESSERA_BUILD_BENCH=OFF
SIM_LOG := .build-sim.log
SIM_SKIP := /np[14]$$
# build-sim/ configured and compiled (no package check, as build-asan).
build-sim:
	@$(call CMAKE_CONFIGURE,build-sim,$(SIM_CONFIG))
	@$(call CMAKE_BUILD,build-sim)

test-sim: setup
	@$(MAKE) build-sim
	@echo "== ctest: build-sim (ThreadSanitizer, 3 simulated devices with 1 MiB pools, every test; 2 and 3 processes) =="
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 TESSERA_SIM_DEVICES=3 TESSERA_GPU_MEM_LIMIT=1M \
	  $(CTEST) --test-dir build-sim -E '$(SIM_SKIP)'

# pytest's exit status 5 means it collected no test: not a failure. The tests run in
# PYTEST_JOBS processes (pytest-xdist) where it is installed, else in one, each with a
# single-threaded OpenBLAS (unless OPENBLAS_NUM_THREADS is set): the processes already take
# every core, and OpenBLAS's threads spin between calls on cores the other processes need.
test-python: setup build
	@if ! compgen -G "tests/python/test_*.py" >/dev/null; then \
	  echo "== pytest: no tests under tests/python; skipped =="; \
	elif ! python3 -c "import pytest" 2>/dev/null; then \
	  echo "== pytest: python3 has no pytest; tests/python skipped =="; \
	else \
	  if [ "$(PYTEST_JOBS)" -gt 1 ] && python3 -c "import xdist" 2>/dev/null; then \
	    workers="-n $(PYTEST_JOBS)"; echo "== pytest: tests/python ($(PYTEST_JOBS) workers) =="; \
	  else \
	    workers=""; echo "== pytest: tests/python (one process) =="; \
	  fi; \
	  rc=0; TESSERA_BUILD_DIR="$(CURDIR)/build" PYTHONPATH="$(CURDIR)/python$${PYTHONPATH:+:$$PYTHONPATH}" \
	    OPENBLAS_NUM_THREADS="$${OPENBLAS_NUM_THREADS:-1}" \
	    python3 -m pytest -q $$workers tests/python || rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 5 ]; then exit $$rc; fi; \
	fi

install: build
	cmake --install build --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD_DIRS) $(TEST_LEFTOVERS)

format:
	@clang-format -i $(FORMAT_FILES)

format-check:
	@if command -v clang-format >/dev/null; then \
	  echo "== clang-format: $(words $(FORMAT_FILES)) files =="; \
	  clang-format --dry-run --Werror $(FORMAT_FILES); \
	else echo "== clang-format not installed: format check skipped =="; fi
