"""BatchNormalization in training mode and frozen, fixed point and float (docs/numerics.md §16).

Statistics run over every axis but the channel axis 1: (N, H, W) of a (B, C, H, W) tensor, or
N of a (B, C) vector; ``m`` is the number of values per channel. Training mode normalises with
the batch mean and the biased variance and updates the running statistics with the unbiased
variance, as PyTorch's ``model.train()`` does; a frozen BatchNormalization is the fixed
per-channel affine of its running statistics (nothing trains, nothing is updated).

Fixed point, per channel, with the input at ``a`` fractional bits (``G = STAT_GUARD``,
``h = XHAT.frac``, ``(M_m, r_m)`` the scaling constant of ``1/m``):

1. ``mu = rshift(wrap(sum x) * M_m, r_m - G)`` (frac ``a + G``).
2. ``d = (x << G) - mu``; ``var = rshift(wrap(sum rshift(d * d, 2G)) * M_m, r_m)`` (frac ``2a``).
3. ``(z, k) = rsqrt(var + eps_q)`` (``rsqrt_fixed``): ``1/sqrt(var + eps) = z * 2**(a - 16 - k)``.
4. ``xhat = requant(d * z, G + 16 + k - h, XHAT)``; ``y = requant(gamma * xhat + (beta << h),
   fw + h - fy, act)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.numerics import (
    Format,
    as_int,
    quantise,
    requantise,
    round_shift,
    saturate,
    scale_constant,
    wrap,
)

#: Guard bits of the batch mean and of the centred values below the input's LSB.
STAT_GUARD = 4
#: The normalised value x̂ (|x̂| < 8; beyond saturates).
XHAT = Format(16, 12)
#: Bits the per-channel factor gamma * z drops before it scales the backward error.
FACTOR_SHIFT = 8
#: Newton iterations of the reciprocal square root after the table seed.
RSQRT_ITERATIONS = 2
#: z has 16 fractional bits; the normalised argument t = w * 2**-30 lies in [1, 4).
RSQRT_FRAC, RSQRT_ARG_FRAC = 16, 30


def _nearest_sqrt(x: Fraction) -> int:
    """``floor(sqrt(x) + 1/2)``, exactly."""
    q = math.isqrt(math.floor(x))
    while (Fraction(2 * q + 1, 2)) ** 2 <= x:
        q += 1
    while q > 0 and (Fraction(2 * q - 1, 2)) ** 2 > x:
        q -= 1
    return q


#: Seed of 2**16 / sqrt(t) at the midpoint of t's 48 sixteenths in [1, 4):
#: ``RSQRT_SEED[i] = floor(2**16 / sqrt((i + 16.5) / 16) + 1/2)`` = nearest to
#: ``sqrt(2**37 / (2 i + 33))``.
RSQRT_SEED = np.array([_nearest_sqrt(Fraction(2**37, 2 * i + 33)) for i in range(48)],
                      dtype=np.int64)
RSQRT_SEED.setflags(write=False)


def rsqrt_fixed(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(z, k)`` with ``z * 2**-(16 + k)`` about ``1 / sqrt(v)`` for integers ``v >= 1``.

    ``k = floor((bitlength(v) - 1) / 2)`` so that ``4**k <= v < 4**(k+1)``; ``w = v`` shifted to
    ``t = w * 2**-30`` in [1, 4) (left shift, or truncating right shift); seed
    ``z = RSQRT_SEED[(w >> 26) - 16]``; then ``RSQRT_ITERATIONS`` Newton steps
    ``p = rshift(z*z, 16); q = rshift(w*p, 30); z = rshift(z * (3 * 2**16 - q), 17)``.
    """
    v = as_int(v, "variance")
    if np.any(v < 1) or np.any(v >= 1 << 53):
        raise FpdeepError("rsqrt_fixed takes integers from 1 to 2**53 - 1")
    bits = np.frexp(v.astype(np.float64))[1].astype(np.int64)  # exact below 2**53
    k = (bits - 1) // 2
    shift = 2 * k - RSQRT_ARG_FRAC
    w = np.where(shift > 0, v >> np.maximum(shift, 0), v << np.maximum(-shift, 0))
    z = RSQRT_SEED[(w >> 26) - 16]
    for _ in range(RSQRT_ITERATIONS):
        p = round_shift(z * z, RSQRT_FRAC)
        q = round_shift(w * p, RSQRT_ARG_FRAC)
        z = round_shift(z * (3 * (1 << RSQRT_FRAC) - q), RSQRT_FRAC + 1)
    return z, k


def count(x: np.ndarray) -> int:
    """Values per channel of a batch (B, C, ...)."""
    return x.shape[0] * math.prod(x.shape[2:])


