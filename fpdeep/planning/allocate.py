"""Allocation inside one board: MAC lanes per engine, and where each kind of data is stored.

Every slice has an FP, a BP and a WG engine (no BP for a layer with nothing trainable upstream).
Lanes are chosen so that all engines of the board finish an image in the fewest cycles the DSP
budget allows; the count of cycles is :func:`fpdeep.planning.perf.engine_cycles`, ceil waste
included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fpdeep.planning import perf


@dataclass(frozen=True)
class EngineShape:
    """The loop nest of one engine: co x ci x kh x kw x ho x wo (ci per group), the co
    channels in ``groups`` groups (whose lanes must divide the group sizes)."""

    co: int
    ci: int
    kh: int
    kw: int
    ho: int
    wo: int
    groups: int = 1

    @property
    def inner(self) -> int:
        return self.kh * self.kw * self.ho * self.wo

    @property
    def macs(self) -> int:
        return self.co * self.ci * self.inner

    def cycles(self, tm: int, tn: int, tp: int = 1, latency: int = perf.ENGINE_LATENCY) -> int:
        """Cycles of this loop nest on tm x tn lanes (``fpdeep.planning.perf.engine_cycles``)."""
        return perf.engine_cycles(co=self.co, ci=self.ci, kh=self.kh, kw=self.kw, ho=self.ho,
                                  wo=self.wo, tm=tm, tn=tn, tp=tp, latency=latency,
                                  groups=self.groups)


@dataclass(frozen=True)
class EngineAlloc:
    tm: int
    tn: int
    cycles: int
    dsp: int
    tp: int = 1  # output rows in parallel: a what-if, the generated engine has 1


@lru_cache(maxsize=4096)
def _tile_options(co: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct lane counts t for a dimension of size co, with the tile count ceil(co/t) of each."""
    tiles = np.arange(1, co + 1, dtype=np.int64)
    lanes = np.unique(-(-co // tiles))
    return lanes, -(-co // lanes)


@lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Lane counts t dividing n (a grouped conv's group size), with the tile count n/t of each."""
    lanes = np.array([t for t in range(1, n + 1) if n % t == 0], dtype=np.int64)
    return lanes, n // lanes


@lru_cache(maxsize=1 << 16)
def _cheapest(
    shape: EngineShape, cycles: int, dsp_per_mac: float, max_tp: int
) -> tuple[int, int, int, int] | None:
    """(dsp, tm, tn, tp) of the fewest-DSP array within ``cycles``, the fastest among equals."""
    best: tuple[int, int, int, int, int] | None = None  # dsp, cycles, tm, tn, tp
    tps = [1] if max_tp == 1 else [int(t) for t in _tile_options(shape.ho)[0] if t <= max_tp]
    g = shape.groups
    tms_all, a_all = _tile_options(shape.co) if g == 1 else _divisors(shape.co // g)
    for tp in tps:
        inner = g * shape.kh * shape.kw * -(-shape.ho // tp) * shape.wo
        budget = (cycles - perf.ENGINE_LATENCY) // inner  # allowed ceil(co/tm)*ceil(ci/tn)
        if budget < 1:
            continue
        if g == 1:
            b = np.minimum(budget // a_all, shape.ci)
        else:  # the fewest input lanes dividing ci with at most budget // a blocks
            tn_opts, b_opts = _divisors(shape.ci)
            b = np.array([max((int(x) for x in b_opts if x <= budget // a), default=0)
                          for a in a_all], dtype=np.int64)
        ok = b >= 1
        tms, a, b = tms_all[ok], a_all[ok], b[ok]
        if tms.size == 0:
            continue
        tns = -(-shape.ci // b)
        dsp = np.ceil(tms * tns * tp * dsp_per_mac - 1e-9).astype(np.int64)
        tiles = a * -(-shape.ci // tns)
        # Among the cheapest, prefer the fastest, then the fewest output lanes (simpler muxing).
        pick = np.lexsort((tms, tiles, dsp))[0]
        found = (int(dsp[pick]), int(tiles[pick]) * inner, int(tms[pick]), int(tns[pick]), tp)
        if best is None or found[:2] < best[:2]:
            best = found
    return None if best is None else (best[0], best[2], best[3], best[4])


def cheapest(
    shape: EngineShape, cycles: int, dsp_per_mac: float, max_tp: int = 1
) -> EngineAlloc | None:
    """Fewest-DSP tm x tn (x tp <= max_tp) that finishes ``shape`` within ``cycles``; None when
    none can."""
    found = _cheapest(shape, cycles, dsp_per_mac, max_tp)
    if found is None:
        return None
    dsp, tm, tn, tp = found
    return EngineAlloc(
        tm=tm,
        tn=tn,
        cycles=shape.cycles(tm, tn, tp),
        dsp=dsp,
        tp=tp,
    )


def dsp_needed(
    shapes: list[EngineShape], cycles: int, dsp_per_mac: float, max_tp: int = 1
) -> float:
    """DSPs all ``shapes`` need to finish within ``cycles`` (inf when some cannot)."""
    total = 0
    for shape in shapes:
        found = _cheapest(shape, cycles, dsp_per_mac, max_tp)
        if found is None:
            return math.inf
        total += found[0]
    return total


def allocate_board(
    shapes: list[EngineShape], *, dsp_budget: int, dsp_per_mac: float, max_tp: int = 1
) -> tuple[EngineAlloc, ...] | None:
    """Lanes for every engine so the slowest is as fast as the DSP budget allows.

    Binary search on the board's cycles per image; None when even one lane each does not fit.
    """
    if not shapes:
        return ()
    lo = 1 + perf.ENGINE_LATENCY
    hi = max(s.macs for s in shapes) + perf.ENGINE_LATENCY  # one lane each
    if dsp_needed(shapes, hi, dsp_per_mac, max_tp) > dsp_budget:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if dsp_needed(shapes, mid, dsp_per_mac, max_tp) <= dsp_budget:
            hi = mid
        else:
            lo = mid + 1
    allocs = tuple(cheapest(shape, lo, dsp_per_mac, max_tp) for shape in shapes)
    assert all(a is not None for a in allocs)
    return allocs  # type: ignore[return-value]


@dataclass(frozen=True)
class Storage:
    """On-board storage demand in bits.

    ``buffers`` (line buffers the engines read windows from) must be on chip; ``streams``
    (whole-image ping-pong buffers between slices) and the rest may be spilled.
    ``stash_per_image`` is one image's share of the stash.
    """

    buffers: int = 0
    streams: int = 0
    weights: int = 0
    grads: int = 0
    stash: int = 0
    stash_per_image: int = 0

    def __add__(self, other: Storage) -> Storage:
        return Storage(
            self.buffers + other.buffers,
            self.streams + other.streams,
            self.weights + other.weights,
            self.grads + other.grads,
            self.stash + other.stash,
            self.stash_per_image + other.stash_per_image,
        )

    @property
    def total(self) -> int:
        return self.buffers + self.streams + self.weights + self.grads + self.stash


@dataclass(frozen=True)
class MemoryPlan:
    """Where a board's data lives, and what the part stored off chip costs per image."""

    bram_bits: int
    uram_bits: int
    spilled_bits: int  # held off chip (DRAM or a neighbour): stash, streams, grads, weights
    traffic_bytes_per_image: float  # off-chip reads + writes an image causes
    buffers_fit: bool  # line buffers must be on chip
    # blocks taken when the figures are a generated store's banks (`with_stores`); None for
    # the search model's estimate in bits
    bram_blocks: int | None = None
    uram_blocks: int | None = None


def plan_memory(storage: Storage, *, bram_bits: int, uram_bits: int) -> MemoryPlan:
    """Place line buffers in BRAM first, everything else in URAM first; spill what is left.

    Spilled stash costs a write and a read of one image's share per image; spilled ping-pong
    streams a write and a read of one image (half of the pair); spilled gradient accumulators a
    read-modify-write per image; spilled weights two reads (FP and BP) per image. Weights go
    last, as FPDeep keeps conv weights on chip: the cheapest bits per image leave first.
    """
    capacity = bram_bits + uram_bits
    buffers_fit = storage.buffers <= capacity
    spill = max(0, storage.total - capacity)
    stash_out = min(spill, storage.stash)
    streams_out = min(spill - stash_out, storage.streams)
    grads_out = min(spill - stash_out - streams_out, storage.grads)
    weights_out = min(spill - stash_out - streams_out - grads_out, storage.weights)
    traffic_bits = streams_out + 2 * (grads_out + weights_out)
    if storage.stash:
        traffic_bits += 2 * stash_out * storage.stash_per_image / storage.stash
    spilled = stash_out + streams_out + grads_out + weights_out
    on_chip = storage.total - spilled
    buf_bram = min(storage.buffers, bram_bits)
    rest = on_chip - buf_bram
    uram = min(rest, uram_bits)
    bram = min(buf_bram + rest - uram, bram_bits)
    return MemoryPlan(
        bram_bits=bram,
        uram_bits=uram,
        spilled_bits=spilled,
        traffic_bytes_per_image=traffic_bits / 8,
        buffers_fit=buffers_fit,
    )
