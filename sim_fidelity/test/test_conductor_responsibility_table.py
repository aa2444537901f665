"""The responsibility table on its own (paper 003, section 3.1): who holds each pair at the start,
which pairs a transfer moves, what the log says, and the refusals with their messages."""
from __future__ import annotations

import pytest

from sim_fidelity.model_conductor.errors import ResponsibilityError
from sim_fidelity.model_conductor.model import COLLISION, POSE, TWIST
from sim_fidelity.model_conductor.responsibility import Responsibilities, Transfer

BODY = (POSE, TWIST)


def table(**kwargs) -> Responsibilities:
    """world and hand represent the ball's pose and twist, the hand also its collision; only the
    world represents the crate, and only its pose (no twist)."""
    r = Responsibilities(**kwargs)
    r.declare("hand", {"ball": (*BODY, COLLISION)})
    r.declare("world", {"ball": BODY, "crate": (POSE,)})
    return r


def test_the_main_model_holds_what_it_represents_even_when_declared_after_another():
    r = table()
    changes = r.allocate("world", {})
    assert r.holders() == {("ball", POSE): "world", ("ball", TWIST): "world",
                           ("ball", COLLISION): "hand", ("crate", POSE): "world"}
    assert changes == r.log
    assert changes[0] == Transfer(0.0, "ball", POSE, "", "world", "config")
    assert r.representers("ball", POSE) == ["hand", "world"]  # declaration order
    assert r.followers("ball", POSE) == ["hand"] and r.followers("ball", COLLISION) == []
    assert r.held_by("hand") == [("ball", COLLISION)]
    assert r.entities() == ["ball", "crate"]


def test_without_a_main_model_the_first_representer_holds():
    r = table()
    r.allocate(None, {}, time=2.5)
    assert r.holder("ball", POSE) == "hand" and r.holder("crate", POSE) == "world"
    assert {c.time for c in r.log} == {2.5}


def test_a_pose_override_carries_the_twist_unless_the_twist_is_overridden_or_not_followed():
    r = table()
    r.allocate("world", {("ball", POSE): "hand"})
    assert r.holder("ball", TWIST) == "hand"

    r = table()
    r.allocate("world", {("ball", POSE): "hand", ("ball", TWIST): "world"})
    assert (r.holder("ball", POSE), r.holder("ball", TWIST)) == ("hand", "world")

    r = table(twist_follows_pose=False)
    r.allocate("world", {("ball", POSE): "hand"})
    assert (r.holder("ball", POSE), r.holder("ball", TWIST)) == ("hand", "world")


def test_an_override_of_another_attribute_moves_only_that_attribute():
    r = table()
    r.allocate("world", {("ball", COLLISION): "hand"})
    assert r.holder("ball", TWIST) == "world" and r.holder("ball", POSE) == "world"


def test_a_pose_override_of_an_entity_without_twist_moves_the_pose_alone():
    r = Responsibilities()
    r.declare("world", {"crate": (POSE,)})
    r.declare("sketch", {"crate": (POSE,)})
    r.allocate("world", {("crate", POSE): "sketch"})
    assert r.holders() == {("crate", POSE): "sketch"}


def test_plan_moves_the_twist_with_the_pose_by_default_and_leaves_out_what_is_held():
    r = table()
    r.allocate("world", {})
    assert r.plan("ball", POSE, "hand") == [("ball", POSE), ("ball", TWIST)]
    assert r.plan("ball", TWIST, "hand") == [("ball", TWIST)]
    assert r.plan("ball", POSE, "world") == []  # world holds both already
    r.move("ball", TWIST, "hand", 1.0, "nudge")
    assert r.plan("ball", POSE, "hand") == [("ball", POSE)]
    assert r.plan("crate", POSE, "world") == []  # no twist represented: nothing to add

    r = table(twist_follows_pose=False)
    r.allocate("world", {})
    assert r.plan("ball", POSE, "hand") == [("ball", POSE)]


def test_move_logs_the_previous_holder_and_an_empty_one_for_a_pair_never_held():
    r = table()
    first = r.move("ball", POSE, "hand", 0.5, "grasp")
    assert first == Transfer(0.5, "ball", POSE, "", "hand", "grasp")
    second = r.move("ball", POSE, "world", 0.7, "release")
    assert second == Transfer(0.7, "ball", POSE, "hand", "world", "release")
    assert r.log == [first, second] and r.holder("ball", POSE) == "world"


def test_unknown_pairs_have_no_representers_followers_or_holder():
    r = table()
    r.allocate("world", {})
    assert r.representers("ghost", POSE) == [] and r.followers("ghost", POSE) == []
    assert r.holder("ghost", POSE) is None and r.held_by("ghost") == []


def test_refusals_name_the_pair_and_what_could_hold_it():
    r = table()
    r.allocate("world", {})
    with pytest.raises(ResponsibilityError) as e:
        r.plan("ball", "colour", "world")
    assert str(e.value) == "no model represents 'colour' of 'ball' (its attributes: collision, " \
                           "pose, twist)"
    with pytest.raises(ResponsibilityError) as e:
        r.move("ghost", POSE, "world", 0.0, "x")
    assert str(e.value) == "no model represents entity 'ghost'"
    with pytest.raises(ResponsibilityError) as e:
        r.allocate("world", {("crate", POSE): "hand"})
    assert str(e.value) == ("model 'hand' cannot hold 'pose' of 'crate': it does not represent "
                            "it (models that do: world)")
    with pytest.raises(ResponsibilityError) as e:
        r.plan("ball", POSE, "sketch")
    assert str(e.value) == ("model 'sketch' cannot hold 'pose' of 'ball': it does not represent "
                            "it (models that do: hand, world)")
