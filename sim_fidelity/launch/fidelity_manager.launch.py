"""A world on the embedded simulator with the fidelity manager:

    ros2 launch sim_fidelity fidelity_manager.launch.py world:=<sdf> config:=<yaml> preset:=adfi-2

``preset`` is one of the config's presets (the manager checks it at start and names the known
ones); when the manager exits, the launch stops. Against Gazebo instead, set ``sim_server:=false``
and start gz-sim with the ros_gz_sim server so that the simulation_interfaces services exist; the
manager then lowers fidelity through the static-copy fallback (give ``world`` the same SDF).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, SetEnvironmentVariable, Shutdown
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

BOOL = ["true", "false"]


def generate_launch_description():
    share = get_package_share_directory("sim_fidelity")
    world = LaunchConfiguration("world")
    return LaunchDescription([
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE",
                               os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        DeclareLaunchArgument("world",
                              default_value=os.path.join(share, "worlds", "stack_test.sdf")),
        DeclareLaunchArgument("config",
                              default_value=os.path.join(share, "config", "stack_test.yaml")),
        DeclareLaunchArgument("preset", default_value="adfi-2",
                              description="one of the config's presets (stack_test.yaml: hifi, "
                                          "adfi-1, adfi-2, adfi-3)"),
        DeclareLaunchArgument("rate", default_value="20.0", description="ticks per sim second"),
        DeclareLaunchArgument("real_time_factor", default_value="1.0"),
        DeclareLaunchArgument("sim_server", default_value="true", choices=BOOL,
                              description="start the embedded simulator (false: Gazebo serves)"),
        Node(package="sim_fidelity", executable="sim_server", name="sim_server", output="screen",
             condition=IfCondition(LaunchConfiguration("sim_server")),
             parameters=[os.path.join(share, "config", "sim_server.yaml"),
                         {"world": world,
                          "real_time_factor": LaunchConfiguration("real_time_factor")}]),
        Node(package="sim_fidelity", executable="fidelity_manager", name="fidelity_manager",
             output="screen", on_exit=Shutdown(reason="fidelity_manager exited"),
             parameters=[{"config": LaunchConfiguration("config"),
                          "preset": LaunchConfiguration("preset"),
                          "rate": LaunchConfiguration("rate"),
                          "world_file": world,
                          "use_sim_time": True}]),
    ])
