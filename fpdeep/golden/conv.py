"""Convolution: forward, backward error, weight gradient; integer and float.

A pass is one exact sum of products per output element, wrapped to the accumulator width,
then one requantisation to the output format (``docs/numerics.md`` §4). Shapes: x (B, Ci, H, W),
w (Co, Ci/groups, Kh, Kw) as ONNX, bias (Co,), errors (B, Co, Ho, Wo). With groups g, output
channel co reads only the input channels of its group, ``co // (Co/g)``.
"""

from __future__ import annotations

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import windows
from fpdeep.ir import ConvAttrs
from fpdeep.numerics import ACC_WIDTH, Format, as_int, requantise, wrap


def out_hw(attrs: ConvAttrs, in_hw: tuple[int, int]) -> tuple[int, int]:
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = attrs.kernel, attrs.stride, attrs.pads
    return (
        windows.out_size(in_hw[0], kh, sh, pt, pb, False),
        windows.out_size(in_hw[1], kw, sw, pl, pr, False),
    )


def _check(attrs: ConvAttrs, w: np.ndarray, ci: int) -> int:
    """Validate the weight against the attributes; returns the number of groups."""
    g = attrs.groups
    if w.ndim != 4 or tuple(w.shape[2:]) != tuple(attrs.kernel):
        raise FpdeepError(
            f"Conv weight shape {w.shape} does not match kernel {attrs.kernel} "
            "(Co, Ci/groups, Kh, Kw)"
        )
    if g < 1 or ci % g or w.shape[0] % g or w.shape[1] * g != ci:
        raise FpdeepError(
            f"Conv with groups={g}: {ci} input channels and weight shape {w.shape} do not "
            "split into equal groups"
        )
    return g


def _cols(x: np.ndarray, attrs: ConvAttrs) -> tuple[np.ndarray, tuple[int, int]]:
    """im2col: (B*Ho*Wo, Ci*Kh*Kw) rows in (b, ho, wo) order, columns in (ci, kh, kw) order."""
    ohw = out_hw(attrs, x.shape[2:])
    win = windows.extract(windows.pad(x, attrs.pads), attrs.kernel, attrs.stride, ohw)
    b = x.shape[0]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(b * ohw[0] * ohw[1], -1)
    return cols, ohw


def _grouped(a: np.ndarray, g: int) -> np.ndarray:
    """(N, g*K) -> (g, N, K): one matrix per group for a batched matmul."""
    return a.reshape(a.shape[0], g, -1).transpose(1, 0, 2)


