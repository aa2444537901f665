"""A small ensemble of Python models for the conductor's in-process tests: world and hand (carriers
of the ball) and a panel whose output the test sets and which records the events it is told of."""
from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from sim_fidelity.model_conductor.conductor import Conductor
from sim_fidelity.model_conductor.config import parse_config_text
from sim_fidelity.model_conductor.model import Observer

MODELS = """
conductor: {parallel: false}
models:
  world: {type: carrier, main: true, parameters: {entities: [ball]}}
  hand: {type: carrier, parameters: {entities: [ball]}}
  panel: {type: carrier}
"""


class Panel(Observer):
    """An observer whose output the test sets, recording the events it is told of."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, **kwargs)
        self.shown: dict[str, Any] = {}
        self.heard: list[tuple[str, dict[str, Any]]] = []

    def step(self, dt: float) -> None:
        pass

    def output(self) -> Mapping[str, Any]:
        return dict(self.shown)

    def on_event(self, event: str, data: Mapping[str, Any]) -> None:
        self.heard.append((event, dict(data)))


def ensemble(text: str) -> tuple[Conductor, Panel]:
    """World and hand (carriers of the ball) and a panel, with the variables, evaluators and
    triggers of ``text``; initialised, not started."""
    config = parse_config_text(MODELS + textwrap.dedent(text))
    panel = Panel("panel")
    conductor = config.build({"panel": panel})
    config.initialise(conductor)
    return conductor, panel
