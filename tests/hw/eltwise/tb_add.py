"""cocotb test for the residual add: forward alignment and error fan-in vs fpdeep.golden.add."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import add
from fpdeep.hwlib import ADD
from fpdeep.numerics import Format


@cocotb.test()
async def add_matches_golden(dut):
    args, rng, pyrng = await begin(dut, ADD)
    n = 100
    for fa, fb, fy in args["formats"]:  # None marks error fan-in
        a = rng.integers(-(1 << 15), 1 << 15, size=n)
        b = rng.integers(-(1 << 15), 1 << 15, size=n)
        if fy is None:
            want = add.error_fan_in([a, b], fmt=Format(16, fa))
            la = lb = shift = 0
        else:
            fmts = (Format(16, fa), Format(16, fb))
            want = add.forward([a, b], x_fmts=fmts, out_fmt=Format(16, fy))
            top = max(fa, fb)
            la, lb, shift = top - fa, top - fb, top - fy
        dut.cfg_la.value, dut.cfg_lb.value = la, lb
        dut.cfg_shift.value = ADD.encode("cfg_shift", shift)
        sink = StreamSink(dut, ADD.stream("m"), rng=pyrng, expect=n)
        await run_streams(dut, [StreamSource(dut, ADD.stream("s_a"), a.tolist(), rng=pyrng),
                                StreamSource(dut, ADD.stream("s_b"), b.tolist(), rng=pyrng),
                                sink], max_cycles=30 * n)
        assert sink.beats == want.tolist(), f"formats {(fa, fb, fy)} differ"
