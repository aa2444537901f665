"""The parameters of every node of this package, by executable name (``setup.py`` console scripts).

Declared by :func:`sim_fidelity.ros_node.declare_parameters`; read without rclpy by the launch-file
checks (test/test_cli_and_launch.py): every parameter a launch file passes must be here with a
compatible type. A double parameter takes integers too. A number states its range here (default:
any finite number); every node checks it at start (one line naming parameter, value and range,
exit code 2), so a new parameter only needs ``Param(default, description, above(0))``.
"""
from __future__ import annotations

from .ranges import above, at_least, between
from .ros_node import Param

SIM_SERVER = {
    "world": Param("", "SDF world file to load"),
    "real_time_factor": Param(1.0, "target real-time factor; 0 runs as fast as possible",
                              at_least(0)),
    "paused": Param(False, "start paused (step with /step_simulation or play with "
                           "/set_simulation_state)"),
    "step_size": Param(0.0, "physics step in seconds; 0 keeps the world's max_step_size",
                       at_least(0)),
    "publish_rate": Param(50.0, "rate of the state topics (odometry, sensor values) in Hz",
                          above(0)),
    "odometry": Param([""], "regexes of model names whose nav_msgs/Odometry is published",
                      regex=True),
    "sleep": Param(False, "turn on MuJoCo's sleeping islands"),
    "sleep_tolerance": Param(0.0, "velocity below which bodies fall asleep; 0 = MuJoCo's default",
                             at_least(0)),
    "solver_iterations": Param(0, "constraint solver iterations; 0 = MuJoCo's default (100)",
                               at_least(0)),
    "serve_levers": Param(True, "serve the fidelity-lever services; false = plain "
                                "simulation_interfaces, as Gazebo serves it"),
    "max_steps_per_request": Param(100_000_000, "most steps one StepSimulation request or "
                                                "SimulateSteps goal may ask for (served in "
                                                "chunks, cancellable)", between(1, 1e12)),
    "interfaces": Param("simulation_interfaces", "services to serve: simulation_interfaces "
                        "(gz-sim's ros_gz_sim), gazebo_msgs (Gazebo classic's gazebo_ros "
                        "plugins) or both",
                        choices=("simulation_interfaces", "gazebo_msgs", "both")),
    "gazebo_namespace": Param("", "namespace of the gazebo_msgs services and state topics; both "
                                  "interfaces at once need one (e.g. /gazebo)"),
    "viz_rate": Param(10.0, "rate (Hz) of /tf and ~/markers, published only while subscribed; "
                            "0 = never", at_least(0)),
    "tf_links": Param([""], "regexes of link names that get a /tf frame too (models always do)",
                      regex=True),
    "gui": Param(False, "open MuJoCo's viewer on the simulation (needs a display)"),
}

BACKEND = Param("auto", "the simulator's interface: embedded (sim_server) or gz "
                        "(simulation_interfaces), classic (gazebo_msgs), auto (found on the "
                        "graph)", choices=("auto", "embedded", "gz", "classic"))
GAZEBO_NAMESPACE = Param("", "namespace of Gazebo classic's gazebo_msgs services and state topics "
                             "(backend classic or auto), e.g. /gazebo; empty = the root")

FIDELITY_MANAGER = {
    "config": Param("", "fidelity YAML of the scene"),
    "preset": Param("", "preset name, one of the config's presets (hifi, adfi-1, adfi-2, adfi-3 "
                        "and its own); empty = the config's default_preset"),
    "rate": Param(20.0, "ticks per second of simulation time", above(0)),
    "server": Param("/sim_server", "node name of the simulator's lever services"),
    "world_file": Param("", "the world's SDF, needed only for the static-copy fallback (Gazebo)"),
    "backend": BACKEND,
    "gazebo_namespace": GAZEBO_NAMESPACE,
    "timeout": Param(10.0, "seconds to wait for a simulator answer", above(0)),
    "restore_budget": Param(2.5, "seconds for the whole restore at shutdown (launch sends SIGTERM "
                                 "after 5 s; a loaded machine may need more)", above(0)),
    "restore_per_static_copy": Param(1.0, "seconds added to restore_budget per tree "
                                          "where the simulator lowers by static copies (Gazebo): "
                                          "a delete and a spawn each; the launch files give "
                                          "backend gz and classic 120 s before SIGKILL",
                                     at_least(0)),
}

KERNEL_MANAGER = {
    "kernels": Param("", "kernels file (YAML) written by 'simfid kernels generate'"),
    "rate": Param(0.0, "ticks per second of simulation time; 0 = the spec's sampling rate",
                  at_least(0)),
    "server": Param("/sim_server", "node name of the simulator's sim_fidelity services"),
    "backend": BACKEND,
    "gazebo_namespace": GAZEBO_NAMESPACE,
    "timeout": Param(10.0, "seconds to wait for a simulator service", above(0)),
}

