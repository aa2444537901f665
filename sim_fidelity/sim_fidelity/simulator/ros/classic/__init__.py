"""Gazebo classic's ``gazebo_msgs`` interface (ROS 2 Humble's ``gazebo_ros`` plugins): the names
(``names.py``), the status messages that carry typed errors (``outcome.py``), sim_server's
handlers (``services.py``), the Simulator flavour over it (``client.py``) and the choice of
backend (``backend.py``)."""
