"""A listener for process-level tests: a node in a context of its own, in a given DDS domain, that
keeps the latest and every message of each topic it subscribes to (spun on a daemon thread)."""
from __future__ import annotations

import threading


class Listener:
    """A node in its own context that keeps the latest message of each subscribed topic."""

    def __init__(self, domain: int, topics: dict):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("test_listener", context=self.context)
        self.latest: dict = {}
        self.received: dict = {t: [] for t in topics}  # every message, in order
        for topic, msg_type in topics.items():
            self.node.create_subscription(msg_type, topic, self._keep(topic), 50)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        threading.Thread(target=self._spin, daemon=True).start()

    def _keep(self, topic):
        def keep(msg):
            self.latest[topic] = msg
            self.received[topic].append(msg)
        return keep

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # the context was shut down
            pass

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.context.try_shutdown()
