#!/usr/bin/env bash
# Builds the repo with colcon (ament_cmake) into a temporary workspace and
# checks that the install tree holds what `ros2 launch fsmnodes …` needs:
# the executables under lib/fsmnodes/, the ament index marker, package.xml,
# launch files, parameters, URDFs and the Gazebo worlds and robots
# (worlds/<generation>/) under share/fsmnodes/.
#
#   check-colcon.sh [WORKSPACE]   with WORKSPACE, builds there and keeps it
#                                 (test/ros2 launches from it); else a
#                                 temporary one, removed afterwards
#
# Only the fsmnodes package is built: the interface packages msgs/rsm_msgs
# and msgs/velma_msgs (and msgs/fsm_msgs) need rosidl from a ROS 2 installation (test/ros2
# builds them against one).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v colcon >/dev/null; then
  if [ "${CI:-}" = true ]; then echo "colcon missing: .ci/run must install it" >&2; exit 1; fi
  echo "colcon not installed; skipping the colcon check (CI runs it)"; exit 0
fi
if [ -n "${1:-}" ]; then
  mkdir -p "$1"
  ws=$(cd "$1" && pwd)
else
  ws=$(mktemp -d)
  trap 'rm -rf "$ws"' EXIT
fi
# ament's CMake helpers import ament_package/catkin_pkg from Debian's python3,
# not from a pyenv python that may come first on PATH.
export PATH=/usr/bin:/usr/local/go/bin:$PATH
( cd "$ws" && colcon build --base-paths "$src" --packages-select fsmnodes \
    --build-base "$ws/build" --install-base "$ws/install" \
    --cmake-args -DPython3_EXECUTABLE=/usr/bin/python3 >"$ws/colcon.log" 2>&1 ) || {
  cat "$ws/colcon.log"; find "$ws/log" -name 'stdout_stderr.log' -exec tail -40 {} \; 2>/dev/null; exit 1; }
inst=$ws/install/fsmnodes
fail=0
need() { if [ ! -e "$1" ]; then echo "colcon install tree lacks ${1#$ws/}"; fail=1; fi; }
need "$inst/share/ament_index/resource_index/packages/fsmnodes"
need "$inst/share/fsmnodes/package.xml"
for d in "$src"/cmd/*/ "$src"/nodes/*/; do [ -d "$d" ] && need "$inst/lib/fsmnodes/$(basename "$d")"; done
for f in "$src"/launch/* "$src"/params/* "$src"/urdf/* "$src"/worlds/*/*; do [ -f "$f" ] && need "$inst/share/fsmnodes/${f#"$src"/}"; done
[ "$fail" = 0 ] || exit 1
echo "colcon build ok: $(ls "$inst/lib/fsmnodes" | wc -l) executables, $(ls "$inst/share/fsmnodes/launch" 2>/dev/null | wc -l) launch files"
