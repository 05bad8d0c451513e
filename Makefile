# gjk_ros developer commands.
#
# On a machine without ROS, `make test` and `make demo` work from a fresh clone: they create a
# virtual environment (.venv) holding the exact package set of requirements.lock (the ROS 2
# Jazzy wheels among them), build tf2_msgs and moveit_msgs into it when they are missing, install
# this package into it (editable, with the layout of a colcon install), compile the geometry
# kernels and run. Every step leaves a stamp file in .venv/.stamps, so a second run only redoes
# what changed.
#
# On a machine with ROS 2 sourced, use colcon instead:
#   colcon build --packages-select gjk_ros && colcon test --packages-select gjk_ros

# Python used to create the environment: the ROS 2 Jazzy wheels are built for CPython 3.11.
PYTHON ?= python3.11
VENV ?= .venv
PYTEST_ARGS ?=
# The exact versions and hashes `make venv` installs (made by `make lock` from the requirement
# files below). `make LOCK= ...` installs the newest versions the requirement files allow.
LOCK_FILE := requirements.lock
LOCK ?= $(LOCK_FILE)
REQUIREMENTS := requirements.txt requirements-ros.txt tools/requirements-tf2-build.txt
# The venv `make test-latest` builds from the newest allowed versions.
LATEST_VENV ?= .venv-latest
# Steps that do not depend on each other run side by side (see SUBMAKE).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# pytest workers (pytest-xdist), one per core: a node-process test runs the node, its scene and
# their threads, and tests that wait a bounded time for the node fail when more workers than
# cores starve it.
TEST_WORKERS ?= $(JOBS)
FAST_WORKERS ?= $(JOBS)
# The upstream launch stack and ros2 command line as wheels (not on the package index), for the
# launch and CLI tests; `make test` installs them when this folder exists, and those tests skip
# where it does not.
ROS_TOOLS ?= ../shared/ros-tools

VENV_DIR := $(abspath $(VENV))
VENV_PYTHON := $(VENV_DIR)/bin/python
STAMPS := $(VENV_DIR)/.stamps
PIP := $(VENV_PYTHON) -m pip --disable-pip-version-check

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:

# This machine's pip configuration adds local indexes that print one warning per package they do
# not hold; drop those lines so that pip's real messages stay readable. pip's exit status is kept.
PIP_QUIET := 2>&1 | { grep -v 'is ignored: it is neither a file nor a directory' || true; }

# Environment for anything that starts ROS nodes from the venv. The wheels do not set
# AMENT_PREFIX_PATH, and discovery stays on this machine. ROS_LOG_DIR is a temporary folder that
# the recipe removes (set `log_dir` first, see ROS_RUN).
ROS_ENV = AMENT_PREFIX_PATH="$(VENV_DIR)$${AMENT_PREFIX_PATH:+:$$AMENT_PREFIX_PATH}" \
	ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$$log_dir"
ROS_RUN = log_dir=$$(mktemp -d) && trap 'rm -rf "$$log_dir"' EXIT && env $(ROS_ENV)

# Once the kernel packages are in, the rest of the install followed by the message builds
# (pip waits for the network; cmake's code generation runs on one core) and the kernel warm-up
# (numba: one process per kernel group) need nothing from each other: a sub-make runs them side
# by side, whatever -j was given.
SUBMAKE = $(MAKE) --no-print-directory --jobs=$(JOBS) --output-sync=target

.PHONY: all help lock venv install warmup-all ros-tools test test-fast test-latest demo bench \
	bench-quick bench-load bench-lock lint clean

all: install

help:
	@echo 'make venv         create $(VENV) with the ROS 2 Jazzy wheels, tf2_msgs and moveit_msgs'
	@echo 'make install      install gjk_ros into $(VENV) (editable, colcon-like layout)'
	@echo 'make test         run the whole test suite (PYTEST_ARGS=... to pass options)'
	@echo 'make test-fast    the tests that start no ROS graph: core, models, components, planner'
	@echo 'make test-latest  the whole suite in $(LATEST_VENV), built from the newest allowed versions'
	@echo 'make lock         re-resolve $(LOCK_FILE) from $(REQUIREMENTS)'
	@echo 'make ros-tools    install launch, launch_testing and the ros2 CLI from $(ROS_TOOLS)'
	@echo 'make demo         run the demo scene against the node (on a free ROS domain)'
	@echo 'make bench        run the benchmarks (bench-quick: a short run)'
	@echo 'make bench-load   only the live node under load (LOAD_ARGS=... for its options)'
	@echo 'make bench-lock   re-resolve $(BENCH_LOCK) from $(BENCH_REQUIREMENTS)'
	@echo 'make lint         run ament_flake8 and ament_pep257 on the sources'
	@echo 'make clean        remove $(VENV) and caches'

