"""Fully connected layer: forward, backward error, weight gradient; integer and float.

Shapes: x (B, In), w (Out, In) as PyTorch Linear / Gemm transB=1, bias (Out,), errors (B, Out).
The same accumulate-then-requantise-once rule as Conv (``docs/numerics.md`` §4).
"""

from __future__ import annotations

import numpy as np

from fpdeep.golden.conv import bias_aligned
from fpdeep.numerics import ACC_WIDTH, Format, as_int, requantise, wrap


def forward(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, *, x_fmt: Format,
            w_fmt: Format, out_fmt: Format, acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Integer ``y = x W^T + b``: accumulate at ``x.frac + w.frac``, wrap, requantise once."""
    x, w = as_int(x, "FC input"), as_int(w, "FC weight")
    acc = x @ w.T
    if b is not None:
        acc = acc + bias_aligned(as_int(b, "FC bias"), x_fmt)[None, :]
    return requantise(wrap(acc, acc_width), x_fmt.frac + w_fmt.frac - out_fmt.frac, out_fmt)


def backward(e: np.ndarray, w: np.ndarray, *, e_fmt: Format, w_fmt: Format, out_fmt: Format,
             acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Integer ``dx = e W``: accumulate at ``e.frac + w.frac``, wrap, requantise once."""
    acc = as_int(e, "FC error") @ as_int(w, "FC weight")
    return requantise(wrap(acc, acc_width), e_fmt.frac + w_fmt.frac - out_fmt.frac, out_fmt)


def weight_gradient(e: np.ndarray, x: np.ndarray, *,
                    acc_width: int = ACC_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """Batch-sum accumulators ``dW = e^T x`` (frac ``e.frac + x.frac``), ``db = sum e``."""
    e, x = as_int(e, "FC error"), as_int(x, "FC input")
    return wrap(e.T @ x, acc_width), wrap(e.sum(axis=0), acc_width)


def forward_float(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    y = np.asarray(x, np.float64) @ np.asarray(w, np.float64).T
    return y if b is None else y + np.asarray(b, np.float64)[None, :]


def backward_float(e: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.asarray(e, np.float64) @ np.asarray(w, np.float64)


def weight_gradient_float(e: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e, x = np.asarray(e, np.float64), np.asarray(x, np.float64)
    return e.T @ x, e.sum(axis=0)