def _axes(x: np.ndarray) -> tuple[int, ...]:
    return (0, *range(2, x.ndim))


def _per_channel(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A (C,) vector shaped to broadcast against ``x`` (B, C, ...)."""
    return np.asarray(values).reshape((1, -1) + (1,) * (x.ndim - 2))


def check_count(x: np.ndarray, layer: str) -> int:
    m = count(x)
    if m < 2:
        raise FpdeepError(
            f"layer {layer} (BatchNormalization) trains on batch statistics, which need more "
            f"than one value per channel; the batch gives {m}: use a batch of 2 or more"
        )
    return m


def running_formats(x_fmt: Format) -> tuple[Format, Format]:
    """Formats of the running mean (frac a + G) and running variance (frac 2a), 32 bits."""
    return Format(32, x_fmt.frac + STAT_GUARD), Format(32, 2 * x_fmt.frac)


def epsilon_fixed(epsilon: float, x_fmt: Format) -> int:
    """epsilon at the variance's ``2a`` fractional bits, at least 1 LSB."""
    return max(1, int(quantise(epsilon, Format(32, 2 * x_fmt.frac))))


# ----------------------------------------------------------------------------- fixed point


def batch_statistics(x: np.ndarray, *, x_fmt: Format, acc_width: int) -> tuple[np.ndarray, ...]:
    """``(mu, var, d)``: batch mean (frac a + G), biased variance (frac 2a), centred values."""
    x = as_int(x, "activation")
    m_m, r_m = scale_constant(Fraction(1, count(x)))
    mu = round_shift(wrap(x.sum(axis=_axes(x)), acc_width) * m_m, r_m - STAT_GUARD)
    d = (x << STAT_GUARD) - _per_channel(mu, x)
    squares = round_shift(d * d, 2 * STAT_GUARD)
    var = round_shift(wrap(squares.sum(axis=_axes(x)), acc_width) * m_m, r_m)
    return mu, var, d


def normalise(d: np.ndarray, var: np.ndarray, *, epsilon: float,
              x_fmt: Format) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xhat, z, k)`` from centred values (frac a + G) and a variance (frac 2a)."""
    z, k = rsqrt_fixed(as_int(var) + epsilon_fixed(epsilon, x_fmt))
    xhat = requantise(d * _per_channel(z, d), _per_channel(xhat_shift(k), d), XHAT)
    return xhat, z, k


def xhat_shift(k: np.ndarray) -> np.ndarray:
    """The shift that takes ``d * z`` (frac a + G + 16 + k - a) to x̂'s fraction."""
    return STAT_GUARD + RSQRT_FRAC + as_int(k) - XHAT.frac


def affine(xhat: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *, w_fmt: Format,
           out_fmt: Format) -> np.ndarray:
    """``y = requant(gamma * xhat + (beta << h), fw + h - fy)``."""
    acc = xhat * _per_channel(as_int(gamma, "gamma"), xhat) + (
        _per_channel(as_int(beta, "beta"), xhat) << XHAT.frac)
    return requantise(acc, w_fmt.frac + XHAT.frac - out_fmt.frac, out_fmt)


