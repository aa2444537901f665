"""The one table between the protocol's typed errors and ``simulation_interfaces`` result codes.

The server turns an error a handler raises into the code of the response (:func:`result_for`);
the client turns a response's code back into the error (:func:`raise_for`). Generic codes are
``simulation_interfaces/msg/Result``'s; a service may define its own (``SpawnEntity``'s
``NAME_NOT_UNIQUE``, ``SetEntityState``'s ``INVALID_POSE``, ...), looked up by constant name on
the response type, since their numbers overlap from one service to the next.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simulation_interfaces.msg import Result

from ..errors import (
    EntityExistsError,
    InvalidNameError,
    InvalidNamespaceError,
    InvalidOperationError,
    InvalidPoseError,
    ResourceNotFoundError,
    SdfError,
    SimulatorError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from ..protocol import Lever

GENERIC: dict[type[SimulatorError], int] = {
    UnknownEntityError: Result.RESULT_NOT_FOUND,
    UnsupportedFeatureError: Result.RESULT_FEATURE_UNSUPPORTED,
    InvalidOperationError: Result.RESULT_INCORRECT_STATE,
    SimulatorError: Result.RESULT_OPERATION_FAILED,
}
SPECIFIC: dict[type[SimulatorError], str] = {  # error: the constant's name on the response
    InvalidPoseError: "INVALID_POSE",
    EntityExistsError: "NAME_NOT_UNIQUE",
    InvalidNameError: "NAME_INVALID",
    InvalidNamespaceError: "NAMESPACE_INVALID",
    ResourceNotFoundError: "NO_RESOURCE",
    SdfError: "RESOURCE_PARSE_ERROR",
    UnsupportedFeatureError: "UNSUPPORTED_FORMAT",
    InvalidOperationError: "INCORRECT_TRANSITION",
}
GENERIC_ERRORS = {code: error for error, code in GENERIC.items()}
SPECIFIC_ERRORS = {name: error for error, name in SPECIFIC.items()}


def ok() -> Result:
    return Result(result=Result.RESULT_OK)


def code_for(error: Exception, response_type: type) -> int:
    """The code of ``error`` in a response of ``response_type``: the most specific class of the
    error that the table knows, preferring the service's own code to the generic one."""
    for cls in type(error).__mro__:
        name = SPECIFIC.get(cls)
        if name is not None and hasattr(response_type, name):
            return getattr(response_type, name)
        if cls in GENERIC:
            return GENERIC[cls]
    return Result.RESULT_OPERATION_FAILED


def result_for(error: Exception, response_type: type) -> Result:
    return Result(result=code_for(error, response_type), error_message=str(error))


def error_class(code: int, response_type: type) -> type[SimulatorError]:
    """The typed error of a non-OK ``code`` in a response of ``response_type``."""
    if code in GENERIC_ERRORS:
        return GENERIC_ERRORS[code]
    for name, error in SPECIFIC_ERRORS.items():
        if getattr(response_type, name, None) == code:
            return error
    return SimulatorError


def raise_for(response: Any, what: str, unknown: Callable[[], str] = lambda: "?",
              lever: Lever | None = None) -> None:
    """Raise the typed error of ``response.result`` unless it is OK.

    ``what`` (the call, the entity) starts the message; ``unknown()`` names the entity a
    NOT_FOUND answer is about; ``lever`` makes an unsupported feature an UnsupportedLeverError.
    """
    code = response.result.result
    if code == Result.RESULT_OK:
        return
    message = f"{what}: {response.result.error_message or f'result code {code}'}"
    error = error_class(code, type(response))
    if error is UnknownEntityError:
        raise UnknownEntityError(unknown(), message)
    if lever is not None and error is UnsupportedFeatureError:
        raise UnsupportedLeverError(lever, why=message)
    if issubclass(error, SdfError):  # the server's message names the file and line
        raise error(response.result.error_message, file=what)
    raise error(message)
