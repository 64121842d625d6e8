"""cocotb test for the error fan-out: both copies converted as fpdeep.golden.add.backward."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import add
from fpdeep.hwlib import FANOUT
from fpdeep.numerics import Format


@cocotb.test()
async def fanout_matches_golden(dut):
    args, rng, pyrng = await begin(dut, FANOUT)
    n = 100
    fe, fa, fb = args["formats"]
    e = rng.integers(-(1 << 15), 1 << 15, size=n)
    want = add.backward(e, e_fmt=Format(16, fe), out_fmts=(Format(16, fa), Format(16, fb)))
    dut.cfg_shift_a.value = FANOUT.encode("cfg_shift_a", fe - fa)
    dut.cfg_shift_b.value = FANOUT.encode("cfg_shift_b", fe - fb)
    ka = StreamSink(dut, FANOUT.stream("m_a"), rng=pyrng, stall=0.2, expect=n)
    kb = StreamSink(dut, FANOUT.stream("m_b"), rng=pyrng, stall=0.5, expect=n)
    await run_streams(dut, [StreamSource(dut, FANOUT.stream("s"), e.tolist(), rng=pyrng), ka, kb],
                      max_cycles=30 * n)
    assert ka.beats == want[0].tolist() and kb.beats == want[1].tolist()
    assert ka.lasts[-1] == kb.lasts[-1] == 1
