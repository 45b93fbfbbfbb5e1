#!/usr/bin/env bash
# Builds the real ROS 2 the test/ros2 tests drive against our nodes: ROS 2
# Humble (rclcpp, rclpy, the ros2 CLI, launch, rmw_cyclonedds_cpp) from the
# source snapshot in the shared/ros2 folder next to the repository, into
# $ROS2_PREFIX (default /opt/ros2-humble). The snapshot's build.sh keeps a
# stamp file, so a finished build of the same snapshot is skipped in a
# second; a missing or stale prefix is (re)built, about 15-20 minutes on two
# cores. Used by .ci/run and `make ros2-peer`.
#
# The snapshot is found at $FSMNODES_ROS2_SRC (the folder holding build.sh)
# or as shared/ros2 in the nearest parent folder of the repository (a CI
# clone has shared/ beside it; a git worktree further down finds it too).
# With CI=true a missing snapshot is an error; otherwise the script says so
# and exits 0, and test/ros2 skips (loudly) unless a prefix already exists.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${ROS2_PREFIX:-/opt/ros2-humble}

src=${FSMNODES_ROS2_SRC:-}
if [ -z "$src" ]; then
  d=$repo
  while [ "$d" != / ]; do
    d=$(dirname "$d")
    if [ -f "$d/shared/ros2/build.sh" ]; then src=$d/shared/ros2; break; fi
  done
fi
if [ -z "$src" ] || [ ! -f "$src/build.sh" ]; then
  msg="ROS 2 source snapshot not found (shared/ros2/build.sh in a parent folder of $repo, or \$FSMNODES_ROS2_SRC)"
  if [ "${CI:-}" = true ]; then
    echo "ros2-peer: ERROR: $msg; CI needs it to run test/ros2" >&2
    exit 1
  fi
  if [ -f "$prefix/env.sh" ]; then
    echo "ros2-peer: $msg; using the existing build in $prefix"
  else
    echo "ros2-peer: $msg; not building ROS 2 (test/ros2 will skip)"
  fi
  exit 0
fi

sudo=
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
start=$(date +%s)
# build.sh installs its Debian packages and writes to the prefix: root's job.
$sudo env ROS2_PREFIX="$prefix" bash "$src/build.sh" "$prefix"
echo "ros2-peer: ROS 2 Humble ready in $prefix ($(( $(date +%s) - start )) s)"
