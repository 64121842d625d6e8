"""Sliding windows over (B, C, H, W) maps: the im2col / col2im shared by Conv and pooling.

Dtype-generic (int64 for the fixed-point model, float64 for the float reference): these are
exact data movement and exact sums, so they never round.
"""

from __future__ import annotations

import numpy as np

Pads = tuple[int, int, int, int]  # top, left, bottom, right


def out_size(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, ceil: bool) -> int:
    """Output length along one axis (ONNX / PyTorch rule, ceil mode included)."""
    span = size + pad_lo + pad_hi - kernel
    n = (-(-span // stride) if ceil else span // stride) + 1
    # In ceil mode the last window must start inside the input or its leading pad.
    if ceil and (n - 1) * stride >= size + pad_lo:
        n -= 1
    return n


def pad(x: np.ndarray, pads: Pads, extra: tuple[int, int] = (0, 0), value: float = 0) -> np.ndarray:
    """Pad the last two axes by ``pads``, plus ``extra`` rows/columns at the bottom/right."""
    top, left, bottom, right = pads
    width = [(0, 0)] * (x.ndim - 2) + [(top, bottom + extra[0]), (left, right + extra[1])]
    return np.pad(x, width, constant_values=value)


def tail_extra(size_hw: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
               pads: Pads, out_hw: tuple[int, int]) -> tuple[int, int]:
    """Rows/columns a ceil-mode window reaches beyond the bottom/right pad (0 otherwise)."""
    need_h = (out_hw[0] - 1) * stride[0] + kernel[0]
    need_w = (out_hw[1] - 1) * stride[1] + kernel[1]
    have_h = size_hw[0] + pads[0] + pads[2]
    have_w = size_hw[1] + pads[1] + pads[3]
    return max(0, need_h - have_h), max(0, need_w - have_w)


def extract(xp: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
            out_hw: tuple[int, int]) -> np.ndarray:
    """Windows of a padded (B, C, Hp, Wp) map as (B, C, Ho, Wo, Kh, Kw)."""
    kh, kw = kernel
    sh, sw = stride
    ho, wo = out_hw
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    return win[:, :, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw]


def scatter(cols: np.ndarray, padded_hw: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Inverse of ``extract``: sum (B, C, Ho, Wo, Kh, Kw) window values into (B, C, Hp, Wp).

    Overlapping windows accumulate; the sum is exact (integers) so its order does not matter.
    """
    b, c, ho, wo, kh, kw = cols.shape
    sh, sw = stride
    out = np.zeros((b, c, *padded_hw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i : i + (ho - 1) * sh + 1 : sh, j : j + (wo - 1) * sw + 1 : sw] += (
                cols[:, :, :, :, i, j]
            )
    return out


def crop(xp: np.ndarray, pads: Pads, size_hw: tuple[int, int]) -> np.ndarray:
    """The (H, W) interior of a padded map."""
    top, left = pads[0], pads[1]
    return xp[:, :, top : top + size_hw[0], left : left + size_hw[1]]
