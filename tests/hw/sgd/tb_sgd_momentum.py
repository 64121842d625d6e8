"""cocotb test for the momentum SGD unit: batch mean, weight decay, momentum and update as
fpdeep.golden.sgd.momentum_update, bit for bit, weights and velocities."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import sgd
from fpdeep.hwlib import SGD_MOMENTUM
from fpdeep.numerics import Format, scale_constant


@cocotb.test()
async def momentum_sgd_matches_golden(dut):
    args, rng, pyrng = await begin(dut, SGD_MOMENTUM)
    n = 100
    w_fmt, g_fmt, v_fmt = Format(16, 14), Format(16, 14), Format(24, 18)
    acc_frac = 14 + 10  # err + act fractional bits (docs/numerics.md §4)
    for batch, lr, momentum, decay, scale, v_scale in args["settings"]:
        acc = rng.integers(-(1 << scale), 1 << scale, size=n)
        w = rng.integers(-(1 << 15), 1 << 15, size=n)
        v = rng.integers(-(1 << v_scale), 1 << v_scale, size=n)
        g = sgd.mean_gradient(acc, acc_frac=acc_frac, batch=batch, out_fmt=g_fmt)
        want_w, want_v = sgd.momentum_update(w, g, v, lr=lr, momentum=momentum,
                                             weight_decay=decay, g_fmt=g_fmt, w_fmt=w_fmt,
                                             v_fmt=v_fmt)
        (mb, rb), (mlr, rlr) = sgd.batch_constant(batch), sgd.lr_constant(lr)
        mwd, rwd = scale_constant(decay) if decay > 0 else (0, 0)
        mmu, rmu = scale_constant(momentum) if momentum > 0 else (0, 0)
        enc = SGD_MOMENTUM.encode
        dut.cfg_mb.value, dut.cfg_mlr.value = mb, mlr
        dut.cfg_mwd.value, dut.cfg_mmu.value = mwd, mmu
        dut.cfg_sb.value = enc("cfg_sb", acc_frac + rb - g_fmt.frac)
        dut.cfg_sgv.value = enc("cfg_sgv", g_fmt.frac - v_fmt.frac)
        dut.cfg_swd.value = enc("cfg_swd", w_fmt.frac + rwd - v_fmt.frac)
        dut.cfg_smu.value = enc("cfg_smu", rmu)
        dut.cfg_slr.value = enc("cfg_slr", v_fmt.frac + rlr - w_fmt.frac)
        sink_w = StreamSink(dut, SGD_MOMENTUM.stream("m"), rng=pyrng, expect=n)
        sink_v = StreamSink(dut, SGD_MOMENTUM.stream("m_v"), rng=pyrng, expect=n)
        await run_streams(dut, [
            StreamSource(dut, SGD_MOMENTUM.stream("s_g"), acc.tolist(), rng=pyrng),
            StreamSource(dut, SGD_MOMENTUM.stream("s_w"), w.tolist(), rng=pyrng),
            StreamSource(dut, SGD_MOMENTUM.stream("s_v"), v.tolist(), rng=pyrng),
            sink_w, sink_v], max_cycles=40 * n)
        setting = f"batch {batch} lr {lr} momentum {momentum} decay {decay} scale {scale}"
        assert sink_v.beats == want_v.tolist(), f"velocities differ: {setting}"
        assert sink_w.beats == want_w.tolist(), f"weights differ: {setting}"