def centred(x: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """``(x << G) - mean`` with ``mean`` at frac a + G (a running mean, frozen mode)."""
    return (as_int(x, "activation") << STAT_GUARD) - _per_channel(as_int(mean), x)


def gradient_sums(e: np.ndarray, xhat: np.ndarray, *,
                  acc_width: int) -> tuple[np.ndarray, np.ndarray]:
    """WG accumulators ``(sum e * xhat, sum e)`` of gamma (frac fe + h) and beta (frac fe)."""
    e = as_int(e, "error")
    return (wrap((e * xhat).sum(axis=_axes(e)), acc_width),
            wrap(e.sum(axis=_axes(e)), acc_width))


def backward(e: np.ndarray, xhat: np.ndarray | None, gamma: np.ndarray, z: np.ndarray,
             k: np.ndarray, *, x_fmt: Format, e_fmt: Format, w_fmt: Format, out_fmt: Format,
             acc_width: int) -> np.ndarray:
    """Input error ``(gamma / sigma) (e - mean e - xhat mean(e xhat))`` (training) or
    ``(gamma / sigma) e`` (frozen: ``xhat`` None).

    ``t = (e << h) - rshift(sum e * M_m, r_m - h) - rshift(xhat * rshift(sum e xhat * M_m, r_m),
    h)`` (frac fe + h); ``f = rshift(gamma * z, FACTOR_SHIFT)``; ``dx = requant(t * f, fe + h + fw
    + 16 + k - a - FACTOR_SHIFT - fdx)``.
    """
    e = as_int(e, "error")
    t = e << XHAT.frac
    if xhat is not None:
        m_m, r_m = scale_constant(Fraction(1, count(e)))
        s_ex, s_e = gradient_sums(e, xhat, acc_width=acc_width)
        mean_e = round_shift(s_e * m_m, r_m - XHAT.frac)
        mean_ex = round_shift(s_ex * m_m, r_m)
        t = t - _per_channel(mean_e, e) - round_shift(xhat * _per_channel(mean_ex, e), XHAT.frac)
    factor, shift = error_factor(gamma, z, k, x_fmt=x_fmt, e_fmt=e_fmt, w_fmt=w_fmt,
                                 out_fmt=out_fmt)
    return requantise(t * _per_channel(factor, e), _per_channel(shift, e), out_fmt)


def error_factor(gamma: np.ndarray, z: np.ndarray, k: np.ndarray, *, x_fmt: Format,
                 e_fmt: Format, w_fmt: Format, out_fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """Per channel, ``(f, s)``: the input error is ``requant(t * f, s)`` with ``t`` the error
    term at frac fe + h; ``f = rshift(gamma * z, FACTOR_SHIFT)``."""
    factor = round_shift(as_int(gamma, "gamma") * z, FACTOR_SHIFT)
    shift = (e_fmt.frac + XHAT.frac + w_fmt.frac + RSQRT_FRAC + as_int(k) - x_fmt.frac
             - FACTOR_SHIFT - out_fmt.frac)
    return factor, shift


def running_update(running: np.ndarray, batch: np.ndarray, *, momentum: float,
                   fmt: Format) -> np.ndarray:
    """``r' = saturate(r + rshift((batch - r) * M_c, r_c))``, ``(M_c, r_c)`` of ``1 - momentum``."""
    m_c, r_c = momentum_constant(momentum)
    running = as_int(running)
    return saturate(running + round_shift((as_int(batch) - running) * m_c, r_c), fmt)


def momentum_constant(momentum: float) -> tuple[int, int]:
    """``(M_c, r_c)`` of ``1 - momentum``; ``(0, 0)`` at momentum 1, which leaves a running
    statistic as it is (``r + rshift(0, 0) = r``)."""
    keep = Fraction(momentum)
    return (0, 0) if keep == 1 else scale_constant(1 - keep)


def count_constants(m: int) -> tuple[int, int, int, int]:
    """``(M_m, r_m, M_u, r_u)``: the scaling constants of ``1/m`` and of ``m / (m - 1)``
    (zeros for the latter at ``m = 1``, which training refuses)."""
    m_m, r_m = scale_constant(Fraction(1, m))
    m_u, r_u = scale_constant(Fraction(m, m - 1)) if m > 1 else (0, 0)
    return m_m, r_m, m_u, r_u


def unbiased(var: np.ndarray, m: int) -> np.ndarray:
    """``rshift(var * M_u, r_u)`` with ``(M_u, r_u)`` of ``m / (m - 1)``."""
    m_u, r_u = scale_constant(Fraction(m, m - 1))
    return round_shift(as_int(var) * m_u, r_u)


# ----------------------------------------------------------------------------------- float


def batch_statistics_float(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batch mean and biased variance per channel."""
    x = np.asarray(x, np.float64)
    mu = x.mean(axis=_axes(x))
    return mu, ((x - _per_channel(mu, x)) ** 2).mean(axis=_axes(x))


def normalise_float(x: np.ndarray, mean: np.ndarray, var: np.ndarray,
                    epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``(xhat, 1/sigma)``."""
    inv = 1.0 / np.sqrt(np.asarray(var, np.float64) + epsilon)
    return (np.asarray(x, np.float64) - _per_channel(mean, x)) * _per_channel(inv, x), inv


def affine_float(xhat: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    return xhat * _per_channel(gamma, xhat) + _per_channel(beta, xhat)


def gradient_sums_float(e: np.ndarray, xhat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = np.asarray(e, np.float64)
    return (e * xhat).sum(axis=_axes(e)), e.sum(axis=_axes(e))


def backward_float(e: np.ndarray, xhat: np.ndarray | None, gamma: np.ndarray,
                   inv_sigma: np.ndarray) -> np.ndarray:
    e = np.asarray(e, np.float64)
    t = e
    if xhat is not None:
        s_ex, s_e = gradient_sums_float(e, xhat)
        m = count(e)
        t = e - _per_channel(s_e / m, e) - xhat * _per_channel(s_ex / m, e)
    return t * _per_channel(np.asarray(gamma, np.float64) * inv_sigma, e)


def running_update_float(running: np.ndarray, batch: np.ndarray, *,
                         momentum: float) -> np.ndarray:
    """ONNX's rule: ``r' = momentum * r + (1 - momentum) * batch``."""
    return momentum * np.asarray(running, np.float64) + (1 - momentum) * np.asarray(batch)
