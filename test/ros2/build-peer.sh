#!/usr/bin/env bash
# Builds what the test/ros2 tests need on top of ROS 2 Humble ($ROS2_PREFIX,
# default /opt/ros2-humble):
#   - the interface packages msgs/rsm_msgs, msgs/velma_msgs and msgs/fsm_msgs (colcon,
#     rosidl: C, C++ and Python), so that the ros2 CLI and rclcpp know them;
#   - the rclcpp peer test/ros2/peer (plain CMake).
# into CACHE/<hash>, where the hash covers their sources, this script and the
# ROS 2 build's stamp: an unchanged tree is reused in no time. Concurrent runs
# wait for each other (flock). Prints the directory on its last line; its
# install/setup.bash is the overlay and bin/ros2_peer the peer.
#
#   build-peer.sh CACHE
set -euo pipefail
cache=${1:?usage: build-peer.sh CACHE}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prefix=${ROS2_PREFIX:-/opt/ros2-humble}
[ -f "$prefix/env.sh" ] || { echo "build-peer: no ROS 2 in $prefix" >&2; exit 1; }

cd "$repo"
hash=$( {
  find msgs/rsm_msgs msgs/velma_msgs msgs/fsm_msgs test/ros2/peer -type f ! -name '*.go' | LC_ALL=C sort | xargs sha256sum
  sha256sum test/ros2/build-peer.sh
  ls "$prefix"/.built-* 2>/dev/null || true
} | sha256sum | cut -c1-16)
dir=$cache/$hash
if [ -f "$dir/ready" ]; then touch "$dir"; echo "$dir"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
if [ -f "$dir/ready" ]; then touch "$dir"; echo "$dir"; exit 0; fi
rm -rf "$dir"
mkdir -p "$dir"
start=$(date +%s)
(
  set +u
  . "$prefix/env.sh"
  set -u
  cd "$dir"
  colcon --log-base "$dir/log" build --merge-install \
    --base-paths "$repo/msgs/rsm_msgs" "$repo/msgs/velma_msgs" "$repo/msgs/fsm_msgs" \
    --build-base "$dir/build" --install-base "$dir/install" --parallel-workers 2 \
    --event-handlers console_cohesion+ console_stderr- \
    --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE=/usr/bin/python3 -DPYTHON_EXECUTABLE=/usr/bin/python3 >"$dir/colcon.log" 2>&1 ||
    { tail -60 "$dir/colcon.log" >&2; echo "build-peer: colcon build of rsm_msgs/velma_msgs/fsm_msgs failed" >&2; exit 1; }
  { cmake -S "$repo/test/ros2/peer" -B "$dir/peer-build" -DCMAKE_BUILD_TYPE=Debug >"$dir/peer.log" 2>&1 &&
    cmake --build "$dir/peer-build" -j2 >>"$dir/peer.log" 2>&1; } ||
    { tail -60 "$dir/peer.log" >&2; echo "build-peer: building test/ros2/peer failed" >&2; exit 1; }
  mkdir -p "$dir/bin" && cp "$dir/peer-build/ros2_peer" "$dir/bin/"
) || { rm -rf "$dir"; exit 1; }
rm -rf "$dir/build" "$dir/peer-build"
touch "$dir/ready"
echo "build-peer: built in $(( $(date +%s) - start )) s" >&2
# Drop builds of other trees not used for two days.
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" -mtime +2 -exec rm -rf {} + 2>/dev/null || true
echo "$dir"
