"""sim_server's handlers called in this process: a SimServer on a fresh engine of a small world
(boxes resting, floating and a wall, a servo pendulum) on a real node that is never spun, each
service's handler run as the service would run it; and a response's result code. Import it after
``pytest.importorskip`` of the interface packages (the server needs them)."""
from __future__ import annotations

from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.ros.server import SimServer

WORLD = world("handlers", GROUND, box_model("resting", 0, 0, 0.2), box_model("floating", 2, 0, 1.0),
              box_model("wall", 5, 0, 0.5, static=True), servo_pendulum())
BOX = "<sdf version='1.9'>" + box_model("spawned", 0, 0, 0) + "</sdf>"


class Served:
    """A SimServer on a fresh engine; ``call(name, **fields)`` runs a service's handler."""

    def __init__(self, context, name: str):
        import rclpy
        self.node = rclpy.create_node(name, context=context)
        self.engine = MujocoEngine.from_string(WORLD)
        self.server = SimServer(self.node, self.engine, real_time_factor=0.0, paused=True,
                                publish_rate=0.0, odometry=[])
        self.handlers = {s.srv_name: (s.srv_type, s.callback) for s in self.node.services}

    def call(self, service: str, request=None, **fields):
        kind, handler = self.handlers[service]
        request = request or kind.Request(**fields)
        return handler(request, kind.Response())

    def close(self) -> None:
        self.server.stop()
        self.node.destroy_node()


def code(response) -> int:
    return response.result.result
