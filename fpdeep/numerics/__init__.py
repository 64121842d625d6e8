"""Fixed-point formats and the primitive integer operations of the numerics contract.

Everything here is defined exactly in ``docs/numerics.md``; the RTL and HLS must agree bit for
bit. Values are signed two's-complement integers held in ``np.int64`` arrays; a value ``q`` in
format ``Format(width, frac)`` stands for the real number ``q * 2**-frac``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from fpdeep.errors import FpdeepError

#: Tensor classes that carry a format. Biases use the weight format of their layer; ``vel`` is
#: the SGD momentum buffer of a layer's parameters (docs/numerics.md §17).
TENSOR_CLASSES = ("act", "weight", "err", "grad", "vel")

#: Width of every accumulator (the DSP48 P register). Accumulation wraps modulo 2**ACC_WIDTH.
ACC_WIDTH = 48

#: Significant bits of the unsigned mantissa of a scaling constant (see ``scale_constant``).
SCALE_BITS = 16


@dataclass(frozen=True)
class Format:
    """Signed fixed point: ``width`` bits in all, ``frac`` of them after the binary point."""

    width: int = 16
    frac: int = 8

    def __post_init__(self) -> None:
        if not isinstance(self.width, int) or not 2 <= self.width <= 32:
            raise FpdeepError(
                f"fixed-point width {self.width!r} is not supported: use an integer from 2 to 32"
            )
        if not isinstance(self.frac, int) or not -16 <= self.frac <= 40:
            raise FpdeepError(
                f"fixed-point fractional bits {self.frac!r} are not supported: "
                "use an integer from -16 to 40"
            )

    @property
    def lo(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def hi(self) -> int:
        return (1 << (self.width - 1)) - 1

    def __str__(self) -> str:
        return f"Q{self.width}.{self.frac}"


def _default_formats() -> Mapping[str, Format]:
    return MappingProxyType(
        {
            "act": Format(16, 10),
            "weight": Format(16, 14),
            "err": Format(16, 14),
            "grad": Format(16, 14),
            "vel": Format(24, 18),
        }
    )


@dataclass(frozen=True)
class Numerics:
    """Formats per tensor class, with optional per-layer overrides.

    ``formats`` maps each class in ``TENSOR_CLASSES`` to its default ``Format``; ``overrides``
    maps a layer name (or the network input's tensor name) to ``{class: Format}``. A layer's
    ``act``/``err`` formats are those of its output tensor and of the error on that tensor;
    its ``weight``/``grad`` formats are those of its parameters and their gradients.
    """

    formats: Mapping[str, Format] = field(default_factory=_default_formats)
    overrides: Mapping[str, Mapping[str, Format]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    acc_width: int = ACC_WIDTH

    def __post_init__(self) -> None:
        formats = dict(_default_formats())
        for cls, fmt in dict(self.formats).items():
            _check_class(cls, "formats")
            _check_format(fmt, f"formats[{cls!r}]")
            formats[cls] = fmt
        overrides = {}
        for layer, per_class in dict(self.overrides).items():
            if not isinstance(per_class, Mapping):
                raise FpdeepError(
                    f"Numerics overrides[{layer!r}] must map tensor classes to Format, "
                    f"got {type(per_class).__name__}"
                )
            for cls, fmt in per_class.items():
                _check_class(cls, f"overrides[{layer!r}]")
                _check_format(fmt, f"overrides[{layer!r}][{cls!r}]")
            overrides[layer] = MappingProxyType(dict(per_class))
        if not isinstance(self.acc_width, int) or not 32 <= self.acc_width <= 63:
            raise FpdeepError(
                f"Numerics acc_width {self.acc_width!r} is not supported: use 32 to 63 bits"
            )
        object.__setattr__(self, "formats", MappingProxyType(formats))
        object.__setattr__(self, "overrides", MappingProxyType(overrides))

    def fmt(self, cls: str, owner: str | None = None) -> Format:
        """The format of tensor class ``cls`` for the layer (or input tensor) ``owner``."""
        _check_class(cls, "fmt")
        if owner is not None and cls in self.overrides.get(owner, {}):
            return self.overrides[owner][cls]
        return self.formats[cls]


def _check_class(cls: object, where: str) -> None:
    if cls not in TENSOR_CLASSES:
        raise FpdeepError(
            f"Numerics {where}: unknown tensor class {cls!r}; valid classes are "
            + ", ".join(TENSOR_CLASSES)
        )


def _check_format(fmt: object, where: str) -> None:
    if not isinstance(fmt, Format):
        raise FpdeepError(
            f"Numerics {where} must be a Format(width, frac), got {type(fmt).__name__}"
        )


# --------------------------------------------------------------------------- primitives


def as_int(x: object, name: str = "value") -> np.ndarray:
    """``x`` as an int64 array; refuses floats so that no value is rounded by accident."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        raise FpdeepError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def saturate(x: np.ndarray, fmt: Format) -> np.ndarray:
    """Clamp to the range of ``fmt``."""
    return np.clip(as_int(x), fmt.lo, fmt.hi)


def wrap(x: np.ndarray, width: int = ACC_WIDTH) -> np.ndarray:
    """Two's-complement wrap to ``width`` bits, as a ``width``-bit register that overflows."""
    half = 1 << (width - 1)
    return ((as_int(x) + half) & ((1 << width) - 1)) - half


def round_shift(x: np.ndarray, shift: int | np.ndarray) -> np.ndarray:
    """Round half up, then arithmetic shift right: ``floor((x + 2**(s-1)) / 2**s)``.

    Computed as ``((x >> (s-1)) + 1) >> 1`` which is the same integer and cannot overflow.
    ``shift <= 0`` is an exact left shift by ``-shift``.
    """
    x = as_int(x)
    s = np.asarray(shift, dtype=np.int64)
    if s.ndim == 0:
        s0 = int(s)
        if s0 <= 0:
            return x << -s0
        return ((x >> (s0 - 1)) + 1) >> 1
    right = np.maximum(s, 1)
    out = ((x >> (right - 1)) + 1) >> 1
    return np.where(s > 0, out, x << np.maximum(-s, 0))


def requantise(x: np.ndarray, shift: int | np.ndarray, fmt: Format) -> np.ndarray:
    """Move ``x`` from ``frac + shift`` fractional bits to ``fmt``: round half up, saturate."""
    x = as_int(x)
    s = np.asarray(shift, dtype=np.int64)
    if np.any(s < 0):
        # A left shift of a value already outside the range stays outside it with the same
        # sign, so clamping first gives the same result and cannot overflow int64.
        x = np.where(s < 0, np.clip(x, fmt.lo, fmt.hi), x)
    return saturate(round_shift(x, s), fmt)


def convert(x: np.ndarray, src: Format, dst: Format) -> np.ndarray:
    """Re-express a value of format ``src`` in format ``dst`` (identity when they agree)."""
    return requantise(x, src.frac - dst.frac, dst)


def quantise(x: object, fmt: Format) -> np.ndarray:
    """Float to fixed point: ``floor(x * 2**frac + 1/2)``, saturated; NaN is an error."""
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise FpdeepError("cannot quantise NaN or infinite values to fixed point")
    scaled = np.floor(np.ldexp(arr, fmt.frac) + 0.5)
    return np.clip(scaled, fmt.lo, fmt.hi).astype(np.int64)


def dequantise(q: np.ndarray, fmt: Format | int) -> np.ndarray:
    """Fixed point to float64: ``q * 2**-frac``."""
    frac = fmt.frac if isinstance(fmt, Format) else int(fmt)
    return np.ldexp(as_int(q).astype(np.float64), -frac)


def scale_constant(value: float | Fraction) -> tuple[int, int]:
    """``(M, r)`` with ``M * 2**-r`` the fixed-point stand-in for the positive ``value``.

    ``r = 15 - floor(log2 value)`` and ``M = floor(value * 2**r + 1/2)``, so M has 16
    significant bits (``2**15 <= M <= 2**16``), whatever the magnitude of ``value``. Computed
    exactly in rationals: the float ``value`` is taken at its exact binary value.
    """
    v = Fraction(value)
    if v <= 0:
        raise FpdeepError(f"scaling constant must be positive, got {float(value)!r}")
    r = (SCALE_BITS - 1) - _floor_log2(v)
    return _round_half_up(v * (Fraction(2) ** r)), r


def reciprocal_table(counts: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-count multipliers for a division by the element counts of pooling windows.

    One exponent for the whole layer, ``r = 15 + ceil(log2 max(counts))``, and
    ``M_c = floor(2**r / c + 1/2)`` for each count; returns ``(M array like counts, r)``.
    """
    counts = as_int(counts)
    if counts.size == 0 or int(counts.min()) < 1:
        raise FpdeepError("pooling window without any input element (pads too large)")
    _, r = scale_constant(Fraction(1, int(counts.max())))
    values, index = np.unique(counts, return_inverse=True)
    table = np.array([_round_half_up(Fraction(2**r, int(c))) for c in values], dtype=np.int64)
    return table[index].reshape(counts.shape), r


def _floor_log2(v: Fraction) -> int:
    e = v.numerator.bit_length() - v.denominator.bit_length()
    # Correct the estimate so that 2**e <= v < 2**(e+1).
    if Fraction(2) ** e > v:
        e -= 1
    elif Fraction(2) ** (e + 1) <= v:
        e += 1
    return e


def _round_half_up(v: Fraction) -> int:
    return math.floor(v + Fraction(1, 2))
