"""Signalers: built-ins in :data:`BUILTIN`, plug-ins from the ``sim_fidelity.signalers`` group."""
from __future__ import annotations

from importlib.metadata import entry_points

from ..errors import UnknownNameError
from .action import ActionSignaler
from .base import Param, Signaler
from .distance import DistanceSignaler
from .joint_command import JointCommandSignaler
from .manual import ManualSignaler
from .packet import ADFI_INFLATION, PacketSignaler
from .schedule import ScheduleSignaler

ENTRY_POINT_GROUP = "sim_fidelity.signalers"

BUILTIN: dict[str, type[Signaler]] = {
    "packet": PacketSignaler,
    "action": ActionSignaler,
    "distance": DistanceSignaler,
    "joint_command": JointCommandSignaler,
    "manual": ManualSignaler,
    "schedule": ScheduleSignaler,
}


def signaler_class(name: str) -> type[Signaler]:
    """The signaler class registered under ``name``: a built-in, else an entry point;
    UnknownNameError if none."""
    if name in BUILTIN:
        return BUILTIN[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            cls = ep.load()
            if not (isinstance(cls, type) and issubclass(cls, Signaler)):
                raise UnknownNameError(
                    f"entry point '{name}' ({ep.value}) is not a Signaler subclass")
            return cls
    known = sorted(BUILTIN) + sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)
                                     if ep.name not in BUILTIN)
    raise UnknownNameError(f"unknown signaler type '{name}' (known: {', '.join(known)})")


__all__ = ["ADFI_INFLATION", "BUILTIN", "ENTRY_POINT_GROUP", "ActionSignaler", "DistanceSignaler",
           "JointCommandSignaler", "ManualSignaler", "PacketSignaler", "Param", "ScheduleSignaler",
           "Signaler", "signaler_class"]
