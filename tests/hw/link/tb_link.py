"""cocotb test for link framing and the link model: packets of two channels share one link,
arrive intact and in order, no sooner than the latency and no faster than the bandwidth."""

from __future__ import annotations

import random

import cocotb
from fpdeep_tb import reset, tb_args
from stream_models import StreamSink, StreamSource, run_streams

from fpdeep.hwlib.signature import sink, source

#: The streams of the test harness fpdeep_link_loop.sv: two channels in, two out.
S0, S1 = sink("s0", "DW"), sink("s1", "DW")
M0, M1 = source("m0", "DW"), source("m1", "DW")


class PacketSource(StreamSource):
    """A StreamSource whose `last` marks the end of each packet, not only of the stream."""

    def __init__(self, dut, stream, packets, **kw):
        beats = [v for p in packets for v in p]
        super().__init__(dut, stream, beats, **kw)
        ends, n = set(), 0
        for p in packets:
            n += len(p)
            ends.add(n - 1)
        self.ends = ends

    def drive(self) -> None:
        super().drive()
        if not self.done and self.lastsig is not None:
            self.lastsig.value = int(self.index in self.ends)


def packets(rng: random.Random, count: int, base: int) -> list[list[int]]:
    return [[base + 100 * i + j for j in range(rng.randint(1, 6))] for i in range(count)]


@cocotb.test()
async def link_carries_packets(dut):
    args = tb_args()
    rng = random.Random(int(args.get("seed", 1)))
    latency, num, den = (int(args[k]) for k in ("latency", "num", "den"))
    dut.cfg_latency.value, dut.cfg_num.value, dut.cfg_den.value = latency, num, den
    dut.s0_valid.value = 0
    dut.s1_valid.value = 0
    await reset(dut)
    p0, p1 = packets(rng, 12, 1000), packets(rng, 12, 5000)
    s0 = PacketSource(dut, S0, p0, rng=rng, idle=0.3)
    s1 = PacketSource(dut, S1, p1, rng=rng, idle=0.3)
    k0 = StreamSink(dut, M0, rng=rng, stall=0.3, expect=len(s0.beats))
    k1 = StreamSink(dut, M1, rng=rng, stall=0.3, expect=len(s1.beats))
    await run_streams(dut, [s0, s1, k0, k1], max_cycles=200 * (len(s0.beats) + len(s1.beats)))
    for src, snk in ((s0, k0), (s1, k1)):
        assert snk.beats == src.beats, "a channel's words were lost, reordered or mixed"
        assert {i for i, v in enumerate(snk.lasts) if v} == src.ends, "packet ends moved"


@cocotb.test()
async def link_latency_and_bandwidth(dut):
    args = tb_args()
    latency, num, den = (int(args[k]) for k in ("latency", "num", "den"))
    dut.cfg_latency.value, dut.cfg_num.value, dut.cfg_den.value = latency, num, den
    dut.s0_valid.value = 0
    dut.s1_valid.value = 0
    await reset(dut)
    rng = random.Random(3)
    # one word alone shows the latency
    src = StreamSource(dut, S0, [7], rng=rng, idle=0.0)
    snk = StreamSink(dut, M0, rng=rng, stall=0.0, expect=1)
    cycles = await run_streams(dut, [src, snk], max_cycles=10 * latency + 20)
    assert latency <= cycles <= latency + 3, f"one word took {cycles} cycles, latency {latency}"
    # a long burst shows the bandwidth
    n = 120
    src = StreamSource(dut, S0, list(range(n)), rng=rng, idle=0.0)
    snk = StreamSink(dut, M0, rng=rng, stall=0.0, expect=n)
    cycles = await run_streams(dut, [src, snk], max_cycles=10 * n * den // num + latency + 20)
    ideal = n * den / num + latency
    assert abs(cycles - ideal) <= 0.03 * ideal + 3, f"{n} words in {cycles} cycles, ideal {ideal}"
