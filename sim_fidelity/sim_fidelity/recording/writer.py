"""The bag writer every recording goes through: the live recorder (raw CDR from rclpy) and the
in-process pipelines (messages serialised here). MCAP or sqlite3 through ``rosbags``, with the
message definitions stored, so ``ros2 bag info``, ``ros2 bag play`` and Foxglove read it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rosbags.rosbag2 import StoragePlugin, Writer

from .errors import RecordingError

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


class BagWriter:
    """A new bag at ``path`` (a directory, as rosbag2 makes it) with the given topics."""

    def __init__(self, path: str | Path, topics: tuple[tuple[str, str], ...] | list,
                 storage: str = "mcap"):
        from ..reality_gap.messages import typestore

        self.path = Path(path)
        if self.path.exists():
            raise RecordingError(f"bag {self.path} exists already; give a new name")
        if storage not in STORAGES:
            raise RecordingError(f"bag {self.path}: storage must be one of {sorted(STORAGES)}")
        self.store = typestore()
        self.types = dict(topics)
        self.counts = dict.fromkeys(self.types, 0)
        self._writer = Writer(self.path, version=9, storage_plugin=STORAGES[storage])
        self._writer.open()
        self._conns = {topic: self._writer.add_connection(topic, msgtype, typestore=self.store)
                       for topic, msgtype in self.types.items()}

    def write_raw(self, topic: str, stamp_ns: int, cdr: bytes) -> None:
        """One serialised message received at ``stamp_ns``."""
        self._writer.write(self._conns[topic], int(stamp_ns), bytes(cdr))
        self.counts[topic] += 1

    def write(self, topic: str, stamp_ns: int, msg: Any) -> None:
        """One ``rosbags`` message object (serialised here)."""
        self.write_raw(topic, stamp_ns, self.store.serialize_cdr(msg, self.types[topic]))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "BagWriter":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
