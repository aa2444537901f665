"""Start the embedded simulator (sim_server) on a world:

    ros2 launch sim_fidelity sim_server.launch.py world:=<sdf> real_time_factor:=0
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, SetEnvironmentVariable
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

BOOL = ["true", "false"]


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
        Node(
            package="sim_fidelity",
            executable="sim_server",
            name="sim_server",
            output="screen",
            parameters=[os.path.join(share, "config", "sim_server.yaml"), {
                "world": LaunchConfiguration("world"),
                "real_time_factor": LaunchConfiguration("real_time_factor"),
                "paused": LaunchConfiguration("paused"),
            }],
        ),
    ])
