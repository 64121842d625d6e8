"""cocotb test for the error fan-out: both copies converted as fpdeep.golden.add.backward."""

from __future__ import annotations

import random

import cocotb
import numpy as np
from fpdeep_tb import StreamSink, StreamSource, reset, run_streams, tb_args

from fpdeep.golden import add
from fpdeep.numerics import Format


@cocotb.test()
async def fanout_matches_golden(dut):
    args = tb_args()
    rng = np.random.default_rng(int(args.get("seed", 1)))
    pyrng = random.Random(int(args.get("seed", 1)))
    dut.s_valid.value = 0
    await reset(dut)
    n = 100
    fe, fa, fb = args["formats"]
    e = rng.integers(-(1 << 15), 1 << 15, size=n)
    want = add.backward(e, e_fmt=Format(16, fe), out_fmts=(Format(16, fa), Format(16, fb)))
    dut.cfg_shift_a.value = (fe - fa) & 0x7F
    dut.cfg_shift_b.value = (fe - fb) & 0x7F
    ka = StreamSink(dut, "m_a", rng=pyrng, stall=0.2, expect=n)
    kb = StreamSink(dut, "m_b", rng=pyrng, stall=0.5, expect=n)
    await run_streams(dut, [StreamSource(dut, "s", e.tolist(), rng=pyrng), ka, kb],
                      max_cycles=30 * n)
    assert ka.beats == want[0].tolist() and kb.beats == want[1].tolist()
    assert ka.lasts[-1] == kb.lasts[-1] == 1
