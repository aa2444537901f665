"""Typed errors of the Simulator protocol; every message names what failed and where."""
from __future__ import annotations

from ..errors import SimFidelityError


class SimulatorError(SimFidelityError):
    """Base class of every error a Simulator raises."""


class UnknownEntityError(SimulatorError, KeyError):
    def __init__(self, name: str, where: str = ""):
        self.name = name
        super().__init__(f"unknown entity '{name}'" + (f" ({where})" if where else ""))

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class InvalidOperationError(SimulatorError):
    """The request is well formed but not possible in the current state or on this entity."""


class EntityExistsError(InvalidOperationError):
    """An entity of that name exists already (a spawn that may not rename)."""


class InvalidNameError(InvalidOperationError):
    """A name that cannot name an entity."""


class InvalidNamespaceError(InvalidOperationError):
    """A ROS namespace the simulator cannot give an entity."""


class UnsupportedFeatureError(SimulatorError):
    """The simulator does not offer what was asked (a filter type, a lever, a format)."""


class UnsupportedLeverError(UnsupportedFeatureError, InvalidOperationError):
    def __init__(self, lever, entity: str = "", why: str = ""):
        self.lever, self.entity = lever, entity
        target = f" on '{entity}'" if entity else ""
        super().__init__(f"lever {getattr(lever, 'name', lever)} is not supported{target}"
                         + (f": {why}" if why else ""))


class InvalidPoseError(SimulatorError, ValueError):
    """A pose or twist that is not finite, or a quaternion that is not a rotation."""


class SimulationDivergedError(SimulatorError):
    """The physics diverged (NaN or huge acceleration) during a step; the engine put the state
    back to where that run of steps began and counted it (``divergences``)."""


class SimulatorTimeoutError(SimulatorError, TimeoutError):
    """The simulator did not answer in time (it may be gone)."""


class SdfError(SimulatorError, ValueError):
    """An SDF file that cannot be loaded; names the file, the line and the element."""

    def __init__(self, message: str, file: str = "<string>", line: int | None = None,
                 element: str = ""):
        self.file, self.line, self.element = file, line, element
        where = file + (f":{line}" if line else "")
        what = f" <{element}>" if element else ""
        super().__init__(f"{where}:{what} {message}")


class ResourceNotFoundError(SdfError):
    """A model URI or file that resolves to nothing."""
