"""A service client's first answer can be lost: prove the reply path before relying on it.

A ROS 2 client calls a service as soon as it has discovered the server's request reader and reply
writer. The server learns of the client's reply reader through its own discovery, which can lag
behind on a loaded machine; rmw_fastrtps then waits 100 ms when answering and drops the answer
("failed to send response (timeout): client will not receive response"), and the client waits
in vain. Discovery announces a participant's readers reliably and in the order they were
created, so a server that answers a client created after all the others has discovered every
reader the participant made before. :func:`prove_reply_path` makes such a client for an
idempotent query and re-sends the query until an answer comes.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

RESEND_FIRST_S = 0.5  # the first re-send; then twice as long each time, up to RESEND_MAX_S
RESEND_MAX_S = 4.0

Wait = Callable[[Callable[[], bool], float], bool]  # wait(done, seconds) -> done() held in time


def prove_reply_path(node: Any, srv_type: type, name: str, timeout: float, wait: Wait) -> bool:
    """Whether the server of ``name`` (an idempotent query of type ``srv_type``) answered a
    client of ``node`` created now, within ``timeout`` seconds; the query is re-sent while no
    answer comes. The client stays with ``node``."""
    client = node.create_client(srv_type, name)
    end = time.monotonic() + timeout
    if not wait(client.service_is_ready, timeout):
        return False
    sent: list = []
    period = RESEND_FIRST_S
    try:
        while True:
            sent.append(client.call_async(srv_type.Request()))
            left = end - time.monotonic()
            if wait(lambda: any(f.done() for f in sent), max(0.0, min(period, left))):
                return True
            if time.monotonic() >= end:
                return False
            period = min(2 * period, RESEND_MAX_S)
    finally:
        for future in sent:
            if not future.done():
                client.remove_pending_request(future)


def polled(done: Callable[[], bool], seconds: float, period: float = 0.02) -> bool:
    """A :data:`Wait` for callers with nothing to be notified by: checks ``done`` every
    ``period`` s."""
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() >= end:
            return False
        time.sleep(period)
    return True
