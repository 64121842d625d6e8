"""ReLU and its backward mask (``docs/numerics.md`` §5)."""

from __future__ import annotations

import numpy as np

from fpdeep.numerics import Format, as_int, convert


def forward(x: np.ndarray, *, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    """``max(x, 0)``, re-expressed in the output format (identity when the formats agree)."""
    return convert(np.maximum(as_int(x, "Relu input"), 0), x_fmt, out_fmt)


def backward(e: np.ndarray, x: np.ndarray, *, e_fmt: Format, out_fmt: Format) -> np.ndarray:
    """The error passes where the forward input was strictly positive, else 0."""
    masked = np.where(as_int(x, "Relu input") > 0, as_int(e, "Relu error"), 0)
    return convert(masked, e_fmt, out_fmt)


def forward_float(x: np.ndarray) -> np.ndarray:
    return np.maximum(np.asarray(x, np.float64), 0.0)


def backward_float(e: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(x) > 0, np.asarray(e, np.float64), 0.0)
