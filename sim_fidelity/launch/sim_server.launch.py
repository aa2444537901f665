"""Start a simulator on a world: the embedded one (sim_server), gz-sim or Gazebo classic:

    ros2 launch sim_fidelity sim_server.launch.py world:=<sdf> real_time_factor:=0
    ros2 launch sim_fidelity sim_server.launch.py backend:=embedded interfaces:=gazebo_msgs
    ros2 launch sim_fidelity sim_server.launch.py backend:=gz world:=<sdf>       # ros_gz_sim
    ros2 launch sim_fidelity sim_server.launch.py backend:=classic world:=<world>  # gazebo_ros

``interfaces`` (embedded only): simulation_interfaces as gz-sim serves them, gazebo_msgs as Gazebo
classic's gazebo_ros plugins serve them (at the root, as Humble's plugins do). Both at once need
sim_server's ``gazebo_namespace`` parameter (five names are in both interfaces):
``ros2 run sim_fidelity sim_server --ros-args -p world:=<sdf> -p interfaces:=both -p
gazebo_namespace:=/gazebo``. See docs/gazebo_classic.md for the packages each backend needs.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, SetEnvironmentVariable
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from sim_fidelity.simulator.ros.classic.launch_actions import (
    gazebo_servers,
    is_backend,
)

BACKENDS = ["embedded", "gz", "classic"]
BOOL = ["true", "false"]
INTERFACES = ["simulation_interfaces", "gazebo_msgs"]  # both needs gazebo_namespace (docstring)


def generate_launch_description():
    share = get_package_share_directory("sim_fidelity")
    return LaunchDescription([
        # DDS discovery stays on this machine unless the user decides otherwise.
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE",
                               os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        DeclareLaunchArgument("world", description="SDF world file", default_value=os.path.join(
            share, "worlds", "revolute_joint_test.sdf")),
        DeclareLaunchArgument("real_time_factor", default_value="1.0",
                              description="target real-time factor; 0 = as fast as possible"),
        DeclareLaunchArgument("paused", default_value="false", choices=BOOL,
                              description="start paused"),
        DeclareLaunchArgument("backend", default_value="embedded", choices=BACKENDS,
                              description="embedded: sim_server; gz: gz-sim (ros_gz_sim); "
                                          "classic: Gazebo 11 (gazebo_ros)"),
        DeclareLaunchArgument("interfaces", default_value="simulation_interfaces",
                              choices=INTERFACES, description="what sim_server serves"),
        *gazebo_servers(LaunchConfiguration("world")),
        Node(
            package="sim_fidelity",
            executable="sim_server",
            name="sim_server",
            output="screen",
            condition=is_backend("embedded"),
            parameters=[os.path.join(share, "config", "sim_server.yaml"), {
                "world": LaunchConfiguration("world"),
                "real_time_factor": LaunchConfiguration("real_time_factor"),
                "paused": LaunchConfiguration("paused"),
                "interfaces": LaunchConfiguration("interfaces"),
            }],
        ),
    ])
