"""Robot Statemachine on Gazebo instead of the built-in simulator.

Starts Gazebo with the flat of the built-in simulator (gazebo.launch.py,
unless start_gazebo:=false), spawns the fsmbot base with its lidar
(worlds/<generation>/fsmbot.sdf) at the map origin (the navigator
takes /odom as the map pose, as on the built-in simulator), bridges its topics with
params/gz_bridge.yaml (/cmd_vel, /odom, /joint_states, /scan: the
built-in simulator's names and types; /odom is Gazebo's true pose of the
robot, not the drifting wheel odometry), publishes odom -> base_footprint
from /odom with odom_to_tf and the robot's frames
(base_footprint -> base_link -> laser, the wheels) with
robot_state_publisher and urdf/diffbot.urdf, builds the map, and starts
the RSM nodes, the frontier detector and the Nav2-compatible navigator of
this package, all on Gazebo's /clock (use_sim_time).

gz_version picks Gazebo Fortress (Humble) or Harmonic (Jazzy), auto by
default (fsmnodes_gazebo.py says how).

mapping picks what builds /map and map -> odom:
  slam_toolbox  slam_toolbox's async node (the choice for real robots,
                whose odometry drifts)
  scan_mapper   this package's occupancy mapper from /scan and /odom, with
                map -> odom fixed at identity: Gazebo's true odometry of a
                robot spawned at the map origin is the map pose
  auto          slam_toolbox when it is installed, else scan_mapper (the
                default)

enable_stamped_cmd_vel:=true makes every velocity topic
geometry_msgs/TwistStamped: the navigator and the RSM mux publish it, and
the bridge takes /cmd_vel as TwistStamped (params/gz_bridge_stamped.yaml;
ros_gz_bridge converts it to gz.msgs.Twist).

Needs ros_gz_sim and ros_gz_bridge (slam_toolbox optional), and
RMW_IMPLEMENTATION=rmw_cyclonedds_cpp for service calls.
Usage: ros2 launch fsmnodes rsm_gazebo.launch.py [gz_version:=fortress|harmonic] [gui:=false]
       [mapping:=scan_mapper] [enable_stamped_cmd_vel:=true] [start_gazebo:=false]
"""
import os
import sys

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction
from launch.launch_description_sources import AnyLaunchDescriptionSource, PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsmnodes_gazebo as gz  # noqa: E402  (next to this file, in share/fsmnodes/launch)

MAPPINGS = ('auto', 'slam_toolbox', 'scan_mapper')


def _installed(package):
    try:
        get_package_share_directory(package)
        return True
    except PackageNotFoundError:
        return False


def _robot(context):
    share = get_package_share_directory('fsmnodes')
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    gen = gz.generation(arg('gz_version'))
    stamped = gz.truthy(arg('enable_stamped_cmd_vel'))
    mapping = arg('mapping')
    if mapping not in MAPPINGS:
        raise ValueError(f'mapping:={mapping}: want one of {", ".join(MAPPINGS)}')
    if mapping == 'auto':
        mapping = 'slam_toolbox' if _installed('slam_toolbox') else 'scan_mapper'
    bridge = os.path.join(share, 'params', 'gz_bridge_stamped.yaml' if stamped else 'gz_bridge.yaml')
    with open(os.path.join(share, 'urdf', 'diffbot.urdf')) as f:
        description = f.read()
    sim_time = {'use_sim_time': True}

    actions = [LogInfo(msg=f'fsmbot in Gazebo {gen}, map from {mapping}')]
    if stamped and gen == 'fortress':
        actions.append(LogInfo(msg='enable_stamped_cmd_vel:=true bridges /cmd_vel as TwistStamped, which needs a '
                                   'ros_gz_bridge that maps it (Jazzy\'s; ros_gz 0.244.10 for Fortress does not)'))
    if gz.truthy(arg('start_gazebo')):
        actions.append(IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'gazebo.launch.py')),
            launch_arguments={'gz_version': gen, 'gui': arg('gui')}.items()))
    actions += [
        # Without -world the spawner waits (it asks for the worlds until
        # Gazebo answers) instead of giving up after 5 s while Gazebo starts.
        Node(package='ros_gz_sim', executable='create', name='spawn_fsmbot', output='screen',
             arguments=['-name', 'fsmbot',
                        '-file', gz.share_file(share, gen, 'fsmbot.sdf'),
                        '-x', '0', '-y', '0', '-z', '0.01']),
        Node(package='ros_gz_bridge', executable='parameter_bridge', name='gz_bridge',
             parameters=[{'config_file': bridge}, sim_time], output='screen'),
        # /odom is Gazebo's true pose of the robot (its OdometryPublisher;
        # the wheel odometry drifts), which Fortress publishes without a
        # transform: odom_to_tf puts odom -> base_footprint on /tf.
        Node(package='fsmnodes', executable='odom_to_tf', name='odom_to_tf',
             parameters=[sim_time], output='screen'),
        Node(package='fsmnodes', executable='robot_state_publisher', name='robot_state_publisher',
             parameters=[sim_time, {'robot_description': description}], output='screen'),
    ]
    if mapping == 'slam_toolbox':
        actions.append(Node(
            package='slam_toolbox', executable='async_slam_toolbox_node', name='slam_toolbox',
            parameters=[sim_time, {'base_frame': 'base_footprint', 'odom_frame': 'odom',
                                   'map_frame': 'map', 'scan_topic': '/scan'}],
            output='screen'))
    else:
        # Gazebo Fortress's gpu_lidar scans lag their stamps by some 40 ms
        # (measured driving at a wall): harmless driving, a smeared wall
        # turning in place at 1.5 rad/s, so scans taken turning faster than
        # 0.3 rad/s are left out.
        actions.append(Node(
            package='fsmnodes', executable='scan_mapper', name='scan_mapper',
            parameters=[sim_time, {'publish_map_to_odom': True, 'max_turn_rate': 0.3}], output='screen'))
    actions += [
        Node(package='fsmnodes', executable='simple_navigator', name='navigator',
             parameters=[sim_time, {'enable_stamped_cmd_vel': stamped}], output='screen'),
        Node(package='fsmnodes', executable='frontier_detector', name='frontier_detector',
             parameters=[sim_time], output='screen'),
        IncludeLaunchDescription(
            AnyLaunchDescriptionSource(os.path.join(share, 'launch', 'rsm.launch.xml')),
            launch_arguments={'use_sim_time': 'true', 'waypoint_routines': "['Reversing']",
                              'enable_stamped_cmd_vel': 'true' if stamped else 'false'}.items()),
    ]
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('gz_version', default_value='auto',
                              description='fortress (6, Humble), harmonic (8, Jazzy) or auto'),
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('start_gazebo', default_value='true',
                              description='start Gazebo (false: spawn into a running one)'),
        DeclareLaunchArgument('mapping', default_value='auto',
                              description='slam_toolbox, scan_mapper or auto (slam_toolbox if installed)'),
        DeclareLaunchArgument('enable_stamped_cmd_vel', default_value='false',
                              description='geometry_msgs/TwistStamped on every velocity topic (Jazzy)'),
        OpaqueFunction(function=_robot),
    ])
