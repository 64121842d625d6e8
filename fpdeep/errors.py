"""The one exception type users see: a clear, single-paragraph message, exit status 2."""

from __future__ import annotations


class FpdeepError(Exception):
    """Bad input or an impossible request, explained for a user. The CLI prints it and exits 2."""

    exit_code = 2


class ModelError(FpdeepError):
    """The ONNX model cannot be read or is not supported."""
