"""The life of every node of this package: parameters, signals and the rclpy plumbing, in one place.

Parameters come from a table of :class:`Param` (default, description, then what is allowed: a
:class:`~sim_fidelity.ranges.Range` for a number, choices for an enumeration, ``regex=True`` for
regular expressions). Whatever ``--ros-args -p``, ``--params-file`` or a launch file passes is
checked against it at start: a double parameter takes integers too (``-p rate:=50`` and launch
arguments type whole numbers as INTEGER), a number must be finite and in its range, an
enumerated one names its allowed values when given another; a violation is one line naming the
parameter, the value and what is allowed, exit code 2. The parameter is then declared with its
own type, read-only (nodes read their parameters once, at start). A new parameter states its
range where it is declared: ``Param(20.0, "ticks per second", above(0))``.

SIGINT and SIGTERM become :class:`~sim_fidelity.shutdown.Interrupted` in the main thread (rclpy's
own handlers are off, so the context stays valid through the clean-up); a second signal, as a
terminal's Ctrl-C to the process group sends, does not cut the clean-up short. The executor spins
on a thread of its own, so a signal is handled at once even while no timer fires (sim-time timers
stop with ``/clock``). Clean-up then runs in this order: the node's own clean-up (restoring what
it changed), the executor, the resources ``start`` entered on the exit stack (a
:class:`~sim_fidelity.simulator.ros.client.RosSimulator`), the node, rclpy. That teardown gets
``TEARDOWN_S``: Fast DDS 3.2 can deadlock in it with the GIL held (docs/testing.md, "Two faults of
Fast DDS 3.2"), so a watchdog outside Python then writes every thread's stack to stderr and ends
the process with exit code 1, instead of a node that never exits.

Importing this module does not import rclpy: the parameter tables (``node_parameters.py``) and the
launch-file checks use :class:`Param` without it.
"""
from __future__ import annotations

import faulthandler
import os
import re
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Callable, Union

from .errors import SimFidelityError
from .ranges import FINITE, Range

ParamValue = Union[bool, int, float, str, list]
Cleanup = Callable[[], int]  # undo what the node did; returns an exit code (0: all restored)
Start = Callable[[object, dict, ExitStack], Union[Cleanup, None]]

SHUTDOWN_WAIT_S = 2.0  # for the executor's callbacks in flight when the node stops
TEARDOWN_S = 10.0  # for the whole teardown after the node's clean-up (the executor's share is
# at most 2 SHUTDOWN_WAIT_S, a RosSimulator's 3 s)
TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
              list: "a list of strings"}


class ParameterError(SimFidelityError):
    """A parameter given to a node has the wrong type or a value outside its choices."""

    def __init__(self, node: str, name: str, problem: str):
        self.node, self.name = node, name
        super().__init__(f"{node}: parameter '{name}' {problem}")


class ArgumentsError(SimFidelityError):
    """Command-line arguments rcl cannot parse (``--ros-args``)."""

    def __init__(self, node: str, problem: str):
        super().__init__(f"{node}: bad --ros-args: {problem}")


@dataclass(frozen=True)
class Param:
    """One node parameter: its default (whose type is the parameter's), what it means, and what
    is allowed: ``range`` for a number (any finite one by default), ``choices`` for an
    enumeration, ``regex`` for a string or list of strings that are regular expressions."""

    default: ParamValue
    description: str
    range: Range = FINITE
    choices: tuple[str, ...] = ()
    regex: bool = False

    @property
    def type(self) -> type:
        return type(self.default)

    def check(self, node: str, name: str, value: object) -> ParamValue:
        """``value`` as this parameter's type (integers widen to double); ParameterError if not."""
        kind = self.type
        ok = {bool: isinstance(value, bool),
              int: isinstance(value, int) and not isinstance(value, bool),
              float: isinstance(value, (int, float)) and not isinstance(value, bool),
              str: isinstance(value, str),
              list: (isinstance(value, (list, tuple))
                     and all(isinstance(v, str) for v in value))}[kind]
        if not ok:
            raise ParameterError(node, name, f"must be {TYPE_NAMES[kind]}, got {value!r}")
        if self.choices and value not in self.choices:
            raise ParameterError(node, name, f"must be one of {', '.join(self.choices)}; "
                                             f"got {value!r}")
        if kind in (int, float) and (problem := self.range.problem(value)) is not None:
            raise ParameterError(node, name, problem)
        if self.regex:
            for pattern in [value] if isinstance(value, str) else value:
                try:
                    re.compile(pattern)
                except re.error as e:
                    raise ParameterError(node, name, f"must be a regular expression; "
                                                     f"{pattern!r}: {e}") from None
        return list(value) if kind is list else kind(value)

    @property
    def constraint(self) -> str:
        """What is allowed, in words (the parameter descriptor's ``additional_constraints``)."""
        if self.choices:
            return f"one of: {', '.join(self.choices)}"
        if self.type in (int, float):
            return str(self.range)
        return "regular expressions" if self.regex else ""


SIGNAL_POLL_S = 0.2  # the main thread's longest sleep while spinning (see Spinner.run)