def forward_sum(x: np.ndarray, w: np.ndarray, attrs: ConvAttrs) -> np.ndarray:
    """Exact ``Y[b,co,ho,wo] = sum_{ci,kh,kw} X[b,ci,ho*sh+kh-pt,wo*sw+kw-pl] * W[co,ci,kh,kw]``
    (ci running over the input channels of co's group)."""
    g = _check(attrs, w, x.shape[1])
    cols, (ho, wo) = _cols(x, attrs)
    co = w.shape[0]
    y = _grouped(cols, g) @ w.reshape(g, co // g, -1).transpose(0, 2, 1)  # (g, N, Co/g)
    return y.transpose(1, 0, 2).reshape(x.shape[0], ho, wo, co).transpose(0, 3, 1, 2)


def backward_sum(e: np.ndarray, w: np.ndarray, attrs: ConvAttrs,
                 in_hw: tuple[int, int]) -> np.ndarray:
    """Exact ``dX[b,ci,hi,wi] = sum E[b,co,ho,wo] * W[co,ci,kh,kw]`` over taps reaching it."""
    b, co, ho, wo = e.shape
    g = _check(attrs, w, w.shape[1] * attrs.groups)
    kh, kw = attrs.kernel
    e2 = _grouped(e.transpose(0, 2, 3, 1).reshape(-1, co), g)  # (g, N, Co/g)
    dcols = (e2 @ w.reshape(g, co // g, -1)).transpose(1, 0, 2)  # (N, g, Ci/g*Kh*Kw)
    dcols = dcols.reshape(b, ho, wo, w.shape[1] * g, kh, kw).transpose(0, 3, 1, 2, 4, 5)
    (pt, pl, pb, pr) = attrs.pads
    padded = (in_hw[0] + pt + pb, in_hw[1] + pl + pr)
    return windows.crop(windows.scatter(dcols, padded, attrs.stride), attrs.pads, in_hw)


def weight_gradient_sum(e: np.ndarray, x: np.ndarray,
                        attrs: ConvAttrs) -> tuple[np.ndarray, np.ndarray]:
    """Exact batch sums ``dW[co,ci,kh,kw] = sum_{b,ho,wo} E * X`` and ``db[co] = sum E``."""
    g = attrs.groups
    cols, _ = _cols(x, attrs)
    co = e.shape[1]
    e2 = e.transpose(1, 0, 2, 3).reshape(co, -1)
    dw = e2.reshape(g, co // g, -1) @ _grouped(cols, g)  # (g, Co/g, Ci/g*Kh*Kw)
    return dw.reshape(co, x.shape[1] // g, *attrs.kernel), e2.sum(axis=1)


# ----------------------------------------------------------------------------- fixed point


def forward(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, *, attrs: ConvAttrs,
            x_fmt: Format, w_fmt: Format, out_fmt: Format,
            acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Integer forward pass: accumulate at ``x.frac + w.frac`` bits, wrap, requantise once.

    The bias (weight format) enters the accumulator shifted left by ``x.frac`` to align.
    """
    x, w = as_int(x, "Conv input"), as_int(w, "Conv weight")
    acc = forward_sum(x, w, attrs)
    if b is not None:
        acc = acc + bias_aligned(as_int(b, "Conv bias"), x_fmt)[None, :, None, None]
    return requantise(wrap(acc, acc_width), x_fmt.frac + w_fmt.frac - out_fmt.frac, out_fmt)


def backward(e: np.ndarray, w: np.ndarray, *, attrs: ConvAttrs, in_hw: tuple[int, int],
             e_fmt: Format, w_fmt: Format, out_fmt: Format,
             acc_width: int = ACC_WIDTH) -> np.ndarray:
    """Integer error to the input: accumulate at ``e.frac + w.frac``, wrap, requantise once."""
    acc = backward_sum(as_int(e, "Conv error"), as_int(w, "Conv weight"), attrs, in_hw)
    return requantise(wrap(acc, acc_width), e_fmt.frac + w_fmt.frac - out_fmt.frac, out_fmt)


def weight_gradient(e: np.ndarray, x: np.ndarray, *, attrs: ConvAttrs,
                    acc_width: int = ACC_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """Integer batch-sum accumulators (dW, db), wrapped to ``acc_width`` bits.

    dW has ``e.frac + x.frac`` fractional bits and db has ``e.frac``; ``sgd.mean_gradient``
    turns them into gradients.
    """
    dw, db = weight_gradient_sum(as_int(e, "Conv error"), as_int(x, "Conv input"), attrs)
    return wrap(dw, acc_width), wrap(db, acc_width)


def bias_aligned(b: np.ndarray, x_fmt: Format) -> np.ndarray:
    """A bias in weight format moved to the accumulator's ``x.frac + w.frac`` fraction."""
    if x_fmt.frac < 0:
        raise FpdeepError(
            f"input format {x_fmt} has negative fractional bits; the bias cannot be aligned"
        )
    return b << x_fmt.frac


# ----------------------------------------------------------------------------- float


def forward_float(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, *,
                  attrs: ConvAttrs) -> np.ndarray:
    y = forward_sum(np.asarray(x, np.float64), np.asarray(w, np.float64), attrs)
    return y if b is None else y + np.asarray(b, np.float64)[None, :, None, None]


def backward_float(e: np.ndarray, w: np.ndarray, *, attrs: ConvAttrs,
                   in_hw: tuple[int, int]) -> np.ndarray:
    return backward_sum(np.asarray(e, np.float64), np.asarray(w, np.float64), attrs, in_hw)


def weight_gradient_float(e: np.ndarray, x: np.ndarray, *,
                          attrs: ConvAttrs) -> tuple[np.ndarray, np.ndarray]:
    return weight_gradient_sum(np.asarray(e, np.float64), np.asarray(x, np.float64), attrs)
