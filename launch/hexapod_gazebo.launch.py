"""The hexapod walking in Gazebo's physics.

Starts Gazebo with the flat (gazebo.launch.py, unless start_gazebo:=false),
spawns the hexapod of urdf/hexapod.urdf with its Gazebo systems
(worlds/<generation>/hexapod.urdf: a position controller per joint, the
joint states, the body's pose) at (x, y), bridges them with
params/gz_bridge_hexapod.yaml, and runs motion_control with
params/hexapod.yaml on the servo driver gazebo (servos/<joint>/command out,
servos/joint_states back) and robot_state_publisher, on Gazebo's /clock.
The body's pose in Gazebo's world comes out on gazebo/odom
(nav_msgs/Odometry, frame world).

Names are relative, as in hexapod.launch.xml: include this file in a
namespace (demo_gazebo.launch.py uses /hexapod) and everything but Gazebo's
model name moves with it. Drive it as the simulated hexapod: cmd_vel, the
services hexapod_controller/start_stop, stand_up, sit_down, stand_walk.

gz_version picks Gazebo Fortress (Humble) or Harmonic (Jazzy), auto by
default (fsmnodes_gazebo.py says how). Needs ros_gz_sim and ros_gz_bridge.
Usage: ros2 launch fsmnodes hexapod_gazebo.launch.py [gz_version:=fortress|harmonic] [gui:=false]
       [x:=0.0] [y:=2.5] [start_gazebo:=false] [enable_stamped_cmd_vel:=true]
"""
import os
import sys

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsmnodes_gazebo as gz  # noqa: E402  (next to this file, in share/fsmnodes/launch)


def _hexapod(context):
    share = get_package_share_directory('fsmnodes')
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    gen = gz.generation(arg('gz_version'))
    with open(os.path.join(share, 'urdf', 'hexapod.urdf')) as f:
        description = f.read()
    sim_time = {'use_sim_time': True}
    tf = [('/tf', 'tf'), ('/tf_static', 'tf_static')]
    actions = [LogInfo(msg=f'hexapod in Gazebo {gen} at ({arg("x")}, {arg("y")})')]
    if gz.truthy(arg('start_gazebo')):
        actions.append(IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'gazebo.launch.py')),
            launch_arguments={'gz_version': gen, 'gui': arg('gui')}.items()))
    return actions + [
        # Spawned lying on its belly with the legs stretched out (the
        # position controllers start at 0), as the real robot waits. Without
        # -world the spawner waits for Gazebo to answer instead of giving up
        # after 5 s.
        Node(package='ros_gz_sim', executable='create', name='spawn_hexapod', output='screen',
             arguments=['-name', 'hexapod',
                        '-file', gz.share_file(share, gen, 'hexapod.urdf'),
                        '-x', arg('x'), '-y', arg('y'), '-z', '0.04']),
        Node(package='ros_gz_bridge', executable='parameter_bridge', name='hexapod_gz_bridge',
             parameters=[{'config_file': os.path.join(share, 'params', 'gz_bridge_hexapod.yaml')}, sim_time],
             output='screen'),
        Node(package='fsmnodes', executable='motion_control', name='hexapod_controller', output='screen',
             parameters=[os.path.join(share, 'params', 'hexapod.yaml'), sim_time,
                         {'servo.driver': 'gazebo',
                          'enable_stamped_cmd_vel': gz.truthy(arg('enable_stamped_cmd_vel'))}],
             remappings=tf),
        Node(package='fsmnodes', executable='robot_state_publisher', name='robot_state_publisher',
             parameters=[sim_time, {'robot_description': description}], output='screen', remappings=tf),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('gz_version', default_value='auto',
                              description='fortress (6, Humble), harmonic (8, Jazzy) or auto'),
        DeclareLaunchArgument('gui', default_value='true', description='show the Gazebo window'),
        DeclareLaunchArgument('start_gazebo', default_value='true',
                              description='start Gazebo (false: spawn into a running one)'),
        DeclareLaunchArgument('x', default_value='0.0', description="spawn position in Gazebo's world, m"),
        DeclareLaunchArgument('y', default_value='2.5', description="spawn position in Gazebo's world, m"),
        DeclareLaunchArgument('enable_stamped_cmd_vel', default_value='false',
                              description='cmd_vel is geometry_msgs/TwistStamped (Jazzy)'),
        OpaqueFunction(function=_hexapod),
    ])
