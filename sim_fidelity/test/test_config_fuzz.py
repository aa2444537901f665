"""Issue 20, point 6: fuzzed configuration files and SDF snippets. The shipped files, each with one
value replaced, a key dropped or an unknown key added (hypothesis), are loaded; every failure must
be the project's error type naming the place, never another exception. Bounded in time: a few
dozen examples per loader."""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ros_processes import REPO
from sdf_snippets import GROUND, box_model, world

from sim_fidelity.errors import SimFidelityError
from sim_fidelity.fidelity_manager.config import FidelityConfig
from sim_fidelity.fidelity_manager.errors import ConfigError
from sim_fidelity.fidelity_manager.manager import FidelityManager
from sim_fidelity.model_conductor.config import parse_config
from sim_fidelity.model_conductor.errors import ConductorError
from sim_fidelity.reality_gap.errors import SpecError
from sim_fidelity.reality_gap.spec import Spec
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import SimulatorError

BOUNDED = settings(max_examples=40, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow,
                                          HealthCheck.function_scoped_fixture])

HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, -1, 1e300, "", "nan"]),
    st.text(max_size=8), st.lists(st.integers(-3, 3), max_size=4),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in ``doc`` (mappings and lists), the root excluded."""
    out = []
    items = (doc.items() if isinstance(doc, dict)
             else enumerate(doc) if isinstance(doc, list) else ())
    for k, v in items:
        out.append(prefix + (k,))
        out += paths(v, prefix + (k,))
    return out


@st.composite
def mutated(draw, doc: Any) -> Any:
    """``doc`` with one place replaced by a hostile value, dropped, or given an unknown key."""
    doc = copy.deepcopy(doc)
    where = draw(st.sampled_from(paths(doc)))
    parent = doc
    for k in where[:-1]:
        parent = parent[k]
    action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
    if action == "replace":
        parent[where[-1]] = draw(HOSTILE)
    elif action == "drop":
        del parent[where[-1]]
    elif isinstance(parent[where[-1]], dict):
        parent[where[-1]]["zz_unknown"] = draw(HOSTILE)
    else:
        parent[where[-1]] = {"zz_unknown": draw(HOSTILE)}
    return doc


STACK_WORLD = REPO / "worlds" / "stack_test.sdf"
FIDELITY = load_yaml(REPO / "config" / "stack_test.yaml")
SPEC = load_yaml(REPO / "config" / "reality_gap" / "one_d_track.yaml")
CONDUCTOR = load_yaml(REPO / "config" / "conductor" / "handover.yaml")


@pytest.fixture(scope="module")
def stack():
    return MujocoEngine.from_file(STACK_WORLD)


def _names_a_place(error: Exception) -> None:
    assert str(error).strip(), f"{type(error).__name__} without a message"


@BOUNDED
@given(doc=mutated(FIDELITY))
def test_fidelity_config_fuzzed(stack, doc):
    """Loaded, expanded against the world and closed again: a ConfigError naming file and key,
    or a manager that restores what it changed."""
    try:
        config = FidelityConfig.from_dict(doc, "stack_test.yaml")
        manager = FidelityManager(stack, config)
    except ConfigError as e:
        assert str(e).startswith("stack_test.yaml: "), e
        return
    try:
        manager.tick()
    finally:
        manager.close()
    assert manager.mismatches() == []


@BOUNDED
@given(doc=mutated(SPEC))
def test_kernels_spec_fuzzed(doc):
    try:
        Spec.from_dict(doc, "one_d_track.yaml")
    except SpecError as e:
        _names_a_place(e)


@BOUNDED
@given(doc=mutated(CONDUCTOR))
def test_conductor_config_fuzzed(doc):
    try:
        parse_config(doc, "handover.yaml", REPO / "config" / "conductor")
    except ConductorError as e:
        assert "handover.yaml" in str(e), e


BOX = box_model("b", 0.0, 0.0, 1.0, edge=0.2)
VALID_SDF = world("fuzz", GROUND, BOX)
NUMBERS = list(re.finditer(r"(?<=>)[-0-9. e]+(?=<)", VALID_SDF))
TAGS = list(re.finditer(r"<(\w+)[ >]", VALID_SDF))


@st.composite
def sdf_snippet(draw) -> str:
    """The valid world with one number's text replaced, or one element renamed or cut short."""
    kind = draw(st.sampled_from(["number", "number", "tag", "cut"]))
    if kind == "number":
        m = draw(st.sampled_from(NUMBERS))
        value = draw(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "", "x", "1 2",
                                      "-0.000001", "1e-300"]))
        return VALID_SDF[:m.start()] + value + VALID_SDF[m.end():]
    if kind == "tag":
        m = draw(st.sampled_from(TAGS))
        return VALID_SDF[:m.start(1)] + "zz" + VALID_SDF[m.start(1):]
    return VALID_SDF[:draw(st.integers(0, len(VALID_SDF) - 1))]


def test_fuzz_sdf_base_world_loads():
    assert MujocoEngine.from_string(VALID_SDF).entities()  # the mutations start from a valid one


@BOUNDED
@given(text=sdf_snippet())
def test_sdf_snippet_fuzzed(text):
    """The loader and the engine answer a bad snippet with a SimulatorError (SdfError)."""
    try:
        engine = MujocoEngine.from_string(text)
    except SimulatorError as e:
        _names_a_place(e)
        return
    engine.step(10)  # what loads also steps


def test_project_errors_share_a_base():
    for error in (ConfigError, SpecError, ConductorError, SimulatorError):
        assert issubclass(error, SimFidelityError)