UNLOADING_CONTROLLER = {
    "world": Param("", "world name: joint states come on /world/<world>/model/<model>/joint_state"),
    "model": Param("unloader", "the robot's model name"),
    "packets": Param(r"packet_\d+", "regex of the packet model names", regex=True),
    "seed": Param(0, "controller seed (target jitter, dwell times)"),
    "action_topic": Param("/fidelity_manager/action", "where extend/retract are announced"),
    "announce": Param(False, "announce extend/retract on action_topic (the manager observes the "
                             "plunger command without them)"),
    "decision_topic": Param("/fidelity_manager/decision", "where each decision point is sent "
                                                          "(the settle, std_msgs/Float64); empty: "
                                                          "none"),
    "decision_settle": Param(0.1, "seconds of sim time between a decision point and the "
                                  "decision (the manager's all-HIGH refresh)", between(0, 10)),
    "backend": BACKEND,
    "gazebo_namespace": GAZEBO_NAMESPACE,
    "timeout": Param(10.0, "seconds to wait for a simulator answer", above(0)),
}

MODEL_CONDUCTOR = {
    "config": Param("", "ensemble YAML (models, initial responsibilities, evaluators, triggers)"),
    "log": Param("", "bag every run logs into (MCAP); empty = conductor_<date>_<time>.mcap in "
                     "the working directory; a start request may name another"),
    "joint_states": Param("/joint_states", "live data source: the robot's sensor_msgs/JointState"),
    "actions": Param("/action_sequence", "live data source: the robot's action annotations "
                                         "(sim_fidelity_interfaces/ActionAnnotation)"),
    "autostart": Param(False, "start at once, without a ~/start call: playing 'bag' if given, "
                              "else from the live topics"),
    "bag": Param("", "autostart: the recording to play back (MCAP file or rosbag2 folder)"),
    "duration": Param(0.0, "autostart: seconds of simulated time; 0 = until the data ends or "
                           "~/stop", at_least(0)),
    "timeout": Param(10.0, "seconds to wait for a remote model or simulator to answer",
                     above(0)),
}

MODEL_NODE = {
    "model": Param("", "the model class: an entry point of sim_fidelity.models or "
                       "package.module:Class"),
    "name": Param("", "the model's name in the ensemble; empty = the node's name"),
    "arguments": Param("", "keyword arguments of the class's constructor, a YAML mapping"),
}

UGV_MISSION = {
    "gps_topic": Param("/ugv/gps/fix", "sensor_msgs/NavSatFix of the vehicle's GPS (e.g. "
                                       "nmea_navsat_driver's /fix on the real vehicle)"),
    "imu_topic": Param("/ugv/imu", "sensor_msgs/Imu whose orientation gives the pitch"),
    "command_topic": Param("/model/ugv/cmd_ackermann",
                           "where ackermann_msgs/AckermannDriveStamped commands go"),
    "reward_topic": Param("~/reward", "the monitor's std_msgs/Float64 reward, every 2 s"),
    "instrumentation_topic": Param("~/instrumentation", "the monitor's sensor, control and "
                                   "reward signals (std_msgs/Float64MultiArray), every 2 s"),
    "rate": Param(10.0, "control ticks per second", above(0)),
    "origin_latitude": Param(41.3962, "latitude (deg) of the course's local origin",
                             between(-90, 90)),
    "origin_longitude": Param(-73.9530, "longitude (deg) of the course's local origin",
                              between(-180, 180)),
    "origin_altitude": Param(5.0, "altitude (m, WGS-84) of the course's local origin"),
    "spring": Param(0.5, "spring constant K (1/s) of v = K (waypoint - position)", above(0)),
    "saturation": Param(1.0, "the spring's saturation (m/s)", above(0)),
    "redesign": Param(False, "the section VI pitch check: above pitch_threshold use "
                             "climb_spring and climb_saturation"),
    "pitch_threshold": Param(0.1, "|pitch| (rad) above which the redesign climbs", above(0)),
    "climb_spring": Param(1.0, "spring constant (1/s) above the pitch threshold", above(0)),
    "climb_saturation": Param(2.0, "saturation (m/s) above the pitch threshold", above(0)),
    "seed": Param(0, "seed of the steering and speed noise", at_least(0)),
    "wall_clock": Param(False, "tick on the wall clock (the real vehicle) instead of /clock"),
}

BY_EXECUTABLE = {
    "sim_server": SIM_SERVER,
    "fidelity_manager": FIDELITY_MANAGER,
    "kernel_manager": KERNEL_MANAGER,
    "unloading_controller": UNLOADING_CONTROLLER,
    "model_conductor": MODEL_CONDUCTOR,
    "model_node": MODEL_NODE,
    "ugv_mission": UGV_MISSION,
}
