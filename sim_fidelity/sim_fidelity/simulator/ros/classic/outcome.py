"""How ``gazebo_msgs`` answers carry the protocol's typed errors: ``success`` and a
``status_message`` (some responses, e.g. SetEntityState's, have only ``success``).

sim_server writes ``"<ErrorClass>: <message>"`` (:func:`message_for`); Gazebo classic writes its
own sentences, of which a few name the error well enough (:data:`CLASSIC_PATTERNS`). The client
turns either back into the typed error (:func:`error_for`).
"""
from __future__ import annotations

import re

from ...errors import (
    EntityExistsError,
    InvalidNameError,
    InvalidOperationError,
    InvalidPoseError,
    ResourceNotFoundError,
    SdfError,
    SimulatorError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)

ERRORS: dict[str, type[SimulatorError]] = {cls.__name__: cls for cls in (
    EntityExistsError, InvalidNameError, InvalidOperationError, InvalidPoseError,
    ResourceNotFoundError, SdfError, SimulatorError, UnknownEntityError, UnsupportedFeatureError,
    UnsupportedLeverError)}
CLASSIC_PATTERNS: tuple[tuple[re.Pattern, type[SimulatorError]], ...] = (
    (re.compile(r"does not exist|not found"), UnknownEntityError),
    (re.compile(r"already exists"), EntityExistsError),
    (re.compile(r"Failed to parse XML|Failed to find a model"), SdfError),
)
TYPED = re.compile(r"(\w+Error): (.*)", re.S)


def message_for(error: Exception) -> str:
    """The status message sim_server sends for ``error``."""
    name = type(error).__name__
    return f"{name if name in ERRORS else 'SimulatorError'}: {error}"


def error_for(message: str, what: str, entity: str = "") -> SimulatorError:
    """The typed error of a failed answer's ``message``; ``what`` names the call, ``entity`` the
    entity it was about."""
    typed = TYPED.fullmatch(message)
    if typed and typed.group(1) in ERRORS:
        cls, text = ERRORS[typed.group(1)], typed.group(2)
    else:
        cls = next((c for rx, c in CLASSIC_PATTERNS if rx.search(message)), SimulatorError)
        text = message or "failed (no message)"
    if cls is UnknownEntityError:
        return UnknownEntityError(entity or "?", f"{what}: {text}")
    if cls is UnsupportedLeverError:
        return UnsupportedLeverError("?", entity, why=f"{what}: {text}")
    if issubclass(cls, SdfError):
        return cls(text, file=what)
    return cls(f"{what}: {text}")
