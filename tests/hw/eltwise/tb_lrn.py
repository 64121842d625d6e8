"""cocotb test for the LRN unit against fpdeep.golden.lrn: forward, and backward from the
forward input and the output's error, over several sizes, constants and formats."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.design.units import lrn_config
from fpdeep.golden import lrn
from fpdeep.hwlib import LRN
from fpdeep.ir import LRNAttrs
from fpdeep.numerics import Format


@cocotb.test()
async def lrn_matches_golden(dut):
    args, rng, pyrng = await begin(dut, LRN)
    for (c, h, w), (size, alpha, beta, bias), (fx, fy, fe, fdx), x_bits, e_bits in args["cases"]:
        attrs = LRNAttrs(size, alpha, beta, bias)
        x_fmt, y_fmt, e_fmt, dx_fmt = (Format(16, f) for f in (fx, fy, fe, fdx))
        for name, value in lrn_config("tb", attrs, shape=(c, h, w), x_fmt=x_fmt, y_fmt=y_fmt,
                                      e_fmt=e_fmt, dx_fmt=dx_fmt).items():
            getattr(dut, name).value = value
        # values up to 2^bits, extremes among them
        x = rng.integers(-(1 << x_bits), 1 << x_bits, size=(1, c, h, w))
        e = rng.integers(-(1 << e_bits), 1 << e_bits, size=(1, c, h, w))
        x.flat[::5] = rng.choice([-(1 << 15), (1 << 15) - 1, 0], size=x.flat[::5].shape)
        e.flat[::7] = rng.choice([-(1 << 15), (1 << 15) - 1], size=e.flat[::7].shape)
        want_y = lrn.forward(x, attrs=attrs, x_fmt=x_fmt, out_fmt=y_fmt)
        want_dx = lrn.backward(e, x, attrs=attrs, x_fmt=x_fmt, e_fmt=e_fmt, out_fmt=dx_fmt)
        for bwd, want in ((0, want_y), (1, want_dx)):
            dut.cfg_bwd.value = bwd
            sink = StreamSink(dut, LRN.stream("m"), rng=pyrng, expect=x.size)
            eps = [StreamSource(dut, LRN.stream("s_x"), x.ravel().tolist(), rng=pyrng), sink]
            if bwd:
                eps.append(StreamSource(dut, LRN.stream("s_e"), e.ravel().tolist(), rng=pyrng))
            await run_streams(dut, eps, max_cycles=40 * (c + size) * h * w)
            case = f"shape {(c, h, w)}, attrs {attrs}, formats {fx}/{fy}/{fe}/{fdx}, bwd={bwd}"
            assert sink.beats == want.ravel().tolist(), case
            assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1, case
            assert len(set(want.ravel().tolist())) > x.size // 3, case  # not all saturated
