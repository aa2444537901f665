"""The action signaler of paper 000, Sec. 4.3 (plungers): levels follow announced robot actions.

The planner announces actions (``extend`` before a pick, ``retract`` after it); each action maps to
a level for the trees it concerns. In-process callers call :meth:`ActionSignaler.announce`; the ROS
node forwards a topic or service to it. Announcements may come from another thread.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import UnknownNameError
from ..levels import Level
from .base import Param
from .manual import ManualSignaler


class ActionSignaler(ManualSignaler):
    """Trees go to the level mapped to the last action announced for them."""

    PARAMS = {
        "actions": Param("level_map", {"extend": Level.HIGH, "retract": Level.LOW},
                         "action name -> level"),
        "initial": Param("level", Level.LOW, "level before any action is announced"),
    }

    def announce(self, action: str, trees: str | Sequence[str] | None = None) -> int:
        """Apply ``action`` to the trees matching the regex(es) ``trees`` (all when None).

        Returns the number of trees concerned; raises UnknownNameError for an unknown action.
        """
        try:
            level = self.params["actions"][action]
        except KeyError:
            known = ", ".join(sorted(self.params["actions"]))
            raise UnknownNameError(f"unknown action '{action}' (known: {known})") from None
        return self.set(level, trees)
