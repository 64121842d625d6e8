"""cocotb test for the format converter against fpdeep.numerics.convert."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.hwlib import CONVERT
from fpdeep.numerics import Format, convert


@cocotb.test()
async def convert_matches_golden(dut):
    args, rng, pyrng = await begin(dut, CONVERT)
    n = 90
    for src_frac, dst_frac in args["formats"]:
        src, dst = Format(16, src_frac), Format(16, dst_frac)
        dut.cfg_shift.value = CONVERT.encode("cfg_shift", src_frac - dst_frac)
        x = rng.integers(-(1 << 15), 1 << 15, size=n)
        want = convert(x, src, dst)
        sink = StreamSink(dut, CONVERT.stream("m"), rng=pyrng, expect=n)
        await run_streams(dut, [StreamSource(dut, CONVERT.stream("s"), x.tolist(), rng=pyrng),
                                sink], max_cycles=30 * n)
        assert sink.beats == want.tolist(), f"formats {src}->{dst} differ"
        assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1
