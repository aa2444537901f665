"""Stills and clips of a world: the engine stepped in process, frames drawn off-screen.

A still shows the world after ``duration`` seconds of sim time; a clip shows ``duration``
seconds at ``fps`` frames per second of sim time. With a fidelity manager the manager is ticked
every ``TICK_PERIOD`` of sim time, as the benchmarks do, and the picture shows its levels (the
engine's lever flags: :mod:`.levels`) with a legend. ``.png`` writes a still; ``.mp4`` a clip
(H.264 through imageio's ffmpeg, from PyPI), ``.gif`` a clip through Pillow.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import mujoco
import numpy as np
from PIL import Image

from .camera import make_camera
from .errors import RenderError
from .legend import draw_legend
from .offscreen import OffscreenRenderer
from .scene_look import SceneLook

TICK_PERIOD = 0.04  # s of sim time between fidelity-manager ticks
STILLS = (".png",)
CLIPS = (".mp4", ".gif")


@dataclass(frozen=True)
class View:
    """How the frames look: size (pixels), camera (see :mod:`.camera`), colouring by level."""

    width: int = 640
    height: int = 480
    camera: str = "auto"
    levels: bool = False


class Filmer:
    """Draws frames of an engine as it runs; ``manager`` (optional) is ticked on the way and
    ``control`` (optional) is called before every ``control_period`` of sim time."""

    def __init__(self, engine, view: View, manager=None,
                 control: Callable[[], None] | None = None, control_period: float = 0.0):
        self.engine, self.view, self.manager = engine, view, manager
        self.control, self.control_period = control, control_period
        self.look = SceneLook(engine, levels=view.levels or manager is not None)
        self.renderer = OffscreenRenderer(self.look.model, view.width, view.height)
        self.camera = None
        self._next_tick = engine.time

    def run_to(self, t: float) -> None:
        """Step the engine (control, manager ticks) until sim time ``t``."""
        e = self.engine
        period = self.control_period if self.control else TICK_PERIOD
        while e.time < t - 1e-9:
            if self.control:
                self.control()
            e.step(max(1, int(round(min(period, t - e.time) / e.step_size))))
            if self.manager is not None and e.time >= self._next_tick - 1e-9:
                self.manager.tick()
                self._next_tick = e.time + TICK_PERIOD

    def frame(self) -> np.ndarray:
        """The scene as it is now, with the legend when levels are coloured."""
        model = self.look.update()
        if model is not self.renderer.model:
            raise RenderError("the world was recompiled while filming (spawn or delete)")
        mujoco.mj_kinematics(self.engine.model, self.engine.data)  # poses set since the last step
        if self.camera is None:
            self.camera = make_camera(self.view.camera, model, self.engine.data, self.look.shown)
        image = self.renderer.render(self.engine.data, self.camera)
        if self.look.levels:
            image = draw_legend(image, self.look.counts)
        return image

    def frames(self, duration: float, fps: float) -> Iterator[np.ndarray]:
        """Frames every ``1 / fps`` of sim time for ``duration`` seconds (the first at once)."""
        start = self.engine.time
        for i in range(max(1, int(round(duration * fps)))):
            self.run_to(start + i / fps)
            yield self.frame()

    def close(self) -> None:
        self.renderer.close()


def write_still(path: Path, image: np.ndarray) -> None:
    """Write ``image`` as a PNG (optimised: the docs keep these small)."""
    Image.fromarray(image).save(path, optimize=True)


def write_clip(path: Path, frames: Iterator[np.ndarray], fps: float) -> int:
    """Write the frames as ``path``'s format (.mp4 or .gif); returns the number written."""
    if path.suffix.lower() == ".gif":
        images = [Image.fromarray(f).quantize(colors=64) for f in frames]
        images[0].save(path, save_all=True, append_images=images[1:], loop=0,
                       duration=int(round(1000 / fps)), optimize=True)
        return len(images)
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise RenderError("writing .mp4 needs the PyPI packages imageio and imageio-ffmpeg "
                          "(tools/bootstrap.sh installs them)") from None
    n = 0
    with imageio.get_writer(path, fps=fps, codec="libx264", quality=6, macro_block_size=8,
                            ffmpeg_log_level="error") as writer:
        for f in frames:
            writer.append_data(f)
            n += 1
    return n


def output_kind(path: Path) -> str:
    """``still`` or ``clip`` by the file's extension; RenderError for anything else."""
    suffix = path.suffix.lower()
    if suffix in STILLS:
        return "still"
    if suffix in CLIPS:
        return "clip"
    raise RenderError(f"{path}: write .png (a still), .mp4 or .gif (a clip)")
