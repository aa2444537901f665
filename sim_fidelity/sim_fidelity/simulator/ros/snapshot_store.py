"""The snapshots ``sim_server`` keeps for its clients (``~/save_snapshot``, ``~/restore_snapshot``,
``~/drop_snapshot``): engine snapshots by id, at most ``capacity`` (:data:`MAX_SNAPSHOTS`) at
once; one of the truck worlds is about 2 MB.

Ids count up from 1 and are never reused, so a stale id cannot restore another client's state.
A save when full is refused (nothing is evicted behind a client's back). The lever guard's record
of who lowered which lever is not part of a snapshot: levers a restore lowers again belong to no
client.
"""
from __future__ import annotations

from ..engine import MujocoEngine
from ..errors import InvalidOperationError
from ..snapshot import EngineSnapshot

MAX_SNAPSHOTS = 16


class SnapshotStore:
    """Engine snapshots by id (call under the engine lock)."""

    def __init__(self, engine: MujocoEngine, capacity: int):
        if capacity < 1:
            raise InvalidOperationError(f"snapshot capacity must be at least 1, got {capacity}")
        self.engine, self.capacity = engine, capacity
        self._held: dict[int, EngineSnapshot] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._held)

    def save(self) -> tuple[int, EngineSnapshot]:
        """Snapshot the engine now; its id and the snapshot."""
        if len(self._held) >= self.capacity:
            raise InvalidOperationError(
                f"the server holds {len(self._held)} snapshots, its most: drop one first "
                f"(held ids: {self._ids()})")
        snap = self.engine.snapshot()
        snap_id, self._next = self._next, self._next + 1
        self._held[snap_id] = snap
        return snap_id, snap

    def restore(self, snap_id: int) -> EngineSnapshot:
        """Put the engine back to snapshot ``snap_id`` (kept: it can be restored again)."""
        snap = self._get(snap_id)
        self.engine.restore(snap)
        return snap

    def drop(self, snap_id: int) -> None:
        self._get(snap_id)
        del self._held[snap_id]

    def _get(self, snap_id: int) -> EngineSnapshot:
        try:
            return self._held[snap_id]
        except KeyError:
            raise InvalidOperationError(f"no snapshot {snap_id} on this server (held ids: "
                                        f"{self._ids()})") from None

    def _ids(self) -> str:
        return ", ".join(map(str, sorted(self._held))) or "none"
