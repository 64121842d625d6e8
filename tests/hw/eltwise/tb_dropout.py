"""cocotb test for the Dropout unit against fpdeep.golden.dropout: the keep mask of several
images (seeds from layer, step and image) and the scaling, forward, backward and off."""

from __future__ import annotations

import cocotb
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.golden import dropout
from fpdeep.hwlib import DROPOUT
from fpdeep.numerics import Format

MASK32 = (1 << 32) - 1


@cocotb.test()
async def dropout_matches_golden(dut):
    args, rng, pyrng = await begin(dut, DROPOUT)
    n, layer = args["elements"], args["layer"]
    for ratio, step, (src_frac, dst_frac) in args["cases"]:
        src, dst = Format(16, src_frac), Format(16, dst_frac)
        x = rng.integers(-(1 << 15), 1 << 15, size=(args["images"], n))
        keep = dropout.keep_mask(x.shape, ratio, layer=layer, step=step)
        mult, r = dropout.scale(ratio)
        dut.cfg_seed_layer.value = (dropout.SEED_LAYER * (layer + 1)) & MASK32
        dut.seed_step.value = step
        for mode in ("forward", "backward", "off"):
            if mode == "off":  # the forward-only pass: Dropout is the identity
                want = dropout.inference(x, x_fmt=src, out_fmt=dst)
                dut.cfg_mult.value, dut.cfg_thresh.value = 1, 0
                dut.cfg_shift.value = DROPOUT.encode("cfg_shift", src_frac - dst_frac)
            else:
                pass_ = dropout.forward if mode == "forward" else dropout.backward
                want = pass_(x, keep, ratio, **{("x_fmt" if mode == "forward" else "e_fmt"): src},
                             out_fmt=dst)
                dut.cfg_mult.value, dut.cfg_thresh.value = mult, dropout.threshold(ratio)
                dut.cfg_shift.value = DROPOUT.encode("cfg_shift", src_frac + r - dst_frac)
            for b in range(x.shape[0]):
                dut.cfg_seed_image.value = (dropout.SEED_IMAGE * (b + 1)) & MASK32
                sink = StreamSink(dut, DROPOUT.stream("m"), rng=pyrng, expect=n)
                source = StreamSource(dut, DROPOUT.stream("s_x"), x[b].tolist(), rng=pyrng)
                await run_streams(dut, [source, sink], max_cycles=30 * n)
                assert sink.beats == want[b].tolist(), (
                    f"p={ratio} step {step} image {b} {mode}: got {sink.beats}, "
                    f"expected {want[b].tolist()}")
                assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1
            if mode != "off":  # the mask is not all-or-nothing, so the test sees it
                assert 0 < keep.sum() < keep.size
