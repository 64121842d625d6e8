"""Channel shuffle (ShuffleNet) as one channel permutation (``docs/numerics.md`` §18).

With G groups of C/G channels, output channel ``j·G + g`` is input channel ``g·(C/G) + j``:
the Reshape (G, C/G) → Transpose → Reshape of the ONNX graph. Backward applies the inverse
permutation to the error. Formats are re-expressed as for Identity.
"""

from __future__ import annotations

import numpy as np

from fpdeep.numerics import Format, as_int, convert


def permutation(channels: int, groups: int) -> np.ndarray:
    """``perm[out_channel] = in_channel``."""
    return np.arange(channels).reshape(groups, channels // groups).T.ravel()


def forward(x: np.ndarray, groups: int, *, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    x = as_int(x, "ChannelShuffle input")
    return convert(x[:, permutation(x.shape[1], groups)], x_fmt, out_fmt)


def backward(e: np.ndarray, groups: int, *, e_fmt: Format, out_fmt: Format) -> np.ndarray:
    e = as_int(e, "ChannelShuffle error")
    return convert(e[:, np.argsort(permutation(e.shape[1], groups))], e_fmt, out_fmt)


def forward_float(x: np.ndarray, groups: int) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x[:, permutation(x.shape[1], groups)]


def backward_float(e: np.ndarray, groups: int) -> np.ndarray:
    e = np.asarray(e, np.float64)
    return e[:, np.argsort(permutation(e.shape[1], groups))]
