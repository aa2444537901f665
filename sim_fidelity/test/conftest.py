"""Test-wide setup. The network rule comes first: DDS discovery stays on this machine."""
import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before anything imports rclpy
os.environ.setdefault("HOME", "/tmp")
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
# Each pytest process (each xdist worker) talks DDS in a domain of its own, held by a lock file;
# tests that start servers take further domains from ros_processes.next_domain().
from sim_fidelity.ros_domains import process_domain  # noqa: E402 (no rclpy behind it)

os.environ.setdefault("ROS_DOMAIN_ID", str(process_domain()))
# Every process a test starts writes its threads' stacks on SIGABRT or a crash (ros_processes.stop
# aborts a node that would not stop): a hang in CI leaves its evidence in the node's log.
os.environ.setdefault("PYTHONFAULTHANDLER", "1")
# Fast DDS without type propagation (data/dds/default.xml): its type-lookup replies segfaulted
# participants in their teardown (6 in 1,674 starts of 6 or 12 nodes at once; 0 in 1,320 with it)
os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE",
                      os.path.join(os.path.dirname(__file__), "data", "dds", "default.xml"))

# ---------------------------------------------------------------------- skips in CI
# In CI (CI=true, as CI services set it) every component is there: the interface packages, the
# reference field list, the ROS processes. A test that skips for want of one then FAILS, so a
# missing build step shows up as failures, not as quiet skips. A test whose skip is fine even in
# CI (something optional a user may lack) carries @pytest.mark.optional.
import pytest  # noqa: E402


def in_ci() -> bool:
    """True when the CI environment variable says so (``true``, ``1`` or ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "optional: the test may skip even in CI (it needs something optional)")


def _skip_reason(longrepr) -> str:
    return longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def _fail_in_ci(report, what: str) -> None:
    report.outcome = "failed"
    report.longrepr = (f"CI=true: {what} skipped ({_skip_reason(report.longrepr)}); "
                       "CI has every component, so a skip here means a missing build step")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = (yield).get_result()
    if (report.skipped and in_ci() and not hasattr(report, "wasxfail")
            and item.get_closest_marker("optional") is None):
        _fail_in_ci(report, item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    report = (yield).get_result()
    if report.skipped and in_ci():
        _fail_in_ci(report, f"module {collector.nodeid}")


# ---------------------------------------------------------------------- order
# The longest files first, so that with two workers (`make test`: pytest-xdist, `--dist loadfile
# --no-loadscope-reorder`) none of them starts late and runs alone at the end; the rest keep
# their order. Wall times of a two-worker run (docs/testing.md, "The suite's time").
LONGEST_FIRST = ("test_workspace.py", "test_ackermann_pipeline.py", "test_incremental_tick.py",
                 "test_reality_gap_example.py", "test_truck_scenarios.py",
                 "test_reliability_signals.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest in order


# ---------------------------------------------------------------------- shared fixtures
@pytest.fixture(scope="module")
def context():
    """An rclpy context of the module's own in a fresh domain, for in-process handler tests."""
    import rclpy
    from ros_processes import next_domain
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=next_domain())
    yield ctx
    ctx.try_shutdown()


@pytest.fixture(scope="session")
def small_wall(tmp_path_factory):
    """A truck world with one standing wall of 8 packets (seed 1): the snapshot and look-ahead
    tests' small scene."""
    import numpy as np

    from sim_fidelity.world_generators.truck import (
        Section,
        layout_sections,
        packets_sdf,
        world_sdf,
    )
    lay = layout_sections((Section("wall", 8, 0.6),), np.random.default_rng(1))
    path = tmp_path_factory.mktemp("small_wall") / "small_wall.sdf"
    path.write_text(world_sdf("small_wall", packets_sdf(lay)))
    return path
