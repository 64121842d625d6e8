"""Dropout: the keep mask from a 32-bit LFSR, scaled by 1/(1 − p); ``docs/numerics.md`` §19.

The generator (the RTL's dropout unit makes the same bits):

- Galois LFSR, shifting right, feedback polynomial x^32 + x^22 + x^2 + x + 1 (maximal length,
  period 2^32 − 1): one step is ``lsb = s & 1; s >>= 1; if lsb: s ^= 0x80200003``.
- Seed per (dropout layer l, training step t, image b of the batch), l counting the network's
  Dropout layers from 0 in topological order:
  ``s0 = (0x9E3779B1·(l+1)) ^ (0x85EBCA77·(t+1)) ^ (0xC2B2AE3D·(b+1))  mod 2^32`` (1 if 0).
- Element n (C order over the per-image tensor, n = 0, 1, ...) takes the state after
  16·(n+1) steps; ``u`` is its low 16 bits; the element is kept iff ``u >= T`` with
  ``T = floor(p·2^16 + 1/2)``, so it is dropped with probability T / 2^16.

Here the states are made with the 16-step leap as a 32x32 matrix over GF(2), applied to whole
arrays and doubled (state n + m = leap^m of state n), which gives the same states as stepping.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.numerics import Format, as_int, convert, requantise, scale_constant

TAPS = 0x80200003  # x^32 + x^22 + x^2 + x + 1, Galois form (right shift)
STEPS_PER_ELEMENT = 16
SEED_LAYER, SEED_STEP, SEED_IMAGE = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D
MASK32 = (1 << 32) - 1


def lfsr_step(s: np.ndarray) -> np.ndarray:
    """One step of the Galois LFSR on an array of 32-bit states."""
    s = np.asarray(s, np.uint64)
    return (s >> np.uint64(1)) ^ np.where(s & np.uint64(1), np.uint64(TAPS), np.uint64(0))


def seed(layer: int, step: int, image: int) -> int:
    s = ((SEED_LAYER * (layer + 1)) ^ (SEED_STEP * (step + 1)) ^ (SEED_IMAGE * (image + 1)))
    return (s & MASK32) or 1


def threshold(ratio: float) -> int:
    """T: an element whose 16-bit draw is below T is dropped."""
    if not 0 <= ratio < 1:
        raise FpdeepError(f"dropout ratio {ratio!r} must be in [0, 1)")
    return int(Fraction(ratio) * (1 << 16) + Fraction(1, 2))


def _apply(matrix: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A GF(2) matrix (its 32 columns, the images of the unit vectors) times each state."""
    out = np.zeros_like(s)
    for i in range(32):
        out ^= np.where((s >> np.uint64(i)) & np.uint64(1), matrix[i], np.uint64(0))
    return out


def _leap() -> np.ndarray:
    columns = np.uint64(1) << np.arange(32, dtype=np.uint64)
    for _ in range(STEPS_PER_ELEMENT):
        columns = lfsr_step(columns)
    return columns


def states(seeds: np.ndarray, count: int) -> np.ndarray:
    """(len(seeds), count) LFSR states: element n is the state after 16·(n+1) steps."""
    seeds = np.asarray(seeds, np.uint64).reshape(-1)
    out = np.empty((len(seeds), count), dtype=np.uint64)
    if count == 0:
        return out
    leap = _leap()
    out[:, 0] = _apply(leap, seeds)
    done = 1
    while done < count:
        more = min(done, count - done)
        out[:, done:done + more] = _apply(leap, out[:, :more])
        done += more
        leap = _apply(leap, leap)  # the leap over ``done`` elements
    return out


def keep_mask(shape: tuple[int, ...], ratio: float, *, layer: int, step: int) -> np.ndarray:
    """Boolean keep mask of a batch ``shape`` (B, ...), image b seeded by (layer, step, b)."""
    batch, per_image = shape[0], int(np.prod(shape[1:], dtype=np.int64))
    seeds = np.array([seed(layer, step, b) for b in range(batch)], dtype=np.uint64)
    draws = states(seeds, per_image) & np.uint64(0xFFFF)
    return (draws >= np.uint64(threshold(ratio))).reshape(shape)


def scale(ratio: float) -> tuple[int, int]:
    """``(M, r)`` of 1/(1 − p) (§3.4)."""
    return scale_constant(1 / (1 - Fraction(ratio)))


def forward(x: np.ndarray, keep: np.ndarray, ratio: float, *, x_fmt: Format,
            out_fmt: Format) -> np.ndarray:
    """``y = requant(x · M · keep, fx + r − fy)`` with ``(M, r)`` of 1/(1 − p)."""
    m, r = scale(ratio)
    return requantise(np.where(keep, as_int(x, "Dropout input") * m, 0),
                      x_fmt.frac + r - out_fmt.frac, out_fmt)


def backward(e: np.ndarray, keep: np.ndarray, ratio: float, *, e_fmt: Format,
             out_fmt: Format) -> np.ndarray:
    m, r = scale(ratio)
    return requantise(np.where(keep, as_int(e, "Dropout error") * m, 0),
                      e_fmt.frac + r - out_fmt.frac, out_fmt)


def inference(x: np.ndarray, *, x_fmt: Format, out_fmt: Format) -> np.ndarray:
    """Off at inference: the input, re-expressed in the output format."""
    return convert(as_int(x, "Dropout input"), x_fmt, out_fmt)


def forward_float(x: np.ndarray, keep: np.ndarray, ratio: float) -> np.ndarray:
    return np.where(keep, np.asarray(x, np.float64) / (1 - ratio), 0.0)


def backward_float(e: np.ndarray, keep: np.ndarray, ratio: float) -> np.ndarray:
    return forward_float(e, keep, ratio)
