"""An ensemble of models over ROS: sim_server, the model conductor, and a model_node for every
remote model of the ensemble YAML that names the class it hosts.

    ros2 launch sim_fidelity conductor.launch.py config:=<ensemble.yaml> world:=<sdf>
    ros2 service call /model_conductor/start sim_fidelity_interfaces/srv/StartEnsemble \\
        "{source: 2, bag: <recording>}"

``autostart:=true`` starts the run at once on the live topics /joint_states and /action_sequence;
a recording is played back by a ``~/start`` call as above. Each run's log bag is written to the
working directory (``conductor_<date>_<time>.mcap``) unless the start request names one.
``sim_server:=false`` leaves the simulator to someone else (Gazebo, or a sim_server of your own).
When the conductor exits, the launch stops.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, SetEnvironmentVariable, Shutdown
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from sim_fidelity.model_conductor.ros.launch_plan import model_node_actions

BOOL = ["true", "false"]


def generate_launch_description():
    share = get_package_share_directory("sim_fidelity")
    return LaunchDescription([
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE",
                               os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")),
        DeclareLaunchArgument("config", description="ensemble YAML", default_value=os.path.join(
            share, "config", "conductor", "ros_handover.yaml")),
        DeclareLaunchArgument("world", description="SDF world of sim_server",
                              default_value=os.path.join(share, "worlds", "drop_test.sdf")),
        DeclareLaunchArgument("sim_server", default_value="true", choices=BOOL,
                              description="start the embedded simulator"),
        DeclareLaunchArgument("autostart", default_value="false", choices=BOOL,
                              description="start a live run without a ~/start call"),
        Node(package="sim_fidelity", executable="sim_server", name="sim_server", output="screen",
             condition=IfCondition(LaunchConfiguration("sim_server")),
             parameters=[os.path.join(share, "config", "sim_server.yaml"),
                         {"world": LaunchConfiguration("world"), "paused": True}]),
        OpaqueFunction(function=model_node_actions),
        Node(package="sim_fidelity", executable="model_conductor", name="model_conductor",
             output="screen", on_exit=Shutdown(reason="model_conductor exited"),
             parameters=[{"config": LaunchConfiguration("config"),
                          "autostart": LaunchConfiguration("autostart")}]),
    ])
