"""The fsmnodes demo with Gazebo: the wheeled robot and the hexapod in one flat.

Starts Gazebo once (gazebo.launch.py), then rsm_gazebo.launch.py (the fsmbot
base with RSM, the navigator, the frontier detector and a map) in the root
namespace (the bridge's topics are absolute, see params/gz_bridge.yaml) and
hexapod_gazebo.launch.py in /hexapod, spawned in the room beyond the door
(x 5, y 5); Velma simulates its own hardware in /velma as in
demo.launch.xml.

gz_version picks Gazebo Fortress (Humble) or Harmonic (Jazzy), auto by
default; enable_stamped_cmd_vel:=true switches every velocity topic to
geometry_msgs/TwistStamped, as demo.launch.xml does.

Usage: ros2 launch fsmnodes demo_gazebo.launch.py [gz_version:=fortress|harmonic] [gui:=false]
       [mapping:=scan_mapper] [enable_stamped_cmd_vel:=true]
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import AnyLaunchDescriptionSource, PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import PushRosNamespace


def generate_launch_description():
    share = get_package_share_directory('fsmnodes')
    launch = lambda name: os.path.join(share, 'launch', name)  # noqa: E731
    version = LaunchConfiguration('gz_version')
    stamped = LaunchConfiguration('enable_stamped_cmd_vel')

    return LaunchDescription([
        DeclareLaunchArgument('gz_version', default_value='auto',
                              description='fortress (6, Humble), harmonic (8, Jazzy) or auto'),
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('mapping', default_value='auto',
                              description='slam_toolbox, scan_mapper or auto (slam_toolbox if installed)'),
        DeclareLaunchArgument('enable_stamped_cmd_vel', default_value='false',
                              description='geometry_msgs/TwistStamped on every velocity topic (Jazzy)'),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(launch('gazebo.launch.py')),
                                 launch_arguments={'gz_version': version,
                                                   'gui': LaunchConfiguration('gui')}.items()),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(launch('rsm_gazebo.launch.py')),
                                 launch_arguments={'gz_version': version, 'start_gazebo': 'false',
                                                   'mapping': LaunchConfiguration('mapping'),
                                                   'enable_stamped_cmd_vel': stamped}.items()),
        GroupAction([PushRosNamespace('hexapod'), IncludeLaunchDescription(
            PythonLaunchDescriptionSource(launch('hexapod_gazebo.launch.py')),
            launch_arguments={'gz_version': version, 'start_gazebo': 'false', 'x': '5.0', 'y': '5.0',
                              'enable_stamped_cmd_vel': stamped}.items())]),
        GroupAction([PushRosNamespace('velma'), IncludeLaunchDescription(AnyLaunchDescriptionSource(launch('velma.launch.xml')))]),
    ])
