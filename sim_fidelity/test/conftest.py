"""Test-wide setup. The network rule comes first: DDS discovery stays on this machine."""
import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before anything imports rclpy
os.environ.setdefault("HOME", "/tmp")
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
# Each pytest run talks DDS in its own domain; tests that start servers take further domains
# from ros_processes.next_domain().
os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 80))
