"""The ROS 2 side of the simulator layer: the ``sim_server`` node and ``RosSimulator``."""
