"""A static-copy swap cut off between its delete and its spawn loses no model.

The fallback swaps a model for its static copy by a delete and a spawn (neither interface
renames, so the copy cannot be spawned first under another name). Here a SIGINT arrives right
after the deletes of a lowering (a client that signals its own process on taking the first
delete's answer: the deletes are all answered then, no spawn is sent), inside
:func:`raise_on_signals` and a ``with FidelityManager`` block, as in a script the user stops:
the manager's restore gives the deleted models back (the client journalled the swaps), and
every box is there, dynamic, where it was.

One sim_server for the module, paused, serving both interfaces (``gazebo_msgs`` under
``/gazebo``) without lever services, as Gazebo would; each client flavour in turn.
"""
from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from ros_processes import CLIENT_TIMEOUT_S, REPO, Probe, next_domain, start_node, stop, wait_for
from sdf_snippets import world_keeping

pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
from gazebo_msgs.srv import GetModelProperties  # noqa: E402

from sim_fidelity.fidelity_manager import FidelityManager, Interrupted, Level  # noqa: E402
from sim_fidelity.shutdown import raise_on_signals  # noqa: E402
from sim_fidelity.simulator import EntityKind  # noqa: E402
from sim_fidelity.simulator.ros.classic.client import ClassicRosSimulator  # noqa: E402
from sim_fidelity.simulator.ros.classic.names import qualified  # noqa: E402
from sim_fidelity.simulator.ros.client import RosSimulator  # noqa: E402

WORLD = REPO / "worlds" / "stack_test.sdf"
CONFIG = REPO / "config" / "stack_test.yaml"
BOXES = ["box_0_0_0", "box_0_0_1", "box_0_1_0"]
NAMESPACE = "/gazebo"


class SignalAfterDelete:
    """A client mixin: the first delete answer taken after ``arm()`` signals this process with
    SIGINT, i.e. between the swaps' deletes and their spawns."""

    armed = False
    deleted: list[str]
    models_at_cut: set[str]

    def arm(self) -> None:
        self.armed, self.deleted = True, []

    def _deleted(self, name: str, res) -> None:
        super()._deleted(name, res)
        if self.armed:
            self.armed = False
            self.deleted.append(name)
            self.models_at_cut = set(self.entities(EntityKind.MODEL))
            os.kill(os.getpid(), signal.SIGINT)


class ClassicCut(SignalAfterDelete, ClassicRosSimulator):
    pass


class StandardCut(SignalAfterDelete, RosSimulator):
    pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interrupted_swap")
    world = world_keeping(WORLD, folder / "stack_small.sdf", "box_", BOXES)
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world, "paused": True, "interfaces": "both",
                       "gazebo_namespace": NAMESPACE, "serve_levers": False}, domain,
                      folder / "server.log")
    probe = Probe(domain)
    yield domain, world, probe
    probe.close()
    assert proc.poll() is None, "sim_server died during the tests"
    stop(proc)


def static_flags(probe: Probe) -> dict[str, bool | None]:
    """Per box: static (a copy), not static, or None when the simulator has no such model."""
    client = probe.node.create_client(GetModelProperties,
                                      qualified("get_model_properties", NAMESPACE))
    try:
        assert client.wait_for_service(timeout_sec=CLIENT_TIMEOUT_S)
        futures = {b: client.call_async(GetModelProperties.Request(model_name=b)) for b in BOXES}
        assert wait_for(lambda: all(f.done() for f in futures.values()), CLIENT_TIMEOUT_S)
    finally:
        probe.node.destroy_client(client)
    return {b: (f.result().is_static if f.result().success else None)
            for b, f in futures.items()}


@pytest.mark.parametrize("flavour", [ClassicCut, StandardCut], ids=["gazebo_msgs", "standard"])
def test_sigint_between_delete_and_spawn_loses_no_model(server, flavour):
    domain, world, probe = server
    extra = {"gazebo_namespace": NAMESPACE} if flavour is ClassicCut else {}
    with flavour(domain_id=domain, timeout=CLIENT_TIMEOUT_S, world_file=str(world),
                 **extra) as sim:
        sim.wait_for_server(CLIENT_TIMEOUT_S)
        assert sim.features().static_fallback
        before, _ = sim.get_states(BOXES)
        with pytest.raises(Interrupted):
            with raise_on_signals(), FidelityManager(sim, CONFIG, "adfi-3") as manager:
                sim.arm()
                manager.set_fidelity(".*", Level.LOW)
        assert len(sim.deleted) == 1 and sim.deleted[0] in BOXES  # cut after the deletes
        assert not set(BOXES) & sim.models_at_cut  # every box was deleted
        assert manager.closed
        assert set(BOXES) <= set(sim.entities(EntityKind.MODEL))
        after, _ = sim.get_states(BOXES)
    assert static_flags(probe) == dict.fromkeys(BOXES, False)
    assert np.abs(after[:, :3] - before[:, :3]).max() < 1e-6  # paused: nothing moved
