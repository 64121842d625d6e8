"""cocotb test for the SGD unit: batch mean and update as fpdeep.golden.sgd, bit for bit."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import sgd
from fpdeep.hwlib import SGD
from fpdeep.numerics import Format


@cocotb.test()
async def sgd_matches_golden(dut):
    args, rng, pyrng = await begin(dut, SGD)
    n = 100
    w_fmt, g_fmt = Format(16, 14), Format(16, 14)
    acc_frac = 14 + 10  # err + act fractional bits (docs/numerics.md §4)
    for batch, lr, scale in args["settings"]:
        acc = rng.integers(-(1 << scale), 1 << scale, size=n)
        w = rng.integers(-(1 << 15), 1 << 15, size=n)
        g = sgd.mean_gradient(acc, acc_frac=acc_frac, batch=batch, out_fmt=g_fmt)
        want = sgd.update(w, g, lr=lr, g_fmt=g_fmt, w_fmt=w_fmt)
        (mb, rb), (mlr, rlr) = sgd.batch_constant(batch), sgd.lr_constant(lr)
        dut.cfg_mb.value, dut.cfg_mlr.value = mb, mlr
        dut.cfg_sb.value = SGD.encode("cfg_sb", acc_frac + rb - g_fmt.frac)
        dut.cfg_slr.value = SGD.encode("cfg_slr", g_fmt.frac + rlr - w_fmt.frac)
        sink = StreamSink(dut, SGD.stream("m"), rng=pyrng, expect=n)
        await run_streams(dut, [StreamSource(dut, SGD.stream("s_g"), acc.tolist(), rng=pyrng),
                                StreamSource(dut, SGD.stream("s_w"), w.tolist(), rng=pyrng),
                                sink], max_cycles=30 * n)
        assert sink.beats == want.tolist(), f"batch {batch} lr {lr} scale {scale} differ"
