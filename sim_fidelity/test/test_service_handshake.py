"""A lost first answer (the server had not yet discovered the client's reply reader: rmw_fastrtps
drops the answer) is absorbed by the reply-path handshake, against a real server process that
never answers its first request, as a server that lost that answer looks to its client."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ros_processes import next_domain, stop, wait_for

from sim_fidelity.simulator import SimState
from sim_fidelity.simulator.ros.client import RosSimulator

# Answers GetSimulationState, except the first request, which it leaves unanswered for good (an
# async callback awaiting a future nobody completes, in a group that lets the next requests
# in); prints every request it takes.
SWALLOWS_THE_FIRST = """
import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from simulation_interfaces.srv import GetSimulationState
from simulation_interfaces.msg import SimulationState
rclpy.init()
node = rclpy.create_node('swallows_the_first')
taken = []
async def answer(request, response):
    taken.append(1)
    print(f'request {len(taken)}', flush=True)
    if len(taken) == 1:
        await Future()
    response.state.state = SimulationState.STATE_PAUSED
    response.result.result = 1
    return response
node.create_service(GetSimulationState, '/get_simulation_state', answer,
                    callback_group=ReentrantCallbackGroup())
print('serving', flush=True)
rclpy.spin(node)
"""


@pytest.fixture
def swallowing_server(tmp_path: Path):
    domain = next_domain()
    log = tmp_path / "server.log"
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", SWALLOWS_THE_FIRST], env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    assert wait_for(lambda: "serving" in log.read_text(), 60.0), log.read_text()
    yield domain, log
    stop(proc)


def test_a_first_answer_that_never_comes_is_re_asked_and_the_call_answered(swallowing_server):
    domain, log = swallowing_server
    with RosSimulator(domain_id=domain, timeout=60.0) as sim:
        assert sim.sim_state() is SimState.PAUSED, log.read_text()
        text = log.read_text()
        # the handshake's first query is swallowed, a re-sent one answered, then the call itself
        assert "request 3" in text and "request 4" not in text, text
        # proven once: later calls are one request each, no handshake again
        assert sim.sim_state() is SimState.PAUSED and sim.sim_state() is SimState.PAUSED
        assert wait_for(lambda: "request 5" in log.read_text(), 10.0), log.read_text()
    text = log.read_text()
    assert "request 5" in text and "request 6" not in text, text
