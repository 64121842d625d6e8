"""Local response normalisation across channels, ONNX semantics (``docs/numerics.md`` §20).

With n = size, ``lo = floor((n−1)/2)``, ``hi = n − 1 − lo``, channel c sums the squares of the
channels ``c − lo … c + hi`` that exist: ``S_c = Σ x²``, ``d_c = k + (α/n)·S_c``,
``y_c = x_c · d_c^(−β)``. The error: ``dx_j = e_j d_j^(−β) − (2αβ/n) x_j Σ_c e_c x_c
d_c^(−β−1)`` over the channels c whose window holds j (``j − hi … j + lo``).

Fixed point computes the powers as ``2^(−β·log2 d)``: log2 of the exact integer ``d`` by its
leading one and a 257-entry table of ``log2(1 + i/256)``, scaled by β, then ``2^u`` by the
softmax's table (§10.1). Only ``d`` needs more than 64 bits (Python integers here).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden.loss import EXP2_TABLE
from fpdeep.ir import LRNAttrs
from fpdeep.numerics import Format, as_int, requantise, round_shift, scale_constant, wrap

#: log2(1 + i/256) with 16 fractional bits, i = 0..256 (LOG2_TABLE[256] = 65536).
LOG2_TABLE = np.floor(np.log2(1 + np.arange(257) / 256) * 65536 + 0.5).astype(np.int64)
LOG2_TABLE.setflags(write=False)
SAT48 = (1 << 47) - 1


def window(size: int) -> tuple[int, int]:
    """(lo, hi): channel c's window is c − lo … c + hi."""
    lo = (size - 1) // 2
    return lo, size - 1 - lo


def channel_sums(t: np.ndarray, before: int, after: int) -> np.ndarray:
    """Per channel c, the sum of ``t`` over channels c − before … c + after that exist."""
    pad = [(0, 0)] * t.ndim
    pad[1] = (before, after)
    cs = np.cumsum(np.pad(t, pad), axis=1)
    cs = np.concatenate([np.zeros_like(cs[:, :1]), cs], axis=1)
    span = before + after + 1
    return cs[:, span:] - cs[:, :-span]


def check(attrs: LRNAttrs) -> str | None:
    """Why the golden model cannot compute this LRN (None when it can)."""
    if attrs.size < 1 or min(attrs.alpha, attrs.beta, attrs.bias) <= 0:
        return (f"LRN with size {attrs.size}, alpha {attrs.alpha}, beta {attrs.beta}, bias "
                f"{attrs.bias}; size must be at least 1 and alpha, beta, bias positive")
    return None


# ----- fixed point -------------------------------------------------------------------------


def log2_fixed(d: np.ndarray, d_frac: int) -> np.ndarray:
    """``log2(d)`` with 16 fractional bits for positive integers ``d`` (any size) at ``d_frac``."""
    flat = [int(v) for v in np.asarray(d, dtype=object).ravel()]
    if any(v <= 0 for v in flat):
        raise FpdeepError("LRN: the normaliser d = k + (alpha/n)·S must be positive")
    lead = np.array([v.bit_length() - 1 for v in flat], dtype=np.int64)
    frac = np.array([((v << 16) >> e) - (1 << 16) for v, e in zip(flat, lead.tolist(),
                                                                  strict=True)], dtype=np.int64)
    hi, lo = frac >> 8, frac & 0xFF
    g = LOG2_TABLE[hi] + round_shift((LOG2_TABLE[hi + 1] - LOG2_TABLE[hi]) * lo, 8)
    return (((lead - d_frac) << 16) + g).reshape(np.shape(d))


