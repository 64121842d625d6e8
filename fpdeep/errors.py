"""The one exception type users see: a clear, single-paragraph message, exit status 2."""

from __future__ import annotations


class FpdeepError(Exception):
    """Bad input or an impossible request, explained for a user. The CLI prints it and exits 2."""

    exit_code = 2


def require_positive_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 1 (not a bool), else an FpdeepError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FpdeepError(f"{name} must be a positive integer, got {value!r}")
    return value


def require_non_negative_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 0 (not a bool), else an FpdeepError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FpdeepError(f"{name} must be a non-negative integer, got {value!r}")
    return value


class ModelError(FpdeepError):
    """The ONNX model cannot be read or is not supported."""


class FpdeepWarning(UserWarning):
    """Something fpdeep does on the user's say-so but would not choose (e.g. a forced tool)."""