# --- environment --------------------------------------------------------------------------------

venv: $(STAMPS)/tf2_msgs $(STAMPS)/moveit_msgs

$(STAMPS)/created:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
		echo 'error: $(PYTHON) is not Python 3.11, which the ROS 2 Jazzy wheels need;' \
			'run make PYTHON=/path/to/python3.11 ...' >&2; exit 1; }
	$(PYTHON) -m venv $(VENV_DIR)
	mkdir -p $(STAMPS) && touch $@

# From the lock: exact versions, each file checked against its hash (pip's hash-checking mode;
# a package the lock does not list stops the install). A lock older than a requirement file is
# refused. Without a lock (`LOCK=`), the newest versions the requirement files allow.
#
# The packages the kernel warm-up imports come first (kernel-requirements), so that the warm-up
# compiles while the rest downloads and installs: pip mostly waits for the network, numba for
# a core.
KERNEL_PACKAGES := numpy scipy numba llvmlite trimesh networkx pyyaml

ifneq ($(LOCK),)
$(STAMPS)/kernel-requirements: $(REQUIREMENTS) $(LOCK) tools/lock.py $(STAMPS)/created
	$(PYTHON) tools/lock.py check $(LOCK) $(REQUIREMENTS)
	$(PYTHON) tools/lock.py subset $(LOCK) $(KERNEL_PACKAGES) > $(STAMPS)/kernel.lock
	$(PIP) install --quiet --require-hashes --no-deps -r $(STAMPS)/kernel.lock $(PIP_QUIET)
	touch $@

$(STAMPS)/requirements: $(STAMPS)/kernel-requirements
	$(PIP) install --quiet --require-hashes -r $(LOCK) $(PIP_QUIET)
	touch $@
else
$(STAMPS)/kernel-requirements: $(STAMPS)/requirements
	touch $@

$(STAMPS)/requirements: $(REQUIREMENTS) $(STAMPS)/created
	$(PIP) install --quiet --upgrade --upgrade-strategy eager $(addprefix -r ,$(REQUIREMENTS)) \
		$(PIP_QUIET)
	touch $@
endif

# Re-resolve the lock from the requirement files (the newest versions they allow today).
lock:
	$(PYTHON) tools/lock.py write $(LOCK_FILE) $(REQUIREMENTS) $(PIP_QUIET)

# Build only what `import <package>.msg` cannot find (the scripts check), so a ROS install's wins.
INTERFACE_BUILD := tools/build_ros_interfaces.sh tools/requirements-tf2-build.txt

