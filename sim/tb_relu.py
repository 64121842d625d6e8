"""cocotb test for the ReLU unit, forward and backward, against fpdeep.golden.relu."""

from __future__ import annotations

import random

import cocotb
import numpy as np
from fpdeep_tb import StreamSink, StreamSource, reset, run_streams, tb_args

from fpdeep.golden import relu
from fpdeep.numerics import Format


@cocotb.test()
async def relu_matches_golden(dut):
    args = tb_args()
    rng = np.random.default_rng(int(args.get("seed", 1)))
    pyrng = random.Random(int(args.get("seed", 1)))
    dut.s_x_valid.value = 0
    dut.s_e_valid.value = 0
    await reset(dut)
    n = 120
    for src_frac, dst_frac in args["formats"]:
        src, dst = Format(16, src_frac), Format(16, dst_frac)
        dut.cfg_shift.value = (src_frac - dst_frac) & 0x7F
        x = rng.integers(-(1 << 15), 1 << 15, size=n)
        x[::7] = 0  # the error is blocked at x = 0
        e = rng.integers(-(1 << 15), 1 << 15, size=n)
        for bwd in (0, 1):
            dut.cfg_bwd.value = bwd
            want = (relu.backward(e, x, e_fmt=src, out_fmt=dst) if bwd
                    else relu.forward(x, x_fmt=src, out_fmt=dst))
            eps = [StreamSource(dut, "s_x", x.tolist(), rng=pyrng),
                   StreamSink(dut, "m", rng=pyrng, expect=n)]
            if bwd:
                eps.append(StreamSource(dut, "s_e", e.tolist(), rng=pyrng))
            await run_streams(dut, eps, max_cycles=30 * n)
            assert eps[1].beats == want.tolist(), f"bwd={bwd} formats {src}->{dst} differ"
            assert eps[1].lasts[-1] == 1
