"""Per-channel Scale (Mul by a trainable constant) and Bias (Add of one); ``docs/numerics.md`` §16.

The parameter holds one value per channel (shape (C,), (C, 1, 1) or (1, C, 1, 1)) or a single
value; here it is flattened to ``v`` (C,) or (1,) and broadcast over the batch and (H, W).
Scale's accumulators have the fractional bits of the product ``e · x`` (``fe + fx``), Bias's those
of ``e`` (``fe``), as a Conv weight's and bias's do.
"""

from __future__ import annotations

import numpy as np

from fpdeep.numerics import ACC_WIDTH, Format, as_int, convert, requantise, wrap


def _channels(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``v`` (C,) or (1,) shaped to broadcast along axis 1 of ``x``."""
    return np.asarray(v).reshape(1, -1, *([1] * (x.ndim - 2)))


def _reduce(t: np.ndarray, size: int) -> np.ndarray:
    """Sum over the batch and spatial axes (and the channels too for a single value)."""
    axes = (0, *range(2, t.ndim)) if size > 1 else tuple(range(t.ndim))
    return t.sum(axis=axes).reshape(size)


def scale_forward(x: np.ndarray, s: np.ndarray, *, x_fmt: Format, s_fmt: Format,
                  out_fmt: Format) -> np.ndarray:
    """``y = requant(x · s, fx + fs − fy)``."""
    prod = as_int(x, "Scale input") * _channels(as_int(s, "Scale value"), x)
    return requantise(prod, x_fmt.frac + s_fmt.frac - out_fmt.frac, out_fmt)


def scale_backward(e: np.ndarray, s: np.ndarray, *, e_fmt: Format, s_fmt: Format,
                   out_fmt: Format) -> np.ndarray:
    """``dx = requant(e · s, fe + fs − fe')``."""
    prod = as_int(e, "Scale error") * _channels(as_int(s, "Scale value"), e)
    return requantise(prod, e_fmt.frac + s_fmt.frac - out_fmt.frac, out_fmt)


def scale_gradient(e: np.ndarray, x: np.ndarray, size: int, *,
                   acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Batch-sum accumulator ``Σ_{b,h,w} e · x`` per channel (``fe + fx`` bits)."""
    return wrap(_reduce(as_int(e, "Scale error") * as_int(x, "Scale input"), size), acc_width)


def bias_forward(x: np.ndarray, b: np.ndarray, *, x_fmt: Format, b_fmt: Format,
                 out_fmt: Format) -> np.ndarray:
    """Align both to the larger fraction (exact left shifts), add, requantise once."""
    top = max(x_fmt.frac, b_fmt.frac)
    acc = (as_int(x, "Bias input") << (top - x_fmt.frac)) + (
        _channels(as_int(b, "Bias value"), x) << (top - b_fmt.frac))
    return requantise(acc, top - out_fmt.frac, out_fmt)


def bias_backward(e: np.ndarray, *, e_fmt: Format, out_fmt: Format) -> np.ndarray:
    return convert(as_int(e, "Bias error"), e_fmt, out_fmt)


def bias_gradient(e: np.ndarray, size: int, *, acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Batch-sum accumulator ``Σ_{b,h,w} e`` per channel (``fe`` bits)."""
    return wrap(_reduce(as_int(e, "Bias error"), size), acc_width)


def scale_forward_float(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x * _channels(np.asarray(s, np.float64), x)


def scale_backward_float(e: np.ndarray, s: np.ndarray) -> np.ndarray:
    return scale_forward_float(e, s)


def scale_gradient_float(e: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    return _reduce(np.asarray(e, np.float64) * np.asarray(x, np.float64), size)


def bias_forward_float(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x + _channels(np.asarray(b, np.float64), x)


def bias_gradient_float(e: np.ndarray, size: int) -> np.ndarray:
    return _reduce(np.asarray(e, np.float64), size)
