"""cocotb test for the frozen BatchNormalization unit against fpdeep.golden.batchnorm: the
normalise and affine forward and the error scaling backward, per channel, with the constants
streamed ahead of each channel."""

from __future__ import annotations

import cocotb
import numpy as np
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import batchnorm as bn
from fpdeep.hwlib import BN_FROZEN
from fpdeep.numerics import ACC_WIDTH, Format


def _words(columns: list[np.ndarray]) -> list[int]:
    """Per channel its constants, one store word each (two's complement in 48 bits)."""
    return [int(v) & ((1 << ACC_WIDTH) - 1) for row in zip(*columns, strict=True) for v in row]


@cocotb.test()
async def bn_frozen_matches_golden(dut):
    args, rng, pyrng = await begin(dut, BN_FROZEN)
    c, h, w = args["shape"]
    for fx, fy, fe, fdx, var_bits in args["cases"]:
        x_fmt, y_fmt, e_fmt, dx_fmt = (Format(16, f) for f in (fx, fy, fe, fdx))
        w_fmt = Format(16, 14)
        mean_fmt, var_fmt = bn.running_formats(x_fmt)
        x = rng.integers(-(1 << 15), 1 << 15, size=(1, c, h, w))
        e = rng.integers(-(1 << 15), 1 << 15, size=(1, c, h, w))
        mean = rng.integers(-(1 << (15 + bn.STAT_GUARD)), 1 << (15 + bn.STAT_GUARD), size=c)
        var = rng.integers(1, 1 << var_bits, size=c)
        gamma = rng.integers(-(1 << 15), 1 << 15, size=c)
        beta = rng.integers(-(1 << 15), 1 << 15, size=c)
        xhat, z, k = bn.normalise(bn.centred(x, mean), var, epsilon=1e-5, x_fmt=x_fmt)
        want_y = bn.affine(xhat, gamma, beta, w_fmt=w_fmt, out_fmt=y_fmt)
        want_dx = bn.backward(e, None, gamma, z, k, x_fmt=x_fmt, e_fmt=e_fmt, w_fmt=w_fmt,
                              out_fmt=dx_fmt, acc_width=ACC_WIDTH)
        factor, eshift = bn.error_factor(gamma, z, k, x_fmt=x_fmt, e_fmt=e_fmt, w_fmt=w_fmt,
                                         out_fmt=dx_fmt)
        dut.cfg_plane.value = h * w
        dut.cfg_yshift.value = BN_FROZEN.encode("cfg_yshift",
                                                w_fmt.frac + bn.XHAT.frac - y_fmt.frac)
        for bwd, data, params, want in (
                (0, x, [mean, z, bn.xhat_shift(k), gamma, beta], want_y),
                (1, e, [factor, eshift], want_dx)):
            dut.cfg_bwd.value = bwd
            sink = StreamSink(dut, BN_FROZEN.stream("m"), rng=pyrng, expect=data.size)
            await run_streams(dut, [
                StreamSource(dut, BN_FROZEN.stream("s_p"), _words(params), rng=pyrng),
                StreamSource(dut, BN_FROZEN.stream("s_x"), data.ravel().tolist(), rng=pyrng),
                sink], max_cycles=40 * data.size)
            case = f"formats {fx}/{fy}/{fe}/{fdx}, variances below 2^{var_bits}, bwd={bwd}"
            assert sink.beats == want.ravel().tolist(), case
            assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1, case
            assert len(set(want.ravel().tolist())) > c, case  # not all saturated
