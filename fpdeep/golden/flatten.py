"""Flatten (C-order over C, H, W) and Identity: data movement, formats re-expressed."""

from __future__ import annotations

import numpy as np

from fpdeep.numerics import Format, as_int, convert


def forward(x: np.ndarray, *, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    x = as_int(x, "Flatten input")
    return convert(x.reshape(x.shape[0], -1), x_fmt, out_fmt)


def backward(e: np.ndarray, *, in_shape: tuple[int, ...], e_fmt: Format,
             out_fmt: Format) -> np.ndarray:
    e = as_int(e, "Flatten error")
    return convert(e.reshape(e.shape[0], *in_shape), e_fmt, out_fmt)


def forward_float(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x.reshape(x.shape[0], -1)


def backward_float(e: np.ndarray, *, in_shape: tuple[int, ...]) -> np.ndarray:
    e = np.asarray(e, np.float64)
    return e.reshape(e.shape[0], *in_shape)
