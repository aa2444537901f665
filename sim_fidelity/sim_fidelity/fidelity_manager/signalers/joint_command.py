"""Joint-command signaler: levels follow what a joint of the robot is commanded (paper 000, R4).

Paper 000 (Sec. 4.3): "the planner commands the plungers to extend. The signaler would detect this,
and set the fidelity status to high"; after the pick the retract command sets it low. This signaler
watches the position command of one joint and needs no word from the application (requirement R4:
the application does not change): each time the command crosses ``threshold`` upwards the trees go
to ``above`` (HIGH), downwards to ``below`` (LOW).

Where the command comes from: in process (the embedded engine) the target of the joint's
position-controller actuator, read at every update; over ROS the manager node subscribes to the
joint's command topic, :attr:`JointCommandSignaler.topic` (``/model/<model>/joint/<joint>/cmd_pos``,
std_msgs/Float64, what sim_server and a bridged Gazebo listen to) and calls :meth:`observe`.
Announcements (:meth:`~.action.ActionSignaler.announce`) remain an optional path: the last event,
a crossing or an announcement, sets the level.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..errors import ParamError
from ..levels import Level
from ..trees import Tree
from .action import ActionSignaler
from .base import Param


def command_topic(joint: str) -> str:
    """The ROS topic of a scoped joint's position command, as sim_server names it."""
    model, rest = joint.split("::", 1)
    return f"/model/{model}/joint/{rest.replace('::', '/')}/cmd_pos"


def engine_command_reader(sim: Simulator, joint: str) -> Callable[[], float] | None:
    """A reader of the position target of ``joint``'s controller in an in-process engine (after a
    spawn or a delete too); None for a simulator whose commands travel over ROS; ParamError when
    the engine has no controller."""
    controllers = getattr(sim, "controllers", None)
    if controllers is None or not hasattr(sim, "data"):
        return None
    plugins = [p for p, c in controllers.items()
               if c.joint == joint and c.mode == "position" and not c.owner]
    if not plugins:
        raise ParamError("joint", f"'{joint}' has no position-controller plugin in the world")
    plugin = plugins[0]  # its actuator looked up at each read: a recompile renumbers them
    return lambda: float(sim.data.ctrl[sim.index.actuator_id[plugin]])


class JointCommandSignaler(ActionSignaler):
    """Trees follow the side of ``threshold`` the joint's command is on, or the last announced
    action, whichever came last."""

    PARAMS = {
        **ActionSignaler.PARAMS,
        "joint": Param("name", help="scoped joint whose position command is watched "
                                    "(<model>::<joint>)"),
        "threshold": Param("float", help="command above which the joint counts as engaged"),
        "above": Param("level", Level.HIGH, "level once the command rises above the threshold"),
        "below": Param("level", Level.LOW, "level once it falls to the threshold or below"),
    }

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        if "::" not in params["joint"]:
            raise ParamError("joint", f"'{params['joint']}' is not scoped (<model>::<joint>)")
        self.topic = command_topic(params["joint"])
        self.read = engine_command_reader(sim, params["joint"])
        self.engaged: bool | None = None  # the command's side of the threshold (None: not seen)

    def observe(self, command: float) -> None:
        """A command sent to the joint: on a crossing of the threshold the trees change level."""
        engaged = bool(command > self.params["threshold"])
        with self.lock:
            if engaged != self.engaged:
                self.engaged = engaged
                self.levels[:] = self.params["above" if engaged else "below"]

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        if self.read is not None:
            self.observe(self.read())
        return super().update(t, poses, twists, current)
