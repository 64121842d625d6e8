"""Performance model of a generated fpdeep cluster: pure cycle formulas (DESIGN §5).

These formulas are the contract between the planner and the hardware: the generated RTL
engine obeys :func:`engine_cycles` exactly (ceil waste and pipeline latency included), and the
RTL cycle tests call it. Everything here is a pure function of integers and floats; no IR.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from fpdeep.errors import FpdeepError, require_positive_number
from fpdeep.errors import require_non_negative_int as _non_negative_int
from fpdeep.errors import require_positive_int as _positive_int

# Cycles from the first operand read of an engine's loop nest to the last accumulator write-back:
# weight/activation RAM read (1) + operand register (1) + DSP A/B, M and P registers (3)
# + requantise/round (1) + saturate (1) + result RAM write (1), and the cycle in which a start
# pulse marks its input half loaded (the double-buffered engine starts a run from that flag).
ENGINE_LATENCY = 9

# Cycles of the pooling engine (hw/fpdeep_pool.sv) from its last window tap to done: one buffer
# read, one accumulate.
POOL_LATENCY = 2

# Aurora 64B/66B carries 64 payload bits in every 66 line bits.
LINK_PAYLOAD_EFFICIENCY = 64 / 66

# One-way latency of a board-to-board hop in cycles (transceiver PCS/PMA + Aurora + framing),
# about 0.5 us at 200-300 MHz; it only enters fill/drain latency, never the II.
LINK_HOP_LATENCY = 128


_positive_number = require_positive_number


def engine_cycles(
    *,
    co: int,
    ci: int,
    kh: int,
    kw: int,
    ho: int,
    wo: int,
    tm: int,
    tn: int,
    latency: int = ENGINE_LATENCY,
    tp: int = 1,
) -> int:
    """Cycles for one image through an FP, BP or WG engine with ``tm`` x ``tn`` MAC lanes.

    ceil(co/tm) * ceil(ci/tn) * kh * kw * ho * wo + latency. ``co`` is the slice's output channels
    (FC: output neurons), ``ci`` the input channels per group (the weight's second dimension;
    FC: input features, with kh = kw = ho = wo = 1). The three passes run the same loop nest
    reduced three ways, so they share this count. The generated RTL engine obeys it exactly.

    ``tp`` > 1 is a what-if only (the generated engine has tp = 1): output rows computed in
    parallel, which replaces ho by ceil(ho/tp).
    """
    dims = {"co": co, "ci": ci, "kh": kh, "kw": kw, "ho": ho, "wo": wo, "tm": tm, "tn": tn,
            "tp": tp}
    for name, value in dims.items():
        _positive_int(name, value)
    _non_negative_int("latency", latency)
    return -(-co // tm) * -(-ci // tn) * kh * kw * -(-ho // tp) * wo + latency


def pool_cycles(*, c: int, ho: int, wo: int, kh: int, kw: int, latency: int = POOL_LATENCY) -> int:
    """Cycles for one image through the pooling engine, forward or backward: one window tap per
    cycle, c * ho * wo * kh * kw + latency (global average pooling is one ho = wo = 1 window)."""
    for name, value in {"c": c, "ho": ho, "wo": wo, "kh": kh, "kw": kw}.items():
        _positive_int(name, value)
    _non_negative_int("latency", latency)
    return c * ho * wo * kh * kw + latency


def engine_dsp(*, tm: int, tn: int, dsp_per_mac: float, tp: int = 1) -> int:
    """DSP slices of a tm x tn (x tp) MAC array (8-bit packs two MACs per DSP48E2, 32-bit
    needs four)."""
    _non_negative_int("tm", tm)
    _non_negative_int("tn", tn)
    _non_negative_int("tp", tp)
    _positive_number("dsp_per_mac", dsp_per_mac)
    return math.ceil(tm * tn * tp * dsp_per_mac - 1e-9)


def link_cycles(*, bytes_per_image: float, gbps: float, clock_mhz: float) -> int:
    """Clock cycles one direction of a link needs to carry an image's bytes at ``gbps`` line rate.

    The line rate is derated by the 64B/66B payload efficiency.
    """
    if bytes_per_image < 0:
        raise FpdeepError(f"bytes_per_image must be non-negative, got {bytes_per_image!r}")
    _positive_number("link rate (Gb/s)", gbps)
    _positive_number("clock (MHz)", clock_mhz)
    seconds = bytes_per_image * 8 / (gbps * 1e9 * LINK_PAYLOAD_EFFICIENCY)
    return math.ceil(seconds * clock_mhz * 1e6 - 1e-9)


def memory_cycles(*, bytes_per_image: float, gbytes_per_s: float, clock_mhz: float) -> int:
    """Clock cycles off-chip memory needs to move an image's bytes at ``gbytes_per_s``."""
    if bytes_per_image < 0:
        raise FpdeepError(f"bytes_per_image must be non-negative, got {bytes_per_image!r}")
    if bytes_per_image == 0:
        return 0
    _positive_number("memory bandwidth (GB/s)", gbytes_per_s)
    _positive_number("clock (MHz)", clock_mhz)
    return math.ceil(bytes_per_image / (gbytes_per_s * 1e9) * clock_mhz * 1e6 - 1e-9)


