"""``sim_server`` guards the levers its clients lower: when a client's node leaves the ROS graph
(it exited, was killed, lost its lease), every lever it left changed goes back to the world's
original.

A ``SetLever`` request names its ``owner`` (the client node's fully qualified name; "" for an
unguarded change). The guard keeps, per owner, the (entity, lever) pairs it switched away from
the original; the last client to change a pair owns it, and a pair switched back to the original
is nobody's. :meth:`LeverGuard.check` (a timer, ``CHECK_PERIOD_S``) restores the pairs of every
owner no longer in the graph: one seen there before, or one never seen for ``DISCOVERY_GRACE_S``
(graph discovery lags the first request of a new client).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..engine import MujocoEngine
from ..protocol import Lever

CHECK_PERIOD_S = 0.5
DISCOVERY_GRACE_S = 10.0


class LeverGuard:
    """Who changed which lever, and the restore of an owner that left (called under the engine
    lock)."""

    def __init__(self, engine: MujocoEngine, graph: Callable[[], set[str]],
                 log: Callable[[str], None]):
        self.engine, self.graph, self.log = engine, graph, log
        self._changed: dict[str, dict[Lever, set[str]]] = {}  # owner -> lever -> entities
        self._first: dict[str, float] = {}  # owner -> when its first change came
        self._seen: set[str] = set()  # owners seen in the graph

    def record(self, owner: str, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        """A lever change that succeeded: ``names`` are now ``owner``'s, or nobody's."""
        for levers in self._changed.values():
            levers.get(lever, set()).difference_update(names)
        if owner and not enabled:
            self._changed.setdefault(owner, {}).setdefault(lever, set()).update(names)
            self._first.setdefault(owner, time.monotonic())
        for gone in [o for o in self._changed if not self.owned(o)]:
            del self._changed[gone]
            self._first.pop(gone, None)

    def forget(self) -> None:
        """Every lever is at its original (a reset): nothing is owned."""
        self._changed.clear()
        self._first.clear()

    def owned(self, owner: str) -> int:
        """How many (entity, lever) pairs ``owner`` holds changed."""
        return sum(len(names) for names in self._changed.get(owner, {}).values())

    def check(self) -> None:
        """Restore the levers of every owner that left the graph."""
        if not self._changed:
            return
        present = self.graph()
        self._seen |= present & set(self._changed)
        now = time.monotonic()
        for owner in list(self._changed):
            if owner in present or (owner not in self._seen
                                    and now - self._first[owner] < DISCOVERY_GRACE_S):
                continue
            self.restore(owner, "its node left the ROS graph")

    def restore(self, owner: str, why: str) -> None:
        levers = self._changed.pop(owner, {})
        self._first.pop(owner, None)
        self._seen.discard(owner)
        count = 0
        for lever, names in levers.items():
            alive = sorted(n for n in names if self.engine.has(n))  # a deleted one is gone
            if alive:
                self.engine.set_lever(alive, lever, True)
                count += len(alive)
        self.log(f"restored {count} lever(s) that '{owner}' changed to the world's originals "
                 f"({why})")
