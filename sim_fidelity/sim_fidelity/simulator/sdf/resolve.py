"""Where ``<include><uri>`` and mesh URIs point to on disk.

Search order for ``model://NAME/...``: the repository's ``models/`` folder, the caller's
``resource_paths``, then the ``SDF_PATH`` and ``GZ_SIM_RESOURCE_PATH`` environment variables
(colon-separated). Relative paths are relative to the directory of the file that names them.
"""
from __future__ import annotations

import os
from pathlib import Path

from ...data import data_dir
from .xmltree import Node, parse, version_tuple

ENV_VARS = ("SDF_PATH", "GZ_SIM_RESOURCE_PATH")
MAX_VERSION = (1, 11)


def search_dirs(resource_paths=()) -> list[Path]:
    dirs = [data_dir("models")]
    dirs += [Path(p) for p in resource_paths if str(p)]
    for var in ENV_VARS:
        dirs += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return dirs


def resolve_uri(uri: str, base_dir: str, resource_paths=()) -> Path | None:
    """A file or directory for ``uri``, or None when it cannot be found."""
    uri = uri.strip()
    if not uri:
        return None
    if uri.startswith("model://"):
        rest = uri[len("model://"):].strip("/")
        if not rest:
            return None
        for d in search_dirs(resource_paths):
            p = d / rest
            if p.exists():
                return p.resolve()
        return None
    if uri.startswith("file://"):
        uri = uri[len("file://"):]
    elif "://" in uri:  # http(s), package, fuel: nothing we can fetch or find offline
        return None
    p = Path(uri)
    if not p.is_absolute():
        p = Path(base_dir) / p
    return p.resolve() if p.exists() else None


def model_file(path: Path) -> tuple[Path | None, str]:
    """The SDF file of a model directory (``model.config`` ``<sdf>``, else ``model.sdf``).

    Returns (file or None, reason when None).
    """
    if path.is_file():
        return path, ""
    config = path / "model.config"
    if config.is_file():
        root = parse(config.read_text(), str(config))
        candidates = [n for n in root.walk() if n.tag == "sdf" and n is not root and n.text]
        if root.tag == "sdf" and root.text:
            candidates.append(root)
        if candidates:
            def key(n: Node):
                v = version_tuple(n.get("version", "1.0"))
                return (v <= MAX_VERSION, v)
            best = max(candidates, key=key)
            f = path / best.text
            if f.is_file():
                return f, ""
            return None, f"model.config in {path} names '{best.text}', which does not exist"
    f = path / "model.sdf"
    if f.is_file():
        return f, ""
    return None, f"{path} has neither a model.config naming an SDF file nor a model.sdf"
