"""Programming the pooling engine (`hw/fpdeep_pool.sv`): MaxPool / AveragePool / GAP, FP and BP.

Like the Conv/FC engine, the RTL is a generic loop nest (c, ho, wo, kh, kw) with affine
quantities; this module computes its bounds, address jumps, the window-count clipping bounds
and the reciprocal table of docs/numerics.md §3.5 (taken from the golden model's
`reciprocal_table`, the one implementation of that rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from fpdeep.design.engine import _pack, jumps
from fpdeep.errors import FpdeepError, require_positive_int
from fpdeep.golden import pool as golden_pool
from fpdeep.hwlib import POOL
from fpdeep.ir import PoolAttrs
from fpdeep.numerics import reciprocal_table
from fpdeep.planning.perf import pool_cycles

#: Words of input, or of output, one run of a pooling engine may take: its input buffer and
#: result bank are as deep as the larger, so a layer larger than this is pooled in bands of
#: whole channels, a run each (pooling is per channel: a band needs nothing of another), and
#: an engine takes a few block RAMs whatever the input size (AlexNet's first max-pool,
#: 96 x 55 x 55, took 1,056 BRAM36 as one run).
BAND_WORDS = 16384

#: Mode names and their `cfg_mode` encodings (bit 0 backward, bit 1 average).
POOL_MODES: Mapping[str, int] = MappingProxyType(
    {"max_fwd": 0, "max_bwd": 1, "avg_fwd": 2, "avg_bwd": 3}
)
#: Tap-index / count bits of the RTL (parameter KB): Kh * Kw must stay below 2**TAP_BITS.
TAP_BITS = POOL.params["KB"]
#: Width of the reciprocal-table entries (RTL parameter MB): M_c < 2**(r + 1) and
#: r = 15 + ceil(log2 cmax) <= 15 + TAP_BITS, so small counts need more than 17 bits.
RECIP_BITS = POOL.params["MB"]
#: Widths of the engine's counters and affine quantities (RTL parameters CW, AW).
COUNT_BITS, AFFINE_BITS = POOL.params["CW"], POOL.params["AW"]
#: Shift range of the RTL's requantiser: what its shift field holds.
SHIFT_RANGE = POOL.signed_range("cfg_shift")


@dataclass(frozen=True)
class PoolShape:
    """One pooling layer as the engine sees it: C channels, (H, W) in, (Ho, Wo) out."""

    c: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    attrs: PoolAttrs

    def __post_init__(self) -> None:
        kh, kw = self.attrs.kernel
        if kh * kw >= 1 << TAP_BITS:
            raise FpdeepError(
                f"pooling window {kh}x{kw} has {kh * kw} taps; the engine takes fewer than "
                f"{1 << TAP_BITS}"
            )
        require_positive_int("PoolShape.c", self.c)

    @classmethod
    def of(cls, attrs: PoolAttrs, *, c: int, in_hw: tuple[int, int]) -> PoolShape:
        return cls(c, tuple(in_hw), golden_pool.out_hw(attrs, tuple(in_hw)), attrs)

    def iterations(self) -> int:
        """Loop-nest iterations, one window tap per cycle."""
        kh, kw = self.attrs.kernel
        return self.c * self.out_hw[0] * self.out_hw[1] * kh * kw

    def cycles(self) -> int:
        """Cycles per image in the performance model (`fpdeep.planning.perf.pool_cycles`)."""
        kh, kw = self.attrs.kernel
        return pool_cycles(c=self.c, ho=self.out_hw[0], wo=self.out_hw[1], kh=kh, kw=kw)


def band_channels(c: int, in_hw: tuple[int, int], out_hw: tuple[int, int],
                  limit: int | None = None) -> int:
    """Channels of each band of a pooling layer of ``c`` channels: the most that divide ``c``
    (every band alike, so one configuration serves all) whose input and output each take at
    most ``limit`` words (default `BAND_WORDS`); one channel when even that takes more."""
    limit = BAND_WORDS if limit is None else limit
    plane = max(in_hw[0] * in_hw[1], out_hw[0] * out_hw[1])
    return max(k for k in range(1, c + 1) if c % k == 0 and (k == 1 or k * plane <= limit))


@dataclass(frozen=True)
class PoolConfig:
    """`cfg_*` port values, the reciprocal table to stream into s_m, and stream lengths."""

    mode: str
    shape: PoolShape
    ports: Mapping[str, int] = field(repr=False)
    table: tuple[int, ...] = field(repr=False)


def pool_config(shape: PoolShape, *, mode: str, in_frac: int, out_frac: int) -> PoolConfig:
    """Configure the engine for `mode`; `in_frac`/`out_frac` are the fractional bits of the
    tensor entering and leaving (activations forward, errors backward)."""
    if mode not in POOL_MODES:
        raise FpdeepError(
            f"pooling mode {mode!r} is not valid; valid modes are {', '.join(POOL_MODES)}"
        )
    a = shape.attrs
    (h, w), (ho, wo) = shape.in_hw, shape.out_hw
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = a.kernel, a.stride, a.pads
    avg = mode.startswith("avg")
    r = 0
    table = [0] * (1 << TAP_BITS)
    if avg:
        counts = golden_pool.counts(a, shape.in_hw)
        mult, r = reciprocal_table(counts)
        for count, m in zip(counts.ravel().tolist(), np.ravel(mult).tolist(), strict=True):
            table[count] = m
        if max(table) >= 1 << RECIP_BITS:
            raise FpdeepError(f"reciprocal {max(table)} exceeds the engine's {RECIP_BITS} bits")
    shift = in_frac - out_frac + r
    if not SHIFT_RANGE[0] <= shift <= SHIFT_RANGE[1]:
        raise FpdeepError(
            f"pooling requantisation shift {shift} is outside the engine's range {SHIFT_RANGE}"
        )
    bound = (shape.c, ho, wo, kh, kw)
    coefs = [
        ((0, sh, 0, 1, 0), -pt),                      # hi
        ((0, 0, sw, 0, 1), -pl),                      # wi
        ((h * w, sh * w, sw, w, 1), -pt * w - pl),    # x address (c, hi, wi)
        ((ho * wo, wo, 1, 0, 0), 0),                  # y address (c, ho, wo)
        ((0, 0, 0, kw, 1), 0),                        # tap index kh*Kw + kw
    ]
    include = a.count_include_pad
    n_x, n_y = shape.c * h * w, shape.c * ho * wo
    ports = {
        "cfg_mode": POOL_MODES[mode],
        "cfg_bound": _pack(bound, COUNT_BITS),
        "cfg_init": _pack([c0 for _, c0 in coefs], AFFINE_BITS),
        "cfg_jump": _pack([j for coef, _ in coefs for j in jumps(coef, bound)], AFFINE_BITS),
        "cfg_h": h,
        "cfg_w": w,
        "cfg_kh": kh,
        "cfg_kw": kw,
        # counted region (docs/numerics.md §7): the image, or image plus pads; two's complement
        "cfg_rlo": POOL.encode("cfg_rlo", -pt if include else 0),
        "cfg_rhi": h + pb if include else h,
        "cfg_clo": POOL.encode("cfg_clo", -pl if include else 0),
        "cfg_chi": w + pr if include else w,
        "cfg_shift": POOL.encode("cfg_shift", shift),
        "cfg_in_count": n_y if mode.endswith("bwd") else n_x,
        "cfg_out_count": n_x if mode.endswith("bwd") else n_y,
    }
    used = max((i for i, m in enumerate(table) if m), default=0) + 1
    return PoolConfig(mode, shape, MappingProxyType(ports), tuple(table[:used]) if avg else ())
