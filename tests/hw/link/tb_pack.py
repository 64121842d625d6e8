"""cocotb test of fpdeep_link_pack against the beat model of tb_gearbox: random packets of 1
to 3 beats' words, random idle input and back-pressure, every beat checked."""

from __future__ import annotations

import random

import cocotb
from fpdeep_tb import reset, signed, tb_args
from stream_models import StreamSink, StreamSource, run_streams
from tb_gearbox import beats_of, random_packets, widths
from tb_link import PacketSource

from fpdeep.hwlib import LINK_PACK


@cocotb.test()
async def pack_fills_beats_in_order(dut):
    ww, tw = widths()
    rng = random.Random(int(tb_args().get("seed", 1)))
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut)
    packets = random_packets(rng, 40, ww, tw // ww)
    expect = beats_of(packets, ww, tw)
    src = PacketSource(dut, LINK_PACK.stream("s"), packets, rng=rng, idle=0.2)
    snk = StreamSink(dut, LINK_PACK.stream("m"), rng=rng, stall=0.4, expect=len(expect))
    words = sum(map(len, packets))
    await run_streams(dut, [src, snk], max_cycles=20 * words + 100)
    got = list(zip(snk.beats, snk.sides["keep"], snk.lasts, strict=True))
    assert len(got) == len(expect)
    for k, (beat, want) in enumerate(zip(got, expect, strict=True)):
        assert beat == (signed(want[0], tw), want[1], want[2]), f"beat {k}"


@cocotb.test()
async def a_word_every_cycle_flows_without_gaps(dut):
    ww, tw = widths()
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut)
    rng = random.Random(5)
    n = 5 * (tw // ww)
    src = StreamSource(dut, LINK_PACK.stream("s"), list(range(n)), rng=rng, idle=0.0)
    snk = StreamSink(dut, LINK_PACK.stream("m"), rng=rng, stall=0.0, expect=5)
    cycles = await run_streams(dut, [src, snk], max_cycles=10 * n)
    assert cycles <= n + 2, f"{n} words took {cycles} cycles"
