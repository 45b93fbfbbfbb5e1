#!/usr/bin/env bash
# Builds the real ROS 2 peers the test/ros2 tests drive against our nodes:
# ROS 2 Humble and ROS 2 Jazzy (rclcpp, rclcpp_lifecycle, rclpy, the ros2
# CLI with lifecycle, launch, tf2_ros_py, visualization, diagnostic and
# lifecycle messages, rmw_cyclonedds_cpp; Humble also sros2) from the source
# snapshots in the shared/ros2 folder next to the repository, into
# /opt/ros2-humble and /opt/ros2-jazzy. The snapshot's build.sh keeps a stamp
# file, so a finished build of the same snapshot is skipped in a second; a
# missing or stale prefix is (re)built: about 20 minutes (Humble) and 30
# minutes (Jazzy) on two cores. Used by .ci/run and `make ros2-peer`.
#
#   ros2-peer.sh [DISTRO...]    default: humble jazzy (or $ROS2_DISTROS)
#
# $ROS2_PREFIX, with a single distro, builds that one elsewhere.
#
# The snapshot is found at $FSMNODES_ROS2_SRC (the folder holding build.sh)
# or as shared/ros2 in the nearest parent folder of the repository (a CI
# clone has shared/ beside it; a git worktree further down finds it too).
# With CI=true a missing snapshot is an error; otherwise the script says so
# and exits 0, and test/ros2 skips (loudly) unless a prefix already exists.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -gt 0 ]; then distros=("$@"); else read -r -a distros <<<"${ROS2_DISTROS:-humble jazzy}"; fi
if [ -n "${ROS2_PREFIX:-}" ] && [ ${#distros[@]} -ne 1 ]; then
  echo "ros2-peer: ROS2_PREFIX names one prefix; name one distro with it" >&2
  exit 2
fi

src=${FSMNODES_ROS2_SRC:-}
if [ -z "$src" ]; then
  d=$repo
  while [ "$d" != / ]; do
    d=$(dirname "$d")
    if [ -f "$d/shared/ros2/build.sh" ]; then src=$d/shared/ros2; break; fi
  done
fi

sudo=
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
for distro in "${distros[@]}"; do
  case "$distro" in humble|jazzy) ;; *) echo "ros2-peer: unknown distro '$distro' (humble, jazzy)" >&2; exit 2 ;; esac
  prefix=${ROS2_PREFIX:-/opt/ros2-$distro}
  if [ -z "$src" ] || [ ! -f "$src/build.sh" ] || [ ! -f "$src/$distro-src.tar.xz" ]; then
    msg="ROS 2 $distro source snapshot not found (shared/ros2/build.sh and $distro-src.tar.xz in a parent folder of $repo, or \$FSMNODES_ROS2_SRC)"
    if [ "${CI:-}" = true ]; then
      echo "ros2-peer: ERROR: $msg; CI needs it to run test/ros2" >&2
      exit 1
    fi
    if [ -f "$prefix/env.sh" ]; then
      echo "ros2-peer: $msg; using the existing build in $prefix"
    else
      echo "ros2-peer: $msg; not building it (test/ros2 will skip it)"
    fi
    continue
  fi
  start=$(date +%s)
  # build.sh installs its Debian packages and writes to the prefix: root's job.
  $sudo env ROS2_DISTRO="$distro" bash "$src/build.sh" "$prefix"
  echo "ros2-peer: ROS 2 $distro ready in $prefix ($(( $(date +%s) - start )) s)"
done
