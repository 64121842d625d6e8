"""cocotb test for the stream FIFO and skid buffer: order, last and data survive random stalls."""

from __future__ import annotations

import random

import cocotb
from fpdeep_tb import reset, tb_args
from stream_models import StreamSink, StreamSource, run_streams

from fpdeep.hwlib import module


def _streams(dut):
    m = module(dut._name)  # both buffers declare the same two streams
    return m.stream("s"), m.stream("m")


@cocotb.test()
async def stream_passes_everything_in_order(dut):
    args = tb_args()
    rng = random.Random(int(args.get("seed", 1)))
    n = int(args.get("beats", 200))
    s, m = _streams(dut)
    await reset(dut)
    width = len(dut.s_data)
    beats = [rng.randrange(-(1 << (width - 1)), 1 << (width - 1)) for _ in range(n)]
    src = StreamSource(dut, s, beats, rng=rng, idle=float(args.get("idle", 0.3)))
    snk = StreamSink(dut, m, rng=rng, stall=float(args.get("stall", 0.3)))
    await run_streams(dut, [src, snk], max_cycles=20 * n + 100)
    assert snk.beats == beats, "data reordered, lost or corrupted"
    assert snk.lasts == [0] * (n - 1) + [1], "last must mark only the final beat"


@cocotb.test()
async def stream_full_throughput(dut):
    # With no stalls on either side a buffer must move one beat per cycle.
    s, m = _streams(dut)
    await reset(dut)
    n = 64
    rng = random.Random(7)
    src = StreamSource(dut, s, list(range(n)), rng=rng, idle=0.0)
    snk = StreamSink(dut, m, rng=rng, stall=0.0)
    cycles = await run_streams(dut, [src, snk], max_cycles=4 * n)
    assert snk.beats == list(range(n))
    assert cycles <= n + 4, f"{n} beats took {cycles} cycles; expected about one per cycle"
