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


def require_number_in(name: str, value: object, lo: float, hi: float, *,
                      unit: str = "") -> float:
    """``value`` as a float if it is a number in (``lo``, ``hi``] (not a bool, not NaN), else an
    FpdeepError naming ``name`` and the range."""
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    if bad or not lo < value <= hi:
        top = "" if hi == float("inf") else f" and at most {hi:g}"
        raise FpdeepError(f"{name} must be a number above {lo:g}{top}{unit}, got {value!r}")
    return float(value)


def require_rate(name: str, value: object, most: float) -> float:
    """``value`` as a float if it is a number in [0, ``most``] (not a bool, not NaN), else an
    FpdeepError naming ``name`` and the range."""
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    if bad or not 0 <= value <= most:
        raise FpdeepError(f"{name} must be a rate from 0 to {most:g}, got {value!r}")
    return float(value)


def require_positive_number(name: str, value: object, *, unit: str = "") -> float:
    """``value`` as a float if it is a positive finite number, else an FpdeepError."""
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    if bad or not 0 < value < float("inf"):
        raise FpdeepError(f"{name} must be a positive number{unit}, got {value!r}")
    return float(value)


class ModelError(FpdeepError):
    """The ONNX model cannot be read or is not supported."""


class FpdeepWarning(UserWarning):
    """Something fpdeep does on the user's say-so but would not choose (e.g. a forced tool)."""
