"""Recording ROS 2 bags: presets (topic lists), the bag writer and the live rclpy recorder."""
