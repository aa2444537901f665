"""Errors of the fidelity manager."""
from __future__ import annotations

from ..errors import SimFidelityError


class ConfigError(SimFidelityError):
    """A fidelity configuration that cannot be used; names the file and the key path."""

    def __init__(self, file: str, key: str, message: str):
        self.file, self.key, self.message = str(file), key, message
        super().__init__(f"{self.file}: {key or '<top>'}: {message}")
