"""Test-wide setup. The network rule comes first: DDS discovery stays on this machine."""
import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before anything imports rclpy
os.environ.setdefault("HOME", "/tmp")
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
