# sim_fidelity developer entry points. Everything runs from the venv that tools/bootstrap.sh makes
# (ROS 2 wheels, colcon, and this repository's packages built by colcon into the venv).
#   make demo       bootstrap, then a short truck-unloading benchmark (scenario B) on the embedded simulator
#   make test       bootstrap, then pytest on sim_fidelity/test (inside a loopback-only network namespace)
#   make bootstrap  create/refresh .venv (no-op when nothing changed)
#   make interfaces rebuild the interface packages (sim_fidelity_interfaces/, fallback_interfaces/*)
#   make mutation   mutation testing of the core rule modules (tools/mutation.py, mutmut; slow, not
#                   part of make test); MUTATION_TARGETS picks targets of tools/mutation.toml
#   make clean      remove build output and caches (keeps .venv); make distclean also removes .venv
# Variables: PYTEST_ARGS (extra pytest arguments), PYTEST_WORKERS (pytest-xdist workers; default 2),
# DEMO_ARGS (the simfid command line), NO_UNSHARE=1,
# SIMFID_VENV (the venv to make and use; default .venv).

SHELL := /bin/bash
VENV := $(if $(SIMFID_VENV),$(SIMFID_VENV),$(CURDIR)/.venv)
PYTHON := $(VENV)/bin/python
PYTEST_ARGS ?=
# Test files run on this many pytest-xdist workers, a file per worker at a time (1: one process).
PYTEST_WORKERS ?= 2
DEMO_ARGS ?= bench truck --scenario B --modes hifi,hifi-sleep,adfi-1,adfi-3,adfi-3-sleep --duration 15 --repeats 1
NO_UNSHARE ?=
MUTATION_TARGETS ?=

# Network rule: DDS discovery stays on this machine, for every recipe.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
# rclpy.init fails without HOME.
HOME ?= /tmp
export HOME

.PHONY: all bootstrap interfaces test demo mutation clean distclean

all: test

bootstrap:
	@bash tools/bootstrap.sh

interfaces:
	@SIMFID_REBUILD_INTERFACES=1 bash tools/bootstrap.sh

# pytest exit code 5 means "no tests collected": not a failure here.
# The namespace probe also brings loopback up, without which DDS cannot talk at all.
test: bootstrap
	@set +e; \
	run=(); \
	if [ "$(NO_UNSHARE)" != 1 ]; then \
	  for u in "unshare -n" "unshare -rn"; do \
	    if $$u sh -c 'ip link set lo up' >/dev/null 2>&1; then run=($$u sh -c 'ip link set lo up && exec "$$@"' sh); break; fi; \
	  done; \
	fi; \
	if [ $${#run[@]} -gt 0 ]; then \
	  echo "[test] inside a network namespace with loopback only ($${run[0]} $${run[1]})"; \
	else \
	  echo "[test] no network namespace (unshare -n unavailable or NO_UNSHARE=1); relying on ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"; \
	fi; \
	workers=(); \
	if [ "$(PYTEST_WORKERS)" -gt 1 ]; then workers=(-n "$(PYTEST_WORKERS)" --dist loadfile --no-loadscope-reorder); fi; \
	cd sim_fidelity && "$${run[@]}" "$(PYTHON)" -m pytest test "$${workers[@]}" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "[test] pytest collected no tests"; rc=0; fi; \
	exit $$rc

mutation: bootstrap
	"$(PYTHON)" tools/mutation.py $(MUTATION_TARGETS)

demo: bootstrap
	"$(VENV)/bin/simfid" $(DEMO_ARGS)

clean:
	rm -rf build log install .pytest_cache sim_fidelity/.pytest_cache sim_fidelity/*.egg-info
	find . -path ./.venv -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf "$(VENV)"
