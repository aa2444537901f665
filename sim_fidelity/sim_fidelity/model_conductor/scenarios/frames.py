"""A rendered frame of each scenario (``simfid example conductor --plots``): the ensemble's main
simulation part-way through a replay, drawn off-screen by :mod:`sim_fidelity.viz`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import DEFAULT_FINGER_DRIVE
from .replay import prepare

# (kind, seconds before the recording's open_hand annotation, camera x,y,z,distance,azimuth,el)
SHOTS = {"grasp_drop": (0.05, "0.12,-0.2,0.9,1.1,140,-25"),
         "insertion": (0.0, "0.0,-0.22,0.95,0.7,140,-20")}


def render_frames(folder: str | Path, sidecars: Sequence[Mapping[str, Any]],
                  out: str | Path, finger_drive: str = DEFAULT_FINGER_DRIVE) -> list[Path]:
    """One still per scenario kind: the first recording of each replayed through the ensemble
    until just before the hand opens; returns the files written."""
    from ...viz.render import Filmer, View, write_still

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, (before, camera) in SHOTS.items():
        sidecar = next((s for s in sidecars if s["kind"] == kind and s["label"]["value"]), None)
        if sidecar is None:
            continue
        conductor, world, source, _ = prepare(folder, sidecar, "ensemble", finger_drive)
        opened = next(m.time for m in source.messages
                      if m.kind == "action" and m.data["operation"] == "open_hand")
        conductor.run(duration=max(opened - before, conductor.step_size), source=source)
        filmer = Filmer(world.sim, View(width=800, height=600, camera=camera))
        try:
            path = out / f"conductor_{kind}_{sidecar['name']}.png"
            write_still(path, filmer.frame())
        finally:
            filmer.close()
        written.append(path)
    return written
