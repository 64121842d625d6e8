"""MaxPool, AveragePool and GlobalAveragePool (``docs/numerics.md`` §6-7).

Max pool: padded positions never win; ties go to the first maximum in row-major window order
(kh outer, kw inner); backward routes each output error to its argmax and overlapping windows
accumulate. Average pool: exact window sum times a per-count reciprocal ``M_c * 2**-r`` (one
``r`` per layer, ``numerics.reciprocal_table``), one requantisation.
"""

from __future__ import annotations

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import windows
from fpdeep.ir import PoolAttrs
from fpdeep.numerics import (
    ACC_WIDTH,
    Format,
    as_int,
    convert,
    reciprocal_table,
    requantise,
    wrap,
)


def global_attrs(in_hw: tuple[int, int]) -> PoolAttrs:
    """GlobalAveragePool is AveragePool with one window covering the whole map."""
    return PoolAttrs(kernel=(int(in_hw[0]), int(in_hw[1])))


def out_hw(attrs: PoolAttrs, in_hw: tuple[int, int]) -> tuple[int, int]:
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = attrs.kernel, attrs.stride, attrs.pads
    return (
        windows.out_size(in_hw[0], kh, sh, pt, pb, attrs.ceil_mode),
        windows.out_size(in_hw[1], kw, sw, pl, pr, attrs.ceil_mode),
    )


def _windows(x: np.ndarray, attrs: PoolAttrs, fill: float) -> tuple[np.ndarray, tuple, tuple]:
    in_hw = x.shape[2:]
    ohw = out_hw(attrs, in_hw)
    extra = windows.tail_extra(in_hw, attrs.kernel, attrs.stride, attrs.pads, ohw)
    xp = windows.pad(x, attrs.pads, extra, fill)
    return windows.extract(xp, attrs.kernel, attrs.stride, ohw), xp.shape[2:], ohw


def _scatter_back(cols: np.ndarray, attrs: PoolAttrs, padded_hw: tuple,
                  in_hw: tuple[int, int]) -> np.ndarray:
    return windows.crop(windows.scatter(cols, padded_hw, attrs.stride), attrs.pads, in_hw)


# ------------------------------------------------------------------------------- max pool


def argmax(x: np.ndarray, attrs: PoolAttrs) -> np.ndarray:
    """Index (kh * Kw + kw) of the first maximum of each window, (B, C, Ho, Wo)."""
    x = np.asarray(x)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(np.int64).min
    win, _, _ = _windows(x, attrs, fill)
    flat = win.reshape(*win.shape[:4], -1)
    idx = flat.argmax(axis=-1)  # numpy returns the first occurrence: the stated tie-break
    if np.any(np.take_along_axis(flat, idx[..., None], -1) == fill):
        raise FpdeepError("MaxPool window lies entirely in the padding; pads must be < kernel")
    return idx


def _max_forward(x: np.ndarray, attrs: PoolAttrs) -> np.ndarray:
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(np.int64).min
    win, _, _ = _windows(x, attrs, fill)
    flat = win.reshape(*win.shape[:4], -1)
    return np.take_along_axis(flat, argmax(x, attrs)[..., None], -1)[..., 0]


def _max_backward(e: np.ndarray, x: np.ndarray, attrs: PoolAttrs) -> np.ndarray:
    idx = argmax(x, attrs)
    _, padded_hw, _ = _windows(x, attrs, 0)
    kh, kw = attrs.kernel
    onehot = np.arange(kh * kw) == idx[..., None]
    cols = (onehot * e[..., None]).reshape(*e.shape, kh, kw)
    return _scatter_back(cols, attrs, padded_hw, x.shape[2:])