$(STAMPS)/tf2_msgs: tools/build_tf2_msgs.sh $(INTERFACE_BUILD) \
		$(wildcard tools/tf2_msgs_fallback/* tools/tf2_msgs_fallback/msg/*) \
		$(STAMPS)/requirements
	bash tools/build_tf2_msgs.sh $(VENV_DIR) $(PIP_QUIET)
	touch $@

# The planning scene messages (a subset of moveit_msgs, and the octomap_msgs and
# object_recognition_msgs types they contain: about a minute on 2 cores).
$(STAMPS)/moveit_msgs: tools/build_moveit_msgs.sh $(INTERFACE_BUILD) \
		$(wildcard tools/moveit_msgs_fallback/*/* tools/moveit_msgs_fallback/*/msg/*) \
		$(STAMPS)/tf2_msgs
	bash tools/build_moveit_msgs.sh $(VENV_DIR) $(PIP_QUIET)
	touch $@

# --- package --------------------------------------------------------------------------------------

# The folders are inputs too: adding or removing a launch or config file changes their mtime.
INSTALL_INPUTS := Makefile setup.py setup.cfg package.xml tools/install_layout.py \
	$(wildcard resource resource/* launch launch/* config config/*)

install: $(STAMPS)/kernel-requirements
	$(SUBMAKE) $(STAMPS)/moveit_msgs $(STAMPS)/install $(STAMPS)/warmup

# Editable install (the working tree is the code that runs), then the data files and the
# executables in lib/gjk_ros/ that a colcon install has and `pip install -e` does not make.
# --use-pep517: without it pip falls back to `setup.py develop`, which is deprecated and, through
# setup.cfg, puts the console scripts in lib/gjk_ros/ only (the Makefile wants bin/ as well).
# --no-deps: the requirements step installed every dependency (from the lock), so nothing here
# may add or upgrade one.
$(STAMPS)/install: $(INSTALL_INPUTS) $(STAMPS)/requirements
	$(PIP) install --quiet --no-build-isolation --no-deps --use-pep517 -e . $(PIP_QUIET)
	$(VENV_PYTHON) tools/install_layout.py $(VENV_DIR)
	touch $@

# Compile the kernels the node uses into numba's cache now (about a minute on 2 cores), so that
# the node starts without compiling; redone when a core source changes (the cache is keyed by a
# digest of the core's sources: gjk_ros/core/_jit.py). The planner's and signed_distance's kernels compile when first used,
# or all at once with warmup-all (the test suite's prerequisite: its parallel workers would
# otherwise each compile the same kernels). It runs from the working tree, which the editable
# install also imports (the same sources, so the same cache), and needs only the kernel
# packages: it starts before the rest of the lock is in.
WARMUP_INPUTS := $(wildcard gjk_ros/core/*.py) gjk_ros/models/meshes.py gjk_ros/cli.py
WARMUP := PYTHONPATH="$(CURDIR)" $(VENV_PYTHON) -m gjk_ros.cli warmup

$(STAMPS)/warmup: $(WARMUP_INPUTS) $(STAMPS)/kernel-requirements
	$(WARMUP)
	touch $@

warmup-all: $(STAMPS)/warmup-all

$(STAMPS)/warmup-all: $(WARMUP_INPUTS) $(STAMPS)/warmup
	$(WARMUP) --all
	touch $@

# launch, launch_ros, launch_testing and the ros2 CLI from $(ROS_TOOLS) (its install.sh, about
# 45 s once). Only a dependency of `test` when that folder exists.
HAVE_ROS_TOOLS := $(wildcard $(ROS_TOOLS)/install.sh)
ROS_TOOLS_STAMP := $(if $(HAVE_ROS_TOOLS),$(STAMPS)/ros-tools)

ros-tools: $(ROS_TOOLS_STAMP)

$(STAMPS)/ros-tools: $(HAVE_ROS_TOOLS) $(wildcard $(ROS_TOOLS)/wheels/*) $(STAMPS)/tf2_msgs \
		$(STAMPS)/moveit_msgs
	bash $(ROS_TOOLS)/install.sh $(VENV_DIR) $(PIP_QUIET)
	touch $@

# --- use ------------------------------------------------------------------------------------------

# The whole suite in parallel workers (test/conftest.py gives each worker its own ROS domain),
# a module per worker at a time (--dist loadfile): a node-process module starts its node once
# and runs its tests in order. pytest's exit status 5 (no test collected) fails the recipe like
# any other.
test: $(STAMPS)/kernel-requirements
	$(SUBMAKE) $(STAMPS)/moveit_msgs $(STAMPS)/install $(STAMPS)/warmup-all $(ROS_TOOLS_STAMP)
	$(ROS_RUN) $(VENV_PYTHON) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# Everything that starts no ROS graph and no node process (test/conftest.py marks the rest
# `graph`): the core, the models, the node's components, the planner. The linters, which read
# the whole tree, are `make lint` (and part of `make test`).
test-fast: $(STAMPS)/kernel-requirements
	$(SUBMAKE) $(STAMPS)/moveit_msgs $(STAMPS)/install $(STAMPS)/warmup-all
	$(ROS_RUN) $(VENV_PYTHON) -m pytest -n $(FAST_WORKERS) -m 'not graph and not linter' \
		$(PYTEST_ARGS)

# A venv of its own, resolved afresh from the loose requirement files every time, then the
# whole suite: a new release that breaks us shows here before `make lock` takes it in.
test-latest:
	rm -f $(LATEST_VENV)/.stamps/requirements
	$(MAKE) VENV=$(LATEST_VENV) LOCK= install
	$(PYTHON) tools/lock.py compare $(LOCK_FILE) $(LATEST_VENV)/bin/python
	$(MAKE) VENV=$(LATEST_VENV) LOCK= test

# The demo needs tf2_msgs but not moveit_msgs (only its --collision-objects does, and `make
# venv` builds it): skipping that build brings the first table a minute or more sooner.
demo: $(STAMPS)/kernel-requirements
	$(SUBMAKE) $(STAMPS)/tf2_msgs $(STAMPS)/install $(STAMPS)/warmup
	$(ROS_RUN) $(VENV_DIR)/bin/gjk-ros demo

# The benchmark's peers, locked as the venv is: bench/requirements.lock pins them and every
# package they need (exact versions, file hashes), resolved by `make bench-lock` with the
# versions of $(LOCK_FILE) as constraints. Installed in hash-checking mode with nothing else
# (--no-deps: the lock is the whole set), under the same constraints: a bench lock that would
# change a package of the venv stops the install, as does one older than its requirement file.
BENCH_REQUIREMENTS := bench/requirements.txt
BENCH_LOCK := bench/requirements.lock
# $(LOCK_FILE)'s pins without their hashes: as pip constraints (a constraint with a hash would
# turn hash-checking on for the bench requirements while they are resolved).
LOCK_PINS = grep -E '^[A-Za-z0-9][A-Za-z0-9._-]*==' $(LOCK_FILE) | sed 's/ *\\$$//'

ifneq ($(LOCK),)
$(STAMPS)/bench-requirements: $(BENCH_REQUIREMENTS) $(BENCH_LOCK) $(LOCK_FILE) \
		$(STAMPS)/requirements
	$(PYTHON) tools/lock.py check $(BENCH_LOCK) $(BENCH_REQUIREMENTS)
	$(LOCK_PINS) > $(STAMPS)/lock-pins.txt
	$(PIP) install --quiet --require-hashes --no-deps -r $(BENCH_LOCK) \
		-c $(STAMPS)/lock-pins.txt $(PIP_QUIET)
	touch $@
else
$(STAMPS)/bench-requirements: $(BENCH_REQUIREMENTS) $(STAMPS)/requirements
	$(PIP) install --quiet -r $(BENCH_REQUIREMENTS) $(PIP_QUIET)
	touch $@
endif

# Re-resolve the bench lock (after an edit of $(BENCH_REQUIREMENTS) or `make lock`).
bench-lock:
	pins=$$(mktemp) && trap 'rm -f "$$pins"' EXIT && $(LOCK_PINS) > "$$pins" && \
		PIP_CONSTRAINT="$$pins" $(PYTHON) tools/lock.py write $(BENCH_LOCK) \
		$(BENCH_REQUIREMENTS) $(PIP_QUIET)
	sed -i -e 's/`make venv` installs/`make bench` installs/' \
		-e 's/`make lock`/`make bench-lock`/' $(BENCH_LOCK)

bench: install $(STAMPS)/bench-requirements
	$(ROS_RUN) $(VENV_PYTHON) -m bench.run

bench-quick: install $(STAMPS)/bench-requirements
	$(ROS_RUN) $(VENV_PYTHON) -m bench.run --quick

# Only the live-node load benchmark (make bench runs it too): LOAD_ARGS=... passes options,
# e.g. LOAD_ARGS='--rows camera1 tf1k --quick'.
LOAD_ARGS ?=
bench-load: install
	$(ROS_RUN) $(VENV_PYTHON) -m bench.load_bench $(LOAD_ARGS)

# The same checks as test/test_flake8.py and test/test_pep257.py, with the full report.
lint: install
	$(VENV_DIR)/bin/ament_flake8
	$(VENV_DIR)/bin/ament_pep257

clean:
	rm -rf $(VENV_DIR) $(LATEST_VENV) .pytest_cache .hypothesis
	find gjk_ros test bench tools -name __pycache__ -type d -prune -exec rm -rf {} + 2>/dev/null || true
