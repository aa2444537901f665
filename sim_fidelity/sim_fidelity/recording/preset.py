"""Recording presets: YAML files listing the topics (and their types) to record.

A preset is a name (``config/recording/<name>.yaml``) or a path to such a file::

    storage: mcap            # mcap (default) or sqlite3
    topics:
      - {topic: /ugv/gps/fix, type: sensor_msgs/msg/NavSatFix}
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..data import data_dir
from .errors import RecordingError

STORAGES = ("mcap", "sqlite3")


@dataclass(frozen=True)
class Preset:
    """The topics to record, in the order given, and the bag storage."""

    name: str
    topics: tuple[tuple[str, str], ...]  # (topic, type as pkg/msg/Name)
    storage: str = "mcap"


def preset_path(name: str) -> Path:
    """A preset given by name (``ugv``) or by path (anything with a ``/`` or ending .yaml)."""
    if "/" in name or name.endswith((".yaml", ".yml")):
        return Path(name)
    return data_dir("config") / "recording" / f"{name}.yaml"


def load_preset(name: str) -> Preset:
    """Read and check a preset; RecordingError names the file and the entry at fault."""
    from ..reality_gap.messages import typestore

    path = preset_path(name)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        known = sorted(p.stem for p in (data_dir("config") / "recording").glob("*.yaml"))
        raise RecordingError(f"no recording preset {path} (presets: {', '.join(known)})") \
            from None
    except (OSError, yaml.YAMLError) as exc:
        raise RecordingError(f"cannot read recording preset {path}: {exc}") from exc
    if not isinstance(raw, dict) or set(raw) - {"storage", "topics"}:
        raise RecordingError(f"preset {path}: a mapping with 'topics' and optionally 'storage'")
    storage = raw.get("storage", "mcap")
    if storage not in STORAGES:
        raise RecordingError(f"preset {path}: storage must be one of {STORAGES}, got {storage!r}")
    entries = raw.get("topics")
    if not isinstance(entries, list) or not entries:
        raise RecordingError(f"preset {path}: 'topics' must be a non-empty list")
    store = typestore()
    topics = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"topic", "type"}:
            raise RecordingError(f"preset {path}: topics[{i}] must be {{topic: ..., type: ...}}")
        topic, msgtype = str(entry["topic"]), str(entry["type"])
        if not topic.startswith("/"):
            raise RecordingError(f"preset {path}: topics[{i}] '{topic}' must be absolute")
        if msgtype not in store.fielddefs:
            raise RecordingError(f"preset {path}: topics[{i}] '{topic}': unknown message type "
                                 f"'{msgtype}' (pkg/msg/Name)")
        topics.append((topic, msgtype))
    names = [t for t, _ in topics]
    if len(set(names)) != len(names):
        raise RecordingError(f"preset {path}: a topic is listed twice in {names}")
    return Preset(name=path.stem, topics=tuple(topics), storage=storage)
