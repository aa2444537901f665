"""SDFormat loader: SDF worlds and models into a ``mujoco.MjSpec`` plus records.

See :mod:`.records` for the naming contract with the engine and :mod:`.loader` for the subset
of SDFormat (1.6 - 1.11) that is supported.
"""
from .loader import add_models, load_world, load_world_string
from .records import (
    COLLISION_GROUP,
    FREE_JOINT_SUFFIX,
    VISUAL_GROUP,
    JointRecord,
    LinkRecord,
    LoadedWorld,
    ModelRecord,
    PluginRecord,
    SensorRecord,
)

__all__ = ["load_world", "load_world_string", "add_models", "LoadedWorld", "ModelRecord",
           "LinkRecord", "JointRecord", "SensorRecord", "PluginRecord", "COLLISION_GROUP",
           "VISUAL_GROUP", "FREE_JOINT_SUFFIX"]
