"""cocotb test for the ReLU unit, forward and backward, against fpdeep.golden.relu."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import relu
from fpdeep.hwlib import RELU
from fpdeep.numerics import Format


@cocotb.test()
async def relu_matches_golden(dut):
    args, rng, pyrng = await begin(dut, RELU)
    n = 120
    for src_frac, dst_frac in args["formats"]:
        src, dst = Format(16, src_frac), Format(16, dst_frac)
        dut.cfg_shift.value = RELU.encode("cfg_shift", src_frac - dst_frac)
        x = rng.integers(-(1 << 15), 1 << 15, size=n)
        x[::7] = 0  # the error is blocked at x = 0
        e = rng.integers(-(1 << 15), 1 << 15, size=n)
        for bwd in (0, 1):
            dut.cfg_bwd.value = bwd
            want = (relu.backward(e, x, e_fmt=src, out_fmt=dst) if bwd
                    else relu.forward(x, x_fmt=src, out_fmt=dst))
            sink = StreamSink(dut, RELU.stream("m"), rng=pyrng, expect=n)
            eps = [StreamSource(dut, RELU.stream("s_x"), x.tolist(), rng=pyrng), sink]
            if bwd:
                eps.append(StreamSource(dut, RELU.stream("s_e"), e.tolist(), rng=pyrng))
            await run_streams(dut, eps, max_cycles=30 * n)
            assert sink.beats == want.tolist(), f"bwd={bwd} formats {src}->{dst} differ"
            assert sink.lasts[-1] == 1
