"""RosSimulator's levers against real sim_server processes: ``features()`` finds the lever
services the server node advertises (and does not wait for them where it advertises none), and
the static-copy fallback (a server without lever services, as Gazebo) gives lowered levers back
on ``reset()`` as the protocol requires; a client makes its service clients once, not per call.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ros_processes import CLIENT_TIMEOUT_S, next_domain, start_node, stop
from sdf_snippets import GROUND, box_model, world

from sim_fidelity.simulator import Lever, SimState
from sim_fidelity.simulator.ros.client import FALLBACK_LEVERS, RosSimulator

WORLD = world("levers", GROUND, box_model("resting", 0, 0, 0.2), box_model("floating", 2, 0, 1.0))


@pytest.fixture(scope="module")
def world_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("levers") / "levers.sdf"
    path.write_text(WORLD)
    return path


def _server(world_file: Path, log_dir: Path, serve_levers: bool):
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "paused": True, "real_time_factor": 0.0,
                       "serve_levers": serve_levers}, domain, log_dir / "sim_server.log")
    return domain, proc


@pytest.fixture(scope="module")
def with_levers(world_file, tmp_path_factory):
    domain, proc = _server(world_file, tmp_path_factory.mktemp("on"), True)
    yield domain
    stop(proc)


@pytest.fixture(scope="module")
def without_levers(world_file, tmp_path_factory):
    domain, proc = _server(world_file, tmp_path_factory.mktemp("off"), False)
    yield domain
    stop(proc)


def _client(domain: int, world_file: Path) -> RosSimulator:
    sim = RosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S, world_file=str(world_file))
    sim.wait_for_server(60.0)
    return sim


@pytest.mark.parametrize("attempt", range(3))
def test_features_find_the_lever_services_the_server_advertises(with_levers, world_file,
                                                                attempt):
    """Asked right after /get_entities is found, as a manager does (a fresh client each time:
    discovery starts over)."""
    with _client(with_levers, world_file) as sim:
        feats = sim.features()
        assert not feats.static_fallback
        assert {Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY} <= feats.levers


def test_features_of_a_server_without_lever_services_is_the_fallback(without_levers,
                                                                      world_file):
    with _client(without_levers, world_file) as sim:
        feats = sim.features()
        assert feats.static_fallback
        assert feats.levers == FALLBACK_LEVERS


def test_reset_gives_back_what_the_fallback_lowered(without_levers, world_file):
    with _client(without_levers, world_file) as sim:
        sim.set_sim_state(SimState.PAUSED)
        sim.reset()
        start, _ = sim.get_states(["floating"])
        sim.set_lever(["floating"], Lever.DYNAMICS, False)
        sim.set_lever(["resting"], Lever.COLLISION, False)
        assert not sim.get_lever(["floating"], Lever.DYNAMICS)[0]
        sim.step(300)  # the static copy stands in: it does not fall
        lowered, _ = sim.get_states(["floating"])
        np.testing.assert_allclose(lowered, start, atol=1e-9)

        sim.reset()
        assert sim.get_lever(["floating", "resting"], Lever.DYNAMICS).all()
        assert sim.get_lever(["floating", "resting"], Lever.COLLISION).all()
        after, _ = sim.get_states(["floating"])
        np.testing.assert_allclose(after, start, atol=1e-9)  # the original, at its world pose
        sim.step(300)  # dynamics back: the floating box falls, the resting box stays on ground
        poses, _ = sim.get_states(["floating", "resting"])
        assert poses[0, 2] < start[0, 2] - 0.1
        assert poses[1, 2] > 0.1


def test_a_client_makes_its_service_clients_once_not_per_call(with_levers, world_file):
    """However many calls a manager makes, its node's service clients stay those of the first
    round (a handshake or a client made per call would add one each time: the class of bug
    that stalled nodes in CI while every single-call test passed)."""

    def one_round(sim: RosSimulator) -> None:
        sim.get_states(["resting", "floating"])
        sim.set_lever(["floating"], Lever.GRAVITY, False)
        sim.get_lever(["floating"], Lever.GRAVITY)
        sim.set_lever(["floating"], Lever.GRAVITY, True)
        sim.step(2)
        assert sim.sim_state() is SimState.PAUSED

    with _client(with_levers, world_file) as sim:
        sim.set_sim_state(SimState.PAUSED)
        one_round(sim)
        made = sorted(c.srv_name for c in sim._node.clients)
        for _ in range(4):
            one_round(sim)
        assert sorted(c.srv_name for c in sim._node.clients) == made
