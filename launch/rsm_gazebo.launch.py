"""Robot Statemachine on Gazebo (gz sim) instead of the built-in simulator.

Starts gz sim with worlds/fsmnodes_flat.sdf (the same building as the
built-in simulator, with the fsmbot base and its lidar), bridges the topics of
params/gz_bridge.yaml, publishes the robot's frames (base_footprint ->
base_link -> laser, the wheels) with robot_state_publisher and
urdf/diffbot.urdf, builds the map
with slam_toolbox, and starts the RSM nodes, the frontier detector and the
Nav2-compatible navigator of this package, all on simulated time.

Needs a ROS 2 install with ros_gz_sim, ros_gz_bridge and slam_toolbox, and RMW_IMPLEMENTATION=rmw_cyclonedds_cpp for service calls.
enable_stamped_cmd_vel:=true makes every velocity topic geometry_msgs/TwistStamped:
the navigator and the RSM mux publish it, and the bridge takes /cmd_vel as
TwistStamped (params/gz_bridge_stamped.yaml; ros_gz_bridge converts it to
gz.msgs.Twist).
Usage: ros2 launch fsmnodes rsm_gazebo.launch.py [gui:=false] [enable_stamped_cmd_vel:=true]
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, IncludeLaunchDescription
from launch.conditions import IfCondition, UnlessCondition
from launch.launch_description_sources import AnyLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def generate_launch_description():
    share = get_package_share_directory('fsmnodes')
    world = os.path.join(share, 'worlds', 'harmonic', 'fsmnodes_flat.sdf')
    bridge = os.path.join(share, 'params', 'gz_bridge.yaml')
    bridge_stamped = os.path.join(share, 'params', 'gz_bridge_stamped.yaml')
    with open(os.path.join(share, 'urdf', 'diffbot.urdf')) as f:
        description = f.read()
    sim_time = {'use_sim_time': True}
    gui = LaunchConfiguration('gui')
    stamped = LaunchConfiguration('enable_stamped_cmd_vel')
    bridge_config = PythonExpression(["'", bridge_stamped, "' if '", stamped, "'.lower() == 'true' else '", bridge, "'"])

    return LaunchDescription([
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('enable_stamped_cmd_vel', default_value='false',
                              description='geometry_msgs/TwistStamped on every velocity topic (Jazzy)'),
        ExecuteProcess(cmd=['gz', 'sim', '-r', world], output='screen', condition=IfCondition(gui)),
        ExecuteProcess(cmd=['gz', 'sim', '-r', '-s', world], output='screen', condition=UnlessCondition(gui)),
        Node(package='ros_gz_bridge', executable='parameter_bridge', name='gz_bridge',
             parameters=[{'config_file': bridge_config}, sim_time], output='screen'),
        Node(package='fsmnodes', executable='robot_state_publisher', name='robot_state_publisher',
             parameters=[sim_time, {'robot_description': description}], output='screen'),
        Node(package='slam_toolbox', executable='async_slam_toolbox_node', name='slam_toolbox',
             parameters=[sim_time, {'base_frame': 'base_footprint', 'odom_frame': 'odom',
                                    'map_frame': 'map', 'scan_topic': '/scan'}],
             output='screen'),
        Node(package='fsmnodes', executable='simple_navigator', name='navigator',
             parameters=[sim_time, {'use_ground_truth': False,
                                    'enable_stamped_cmd_vel': ParameterValue(stamped, value_type=bool)}],
             output='screen'),
        Node(package='fsmnodes', executable='frontier_detector', name='frontier_detector',
             parameters=[sim_time], output='screen'),
        IncludeLaunchDescription(
            AnyLaunchDescriptionSource(os.path.join(share, 'launch', 'rsm.launch.xml')),
            launch_arguments={'use_sim_time': 'true', 'waypoint_routines': "['Reversing']",
                              'enable_stamped_cmd_vel': stamped}.items()),
    ])
