"""Truck unloading as ROS nodes: the embedded simulator, the fidelity manager, the controller.

    ros2 launch sim_fidelity truck.launch.py scenario:=B preset:=adfi-3

``preset:=hifi`` runs the manager switched off (the baseline). When the manager or the controller
exits, the launch stops. ``backend:=gz`` (ros_gz_sim) or ``backend:=classic`` (gazebo_ros) starts
Gazebo's server on the scenario's world instead of sim_server; bridge the robot's topics
(``/model/unloader/joint/<joint>/cmd_pos``, ``/world/truck_<scenario>/model/unloader/joint_state``,
the suction and conveyor topics) under the same names.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, SetEnvironmentVariable, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from sim_fidelity.simulator.ros.classic.launch_actions import (
    gazebo_servers,
    is_backend,
    manager_sigterm_timeout,
)

BACKENDS = ["embedded", "gz", "classic"]
BOOL = ["true", "false"]
PRESETS = ["hifi", "adfi-1", "adfi-2", "adfi-3"]  # config/truck.yaml


def _nodes(context):
    share = get_package_share_directory("sim_fidelity")
    scenario = LaunchConfiguration("scenario").perform(context)
    world = os.path.join(share, "worlds", f"truck_{scenario}.sdf")
    return [
        *gazebo_servers(world),
        Node(package="sim_fidelity", executable="sim_server", name="sim_server", output="screen",
             condition=is_backend("embedded"),
             parameters=[os.path.join(share, "config", "sim_server.yaml"),
                         {"world": world,
                          "real_time_factor": LaunchConfiguration("real_time_factor"),
                          "sleep": LaunchConfiguration("sleep"),
                          "sleep_tolerance": 0.01}]),  # as load_truck (truck/robot.py)
        Node(package="sim_fidelity", executable="fidelity_manager", name="fidelity_manager",
             output="screen", on_exit=Shutdown(reason="fidelity_manager exited"),
             sigterm_timeout=manager_sigterm_timeout(),
             parameters=[{"config": os.path.join(share, "config", "truck.yaml"),
                          "preset": LaunchConfiguration("preset"), "rate": 50.0,
                          "world_file": world, "backend": LaunchConfiguration("backend"),
                          "use_sim_time": True}]),
        Node(package="sim_fidelity", executable="unloading_controller", name="unloading_controller",
             output="screen", on_exit=Shutdown(reason="unloading_controller exited"),
             parameters=[{"world": f"truck_{scenario}", "seed": LaunchConfiguration("seed"),
                          "decision_topic": "/fidelity_manager/decision",
                          "backend": LaunchConfiguration("backend"), "use_sim_time": True}]),
    ]


def generate_launch_description():
    return LaunchDescription([
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE",
                               os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        DeclareLaunchArgument("scenario", default_value="B", choices=["A", "B", "C"]),
        DeclareLaunchArgument("preset", default_value="adfi-3", choices=PRESETS,
                              description="config/truck.yaml's presets; hifi = manager off"),
        DeclareLaunchArgument("seed", default_value="0"),
        DeclareLaunchArgument("real_time_factor", default_value="0.0",
                              description="0: as fast as the machine allows"),
        DeclareLaunchArgument("sleep", default_value="true", choices=BOOL,
                              description="MuJoCo's sleeping islands (the adfi-3-sleep mode)"),
        DeclareLaunchArgument("backend", default_value="embedded", choices=BACKENDS,
                              description="embedded: sim_server; gz: gz-sim (ros_gz_sim); "
                                          "classic: Gazebo 11 (gazebo_ros)"),
        OpaqueFunction(function=_nodes),
    ])
