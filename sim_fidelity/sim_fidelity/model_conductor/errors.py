"""Errors of the model conductor; every one is a :class:`~sim_fidelity.errors.SimFidelityError`."""
from __future__ import annotations

from ..errors import SimFidelityError


class ConductorError(SimFidelityError):
    """Base class of the model conductor's errors."""


class ConductorConfigError(ConductorError):
    """An ensemble configuration that cannot be used; names the file and the key path."""

    def __init__(self, file: str, key: str, message: str):
        self.file, self.key, self.message = str(file), key, message
        super().__init__(f"{self.file}: {key or '<top>'}: {message}")


class ModelError(ConductorError):
    """A model that cannot do what the conductor asked (initialise, step, take, release)."""

    def __init__(self, model: str, message: str):
        self.model = model
        super().__init__(f"model '{model}': {message}")


class ResponsibilityError(ConductorError):
    """A transfer that is not possible: unknown entity or attribute, or a model that cannot hold
    it."""


class ExpressionError(ConductorError):
    """An expression that cannot be parsed or evaluated (names the expression and the reason)."""
