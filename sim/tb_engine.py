"""cocotb test for the loop-nest engine: each case is checked bit for bit against the golden
model (fpdeep.golden.conv / fc) and its busy cycles against fpdeep.perf.engine_cycles.

The pytest wrapper passes the cases as JSON; every case draws its own random tensors, streams
them in with random idle cycles, runs one image and drains the result under random back-pressure.
"""

from __future__ import annotations

import json
import random

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time
from fpdeep_tb import PERIOD_NS, StreamSink, StreamSource, reset, run_streams, tb_args

from fpdeep.engine import ACC_BITS, LoopShape, engine_config
from fpdeep.golden import conv, fc
from fpdeep.golden.numerics import Format
from fpdeep.ir import ConvAttrs
from fpdeep.perf import ENGINE_LATENCY, engine_cycles

ACT, WEIGHT, ERR = Format(16, 10), Format(16, 14), Format(16, 14)


def case_shape(case: dict) -> tuple[LoopShape, ConvAttrs | None]:
    if case["kind"] == "fc":
        return LoopShape.fc(in_features=case["ci"], out_features=case["co"]), None
    attrs = ConvAttrs(kernel=tuple(case["k"]), stride=tuple(case["stride"]),
                      pads=tuple(case["pads"]))
    hw = (case["h"], case["w"])
    return LoopShape.conv(attrs, ci=case["ci"], co=case["co"], in_hw=hw,
                          out_hw=conv.out_hw(attrs, hw)), attrs


def golden(case: dict, shape: LoopShape, attrs: ConvAttrs | None,
           x, w, e) -> tuple[np.ndarray, int]:
    """(expected result in C order, requantisation shift) from the golden model."""
    mode = case["mode"]
    if attrs is None:  # FC: x (1, In), w (Out, In), e (1, Out)
        x2, e2 = x.reshape(1, -1), e.reshape(1, -1)
        w2 = w.reshape(shape.co, shape.ci)
        if mode == "fp":
            return fc.forward(x2, w2, x_fmt=ACT, w_fmt=WEIGHT, out_fmt=ACT), 14
        if mode == "bp":
            return fc.backward(e2, w2, e_fmt=ERR, w_fmt=WEIGHT, out_fmt=ERR), 14
        return fc.weight_gradient(e2, x2)[0], 0
    if mode == "fp":
        y = conv.forward(x[None], w, None, attrs=attrs, x_fmt=ACT, w_fmt=WEIGHT, out_fmt=ACT)
        return y, ACT.frac + WEIGHT.frac - ACT.frac
    if mode == "bp":
        dx = conv.backward(e[None], w, attrs=attrs, in_hw=(shape.h, shape.w), e_fmt=ERR,
                           w_fmt=WEIGHT, out_fmt=ERR)
        return dx, ERR.frac + WEIGHT.frac - ERR.frac
    return conv.weight_gradient(e[None], x[None], attrs=attrs)[0], 0


async def run_case(dut, case: dict, tm: int, tn: int, log) -> dict:
    shape, attrs = case_shape(case)
    rng = np.random.default_rng(case["seed"])
    pyrng = random.Random(case["seed"])
    mag = case.get("mag", 12)
    x = rng.integers(-(1 << mag), 1 << mag, size=(shape.ci, shape.h, shape.w), dtype=np.int64)
    w = rng.integers(-(1 << 13), 1 << 13, size=(shape.co, shape.ci, shape.kh, shape.kw),
                     dtype=np.int64)
    e = rng.integers(-(1 << mag), 1 << mag, size=(shape.co, shape.ho, shape.wo), dtype=np.int64)
    expected, shift = golden(case, shape, attrs, x, w, e)
    raw = case["mode"] == "wg"
    cfg = engine_config(shape, mode=case["mode"], tm=tm, tn=tn, shift=shift, raw=raw)
    for name, value in cfg.ports.items():
        getattr(dut, name).value = value

    # Only the operands the mode reads are streamed in.
    wanted = {"fp": ("x", "w"), "bp": ("w", "dy"), "wg": ("x", "dy")}[case["mode"]]
    tensors = {"x": x, "w": w, "dy": e}
    sources = [StreamSource(dut, f"s_{name}", tensors[name].ravel().tolist(), rng=pyrng,
                            idle=0.3) for name in wanted]
    await run_streams(dut, sources, max_cycles=20 * sum(len(s.beats) for s in sources) + 50)

    dut.start.value = 1
    await RisingEdge(dut.clk)  # the edge that samples start
    t0 = get_sim_time("ns")
    dut.start.value = 0
    await RisingEdge(dut.done)
    await RisingEdge(dut.clk)  # the edge that samples done: cycles counted while busy
    cycles = round((get_sim_time("ns") - t0) / PERIOD_NS)

    n_out = int(np.prod(cfg.out_shape))
    sink = StreamSink(dut, "m", rng=pyrng, stall=0.3, width=ACC_BITS, expect=n_out)
    await run_streams(dut, [sink], max_cycles=20 * n_out + 50)
    got = np.array(sink.beats, dtype=np.int64)
    want = np.asarray(expected, dtype=np.int64).ravel()
    assert got.shape == want.shape, f"{case}: got {got.size} values, expected {want.size}"
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (
        f"{case}: {bad.size} of {want.size} values differ, first at {bad[0]}: "
        f"got {got[bad[0]]}, expected {want[bad[0]]}"
    )
    assert sink.lasts == [0] * (n_out - 1) + [1], f"{case}: last misplaced"
    assert int(dut.err_frame.value) == 0, "engine flagged a framing error"
    model = engine_cycles(co=shape.co, ci=shape.ci, kh=shape.kh, kw=shape.kw, ho=shape.ho,
                          wo=shape.wo, tm=tm, tn=tn, latency=ENGINE_LATENCY)
    log.info("case %s: %d cycles measured, %d modelled", case, cycles, model)
    assert abs(cycles - model) <= 0.02 * model, (
        f"{case}: {cycles} cycles measured, performance model says {model}"
    )
    return {"case": case, "cycles": cycles, "model": model}


@cocotb.test()
async def engine_matches_golden_model(dut):
    args = tb_args()
    for name in ("start", "s_x_valid", "s_w_valid", "s_dy_valid", "m_ready"):
        getattr(dut, name).value = 0
    await reset(dut)
    results = [await run_case(dut, case, args["tm"], args["tn"], dut._log)
               for case in args["cases"]]
    out = args.get("report")
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
