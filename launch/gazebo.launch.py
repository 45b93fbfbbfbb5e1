"""Gazebo with the flat of the built-in simulator, and its clock for ROS.

Starts Gazebo (Fortress: `ign gazebo`, Harmonic: `gz sim`; launch argument
gz_version, see fsmnodes_gazebo.py) running (-r) the world
worlds/<generation>/fsmnodes_flat.sdf, with its window (gui:=true) or
as a server only (gui:=false, -s), and bridges Gazebo's /clock to the ROS
topic /clock, which every node with use_sim_time follows. The robots are
spawned into it by rsm_gazebo.launch.py and hexapod_gazebo.launch.py,
which include this file unless start_gazebo:=false.

Without a display the fsmbot's lidar (a gpu_lidar, rendered) needs one:
run under xvfb-run (Fortress's ogre engine needs an X server; it has no
CPU lidar).

Usage: ros2 launch fsmnodes gazebo.launch.py [gz_version:=auto|fortress|harmonic] [gui:=false] [world:=/path.sdf]
"""
import os
import sys

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsmnodes_gazebo as gz  # noqa: E402  (next to this file, in share/fsmnodes/launch)


def _gazebo(context):
    share = get_package_share_directory('fsmnodes')
    gen = gz.generation(LaunchConfiguration('gz_version').perform(context))
    world = LaunchConfiguration('world').perform(context) or gz.share_file(share, gen, gz.WORLD_NAME + '.sdf')
    cmd = gz.GENERATIONS[gen]['command'] + ['-r']
    if not gz.truthy(LaunchConfiguration('gui').perform(context)):
        cmd.append('-s')
    return [
        LogInfo(msg=f'Gazebo {gen}: {" ".join(cmd + [world])}'),
        ExecuteProcess(cmd=cmd + [world], output='screen', name='gazebo'),
        # Gazebo's simulated time for every node with use_sim_time.
        Node(package='ros_gz_bridge', executable='parameter_bridge', name='gz_clock_bridge',
             arguments=['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock'], output='screen'),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('gz_version', default_value='auto',
                              description='fortress (6, Humble), harmonic (8, Jazzy) or auto'),
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('world', default_value='',
                              description="an SDF world instead of the generation's fsmnodes_flat.sdf"),
        OpaqueFunction(function=_gazebo),
    ])
