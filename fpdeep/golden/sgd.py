"""Batch-mean scaling of weight-gradient accumulators, SGD update with optional momentum and
weight decay (docs/numerics.md §11-12)."""

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


# ------------------------------------------------- momentum and weight decay (§17)


def check_optimiser(momentum: float, weight_decay: float) -> None:
    """Momentum in [0, 1) and weight decay >= 0, as finite numbers."""
    for name, value, ok in (("momentum", momentum, lambda v: 0 <= v < 1),
                            ("weight_decay", weight_decay, lambda v: v >= 0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and ok(value)
        ):
            allowed = "a number from 0 up to (not including) 1" if name == "momentum" \
                else "a non-negative number"
            raise FpdeepError(f"{name}={value!r} is not valid: give {allowed}")


def momentum_update(w: np.ndarray, g: np.ndarray, v: np.ndarray | None, *, lr: float,
                    momentum: float, weight_decay: float, g_fmt: Format, w_fmt: Format,
                    v_fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """``(w', v')`` of SGD with momentum and weight decay, PyTorch's rule in fixed point:

    ``d = convert(g, grad -> vel) + rshift(w * M_wd, fw + r_wd - fv)`` (the second term only
    when weight_decay > 0); ``v' = saturate(rshift(v * M_mu, r_mu) + d, vel)`` (``v' =
    saturate(d)`` on the first step or without momentum); ``w' = saturate(w - rshift(v' *
    M_lr, fv + r_lr - fw), weight)``.
    """
    check_optimiser(momentum, weight_decay)
    w = as_int(w, "weight")
    d = requantise(as_int(g, "gradient"), g_fmt.frac - v_fmt.frac, v_fmt)
    if weight_decay > 0:
        m_wd, r_wd = scale_constant(float(weight_decay))
        d = d + round_shift(w * m_wd, w_fmt.frac + r_wd - v_fmt.frac)
    if v is not None and momentum > 0:
        m_mu, r_mu = scale_constant(float(momentum))
        d = d + round_shift(as_int(v, "velocity") * m_mu, r_mu)
    v_new = saturate(d, v_fmt)
    m, r = lr_constant(lr)
    return saturate(w - round_shift(v_new * m, v_fmt.frac + r - w_fmt.frac), w_fmt), v_new


def momentum_update_float(w: np.ndarray, g: np.ndarray, v: np.ndarray | None, *, lr: float,
                          momentum: float,
                          weight_decay: float) -> tuple[np.ndarray, np.ndarray]:
    """``d = g + wd * w; v' = mu * v + d`` (``v' = d`` on the first step); ``w' = w - lr * v'``."""
    check_optimiser(momentum, weight_decay)
    lr_constant(lr)
    w = np.asarray(w, np.float64)
    d = np.asarray(g, np.float64) + weight_decay * w
    v_new = d if v is None or momentum == 0 else momentum * np.asarray(v, np.float64) + d
    return w - lr * v_new, v_new
