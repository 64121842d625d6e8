"""cocotb test for the trained per-channel Scale and Bias unit against fpdeep.golden.affine:
forward, backward and the per-channel gradient sums added to the accumulators so far, each
channel's word streamed ahead of it; per-channel and single-value parameters."""

from __future__ import annotations

import cocotb
import numpy as np
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import affine
from fpdeep.hwlib import AFFINE
from fpdeep.numerics import ACC_WIDTH, Format, wrap

WORD = (1 << ACC_WIDTH) - 1


def _extremes(rng: np.random.Generator, shape, bits: int) -> np.ndarray:
    """Random signed values of 1 to ``bits`` bits (small ones too, so that products stay in
    range), a fifth of them at the two ends of the ``bits``-bit range."""
    size = rng.integers(1, bits + 1, size=shape)
    v = rng.integers(-(1 << 62), 1 << 62, size=shape) >> (63 - size)
    ends = rng.random(shape) < 0.2
    return np.where(ends, rng.choice([-(1 << (bits - 1)), (1 << (bits - 1)) - 1], size=shape), v)


async def _pass(dut, pyrng, cfg: dict, params: list[int], x: np.ndarray, want: list[int],
                *, y: np.ndarray | None = None, grad: bool = False) -> list[int]:
    for name, value in cfg.items():
        getattr(dut, name).value = AFFINE.encode(name, value) if name == "cfg_shift" else value
    sink = StreamSink(dut, AFFINE.stream("m_g" if grad else "m"), rng=pyrng, expect=len(want))
    streams = [StreamSource(dut, AFFINE.stream("s_p"), [int(v) & WORD for v in params],
                            rng=pyrng),
               StreamSource(dut, AFFINE.stream("s_x"), x.ravel().tolist(), rng=pyrng), sink]
    if y is not None:
        streams.append(StreamSource(dut, AFFINE.stream("s_y"), y.ravel().tolist(), rng=pyrng))
    await run_streams(dut, streams, max_cycles=40 * x.size + 100)
    assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1
    return sink.beats


@cocotb.test()
async def affine_matches_golden(dut):
    args, rng, pyrng = await begin(dut, AFFINE)
    c, h, w = args["shape"]
    for bias, per_channel, fx, fp, fy, fe, fdx in args["cases"]:
        x_fmt, p_fmt, y_fmt, e_fmt, dx_fmt = (Format(16, f) for f in (fx, fp, fy, fe, fdx))
        size = c if per_channel else 1
        x = _extremes(rng, (1, c, h, w), 16)
        e = _extremes(rng, (1, c, h, w), 16)
        p = _extremes(rng, size, 16)
        old = _extremes(rng, size, ACC_WIDTH)
        plane = h * w * c // size
        case = f"{'bias' if bias else 'scale'}, {size} value(s), formats {fx}/{fp}/{fy}/{fe}/{fdx}"
        if bias:
            want_y = affine.bias_forward(x, p, x_fmt=x_fmt, b_fmt=p_fmt, out_fmt=y_fmt)
            want_dx = affine.bias_backward(e, e_fmt=e_fmt, out_fmt=dx_fmt)
            acc = affine.bias_gradient(e, size)
            top = max(fx, fp)
            fwd = {"cfg_lx": top - fx, "cfg_lp": top - fp, "cfg_shift": top - fy}
            bwd = {"cfg_shift": fe - fdx}
        else:
            want_y = affine.scale_forward(x, p, x_fmt=x_fmt, s_fmt=p_fmt, out_fmt=y_fmt)
            want_dx = affine.scale_backward(e, p, e_fmt=e_fmt, s_fmt=p_fmt, out_fmt=dx_fmt)
            acc = affine.scale_gradient(e, x, size)
            fwd = {"cfg_lx": 0, "cfg_lp": 0, "cfg_shift": fx + fp - fy}
            bwd = {"cfg_shift": fe + fp - fdx}
        dut.cfg_bias.value = int(bias)
        dut.cfg_plane.value = plane
        got = await _pass(dut, pyrng, {"cfg_pass": 0, **fwd}, p.tolist(), x,
                          want_y.ravel().tolist())
        assert got == want_y.ravel().tolist(), f"{case}, forward"
        got = await _pass(dut, pyrng, {"cfg_pass": 1, **bwd}, p.tolist(), e,
                          want_dx.ravel().tolist())
        assert got == want_dx.ravel().tolist(), f"{case}, backward"
        want_acc = wrap(old + acc, ACC_WIDTH).tolist()
        got = await _pass(dut, pyrng, {"cfg_pass": 2}, old.tolist(), e, want_acc,
                          y=None if bias else x, grad=True)
        assert got == want_acc, f"{case}, gradient"
        for want in (want_y, want_dx):
            assert len(set(want.ravel().tolist())) > 2, case  # not all saturated
