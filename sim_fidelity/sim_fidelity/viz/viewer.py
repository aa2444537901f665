"""MuJoCo's passive viewer on a running engine: the simulation keeps its own stepping.

A thread syncs the viewer with the engine about ``FPS`` times a second, under the engine's lock,
from a :class:`SceneLook` painted by fidelity level. The overlay shows the simulation state
(PLAYING, PAUSED), sim time and the real-time factor over the last second; the legend of the
level colours sits bottom left. Space in the window toggles PLAYING and PAUSED through
``on_pause`` when given. A recompile (spawn, delete) reopens the window on the new model;
closing the window ends the viewer, never the simulation.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

import mujoco
import numpy as np

from ..simulator.protocol import SimState
from .camera import frame_scene
from .errors import RenderError
from .legend import draw_legend
from .scene_look import SceneLook

FPS = 30.0
RTF_WINDOW_S = 1.0
LEGEND_CANVAS = 240  # pixels: the canvas the legend overlay is drawn on (then cropped)
SPACE = 32  # GLFW key code
CLOSE_WAIT_S = 30.0  # a software-GL window opening on a loaded machine takes seconds


def legend_image(counts) -> np.ndarray:
    """The legend alone, cropped to its frame, as an RGB image."""
    image = draw_legend(np.full((LEGEND_CANVAS, LEGEND_CANVAS, 3), 255, np.uint8), counts)
    rows, cols = np.nonzero((image != 255).any(axis=2))
    return np.ascontiguousarray(image[rows.min():rows.max() + 1, cols.min():cols.max() + 1])


class LiveViewer:
    """A passive viewer window on ``engine`` (whose every reading holds ``lock``)."""

    def __init__(self, engine, lock: threading.RLock,
                 on_pause: Callable[[bool], None] | None = None,
                 on_error: Callable[[str], None] | None = None):
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            raise RenderError("the viewer needs a display (DISPLAY is not set); without one, "
                              "run under a virtual X server: xvfb-run -a <command>")
        self.engine, self.lock, self.on_pause = engine, lock, on_pause
        self.on_error = on_error or (lambda text: print(text, file=sys.stderr))
        self.error: str | None = None  # why the window closed, when it was not its user
        self._stop = threading.Event()
        self._toggle = threading.Event()
        self._rtf = (time.monotonic(), engine.time, 0.0)  # window start (wall, sim), value
        with lock:
            self.look = SceneLook(engine, levels=True)
        self.handle = None
        self._window_threads: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._run, name="sim_viewer", daemon=True)

    def start(self) -> "LiveViewer":
        self._thread.start()
        return self

    def _open(self) -> None:
        from mujoco import viewer

        with self.lock:
            model = self.look.update()
            before = set(threading.enumerate())
            self.handle = viewer.launch_passive(model, self.engine.data,
                                                key_callback=self._key, show_left_ui=False,
                                                show_right_ui=False)
            # MuJoCo's render thread: joined on close, or glfw's atexit terminate runs under it
            self._window_threads += [t for t in threading.enumerate() if t not in before]
            with self.handle.lock():
                frame_scene(model, self.engine.data, self.look.shown, self.handle.cam)

    def _key(self, keycode: int) -> None:
        if keycode == SPACE:
            self._toggle.set()

    def _run(self) -> None:
        try:
            self._show()
        except Exception as e:  # noqa: BLE001 - a broken window must not take the simulation
            self.error = f"the viewer stopped: {type(e).__name__}: {e}"
            self.on_error(self.error)
        finally:  # the window belongs to this thread: it goes with it
            self._close_window()

    def _close_window(self) -> None:
        if self.handle is not None:
            self.handle.close()
        for t in self._window_threads:
            t.join(CLOSE_WAIT_S)
        self._window_threads = []

    def _show(self) -> None:
        self._open()
        while not self._stop.wait(1.0 / FPS):
            if not self.handle.is_running():
                return
            if self._toggle.is_set() and self.on_pause is not None:
                self._toggle.clear()
                with self.lock:
                    playing = self.engine.sim_state() == SimState.PLAYING
                self.on_pause(playing)
            with self.lock:
                if self.look.stale:
                    self._close_window()
                    self.look.update()
                    self._open()
                self.look.update()
                self.handle.sync()
                state, sim = self.engine.sim_state(), self.engine.time
            self._overlay(state, sim)

    def _overlay(self, state: SimState, sim: float) -> None:
        now = time.monotonic()
        wall0, sim0, rtf = self._rtf
        if now - wall0 >= RTF_WINDOW_S:
            rtf = (sim - sim0) / (now - wall0)
            self._rtf = (now, sim, rtf)
        self.handle.set_texts((None, mujoco.mjtGridPos.mjGRID_TOPLEFT,
                               "state\nsim time\nreal-time factor",
                               f"{state.name}\n{sim:.2f} s\n{rtf:.2f}"))
        legend = legend_image(self.look.counts)
        self.handle.set_images((mujoco.MjrRect(10, 10, legend.shape[1], legend.shape[0]), legend))

    @property
    def running(self) -> bool:
        """Is the window still open (not closed by its user)?"""
        return self._thread.is_alive()

    def close(self, wait: float = CLOSE_WAIT_S) -> None:
        """Close the window and end the thread (the simulation goes on); waits up to ``wait``
        seconds for it (a window still opening closes once open)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(wait)
