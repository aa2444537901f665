"""``simfid record``: real recorder and publisher processes over DDS; every message published
(and acknowledged) before the stop is in the bag, also when SIGINT arrives mid-stream."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ros_processes import next_domain, wait_for
from rosbags.rosbag2 import Reader

from sim_fidelity.reality_gap.messages import typestore
from sim_fidelity.recording.errors import RecordingError
from sim_fidelity.recording.preset import load_preset
from sim_fidelity.recording.writer import BagWriter

REPO = Path(__file__).resolve().parents[1]
TOPICS = {"/rec/a": "std_msgs/msg/Float64", "/rec/b": "std_msgs/msg/Float64",
          "/rec/fix": "sensor_msgs/msg/NavSatFix"}
# Publishes COUNT messages per topic, interleaved, each carrying its index (Float64.data,
# NavSatFix.latitude), a round every millisecond or so (about 3 kHz in all: unpaced, the whole
# stream was published and drained before a signal could land in it); prints 'sent K' every 500
# rounds and 'acked' once the recorder has acknowledged everything.
PUBLISHER = """
import sys, time, rclpy
from rclpy.qos import QoSProfile, HistoryPolicy, ReliabilityPolicy
from std_msgs.msg import Float64
from sensor_msgs.msg import NavSatFix
count = int(sys.argv[1])
rclpy.init()
node = rclpy.create_node('rec_test_publisher')
qos = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
pubs = [node.create_publisher(Float64, '/rec/a', qos),
        node.create_publisher(Float64, '/rec/b', qos),
        node.create_publisher(NavSatFix, '/rec/fix', qos)]
while any(p.get_subscription_count() == 0 for p in pubs):
    rclpy.spin_once(node, timeout_sec=0.05)
print('matched', flush=True)
try:
    for i in range(count):
        pubs[0].publish(Float64(data=float(i)))
        pubs[1].publish(Float64(data=float(i)))
        pubs[2].publish(NavSatFix(latitude=float(i)))
        time.sleep(0.001)
        if i % 500 == 499:
            print(f'sent {i + 1}', flush=True)
    for p in pubs:
        p.wait_for_all_acked()
    print('acked', flush=True)
except Exception as e:  # the recorder went away mid-stream
    print(f'stopped: {e}', flush=True)
rclpy.spin_once(node, timeout_sec=30)
"""


def _preset(tmp_path: Path) -> Path:
    lines = ["storage: mcap", "topics:"] + [f"  - {{topic: {t}, type: {ty}}}"
                                            for t, ty in TOPICS.items()]
    path = tmp_path / "test_preset.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Lines:
    """A process's stdout, line by line, read on a thread."""

    def __init__(self, proc: subprocess.Popen):
        import threading
        self.proc, self.lines = proc, []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def wait(self, predicate, timeout: float = 60.0) -> bool:
        return wait_for(lambda: any(predicate(line) for line in self.lines), timeout)

    def read_to_end(self) -> None:
        """Every line the process wrote (it has ended: the reader meets the end of its output)."""
        self._reader.join(60.0)
        assert not self._reader.is_alive(), "the process's output never ended"


def _start(args: list[str], domain: int) -> tuple[subprocess.Popen, Lines]:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, *args], env=env, cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, Lines(proc)


def _read_bag(path: Path) -> dict[str, list[float]]:
    store, out = typestore(), {t: [] for t in TOPICS}
    with Reader(path) as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        assert types == TOPICS
        assert all(c.msgdef.data for c in reader.connections), "message definitions stored"
        for conn, _stamp, raw in reader.messages():
            msg = store.deserialize_cdr(raw, conn.msgtype)
            out[conn.topic].append(msg.latitude if conn.topic == "/rec/fix" else msg.data)
    return out


def _record(tmp_path: Path, count: int, stop_when) -> tuple[dict, str, Lines]:
    domain = next_domain()
    bag = tmp_path / "bag"
    recorder, rec_out = _start(["-m", "sim_fidelity.cli", "record", "--preset",
                                str(_preset(tmp_path)), "-o", str(bag)], domain)
    publisher = None
    try:
        assert rec_out.wait(lambda line: line.startswith("recording 3 topics")), rec_out.lines
        publisher, pub_out = _start(["-c", PUBLISHER, str(count)], domain)
        assert pub_out.wait(stop_when, timeout=60), pub_out.lines
        recorder.send_signal(signal.SIGINT)
        assert recorder.wait(timeout=60) == 0, rec_out.lines
    finally:
        for proc in (recorder, publisher):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    rec_out.read_to_end()
    pub_out.read_to_end()
    return _read_bag(bag), "\n".join(rec_out.lines), pub_out


def test_everything_acknowledged_before_sigint_is_in_the_bag(tmp_path: Path) -> None:
    count = 1500
    got, out, _ = _record(tmp_path, count, lambda line: line == "acked")
    for topic, values in got.items():
        assert values == list(map(float, range(count))), topic
    assert f"wrote {3 * count} messages" in out and "stopped by SIGINT" in out


def test_sigint_mid_stream_loses_nothing_before_the_stop(tmp_path: Path) -> None:
    count = 20000
    got, out, pub_out = _record(tmp_path, count, lambda line: line == "sent 1000")
    assert "acked" not in pub_out.lines, "the stop came after the stream, not in it"
    for topic, values in got.items():  # a gapless prefix 0, 1, ..., n - 1 on every topic
        assert len(values) >= 1, topic
        assert np.array_equal(values, np.arange(len(values))), topic
    assert f"wrote {sum(map(len, got.values()))} messages" in out


def test_preset_errors_name_the_file_and_entry(tmp_path: Path) -> None:
    assert [t for t, _ in load_preset("ugv").topics][:3] == [
        "/ugv/gps/fix", "/ugv/imu", "/model/ugv/cmd_ackermann"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("topics:\n  - {topic: /x, type: std_msgs/msg/Nope}\n")
    with pytest.raises(RecordingError, match=r"bad.yaml: topics\[0\] '/x': unknown message type"):
        load_preset(str(bad))
    with pytest.raises(RecordingError, match="no recording preset .*presets: .*ugv"):
        load_preset("no_such_preset")
    (tmp_path / "taken").mkdir()
    with pytest.raises(RecordingError, match="taken exists already; give a new name"):
        BagWriter(tmp_path / "taken", [("/x", "std_msgs/msg/Float64")])