def max_forward(x: np.ndarray, *, attrs: PoolAttrs, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    return convert(_max_forward(as_int(x, "MaxPool input"), attrs), x_fmt, out_fmt)


def max_backward(e: np.ndarray, x: np.ndarray, *, attrs: PoolAttrs, e_fmt: Format,
                 out_fmt: Format, acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Route each error to its window's argmax; overlaps add exactly, then one requantisation."""
    acc = _max_backward(as_int(e, "MaxPool error"), as_int(x, "MaxPool input"), attrs)
    return requantise(wrap(acc, acc_width), e_fmt.frac - out_fmt.frac, out_fmt)


def max_forward_float(x: np.ndarray, *, attrs: PoolAttrs) -> np.ndarray:
    return _max_forward(np.asarray(x, np.float64), attrs)


def max_backward_float(e: np.ndarray, x: np.ndarray, *, attrs: PoolAttrs) -> np.ndarray:
    return _max_backward(np.asarray(e, np.float64), np.asarray(x, np.float64), attrs)


# --------------------------------------------------------------------------- average pool


def counts(attrs: PoolAttrs, in_hw: tuple[int, int]) -> np.ndarray:
    """Divisor of each output position (Ho, Wo): elements of the window inside the input, or
    inside input and pads when ``count_include_pad``; never the ceil-mode overhang."""
    h, w = in_hw
    inside = np.ones((1, 1, h, w), dtype=np.int64)
    if attrs.count_include_pad:
        inside = windows.pad(inside, attrs.pads, value=1)
        pads = (0, 0, 0, 0)
        ohw = out_hw(attrs, in_hw)
        extra = windows.tail_extra(in_hw, attrs.kernel, attrs.stride, attrs.pads, ohw)
        grid = windows.pad(inside, pads, extra, 0)
        win = windows.extract(grid, attrs.kernel, attrs.stride, ohw)
    else:
        win, _, _ = _windows(inside, attrs, 0)
    return win.sum(axis=(-2, -1))[0, 0]


def _avg_sum(x: np.ndarray, attrs: PoolAttrs) -> np.ndarray:
    win, _, _ = _windows(x, attrs, 0)
    return win.sum(axis=(-2, -1))


def _avg_spread(g: np.ndarray, attrs: PoolAttrs, in_hw: tuple[int, int]) -> np.ndarray:
    """Give every element of each window the window's value ``g`` (B, C, Ho, Wo); overlaps add."""
    ohw = out_hw(attrs, in_hw)
    extra = windows.tail_extra(in_hw, attrs.kernel, attrs.stride, attrs.pads, ohw)
    (pt, pl, pb, pr) = attrs.pads
    padded_hw = (in_hw[0] + pt + pb + extra[0], in_hw[1] + pl + pr + extra[1])
    cols = np.broadcast_to(g[..., None, None], (*g.shape, *attrs.kernel))
    return _scatter_back(cols, attrs, padded_hw, in_hw)


def avg_forward(x: np.ndarray, *, attrs: PoolAttrs, x_fmt: Format, out_fmt: Format,
                acc_width: int = ACC_WIDTH) -> np.ndarray:
    """``requantise(sum(window) * M_c, x.frac + r -> out)``."""
    x = as_int(x, "AveragePool input")
    mult, r = reciprocal_table(counts(attrs, x.shape[2:]))
    acc = wrap(_avg_sum(x, attrs), acc_width) * mult
    return requantise(acc, x_fmt.frac + r - out_fmt.frac, out_fmt)


def avg_backward(e: np.ndarray, *, attrs: PoolAttrs, in_hw: tuple[int, int], e_fmt: Format,
                 out_fmt: Format, acc_width: int = ACC_WIDTH) -> np.ndarray:
    """``dX = requantise(sum over windows holding the element of e * M_c, e.frac + r -> out)``."""
    mult, r = reciprocal_table(counts(attrs, in_hw))
    acc = _avg_spread(as_int(e, "AveragePool error") * mult, attrs, in_hw)
    return requantise(wrap(acc, acc_width), e_fmt.frac + r - out_fmt.frac, out_fmt)


def avg_forward_float(x: np.ndarray, *, attrs: PoolAttrs) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return _avg_sum(x, attrs) / counts(attrs, x.shape[2:])


def avg_backward_float(e: np.ndarray, *, attrs: PoolAttrs, in_hw: tuple[int, int]) -> np.ndarray:
    return _avg_spread(np.asarray(e, np.float64) / counts(attrs, in_hw), attrs, in_hw)