def initiation_interval(
    *,
    engine_cycles: Iterable[int],
    link_cycles: Iterable[int] = (),
    memory_cycles: Iterable[int] = (),
) -> int:
    """II: the slowest of every engine, every link direction and every off-chip memory."""
    ii = max([*engine_cycles, *link_cycles, *memory_cycles], default=0)
    if ii <= 0:
        raise FpdeepError("the pipeline has no work: no engine, link or memory takes any cycles")
    return ii


def images_per_second(*, ii_cycles: int, clock_mhz: float) -> float:
    """Steady-state throughput f / II."""
    _positive_int("ii_cycles", ii_cycles)
    return _positive_number("clock (MHz)", clock_mhz) * 1e6 / ii_cycles


def batch_cycles(*, batch: int, ii_cycles: int, latency_cycles: int, update_cycles: int) -> int:
    """One training step of B images: (B - 1) * II + fill/drain latency + weight update."""
    _positive_int("batch", batch)
    _positive_int("ii_cycles", ii_cycles)
    _non_negative_int("latency_cycles", latency_cycles)
    _non_negative_int("update_cycles", update_cycles)
    return (batch - 1) * ii_cycles + latency_cycles + update_cycles


def ideal_batch_cycles(*, batch: int, ii_cycles: int, latency_cycles: int) -> int:
    """The ideal pipeline's step (streams overlapped with compute, element-wise work free):
    (B - 1) * II + latency, what the hardware could reach."""
    return batch_cycles(batch=batch, ii_cycles=ii_cycles, latency_cycles=latency_cycles,
                        update_cycles=0)


def images_per_second_batch(*, batch: int, batch_cycles: int, clock_mhz: float) -> float:
    """Throughput including the drain and weight update at every mini-batch boundary."""
    _positive_int("batch", batch)
    _positive_int("batch_cycles", batch_cycles)
    return batch * _positive_number("clock (MHz)", clock_mhz) * 1e6 / batch_cycles


def gops(*, macs_per_image: int, images_per_s: float) -> float:
    """Giga-operations per second, counting a MAC as two operations."""
    return 2 * macs_per_image * images_per_s / 1e9


def dsp_efficiency(*, macs_per_image: int, mac_lanes: float, ii_cycles: int) -> float:
    """Useful MACs over the MACs the lanes could do in one II (DESIGN §5)."""
    _positive_number("mac_lanes", mac_lanes)
    _positive_int("ii_cycles", ii_cycles)
    return macs_per_image / (mac_lanes * ii_cycles)


def images_per_joule(*, images_per_s: float, watts: float) -> float:
    """Energy efficiency from board power (an estimate: the board file's figure, not measured)."""
    return images_per_s / _positive_number("power (W)", watts)
