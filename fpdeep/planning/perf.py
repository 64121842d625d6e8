"""Performance model of a generated fpdeep cluster: pure cycle formulas (DESIGN §5).

These formulas are the contract between the planner and the hardware: the generated RTL
engine obeys :func:`engine_cycles` exactly (ceil waste and pipeline latency included), and the
RTL cycle tests call it. Everything here is a pure function of integers and floats; no IR.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

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

# The reliable link (hw/link/fpdeep_link_end): a frame carries at most this many port beats
# of payload between a header beat and a CRC-32 trailer beat; a frame also ends at a
# packet's end.
LINK_FRAME_BEATS = 64
LINK_FRAME_OVERHEAD = 2


def framed_beats(beats: int) -> int:
    """Beats on the line for a packet of ``beats`` payload beats: each frame's header and
    trailer besides."""
    return beats + LINK_FRAME_OVERHEAD * -(-beats // LINK_FRAME_BEATS)


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
    groups: int = 1,
) -> int:
    """Cycles for one image through an FP, BP or WG engine with ``tm`` x ``tn`` MAC lanes.

    ceil(co/tm) * ceil(ci/tn) * kh * kw * ho * wo + latency. ``co`` is the slice's output channels
    (FC: output neurons), ``ci`` the input channels per group (the weight's second dimension;
    FC: input features, with kh = kw = ho = wo = 1). The three passes run the same loop nest
    reduced three ways, so they share this count. The generated RTL engine obeys it exactly.

    ``tp`` > 1 is a what-if only (the generated engine has tp = 1): output rows computed in
    parallel, which replaces ho by ceil(ho/tp).

    A grouped conv (``groups`` > 1 of the ``co`` channels) runs its groups one after the other:
    groups * ceil(co/groups/tm) * ceil(ci/tn) * kh * kw * ho * wo + latency.
    """
    dims = {"co": co, "ci": ci, "kh": kh, "kw": kw, "ho": ho, "wo": wo, "tm": tm, "tn": tn,
            "tp": tp, "groups": groups}
    for name, value in dims.items():
        _positive_int(name, value)
    _non_negative_int("latency", latency)
    if co % groups:
        raise FpdeepError(f"engine_cycles: groups={groups} does not divide co={co}")
    return (groups * -(-(co // groups) // tm) * -(-ci // tn) * kh * kw * -(-ho // tp) * wo
            + latency)


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


# Bits of a link word besides its data: the channel number and the packet's last flag
# ({channel, last, data} of fpdeep_link_tx with one channel).
LINK_FRAMING_BITS = 2

# Link words a board hands its link per cycle: a store mover reads one word a cycle, so a
# hop never moves more, however wide its ports are.
LINK_SOURCE_WORDS_PER_CYCLE = 1

# The link ports' tdata width is a whole number of these (the widths Aurora's user
# interface and AXI4-Stream interconnects take).
LINK_PORT_QUANTUM = 64


def link_port_bits(*, gbps: float, clock_mhz: float) -> int:
    """tdata width of a board's link ports: the line's payload bits per clock cycle rounded
    up to a multiple of 64 (at least 64), so that the ports never hold the line back."""
    _positive_number("link rate (Gb/s)", gbps)
    _positive_number("clock (MHz)", clock_mhz)
    per_cycle = gbps * 1e9 * LINK_PAYLOAD_EFFICIENCY / (clock_mhz * 1e6)
    return max(1, math.ceil(per_cycle / LINK_PORT_QUANTUM - 1e-9)) * LINK_PORT_QUANTUM


#: What may bound a link hop's rate, in the order a tie is reported.
LINK_BOUNDS = ("source", "port", "line rate")


@dataclass(frozen=True)
class LinkRate:
    """What one direction of a link carries per clock cycle, in link words
    (``data_bits`` of data and the framing bits each): the least of the port's words per
    beat, the words the source supplies and the beats the line carries times the words of
    a beat."""

    data_bits: int
    port_bits: int
    words_per_beat: int
    source_words_per_cycle: float
    line_words_per_cycle: float

    @property
    def word_bits(self) -> int:
        return self.data_bits + LINK_FRAMING_BITS

    @property
    def words_per_cycle(self) -> float:
        return min(self.limits().values())

    @property
    def bound(self) -> str:
        """What bounds the rate: "source", "port" or "line rate"."""
        limits = self.limits()
        return next(k for k in LINK_BOUNDS if limits[k] == self.words_per_cycle)

    def limits(self) -> dict[str, float]:
        return {"source": self.source_words_per_cycle, "port": float(self.words_per_beat),
                "line rate": self.line_words_per_cycle}


def link_rate(*, gbps: float, clock_mhz: float, data_bits: int, port_bits: int) -> LinkRate:
    """The rate of a link of ``gbps`` line rate whose ports are ``port_bits`` wide: the line
    carries whole port beats (the payload rate, 64B/66B derated, over the port width)."""
    _positive_number("link rate (Gb/s)", gbps)
    _positive_number("clock (MHz)", clock_mhz)
    _positive_int("data bits", data_bits)
    _positive_int("port bits", port_bits)
    per_beat = port_bits // (data_bits + LINK_FRAMING_BITS)
    if per_beat < 1:
        raise FpdeepError(f"link ports of {port_bits} bits cannot hold a link word of "
                          f"{data_bits + LINK_FRAMING_BITS} bits")
    beats = gbps * 1e9 * LINK_PAYLOAD_EFFICIENCY / (clock_mhz * 1e6) / port_bits
    return LinkRate(data_bits, port_bits, per_beat, float(LINK_SOURCE_WORDS_PER_CYCLE),
                    beats * per_beat)


def link_words(bytes_per_image: float, data_bits: int) -> int:
    """Link words that carry ``bytes_per_image`` of ``data_bits``-bit data."""
    if bytes_per_image < 0:
        raise FpdeepError(f"bytes_per_image must be non-negative, got {bytes_per_image!r}")
    return math.ceil(bytes_per_image * 8 / data_bits - 1e-9)


def link_cycles(*, bytes_per_image: float, rate: LinkRate) -> int:
    """Clock cycles one direction of a link needs to carry an image's bytes at ``rate``, as
    one packet: its words at the rate, and its beats with each frame's header and trailer at
    the port's beat a cycle and the line's beat rate."""
    words = link_words(bytes_per_image, rate.data_bits)
    framed = framed_beats(-(-words // rate.words_per_beat))
    beats_per_cycle = min(1.0, rate.line_words_per_cycle / rate.words_per_beat)
    return math.ceil(max(words / rate.words_per_cycle, framed / beats_per_cycle) - 1e-9)


def memory_cycles(*, bytes_per_image: float, gbytes_per_s: float, clock_mhz: float) -> int:
    """Clock cycles off-chip memory needs to move an image's bytes at ``gbytes_per_s``."""
    if bytes_per_image < 0:
        raise FpdeepError(f"bytes_per_image must be non-negative, got {bytes_per_image!r}")
    if bytes_per_image == 0:
        return 0
    _positive_number("memory bandwidth (GB/s)", gbytes_per_s)
    _positive_number("clock (MHz)", clock_mhz)
    return math.ceil(bytes_per_image / (gbytes_per_s * 1e9) * clock_mhz * 1e6 - 1e-9)


#: AXI4's widest data bus.
AXI_MAX_DATA_BITS = 1024


def memory_port_bits(*, gbytes_per_s: float, clock_mhz: float) -> int:
    """Data bits of a board's AXI4 off-chip memory master: the memory's bytes per clock cycle
    in bits, rounded up to a power of two as AXI4 requires (64 to 1024)."""
    _positive_number("memory bandwidth (GB/s)", gbytes_per_s)
    _positive_number("clock (MHz)", clock_mhz)
    per_cycle = math.ceil(gbytes_per_s * 8e9 / (clock_mhz * 1e6) - 1e-9)
    return min(AXI_MAX_DATA_BITS, max(64, 1 << (per_cycle - 1).bit_length()))


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
    """The ideal pipeline's step (operands streamed in while an engine computes, no update):
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
