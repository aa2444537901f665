"""sim_fidelity: faster and more faithful robot simulation for Gazebo users."""

__version__ = "0.1.0"
