"""Residual Add, the error fan-out to its inputs, and error fan-in (``docs/numerics.md`` §8).

Fan-out: Add passes its output error unchanged to every input. Fan-in: a tensor read by
several layers receives the saturated sum of their error contributions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fpdeep.numerics import Format, as_int, convert, requantise, saturate


def forward(xs: Sequence[np.ndarray], *, x_fmts: Sequence[Format], out_fmt: Format) -> np.ndarray:
    """Align every input to the largest fraction (exact left shifts), add, requantise once."""
    top = max(f.frac for f in x_fmts)
    acc = sum(as_int(x, "Add input") << (top - f.frac) for x, f in zip(xs, x_fmts, strict=True))
    return requantise(acc, top - out_fmt.frac, out_fmt)


def backward(e: np.ndarray, *, e_fmt: Format, out_fmts: Sequence[Format]) -> tuple[np.ndarray, ...]:
    """The output error, re-expressed in each input's error format."""
    e = as_int(e, "Add error")
    return tuple(convert(e, e_fmt, f) for f in out_fmts)


def error_fan_in(parts: Sequence[np.ndarray], *, fmt: Format) -> np.ndarray:
    """Error of a tensor read by several layers: exact sum of the parts (each already in the
    tensor's error format ``fmt``), saturated once."""
    return saturate(sum(as_int(p, "error contribution") for p in parts), fmt)


def forward_float(xs: Sequence[np.ndarray]) -> np.ndarray:
    return sum(np.asarray(x, np.float64) for x in xs)


def backward_float(e: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    return (np.asarray(e, np.float64),) * n


def error_fan_in_float(parts: Sequence[np.ndarray]) -> np.ndarray:
    return sum(np.asarray(p, np.float64) for p in parts)
