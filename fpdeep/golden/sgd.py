"""Batch-mean scaling of weight-gradient accumulators, SGD update (docs/numerics.md §11-12)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.numerics import Format, as_int, requantise, round_shift, saturate, scale_constant

MAX_BATCH = 1 << 16


def batch_constant(batch: int) -> tuple[int, int]:
    """``(M_B, r_B)`` standing for 1/B."""
    if not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise FpdeepError(f"batch size {batch!r} is not supported: use 1 to {MAX_BATCH}")
    return scale_constant(Fraction(1, batch))


def lr_constant(lr: float) -> tuple[int, int]:
    """``(M_lr, r_lr)`` standing for the learning rate (its exact binary value)."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (
        math.isfinite(lr) and lr > 0
    ):
        raise FpdeepError(f"learning rate lr={lr!r} is not valid: give a positive finite number")
    return scale_constant(float(lr))


def mean_gradient(acc: np.ndarray, *, acc_frac: int, batch: int, out_fmt: Format) -> np.ndarray:
    """``g = requantise(acc * M_B, acc_frac + r_B -> out)``: the batch mean in gradient format.

    ``acc`` is a 48-bit accumulator and ``M_B <= 2**16``, so the product fits 64 bits exactly.
    """
    m, r = batch_constant(batch)
    return requantise(as_int(acc, "gradient accumulator") * m, acc_frac + r - out_fmt.frac,
                      out_fmt)


def update(w: np.ndarray, g: np.ndarray, *, lr: float, g_fmt: Format,
           w_fmt: Format) -> np.ndarray:
    """``w' = saturate(w - round_shift(g * M_lr, g.frac + r_lr - w.frac))``."""
    m, r = lr_constant(lr)
    step = round_shift(as_int(g, "gradient") * m, g_fmt.frac + r - w_fmt.frac)
    return saturate(as_int(w, "weight") - step, w_fmt)


def mean_gradient_float(acc: np.ndarray, *, batch: int) -> np.ndarray:
    return np.asarray(acc, np.float64) / batch


def update_float(w: np.ndarray, g: np.ndarray, *, lr: float) -> np.ndarray:
    lr_constant(lr)
    return np.asarray(w, np.float64) - lr * np.asarray(g, np.float64)
