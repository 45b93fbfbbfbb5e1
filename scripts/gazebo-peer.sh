#!/usr/bin/env bash
# Builds a real Gazebo Fortress (the Gazebo ROS 2 Humble pairs with) and the
# ROS side of ros_gz (ros_gz_bridge, ros_gz_sim, ros_gz_interfaces) into
# /opt/gz-fortress, on top of the Humble peer that scripts/ros2-peer.sh builds
# into /opt/ros2-humble. test/gazebo runs its real-Gazebo tests when this
# build is present and skips them loudly when it is not.
#
#   gazebo-peer.sh            build (or skip in a second when already built)
#   . /opt/gz-fortress/env.sh then `ign gazebo`, `ros2 run ros_gz_bridge ...`
#
# Sources: fortress-src.tar.xz in the shared/gazebo folder next to the
# repository (or $FSMNODES_GAZEBO_SRC): ignition-rendering6, -sensors6,
# -gui6, -gazebo6 and ros_gz 0.244.10, the releases that build against
# Debian 12's own ignition libraries. The rest comes from Debian packages.
#
# About 75 minutes on two idle cores, 1.5-2.5 hours on a busy one, so CI
# never starts it (a fresh machine could not fit it into CI's time); run it
# by hand or with `make gazebo-peer`, niced, beside other work. Each step
# keeps a stamp, so an interrupted build resumes where it stopped. Logs go
# to /opt/gz-fortress/build-*.log.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${GZ_PREFIX:-/opt/gz-fortress}
ROS=${ROS2_HUMBLE_PREFIX:-/opt/ros2-humble}

src=${FSMNODES_GAZEBO_SRC:-}
if [ -z "$src" ]; then
  d=$repo
  while [ "$d" != / ]; do
    d=$(dirname "$d")
    if [ -f "$d/shared/gazebo/fortress-src.tar.xz" ]; then src=$d/shared/gazebo; break; fi
  done
fi
if [ -z "$src" ] || [ ! -f "$src/fortress-src.tar.xz" ]; then
  echo "gazebo-peer: Gazebo Fortress sources not found (shared/gazebo/fortress-src.tar.xz in a parent folder of $repo, or \$FSMNODES_GAZEBO_SRC)" >&2
  exit 1
fi
if [ ! -f "$ROS/env.sh" ]; then
  echo "gazebo-peer: the ROS 2 Humble peer is missing ($ROS/env.sh); build it first: scripts/ros2-peer.sh humble" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "gazebo-peer: installs Debian packages and writes $PREFIX: run it as root" >&2
  exit 1
fi

