"""cocotb test for the loss-gradient unit against fpdeep.golden.loss (softmax CE and MSE)."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import loss
from fpdeep.hwlib import LOSS
from fpdeep.numerics import Format, scale_constant


@cocotb.test()
async def loss_matches_golden(dut):
    args, rng, pyrng = await begin(dut, LOSS)
    z_fmt, e_fmt = Format(16, args["fz"]), Format(16, args["fe"])
    table = StreamSource(dut, LOSS.stream("s_t"), loss.EXP2_TABLE.tolist(), rng=pyrng)
    await run_streams(dut, [table], max_cycles=2000)
    for kind in ("softmax_ce", "mse"):
        for n, spread in args["shapes"]:
            z = rng.integers(-spread, spread + 1, size=(args.get("samples", 3), n))
            z[0, : n // 2] = z[0, 0]          # ties, including the maximum
            y = rng.integers(0, n, size=3)
            if kind == "softmax_ce":
                want = loss.softmax_ce_error(z, y, z_fmt=z_fmt, e_fmt=e_fmt)[0]
            else:
                want = loss.mse_error(z, y, z_fmt=z_fmt, e_fmt=e_fmt)
            m, r = scale_constant(2 / n)
            dut.cfg_kind.value = int(kind == "mse")
            dut.cfg_n.value = n
            dut.cfg_ushift.value = LOSS.encode("cfg_ushift", z_fmt.frac + 15 - 16)
            dut.cfg_fe.value, dut.cfg_fz.value = e_fmt.frac, z_fmt.frac
            dut.cfg_mse_m.value = m
            dut.cfg_mse_shift.value = LOSS.encode("cfg_mse_shift", z_fmt.frac + r - e_fmt.frac)
            for b in range(z.shape[0]):
                src = StreamSource(dut, LOSS.stream("s_z"), z[b].tolist(), rng=pyrng,
                                   side={"label": [int(y[b])] * n})
                snk = StreamSink(dut, LOSS.stream("m"), rng=pyrng, expect=n)
                await run_streams(dut, [src, snk], max_cycles=100 * n * 60)
                assert snk.beats == want[b].tolist(), (
                    f"{kind} n={n} spread={spread} sample {b}: got {snk.beats}, "
                    f"expected {want[b].tolist()}")
                assert snk.lasts[-1] == 1 and sum(snk.lasts) == 1
