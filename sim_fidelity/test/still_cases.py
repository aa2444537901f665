"""A world without gravity (a static robot box, floating boxes) and the packet signaler's manager
over it, for the tests of paper 000's per-step stillness: a box keeps exactly the speed it is
given, step by step, with the real engine and the real manager; and a packet signaler alone over
a stack's boxes (rule 3's tests)."""
from __future__ import annotations

from sim_fidelity.fidelity_manager import FidelityConfig, FidelityManager, Level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.sdf_text import box_model, world

# box_1 on a revolute joint to the world (not a free body): the step hook cannot watch it
HINGED = """
    <model name="box_1">
      <pose>4 0 0 0 0 0</pose>
      <link name="link"><inertial><mass>1</mass></inertial>
        <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
      </link>
      <joint name="hinge" type="revolute"><parent>world</parent><child>link</child>
        <axis><xyz>0 0 1</xyz></axis></joint>
    </model>"""


def zero_g(*models: str) -> MujocoEngine:
    """An engine of ``models`` in a world without gravity."""
    sdf = world("floating", *models, step=0.002)
    return MujocoEngine.from_string(sdf.replace("<gravity>0 0 -9.81</gravity>",
                                                "<gravity>0 0 0</gravity>"))


def floating_world() -> MujocoEngine:
    """The robot box at the origin, box_0 and box_1 floating 3 m and 4 m ahead of it."""
    return zero_g(box_model("robot", 0.0, 0.0, 0.0, 1.0, static=True),
                  box_model("box_0", 3.0, 0.0, 0.0, 0.2), box_model("box_1", 4.0, 0.0, 0.0, 0.2))


def manager(sim: MujocoEngine, **packet_options) -> FidelityManager:
    """A packet signaler over every ``box_N`` (robot box 0.5 m, inflation 0.5 m) with
    ``packet_options`` (``still_clock``, ``still_steps``, ...) added to its config."""
    config = FidelityConfig.from_dict({
        "signalers": {"packets": {
            "type": "packet", "robot": "robot", "robot_half_extents": [0.5, 0.5, 0.5],
            "half_extents": [0.1, 0.1, 0.1], "inflation": 0.5, **packet_options}},
        "trees": {"boxes": {"signaler": "packets", "name": "{key}",
                            "objects": [{"type": "shape", "pattern": r"(box_\d)"}]}},
        "presets": {"on": {}}, "default_preset": "on"})
    return FidelityManager(sim, config)


def levels(m: FidelityManager) -> list[Level]:
    """The levels of box_0 and box_1."""
    return [level for level, _ in m.get_fidelity(["box_0", "box_1"]).values()]


def packet_signaler(sim: MujocoEngine, params: dict, pattern: str):
    """The packet signaler ``s`` of ``params``, one tree per box whose name ``pattern`` (one
    group) matches."""
    config = FidelityConfig.from_dict({
        "signalers": {"s": params},
        "trees": {"boxes": {"signaler": "s", "name": "{key}",
                            "objects": [{"type": "shape", "pattern": pattern}]}},
        "presets": {"on": {}}})
    return config.build_signalers(sim, config.build_trees(sim), "on")["s"]
