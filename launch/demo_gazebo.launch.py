"""The fsmnodes demo with Gazebo (gz sim) for the wheeled robot.

Runs rsm_gazebo.launch.py (gz sim with worlds/fsmnodes_flat.sdf, the bridge,
slam_toolbox and RSM) for the wheeled robot in the root namespace (the
bridge's topics are absolute, see params/gz_bridge.yaml), and the hexapod
and Velma in their own namespaces as in demo.launch.xml. The hexapod and
Velma simulate their own hardware, so they need no Gazebo model.

enable_stamped_cmd_vel:=true switches every velocity topic (the bridge's
/cmd_vel included) to geometry_msgs/TwistStamped, as demo.launch.xml does.

Usage: ros2 launch fsmnodes demo_gazebo.launch.py [gui:=false] [enable_stamped_cmd_vel:=true]
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
    rsm_gazebo = os.path.join(share, 'launch', 'rsm_gazebo.launch.py')
    hexapod = os.path.join(share, 'launch', 'hexapod.launch.xml')
    velma = os.path.join(share, 'launch', 'velma.launch.xml')

    stamped = LaunchConfiguration('enable_stamped_cmd_vel')

    return LaunchDescription([
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('enable_stamped_cmd_vel', default_value='false',
                              description='geometry_msgs/TwistStamped on every velocity topic (Jazzy)'),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(rsm_gazebo),
                                 launch_arguments={'gui': LaunchConfiguration('gui'),
                                                   'enable_stamped_cmd_vel': stamped}.items()),
        GroupAction([PushRosNamespace('hexapod'), IncludeLaunchDescription(
            AnyLaunchDescriptionSource(hexapod), launch_arguments={'enable_stamped_cmd_vel': stamped}.items())]),
        GroupAction([PushRosNamespace('velma'), IncludeLaunchDescription(AnyLaunchDescriptionSource(velma))]),
    ])
