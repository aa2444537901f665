"""Errors of the fidelity manager; every one is a :class:`~sim_fidelity.errors.SimFidelityError`."""
from __future__ import annotations

from ..errors import SimFidelityError


class FidelityError(SimFidelityError):
    """Base class of the fidelity manager's errors."""


class ConfigError(FidelityError):
    """A fidelity configuration that cannot be used; names the file and the key path."""

    def __init__(self, file: str, key: str, message: str):
        self.file, self.key, self.message = str(file), key, message
        super().__init__(f"{self.file}: {key or '<top>'}: {message}")


class ParamError(FidelityError):
    """A bad signaler parameter; ``key`` is the parameter's path below the signaler."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


class TreeExpansionError(FidelityError):
    """A tree group that does not expand; ``key`` is relative to the group (e.g. ``objects[1]``)."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


class LevelError(FidelityError, ValueError):
    """A value that is no fidelity level (also a ValueError, like a bad enum value)."""


class SettleError(FidelityError, ValueError):
    """A settle period that is no finite number of seconds >= 0."""


class UnknownNameError(FidelityError, KeyError):
    """No tree, signaler type or action of that name (also a KeyError, as a failed lookup)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
