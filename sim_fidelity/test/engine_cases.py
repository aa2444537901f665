"""Models the engine must refuse (each somewhere between the SDF parser and MuJoCo's compiler) and
the check that an engine is consistent (its entity tables agree with the compiled model and every
query answers), for the engine's transaction tests and the sim_server fuzz tests."""
from __future__ import annotations

import numpy as np
from sdf_snippets import box_model, servo_pendulum

from sim_fidelity.simulator import EntityKind, Lever
from sim_fidelity.simulator.engine import MujocoEngine


def sdf(model: str) -> str:
    return f"<sdf version='1.9'>{model}</sdf>"


def geometry_model(name: str, geometry: str) -> str:
    return sdf(f"<model name='{name}'><pose>0 -3 1 0 0 0</pose><link name='l'><inertial>"
               f"<mass>1</mass></inertial><collision name='c'><geometry>{geometry}</geometry>"
               "</collision></link></model>")


BAD_MODELS = {  # each is refused somewhere between the parser and MuJoCo's compiler
    "zero sphere": geometry_model("m1", "<sphere><radius>0</radius></sphere>"),
    "missing mesh": geometry_model("m1", "<mesh><uri>file:///nowhere/none.stl</uri></mesh>"),
    "bad gain": sdf(servo_pendulum("g1").replace("<p_gain>200", "<p_gain>abc")),
    "unclosed": "<sdf version='1.9'><model name='x'><link",
    "negative mass": sdf(box_model("neg", 0, -3, 1).replace("<mass>", "<mass>-")),
    "joint loop": sdf("<model name='loop'><link name='a'/><link name='b'/>"
                      "<joint name='j1' type='revolute'><parent>a</parent><child>b</child>"
                      "<axis><xyz>1 0 0</xyz></axis></joint>"
                      "<joint name='j2' type='revolute'><parent>b</parent><child>a</child>"
                      "<axis><xyz>1 0 0</xyz></axis></joint></model>"),
}


def assert_consistent(engine: MujocoEngine) -> None:
    """The entity tables agree with the compiled model and every query answers."""
    w, m = engine.world, engine.model
    bodies = {m.body(i).name for i in range(m.nbody)}
    assert set(w.links) <= bodies
    assert all(r.model in w.models for r in w.links.values())
    assert all(r.model in w.models for r in w.joints.values())
    assert set(engine.index.info) == (set(w.models) | set(w.links) | set(w.joints)
                                      | set(w.sensors) | set(w.plugins))
    stateful = engine.entities(EntityKind.MODEL) + engine.entities(EntityKind.LINK)
    pose, twist = engine.get_states(stateful)
    assert pose.shape == (len(stateful), 7) and np.isfinite(pose).all()
    engine.bounds(stateful)
    for lever in (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY):
        assert engine.get_lever(stateful, lever, original=True).all()
        engine.get_lever(stateful, lever)
    for name in engine.entities():
        assert engine.entity_info(name).name == name
