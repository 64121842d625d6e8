"""cocotb test for the pooling engine against fpdeep.golden.pool: max (with argmax) and
average pooling, forward and backward, bit for bit, and cycles per image."""

from __future__ import annotations

import json
import random

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time
from fpdeep_tb import PERIOD_NS
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.design.pool import PoolShape, pool_config
from fpdeep.golden import pool
from fpdeep.hwlib import POOL
from fpdeep.ir import PoolAttrs
from fpdeep.numerics import Format

FIN, FOUT = Format(16, 12), Format(16, 10)


async def run_case(dut, case: dict, log) -> dict:
    attrs = PoolAttrs(kernel=tuple(case["k"]), stride=tuple(case["stride"]),
                      pads=tuple(case["pads"]), ceil_mode=case.get("ceil", False),
                      count_include_pad=case.get("include_pad", False))
    shape = PoolShape.of(attrs, c=case["c"], in_hw=(case["h"], case["w"]))
    kind, mode = case["kind"], case["mode"]
    rng = np.random.default_rng(case["seed"])
    pyrng = random.Random(case["seed"])
    x = rng.integers(-(1 << 15), 1 << 15, size=(1, shape.c, *shape.in_hw))
    x[..., ::3, ::2] = x[..., :1, :1]  # repeated values exercise the first-maximum tie-break
    e = rng.integers(-(1 << 15), 1 << 15, size=(1, shape.c, *shape.out_hw))
    cfg = pool_config(shape, mode=f"{kind}_{mode}", in_frac=FIN.frac, out_frac=FOUT.frac)
    for name, value in cfg.ports.items():
        getattr(dut, name).value = value

    arg = pool.argmax(x, attrs) if kind == "max" else np.zeros_like(e)
    if mode == "fwd":
        data, side = x, np.zeros(x.size, dtype=np.int64)
        want = (pool.max_forward(x, attrs=attrs, x_fmt=FIN, out_fmt=FOUT) if kind == "max"
                else pool.avg_forward(x, attrs=attrs, x_fmt=FIN, out_fmt=FOUT))
    else:
        data, side = e, arg
        want = (pool.max_backward(e, x, attrs=attrs, e_fmt=FIN, out_fmt=FOUT) if kind == "max"
                else pool.avg_backward(e, attrs=attrs, in_hw=shape.in_hw, e_fmt=FIN,
                                       out_fmt=FOUT))
    eps = [StreamSource(dut, POOL.stream("s_x"), data.ravel().tolist(), rng=pyrng,
                        side={"arg": side.ravel().tolist()})]
    if cfg.table:
        eps.append(StreamSource(dut, POOL.stream("s_m"), list(cfg.table), rng=pyrng))
    await run_streams(dut, eps, max_cycles=30 * data.size + 30 * len(cfg.table) + 50)

    dut.start.value = 1
    await RisingEdge(dut.clk)
    t0 = get_sim_time("ns")
    dut.start.value = 0
    await RisingEdge(dut.done)
    await RisingEdge(dut.clk)
    cycles = round((get_sim_time("ns") - t0) / PERIOD_NS)

    n_out = int(want.size)
    sink = StreamSink(dut, POOL.stream("m"), rng=pyrng, stall=0.3, expect=n_out)
    await run_streams(dut, [sink], max_cycles=30 * n_out + 50)
    got, want = np.array(sink.beats), want.ravel()
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{case}: {bad.size} of {want.size} differ, first at {bad[0]}: "
                           f"got {got[bad[0]]}, expected {want[bad[0]]}")
    if kind == "max" and mode == "fwd":
        assert sink.sides["arg"] == arg.ravel().tolist(), f"{case}: argmax differs"
    assert sink.lasts[-1] == 1 and sum(sink.lasts) == 1
    assert int(dut.err_frame.value) == 0
    model = shape.cycles()
    log.info("case %s: %d cycles measured, %d modelled", case, cycles, model)
    assert abs(cycles - model) <= 0.02 * model, f"{case}: {cycles} cycles, model {model}"
    return {"case": case, "cycles": cycles, "model": model}


@cocotb.test()
async def pool_matches_golden(dut):
    args, _, _ = await begin(dut, POOL)
    results = [await run_case(dut, case, dut._log) for case in args["cases"]]
    if args.get("report"):
        with open(args["report"], "w") as f:
            json.dump(results, f, indent=1)