def declare_parameters(node, table: dict[str, Param]) -> dict[str, ParamValue]:
    """Declare every parameter of ``table`` on ``node``; the checked values by name.

    Each is first declared with dynamic typing to read what was passed whatever its type, then
    declared again with its table type, description and choices, read-only.
    """
    from rcl_interfaces.msg import ParameterDescriptor

    values = {}
    for name, param in table.items():
        given = node.declare_parameter(name, param.default,
                                       ParameterDescriptor(dynamic_typing=True)).value
        value = param.check(node.get_name(), name, given)
        node.undeclare_parameter(name)
        node.declare_parameter(name, value, ParameterDescriptor(
            description=param.description, read_only=True,
            additional_constraints=param.constraint),
            ignore_override=True)
        values[name] = value
    return values


class Spinner:
    """The node's executor, spinning on its own thread until stopped or a callback raises."""

    def __init__(self, node, threads: int):
        from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor

        self.log = node.get_logger()
        self.executor = (MultiThreadedExecutor(num_threads=threads) if threads > 1
                         else SingleThreadedExecutor())
        self.executor.add_node(node)
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._spin, daemon=True, name="node_executor")

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except BaseException as e:  # a callback failed: the main thread re-raises it
            self.error = e
        finally:
            self.finished.set()

    def run(self) -> None:
        """Spin until the executor stops; a callback's exception is raised here."""
        self.thread.start()
        # Only the main thread runs Python's signal handlers, and a signal the kernel gives to
        # another thread (any thread may take a process's signal) does not wake an untimed wait
        # here: wake up every SIGNAL_POLL_S so a handler pending from another thread runs.
        while not self.finished.wait(SIGNAL_POLL_S):
            pass
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        """Stop executing callbacks; those in flight get ``SHUTDOWN_WAIT_S``."""
        from rclpy.exceptions import InvalidHandle

        self.executor.shutdown(timeout_sec=SHUTDOWN_WAIT_S)
        if self.thread.is_alive():
            self.thread.join(SHUTDOWN_WAIT_S)
        # rclpy 9 (Kilted): MultiThreadedExecutor.shutdown destroys its guard condition before
        # its thread pool runs the handlers still queued; each then fails on the guard ("cannot
        # use Destroyable") without having done any work, and rclpy would print the error when
        # the task is collected. Fetch those; report anything else a last callback raised.
        for task in getattr(self.executor, "_futures", ()):
            error = task.exception() if task.done() else None
            if error is not None and not isinstance(error, InvalidHandle):
                self.log.warning(f"a callback failed while the node stopped: {error}")


@contextmanager
def _watched_teardown(seconds: float):
    """On leaving the block (the node's clean-up done, its exit stack about to unwind), a
    watchdog outside Python: still running ``seconds`` later, the process writes every thread's
    stack to stderr and exits 1 (cancelled by ``faulthandler.cancel_dump_traceback_later``)."""
    try:
        yield
    finally:
        faulthandler.dump_traceback_later(seconds, exit=True)


def run_node(name: str, table: dict[str, Param], start: Start, *,
             errors: tuple[type[Exception], ...] = (), threads: int = 1,
             args: list[str] | None = None, overrides: dict | None = None,
             use_sim_time: bool = True, teardown_s: float = TEARDOWN_S) -> int:
    """Create node ``name``, declare ``table``'s parameters, call ``start(node, values, stack)``,
    spin until a signal, then run the clean-up ``start`` returned and close what it entered on
    ``stack``. The exit code: 0, the clean-up's code, or 2 for a bad parameter or one of
    ``errors`` (bad configuration, simulator gone), logged as one line.

    ``overrides`` win over the command line's parameters; ``use_sim_time`` is imposed (managers
    and the controller tick on ``/clock``; the simulator publishes it). A teardown (after the
    clean-up) still running after ``teardown_s`` ends the process: exit code 1, the stacks on
    stderr.
    """
    from .shutdown import Interrupted, raise_on_signals

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    log = None  # rclpy's logger, once rclpy is imported
    code = 0
    with raise_on_signals(ignore_after=True):  # from before rclpy loads: a signal there counts
        try:
            import rclpy
            from rclpy.logging import get_logger
            from rclpy.parameter import Parameter
            from rclpy.signals import SignalHandlerOptions

            log = get_logger(name)
            from rclpy.impl.implementation_singleton import rclpy_implementation

            with ExitStack() as stack, _watched_teardown(teardown_s):
                try:
                    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
                except rclpy_implementation.RCLError as e:  # rcl's words, without its source line
                    raise ArgumentsError(name, str(e).split(", at /")[0]) from None
                stack.callback(rclpy.try_shutdown)
                given = dict(overrides or {}, use_sim_time=use_sim_time)
                node = rclpy.create_node(name, parameter_overrides=[
                    Parameter(k, value=v) for k, v in given.items()])
                stack.callback(node.destroy_node)
                log = node.get_logger()
                values = declare_parameters(node, table)
                cleanup = start(node, values, stack)
                spinner = Spinner(node, threads)
                stack.callback(spinner.stop)  # before the resources start entered are closed
                try:
                    spinner.run()
                except Interrupted as e:
                    log.info(f"{e}: shutting down")
                finally:
                    if cleanup is not None:
                        code = cleanup()
        except Interrupted as e:  # while starting, or during a failed start's clean-up
            (print if log is None else log.info)(str(e))
        except (ParameterError, ArgumentsError, *errors) as e:
            log.error(str(e))
            code = 2
        finally:
            faulthandler.cancel_dump_traceback_later()
    return code