def power_fixed(log2_d: np.ndarray, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """``d^(−exponent)`` as ``(v, k)``: ``v · 2^(k − 15)`` with 2^15 <= v <= 2^16."""
    m, r = scale_constant(exponent)
    u = round_shift(-as_int(log2_d) * m, r)
    k, f = u >> 16, u & 0xFFFF
    hi, lo = f >> 8, f & 0xFF
    v = EXP2_TABLE[hi] + round_shift((EXP2_TABLE[hi + 1] - EXP2_TABLE[hi]) * lo, 8)
    return v, k


def shift48(v: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``rshift(v, s)`` (§3.1, s may be negative) saturated to 48 bits, without overflow."""
    v, s = as_int(v), np.broadcast_to(as_int(s), np.shape(v))
    left = np.clip(-s, 0, 47)
    limit = SAT48 >> left
    shifted = np.clip(v, -limit - 1, limit) << left
    return np.clip(np.where(s > 0, round_shift(v, np.maximum(s, 1)), shifted), -SAT48 - 1, SAT48)


def normaliser(attrs: LRNAttrs, x_fmt: Format) -> tuple[int, int, int]:
    """``(K, M_α, F)``: ``D = K + S·M_α`` exact at ``F = 2fx + r_α`` fractional bits."""
    m_a, r_a = scale_constant(Fraction(attrs.alpha) / attrs.size)
    d_frac = 2 * x_fmt.frac + r_a
    k = int(Fraction(attrs.bias) * (Fraction(2) ** d_frac) + Fraction(1, 2)) if d_frac >= 0 \
        else int(Fraction(attrs.bias) / (Fraction(2) ** -d_frac) + Fraction(1, 2))
    return k, m_a, d_frac


def powers(attrs: LRNAttrs) -> dict[str, tuple[int, int]]:
    """The scaling constants ``(M, r)`` of β, β + 1 and 2αβ/n (§3.4)."""
    return {"beta": scale_constant(attrs.beta), "beta1": scale_constant(attrs.beta + 1),
            "gain": scale_constant(Fraction(2) * Fraction(attrs.alpha) * Fraction(attrs.beta)
                                   / attrs.size)}


def _normaliser(x: np.ndarray, attrs: LRNAttrs, x_fmt: Format) -> np.ndarray:
    """``log2 d`` with 16 fractional bits."""
    lo, hi = window(attrs.size)
    s = channel_sums(x * x, lo, hi)
    k, m_a, d_frac = normaliser(attrs, x_fmt)
    return log2_fixed(s.astype(object) * m_a + k, d_frac)


def forward(x: np.ndarray, *, attrs: LRNAttrs, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    """``y = requant(x · v, fx + 15 − k − fy)`` with ``(v, k)`` of ``d^(−β)``."""
    x = as_int(x, "LRN input")
    v, k = power_fixed(_normaliser(x, attrs, x_fmt), attrs.beta)
    shift = np.maximum(forward_shift(x_fmt, out_fmt) - k, -48)
    return requantise(x * v, shift, out_fmt)


def backward(e: np.ndarray, x: np.ndarray, *, attrs: LRNAttrs, x_fmt: Format, e_fmt: Format,
             out_fmt: Format) -> np.ndarray:
    """Two terms at ``fe + 16`` bits, subtracted, requantised once (§20)."""
    e, x = as_int(e, "LRN error"), as_int(x, "LRN input")
    log2_d = _normaliser(x, attrs, x_fmt)
    v1, k1 = power_fixed(log2_d, attrs.beta)
    v2, k2 = power_fixed(log2_d, attrs.beta + 1)
    direct = shift48(e * v1, 15 - k1 - 16)
    q = shift48(e * x * v2, 15 - k2)  # e·x·d^(−β−1) at fe + fx bits
    lo, hi = window(attrs.size)
    a = wrap(channel_sums(q, hi, lo))
    m_g, r_g = powers(attrs)["gain"]
    b = wrap(round_shift(a * m_g, r_g - 16))  # at fe + fx + 16 bits
    cross = round_shift(b * x, 2 * x_fmt.frac)
    return requantise(direct - cross, backward_shift(e_fmt, out_fmt), out_fmt)


def forward_shift(x_fmt: Format, out_fmt: Format) -> int:
    """The forward requantisation's shift before the power's exponent: ``fx + 15 − fy``."""
    return x_fmt.frac + 15 - out_fmt.frac


def backward_shift(e_fmt: Format, out_fmt: Format) -> int:
    """The backward requantisation's shift: ``fe + 16 − fe'``."""
    return e_fmt.frac + 16 - out_fmt.frac


# ----- float -------------------------------------------------------------------------------


def _d_float(x: np.ndarray, attrs: LRNAttrs) -> np.ndarray:
    lo, hi = window(attrs.size)
    return attrs.bias + attrs.alpha / attrs.size * channel_sums(x * x, lo, hi)


def forward_float(x: np.ndarray, attrs: LRNAttrs) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x * _d_float(x, attrs) ** -attrs.beta


def backward_float(e: np.ndarray, x: np.ndarray, attrs: LRNAttrs) -> np.ndarray:
    e, x = np.asarray(e, np.float64), np.asarray(x, np.float64)
    d = _d_float(x, attrs)
    lo, hi = window(attrs.size)
    cross = channel_sums(e * x * d ** (-attrs.beta - 1), hi, lo)
    return e * d ** -attrs.beta - 2 * attrs.alpha * attrs.beta / attrs.size * x * cross
