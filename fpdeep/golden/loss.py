"""The loss gradient at the output: softmax cross-entropy and MSE (``docs/numerics.md`` §10).

The error at the logits is per sample (``p - onehot`` or ``2 (z - t) / N``); the 1/B of the
batch mean is applied once, to the weight-gradient accumulators (``sgd.mean_gradient``). The
loss value itself is reported in float from the dequantised logits; hardware need not make it.

Fixed-point softmax, per sample, with logits ``z`` at ``z.frac`` fractional bits:

1. ``d = z - max(z)`` (<= 0, exact).
2. ``u = round_shift(d * LOG2E_M, z.frac + 15 - 16)``: ``d * log2(e)`` with 16 fractional bits.
3. ``k = u >> 16`` (floor), ``f = u & 0xFFFF``; ``hi = f >> 8``, ``lo = f & 0xFF``.
4. ``v = E[hi] + round_shift((E[hi+1] - E[hi]) * lo, 8)`` with ``E[i] = floor(2**(15 + i/256)
   + 1/2)``, i = 0..256: ``2**(f / 2**16)`` with 15 fractional bits (linear interpolation).
5. ``x = round_shift(v, -k)``: ``exp(d)`` with 15 fractional bits (0 once ``-k >= 17``).
6. ``S = sum(x)`` (>= 2**15, the maximum's own term); ``p = floor((x * 2**(e.frac+1) + S)
   / (2 S))``, the exact quotient ``x / S`` rounded half up to ``e.frac`` bits.
7. ``e = saturate(p - onehot * 2**e.frac)`` in the error format.
"""

from __future__ import annotations

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.numerics import Format, as_int, requantise, round_shift, saturate, scale_constant

LOSSES = ("softmax_ce", "mse")

#: log2(e) as a scaling constant: 47274 * 2**-15 (= 1.442687988...).
LOG2E_M, LOG2E_R = 47274, 15

#: 2**(i/256) with 15 fractional bits, i = 0..256 (17-bit unsigned; E[256] = 65536).
EXP2_TABLE = np.floor(np.exp2(15 + np.arange(257) / 256) + 0.5).astype(np.int64)
EXP2_TABLE.setflags(write=False)


def exp_fixed(d: np.ndarray, d_frac: int) -> np.ndarray:
    """``exp(d)`` for ``d <= 0`` at ``d_frac`` fractional bits, with 15 fractional bits."""
    d = as_int(d, "softmax input")
    if np.any(d > 0):
        raise FpdeepError("exp_fixed takes d = z - max(z) <= 0")
    u = round_shift(d * LOG2E_M, d_frac + LOG2E_R - 16)
    k = u >> 16
    f = u & 0xFFFF
    hi, lo = f >> 8, f & 0xFF
    v = EXP2_TABLE[hi] + round_shift((EXP2_TABLE[hi + 1] - EXP2_TABLE[hi]) * lo, 8)
    # Beyond a shift of 17 every v < 2**16 rounds to 0; clamp keeps numpy's shift defined.
    return round_shift(v, np.minimum(-k, 62))


def softmax_fixed(z: np.ndarray, *, z_fmt: Format, p_frac: int) -> np.ndarray:
    """Softmax over the last axis of integer logits, probabilities at ``p_frac`` bits."""
    z = as_int(z, "logits")
    x = exp_fixed(z - z.max(axis=-1, keepdims=True), z_fmt.frac)
    s = x.sum(axis=-1, keepdims=True)
    return (x * (1 << (p_frac + 1)) + s) // (2 * s)


def softmax_ce_error(z: np.ndarray, y: np.ndarray, *, z_fmt: Format,
                     e_fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample error ``p - onehot(y)`` at the logits (B, N); also returns ``p``."""
    p = softmax_fixed(z, z_fmt=z_fmt, p_frac=e_fmt.frac)
    return saturate(p - (_onehot(y, p.shape[-1]) << e_fmt.frac), e_fmt), p


def mse_error(z: np.ndarray, y: np.ndarray, *, z_fmt: Format, e_fmt: Format) -> np.ndarray:
    """Per-sample error ``2 (z - onehot(y)) / N``: the difference times ``(M, r)`` of 2/N."""
    z = as_int(z, "logits")
    m, r = scale_constant(2 / z.shape[-1])
    diff = z - (_onehot(y, z.shape[-1]) << z_fmt.frac)
    return requantise(diff * m, z_fmt.frac + r - e_fmt.frac, e_fmt)


def softmax_float(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, np.float64)
    ex = np.exp(z - z.max(axis=-1, keepdims=True))
    return ex / ex.sum(axis=-1, keepdims=True)


def softmax_ce_error_float(z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = softmax_float(z)
    return p - _onehot(y, p.shape[-1]), p


def mse_error_float(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    z = np.asarray(z, np.float64)
    return 2.0 * (z - _onehot(y, z.shape[-1])) / z.shape[-1]


def loss_value(z: np.ndarray, y: np.ndarray, kind: str) -> float:
    """Batch-mean loss in float64, as PyTorch's ``cross_entropy`` / ``mse_loss`` (mean)."""
    z = np.asarray(z, np.float64)
    if kind == "softmax_ce":
        m = z.max(axis=-1, keepdims=True)
        lse = (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[:, 0]
        return float(np.mean(lse - z[np.arange(len(z)), y]))
    return float(np.mean((z - _onehot(y, z.shape[-1])) ** 2))


def _onehot(y: np.ndarray, n: int) -> np.ndarray:
    return (np.asarray(y)[:, None] == np.arange(n)[None, :]).astype(np.int64)
