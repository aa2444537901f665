"""A world on the embedded simulator with the fidelity manager:

    ros2 launch sim_fidelity fidelity_manager.launch.py world:=<sdf> config:=<yaml> preset:=adfi-2

``preset`` is one of the config's presets (the manager checks it at start and names the known
ones); when the manager exits, the launch stops. ``backend:=gz`` starts gz-sim's server (ros_gz_sim)
on ``world`` instead of sim_server, ``backend:=classic`` Gazebo 11's gzserver (gazebo_ros); the
manager then lowers fidelity through the static-copy fallback (DYNAMICS, COLLISION; with classic
also GRAVITY), reading the models' SDF from ``world`` (docs/gazebo_classic.md).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, SetEnvironmentVariable, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from sim_fidelity.simulator.ros.classic.launch_actions import (
    gazebo_servers,
    is_backend,
    manager_sigterm_timeout,
)

BACKENDS = ["embedded", "gz", "classic"]


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
        DeclareLaunchArgument("backend", default_value="embedded", choices=BACKENDS,
                              description="embedded: sim_server; gz: gz-sim (ros_gz_sim); "
                                          "classic: Gazebo 11 (gazebo_ros)"),
        *gazebo_servers(world),
        Node(package="sim_fidelity", executable="sim_server", name="sim_server", output="screen",
             condition=is_backend("embedded"),
             parameters=[os.path.join(share, "config", "sim_server.yaml"),
                         {"world": world,
                          "real_time_factor": LaunchConfiguration("real_time_factor")}]),
        Node(package="sim_fidelity", executable="fidelity_manager", name="fidelity_manager",
             output="screen", on_exit=Shutdown(reason="fidelity_manager exited"),
             sigterm_timeout=manager_sigterm_timeout(),
             parameters=[{"config": LaunchConfiguration("config"),
                          "preset": LaunchConfiguration("preset"),
                          "rate": LaunchConfiguration("rate"),
                          "world_file": world,
                          "backend": LaunchConfiguration("backend"),
                          "use_sim_time": True}]),
    ])