snap=$src/fortress-src.tar.xz
# The build's stamp: the snapshot, its patches and the recipe's revision.
# Bump recipe when a change below needs a rebuild; the fix-ups (fixups())
# run on every call and never need one, so editing them keeps the build.
recipe=1
key=$( { cat "$snap" "$src"/patches/*; echo "recipe $recipe"; } | sha256sum | cut -c1-16)
STAMP=$PREFIX/.built-$key

# Fix-ups of Debian's packages and the environment script: cheap and
# idempotent, so they run on every call, on an existing build too.
fixups() {
  # OGRE 1.12 keeps the stencil-shadow programs in its Media/ShadowVolume
  # folder, which ignition-rendering6 (written for OGRE 1.9, where they were
  # built in) never adds: Gazebo aborted on the first rendering sensor
  # ("Ogre/ShadowExtrudePointLight not found"). Link them into the engine's
  # own programs folder, which it does add.
  local d=$PREFIX/install/share/ignition/ignition-rendering6/ogre/media/materials/programs
  if [ -d "$d" ] && [ -d /usr/share/OGRE/Media/ShadowVolume ]; then
    for f in /usr/share/OGRE/Media/ShadowVolume/*; do ln -sf "$f" "$d/$(basename "$f")"; done
  fi
  # The engine's gpu_lidar takes its matrices from OpenGL's fixed-function
  # state, which OGRE 1.12 no longer fills while a shader is bound: /scan
  # was 0 for every beam but one. gazebo-gpu-rays.py says how it mends the
  # installed shaders.
  if [ -d "$d" ]; then python3 "$repo/scripts/gazebo-gpu-rays.py" "$(dirname "$(dirname "$d")")"; fi
  # The engine's real-time shader system generates GLSL that calls OGRE's
  # own shader library, but the engine ships the library of OGRE 1.9
  # (rtshaderlib150): with OGRE 1.12 the first camera aborted Gazebo ("no
  # matching function for call to FFP_Transform(mat3, vec3, vec3)", "gpu
  # program could not be created"). Point that folder at OGRE 1.12's own
  # library; the shipped one is kept beside it.
  local rtss=$PREFIX/install/share/ignition/ignition-rendering6/ogre/media/rtshaderlib150
  if [ -d /usr/share/OGRE/Media/RTShaderLib/GLSL ] && [ -d "$rtss" ] && [ ! -L "$rtss" ]; then
    rm -rf "$rtss-ogre1.9" && mv "$rtss" "$rtss-ogre1.9" && ln -s /usr/share/OGRE/Media/RTShaderLib/GLSL "$rtss"
  fi
  # Debian 12's ignition-transport-cli installs ign-transport-service and
  # -topic in /usr/libexec/ignition/transport11, but its cmdtransport11.rb
  # runs them from /usr/lib/x86_64-linux-gnu/ignition/transport11, so
  # `ign service` and `ign topic` end with ENOENT (exit status 1). A copy of
  # the Ruby file naming the real folder, with its own transport11.yaml in a
  # folder env.sh lists after /usr/share/ignition (for one library version
  # ign keeps the last file it reads), mends both without touching /usr.
  local rb=/usr/lib/ruby/ignition/cmdtransport11.rb exe=/usr/libexec/ignition/transport11
  local cli=$PREFIX/install/share/ignition-cli
  if [ -f "$rb" ] && [ -x "$exe/ign-transport-service" ] && grep -q 'lib/x86_64-linux-gnu/ignition/transport11/' "$rb"; then
    mkdir -p "$cli"
    sed "s|\"[./]*lib/x86_64-linux-gnu/ignition/transport11/|\"$exe/|" "$rb" >"$cli/cmdtransport11.rb"
    sed "s|^library_path:.*|library_path: $cli/cmdtransport11|" /usr/share/ignition/transport11.yaml >"$cli/transport11.yaml"
  fi
  [ -d "$PREFIX/install" ] || return 0
  cat >"$PREFIX/env.sh" <<ENV
# source me: Gazebo Fortress and ros_gz from $PREFIX over ROS 2 Humble ($ROS)
. "$ROS/env.sh"
. "$PREFIX/install/local_setup.bash"
export PATH=$PREFIX/install/bin:\$PATH
export LD_LIBRARY_PATH=$PREFIX/install/lib:\${LD_LIBRARY_PATH:-}
export IGN_CONFIG_PATH=$PREFIX/install/share/ignition:/usr/share/ignition:$cli\${IGN_CONFIG_PATH:+:\$IGN_CONFIG_PATH}
export GZ_VERSION=fortress
ENV
}
if [ -f "$STAMP" ]; then fixups; echo "gazebo-peer: Gazebo Fortress already built in $PREFIX"; exit 0; fi

pkgs="build-essential cmake pkg-config python3-empy
  libignition-cmake-dev libignition-common-dev libignition-math-dev libignition-plugin-dev
  libignition-msgs-dev libignition-transport-dev libignition-physics-dev
  libignition-physics-heightmap-dev libignition-fuel-tools-dev libignition-utils-dev ignition-transport-cli ignition-common-cli
  libsdformat-dev ignition-tools libogre-1.12-dev libfreeimage-dev libgl-dev
  qtbase5-dev qtdeclarative5-dev qtquickcontrols2-5-dev libqt5core5a
  qml-module-qtquick2 qml-module-qtquick-controls qml-module-qtquick-controls2
  qml-module-qtquick-dialogs qml-module-qtquick-layouts qml-module-qtquick-window2
  qml-module-qt-labs-folderlistmodel qml-module-qt-labs-settings qml-module-qtgraphicaleffects
  libtinyxml2-dev libprotobuf-dev protobuf-compiler libyaml-cpp-dev libgflags-dev
  xvfb xauth libgl1-mesa-dri"
missing=""; for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "gazebo-peer: installing$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# A new snapshot starts from scratch; the same one resumes. The edits below
# are idempotent and run every time.
srckey=$(cat "$snap" | sha256sum | cut -c1-16)
if [ ! -f "$PREFIX/.src-$srckey" ]; then
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
  tar -xJf "$snap" -C "$PREFIX"
  touch "$PREFIX/.src-$srckey"
fi
(
  python3 "$src/patches/ros_gz_bridge_msgs82.py" "$PREFIX/src/ros_gz/ros_gz_bridge" >/dev/null
  # Humble's snapshot has no class_loader, so no rclcpp_components: build the
  # bridge's library and its parameter_bridge without the composable node.
  b=$PREFIX/src/ros_gz/ros_gz_bridge
  sed -i -e '/find_package(rclcpp_components REQUIRED)/d' -e '/^  rclcpp_components$/d' \
    -e '/^rclcpp_components_register_node(/,/EXECUTABLE bridge_node)/d' "$b/CMakeLists.txt"
  sed -i -e '/rclcpp_components/d' -e '/RCLCPP_COMPONENTS_REGISTER_NODE/d' "$b/src/ros_gz_bridge.cpp"
  sed -i -e '/<depend>rclcpp_components<\/depend>/d' "$b/package.xml"
  # The snapshot leaves out tutorials/ and examples/, which the CMake files
  # still name: give them empty folders, and sim6 no examples subdirectory.
  for lib in gz-rendering6 gz-sensors6 gz-gui6 gz-sim6; do
    mkdir -p "$PREFIX/src/$lib/tutorials/img" "$PREFIX/src/$lib/tutorials/images" "$PREFIX/src/$lib/tutorials/files"
  done
  sed -i '/^add_subdirectory(examples)/d' "$PREFIX/src/gz-sim6/CMakeLists.txt"
  # Only the systems this project's worlds and robots load (and a few
  # common ones), and of sim6's GUI plugins the scene view: the other 45
  # systems and 22 GUI plugins would double the longest build. Lines are
  # commented out, so the edit can run again.
  keep="diff_drive imu contact joint_position_controller joint_state_publisher odometry_publisher physics pose_publisher scene_broadcaster sensors user_commands"
  keepgui="modules scene_manager"
  for d in $(sed -n 's/^add_subdirectory(\([a-z0-9_]*\))$/\1/p' "$PREFIX/src/gz-sim6/src/systems/CMakeLists.txt"); do
    case " $keep " in *" $d "*) ;; *) sed -i "s/^add_subdirectory($d)\$/# not built by gazebo-peer.sh: &/" "$PREFIX/src/gz-sim6/src/systems/CMakeLists.txt" ;; esac
  done
  for d in $(sed -n 's/^add_subdirectory(\([a-z0-9_]*\))$/\1/p' "$PREFIX/src/gz-sim6/src/gui/plugins/CMakeLists.txt"); do
    case " $keepgui " in *" $d "*) ;; *) sed -i "s/^add_subdirectory($d)\$/# not built by gazebo-peer.sh: &/" "$PREFIX/src/gz-sim6/src/gui/plugins/CMakeLists.txt" ;; esac
  done
  # Debian's ignition-tools ships `ign` without its pkg-config file, which
  # sim6 asks for only to point its tests at `ign` (not built here).
  sed -i '/^ign_find_package(ignition-tools$/,/PKGCONFIG "ignition-tools")/d' "$PREFIX/src/gz-sim6/CMakeLists.txt"
  # Only what we use: the bridge, the spawner, their interfaces.
  for p in ros_gz ros_gz_image ros_gz_point_cloud ros_gz_sim_demos ros_ign ros_ign_bridge \
           ros_ign_gazebo ros_ign_gazebo_demos ros_ign_image ros_ign_interfaces; do
    touch "$PREFIX/src/ros_gz/$p/COLCON_IGNORE"
  done
)

log=$PREFIX/build-$(date +%Y%m%d-%H%M%S).log
echo "gazebo-peer: building Gazebo Fortress into $PREFIX (log: $log)"
start=$(date +%s)
export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH
unset PYTHONPATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH || true
export CMAKE_PREFIX_PATH=$PREFIX/install MAKEFLAGS=-j2
for lib in gz-rendering6 gz-sensors6 gz-gui6 gz-sim6; do
  [ -f "$PREFIX/.done-$lib" ] && continue
  extra=
  if [ "$lib" = gz-sim6 ]; then extra=-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=TRUE; fi
  t=$(date +%s)
  # These releases predate GCC 12, which no longer pulls <utility> (std::exchange)
  # and friends in through other headers.
  # From inside the build folder: rendering6 makes its engine's unversioned
  # symlink with a configure-time `cmake -E create_symlink` relative to the
  # working directory, and installs it from the build folder.
  mkdir -p "$PREFIX/build/$lib"
  ( cd "$PREFIX/build/$lib" &&
    cmake -S "$PREFIX/src/$lib" -B "$PREFIX/build/$lib" -DBUILD_TESTING=OFF \
      -DCMAKE_CXX_FLAGS="-include utility -include cstdint -include limits" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX/install" $extra &&
    cmake --build "$PREFIX/build/$lib" -j2 &&
    cmake --install "$PREFIX/build/$lib" ) >>"$log" 2>&1 ||
    { tail -40 "$log"; echo "gazebo-peer: $lib failed; log: $log" >&2; exit 1; }
  echo "gazebo-peer: $lib built in $(( $(date +%s) - t )) s"
  touch "$PREFIX/.done-$lib"
done

t=$(date +%s)
(
  set +u; . "$ROS/env.sh"; set -u
  export CMAKE_PREFIX_PATH=$PREFIX/install:${CMAKE_PREFIX_PATH:-} GZ_VERSION=fortress
  cd "$PREFIX"
  colcon --log-base "$PREFIX/log" build --merge-install --base-paths src/ros_gz src/yaml_cpp_vendor \
    --build-base "$PREFIX/build/colcon" --install-base "$PREFIX/install" --parallel-workers 2 \
    --event-handlers console_cohesion+ console_stderr- \
    --packages-up-to ros_gz_bridge ros_gz_sim ros_gz_interfaces \
    --cmake-args -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release \
      -DPython3_EXECUTABLE=/usr/bin/python3 -DPYTHON_EXECUTABLE=/usr/bin/python3
) >>"$log" 2>&1 || { tail -40 "$log"; echo "gazebo-peer: ros_gz failed; log: $log" >&2; exit 1; }
echo "gazebo-peer: ros_gz built in $(( $(date +%s) - t )) s"

fixups
rm -rf "$PREFIX/build"
touch "$STAMP"
echo "gazebo-peer: Gazebo Fortress built in $(( $(date +%s) - start )) s; use: . $PREFIX/env.sh"
