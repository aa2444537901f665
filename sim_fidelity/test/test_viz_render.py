"""Off-screen renders (sim_fidelity.viz): real MuJoCo, real headless GL (EGL), in process."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.cli import main
from sim_fidelity.fidelity_manager.levels import Level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import Lever
from sim_fidelity.viz import offscreen
from sim_fidelity.viz.colours import LEVEL_RGB8
from sim_fidelity.viz.errors import RenderError
from sim_fidelity.viz.render import Filmer, View

WORLD = """<sdf version="1.9"><world name="w">
  <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry>
    <plane><normal>0 0 1</normal><size>20 20</size></plane></geometry></collision></link></model>
  <model name="box"><pose>0 0 0.25 0 0 0</pose><link name="l">
    <collision name="c"><geometry><box><size>0.5 0.5 0.5</size></box></geometry></collision>
    <visual name="v"><geometry><box><size>0.5 0.5 0.5</size></box></geometry></visual>
  </link></model>
</world></sdf>"""
TOP_DOWN = "0,0,0,3,90,-90"  # looking straight down at the box: it fills the image's centre
SIZE = 160  # pixels: the box spans the middle 32, clear of the legend (bottom left)
MID = slice(72, 88)


@pytest.fixture
def engine() -> MujocoEngine:
    return MujocoEngine.from_string(WORLD)


def shoot(engine: MujocoEngine, levels: bool = False) -> np.ndarray:
    filmer = Filmer(engine, View(SIZE, SIZE, TOP_DOWN, levels))
    try:
        return filmer.frame().astype(int)
    finally:
        filmer.close()


def nearest_level(rgb: np.ndarray) -> Level:
    """The level whose colour's hue is nearest (shading scales brightness, not hue)."""
    unit = lambda c: c / max(np.linalg.norm(c), 1e-9)  # noqa: E731
    return Level(int(np.argmax([unit(rgb) @ unit(c.astype(float)) for c in LEVEL_RGB8])))


def test_render_shows_the_box_where_it_is(engine):
    image = shoot(engine)
    assert image.shape == (SIZE, SIZE, 3) and image.std() > 5
    engine.set_states(["box"], np.array([[8.0, 8.0, 0.25, 0, 0, 0, 1]]))
    moved = shoot(engine)  # the ground alone
    change = np.abs(image - moved).max(axis=2)
    assert change[MID, MID].min() > 30  # where the box was, every pixel changed
    assert change[:8, :8].max() < 3 and change[-8:, -8:].max() < 3  # the ground's corners did not


def test_levels_colour_a_lowered_box(engine):
    high = shoot(engine, levels=True)[MID, MID].mean((0, 1))
    assert nearest_level(high) == Level.HIGH
    engine.set_lever(["box"], Lever.DYNAMICS, False)
    medium = shoot(engine, levels=True)[MID, MID].mean((0, 1))
    engine.set_lever(["box"], Lever.COLLISION, False)
    low = shoot(engine, levels=True)[MID, MID].mean((0, 1))
    assert (nearest_level(medium), nearest_level(low)) == (Level.MEDIUM, Level.LOW)
    assert np.abs(low - high).max() > 40


def test_simfid_render_writes_a_png_and_a_gif(tmp_path, capsys):
    world = tmp_path / "w.sdf"
    world.write_text(WORLD)
    png, gif = tmp_path / "still.png", tmp_path / "clip.gif"
    assert main(["render", str(world), "-o", str(png), "--width", "64", "--height", "48",
                 "--levels"]) == 0
    from PIL import Image
    assert Image.open(png).size == (64, 48)
    assert main(["render", str(world), "-o", str(gif), "--width", "32", "--height", "32",
                 "--duration", "0.2", "--fps", "10"]) == 0
    assert "2 frames" in capsys.readouterr().err  # the GIF merges identical frames (at rest)
    assert Image.open(gif).size == (32, 32)


def test_bad_requests_are_named(engine, tmp_path, capsys):
    with pytest.raises(RenderError, match="no camera of that name"):
        Filmer(engine, View(32, 32, "nowhere")).frame()
    world = tmp_path / "w.sdf"
    world.write_text(WORLD)
    assert main(["render", str(world), "-o", str(tmp_path / "x.jpg")]) == 2
    assert "write .png" in capsys.readouterr().err


def test_missing_gl_library_is_named(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.setattr(offscreen.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(RenderError, match="libosmesa6"):
        offscreen.gl_context(32, 32)
