"""The Ackermann waypoint course (paper 001, section V): the embedded simulator on a field, the
mission software, optionally the kernel manager and a recorder.

    ros2 launch sim_fidelity ackermann_course.launch.py world:=deploy record:=true
    ros2 launch sim_fidelity ackermann_course.launch.py world:=design kernels:=kernels.yaml

``record:=true`` records the ``ugv`` preset's topics (config/recording/ugv.yaml) with
``simfid record`` in sim time to ``bag:=`` (default ``ugv_<world>_<date>_<time>`` in the working
directory); the launch's SIGINT stops it cleanly (it drains and closes the bag). ``kernels:=FILE``
starts the kernel manager with a kernels file of ``simfid kernels generate``. ``redesign:=true``
runs the redesigned mission software (the pitch check). The launch stops when the mission node
exits.
"""
import os
import time

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    OpaqueFunction,
    SetEnvironmentVariable,
    Shutdown,
)
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import ExecutableInPackage

BOOL = ["true", "false"]
WORLDS = ["design", "deploy"]  # ugv/course.py WORLD_FILES


def _nodes(context):
    share = get_package_share_directory("sim_fidelity")
    field = LaunchConfiguration("world").perform(context)
    world = os.path.join(share, "worlds", f"ackermann_{field}.sdf")
    kernels = LaunchConfiguration("kernels").perform(context)
    actions = [
        Node(package="sim_fidelity", executable="sim_server", name="sim_server", output="screen",
             parameters=[os.path.join(share, "config", "sim_server.yaml"),
                         {"world": world,
                          "real_time_factor": LaunchConfiguration("real_time_factor")}]),
        Node(package="sim_fidelity", executable="ugv_mission", name="ugv_mission",
             output="screen", on_exit=Shutdown(reason="ugv_mission exited"),
             parameters=[{"redesign": LaunchConfiguration("redesign"),
                          "seed": LaunchConfiguration("seed"), "use_sim_time": True}]),
    ]
    if kernels:
        actions.append(Node(package="sim_fidelity", executable="kernel_manager",
                            name="kernel_manager", output="screen",
                            parameters=[{"kernels": kernels, "use_sim_time": True}]))
    if LaunchConfiguration("record").perform(context) == "true":
        bag = LaunchConfiguration("bag").perform(context) or \
            f"ugv_{field}_{time.strftime('%Y%m%d_%H%M%S')}"
        actions.append(ExecuteProcess(
            cmd=[ExecutableInPackage("simfid", "sim_fidelity"), "record", "--preset", "ugv",
                 "-o", bag, "--use-sim-time"], output="screen", sigterm_timeout="10"))
    return actions


def generate_launch_description():
    return LaunchDescription([
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE",
                               os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        DeclareLaunchArgument("world", default_value="design", choices=WORLDS,
                              description="design field, or the deployment field (ramp, grass, "
                                          "uncalibrated actuation)"),
        DeclareLaunchArgument("kernels", default_value="",
                              description="kernels file: start the kernel manager with it"),
        DeclareLaunchArgument("record", default_value="false", choices=BOOL,
                              description="record the ugv preset's topics with simfid record"),
        DeclareLaunchArgument("bag", default_value="",
                              description="the bag to record (default ugv_<world>_<time>)"),
        DeclareLaunchArgument("redesign", default_value="false", choices=BOOL,
                              description="the redesigned mission software (pitch check)"),
        DeclareLaunchArgument("seed", default_value="0", description="mission noise seed"),
        DeclareLaunchArgument("real_time_factor", default_value="1.0",
                              description="0: as fast as the machine allows"),
        OpaqueFunction(function=_nodes),
    ])
