"""Simulator protocol, the embedded MuJoCo engine, the SDF loader, the ROS server and client."""
from .errors import (
    InvalidOperationError,
    InvalidPoseError,
    SdfError,
    SimulatorError,
    SimulatorTimeoutError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from .protocol import EntityInfo, EntityKind, Features, Lever, SimState, Simulator

__all__ = ["EntityInfo", "EntityKind", "Features", "Lever", "Simulator", "SimState",
           "SimulatorError", "UnknownEntityError", "UnsupportedFeatureError",
           "UnsupportedLeverError", "InvalidPoseError", "InvalidOperationError",
           "SimulatorTimeoutError", "SdfError"]
