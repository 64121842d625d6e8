"""cocotb test for the SGD unit: batch mean and update as fpdeep.golden.sgd, bit for bit."""

from __future__ import annotations

import random

import cocotb
import numpy as np
from fpdeep_tb import StreamSink, StreamSource, reset, run_streams, tb_args

from fpdeep.golden import sgd
from fpdeep.numerics import Format


@cocotb.test()
async def sgd_matches_golden(dut):
    args = tb_args()
    rng = np.random.default_rng(int(args.get("seed", 1)))
    pyrng = random.Random(int(args.get("seed", 1)))
    dut.s_g_valid.value = 0
    dut.s_w_valid.value = 0
    await reset(dut)
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
        dut.cfg_sb.value = (acc_frac + rb - g_fmt.frac) & 0x7F
        dut.cfg_slr.value = (g_fmt.frac + rlr - w_fmt.frac) & 0x7F
        sink = StreamSink(dut, "m", rng=pyrng, expect=n)
        await run_streams(dut, [StreamSource(dut, "s_g", acc.tolist(), rng=pyrng, width=48),
                                StreamSource(dut, "s_w", w.tolist(), rng=pyrng), sink],
                          max_cycles=30 * n)
        assert sink.beats == want.tolist(), f"batch {batch} lr {lr} scale {scale} differ"
