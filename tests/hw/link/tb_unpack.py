"""cocotb test of fpdeep_link_unpack against the beat model of tb_gearbox: the beats of random
packets in, with random idle input and back-pressure, every word and packet end checked."""

from __future__ import annotations

import random

import cocotb
from fpdeep_tb import reset, signed, tb_args
from stream_models import StreamSink, StreamSource, run_streams
from tb_gearbox import beats_of, random_packets, widths

from fpdeep.hwlib import LINK_UNPACK


@cocotb.test()
async def unpack_passes_every_word_on(dut):
    ww, tw = widths()
    rng = random.Random(int(tb_args().get("seed", 1)) + 1)
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut)
    packets = random_packets(rng, 40, ww, tw // ww)
    beats = beats_of(packets, ww, tw)
    src = StreamSource(dut, LINK_UNPACK.stream("s"), [b[0] for b in beats], rng=rng, idle=0.2,
                       side={"keep": [b[1] for b in beats]})
    words = [w for p in packets for w in p]
    snk = StreamSink(dut, LINK_UNPACK.stream("m"), rng=rng, stall=0.4, expect=len(words))
    # a beat's last flag is driven from its own list, not only at the final beat
    lasts = [b[2] for b in beats]
    drive = src.drive

    def drive_with_last() -> None:
        drive()
        if not src.done:
            src.lastsig.value = lasts[src.index]

    src.drive = drive_with_last
    await run_streams(dut, [src, snk], max_cycles=20 * len(words) + 100)
    assert snk.beats == [signed(w, ww) for w in words], "a word was lost, changed or reordered"
    ends, n = set(), 0
    for p in packets:
        n += len(p)
        ends.add(n - 1)
    assert {i for i, v in enumerate(snk.lasts) if v} == ends, "packet ends moved"


@cocotb.test()
async def full_beats_give_a_word_every_cycle(dut):
    ww, tw = widths()
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut)
    rng = random.Random(5)
    n = 5 * (tw // ww)
    beats = beats_of([[rng.getrandbits(ww) for _ in range(n)]], ww, tw)
    src = StreamSource(dut, LINK_UNPACK.stream("s"), [b[0] for b in beats], rng=rng, idle=0.0,
                       side={"keep": [b[1] for b in beats]})
    snk = StreamSink(dut, LINK_UNPACK.stream("m"), rng=rng, stall=0.0, expect=n)
    cycles = await run_streams(dut, [src, snk], max_cycles=10 * n)
    assert cycles <= n + 2, f"{n} words took {cycles} cycles"
