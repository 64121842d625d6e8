"""cocotb test for the loop-nest engine: each case is checked bit for bit against the golden
model (fpdeep.golden.conv / fc) and its busy cycles against fpdeep.planning.perf.engine_cycles.

The pytest wrapper passes the cases as JSON; every case draws its own random tensors, streams
them in with random idle cycles, runs its images (WG: a mini-batch accumulated with cfg_hold,
then a flush) and drains the result under random back-pressure.
"""

from __future__ import annotations

import json
import random

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time
from fpdeep_tb import PERIOD_NS
from stream_models import StreamSink, StreamSource, begin, run_streams

from fpdeep.design.engine import LoopShape, engine_config
from fpdeep.golden import conv, fc
from fpdeep.hwlib import ENGINE
from fpdeep.ir import ConvAttrs
from fpdeep.numerics import Format
from fpdeep.planning.perf import ENGINE_LATENCY, engine_cycles

ACT, WEIGHT, ERR = Format(16, 10), Format(16, 14), Format(16, 14)


def case_shape(case: dict) -> tuple[LoopShape, ConvAttrs | None]:
    if case["kind"] == "fc":
        return LoopShape.fc(in_features=case["ci"], out_features=case["co"]), None
    attrs = ConvAttrs(kernel=tuple(case["k"]), stride=tuple(case["stride"]),
                      pads=tuple(case["pads"]), groups=case.get("groups", 1))
    hw = (case["h"], case["w"])
    return LoopShape.conv(attrs, ci=case["ci"], co=case["co"], in_hw=hw,
                          out_hw=conv.out_hw(attrs, hw)), attrs


def golden(mode: str, shape: LoopShape, attrs: ConvAttrs | None, x, w, b, e,
           out: Format) -> np.ndarray:
    """The expected result stream (C order) from the golden model; x and e carry the batch."""
    if attrs is None:  # FC: x (B, In), w (Out, In), e (B, Out)
        x2, e2 = x.reshape(x.shape[0], -1), e.reshape(e.shape[0], -1)
        w2 = w.reshape(shape.co, shape.ci)
        if mode == "fp":
            return fc.forward(x2, w2, b, x_fmt=ACT, w_fmt=WEIGHT, out_fmt=out)
        if mode == "bp":
            return fc.backward(e2, w2, e_fmt=ERR, w_fmt=WEIGHT, out_fmt=out)
        dw, db = fc.weight_gradient(e2, x2)
    elif mode == "fp":
        return conv.forward(x, w, b, attrs=attrs, x_fmt=ACT, w_fmt=WEIGHT, out_fmt=out)
    elif mode == "bp":
        return conv.backward(e, w, attrs=attrs, in_hw=(shape.h, shape.w), e_fmt=ERR,
                             w_fmt=WEIGHT, out_fmt=out)
    else:
        dw, db = conv.weight_gradient(e, x, attrs=attrs)
    return np.concatenate([dw.ravel(), db.ravel()]) if b is not None else dw


# Output formats and requantisation shifts of the numerics contract (docs/numerics.md §4).
OUT = {"fp": ACT, "bp": ERR}
IN_FRAC = {"fp": ACT.frac + WEIGHT.frac, "bp": ERR.frac + WEIGHT.frac}


async def load(dut, tensors: dict[str, np.ndarray], rng: random.Random) -> None:
    sources = [StreamSource(dut, ENGINE.stream(f"s_{name}"), t.ravel().tolist(), rng=rng,
                            idle=0.3)
               for name, t in tensors.items()]
    await run_streams(dut, sources, max_cycles=20 * sum(len(s.beats) for s in sources) + 50)


async def pulse(dut, name: str) -> float:
    """Raise `name` for one cycle; return the time of the edge that samples it."""
    getattr(dut, name).value = 1
    await RisingEdge(dut.clk)
    t = get_sim_time("ns")
    getattr(dut, name).value = 0
    return t


def sliced_golden(mode: str, shape: LoopShape, attrs: ConvAttrs | None, x, w, b, e,
                  out: Format, lo: int, hi: int) -> np.ndarray:
    """What a slice of output channels lo..hi-1 gives: its rows of Y, dW and the bias
    gradient, and (BP) the input error of its output channels alone, over every channel."""
    if mode == "fp":
        return golden(mode, shape, attrs, x, w, b, e, out)[:, lo:hi]
    if mode == "bp":
        only = np.zeros_like(e)
        only[:, lo:hi] = e[:, lo:hi]
        return golden(mode, shape, attrs, x, w, b, only, out)
    dw, db = conv.weight_gradient(e, x, attrs=attrs)
    return np.concatenate([dw[lo:hi].ravel(), db[lo:hi].ravel()]) if b is not None \
        else dw[lo:hi]


async def run_case(dut, case: dict, tm: int, tn: int, log) -> dict:
    shape, attrs = case_shape(case)
    mode, batch, bias = case["mode"], case.get("batch", 1), case.get("bias", False)
    rng = np.random.default_rng(case["seed"])
    pyrng = random.Random(case["seed"])
    mag = case.get("mag", 12)
    x = rng.integers(-(1 << mag), 1 << mag, size=(batch, shape.ci, shape.h, shape.w))
    w = rng.integers(-(1 << 13), 1 << 13, size=(shape.co, shape.ci_group, shape.kh, shape.kw))
    e = rng.integers(-(1 << mag), 1 << mag, size=(batch, shape.co, shape.ho, shape.wo))
    b = rng.integers(-(1 << 15), 1 << 15, size=(shape.co,)) if bias else None
    out = Format(16, case["out_frac"]) if "out_frac" in case else OUT.get(mode)
    if "slice" in case:  # a slice of whole groups: its rows of W, dY and the bias stream in
        lo, hi = case["slice"]
        expected = sliced_golden(mode, shape, attrs, x, w, b, e, out, lo, hi)
        shape, w, e = shape.slice(lo, hi), w[lo:hi], e[:, lo:hi]
        b = None if b is None else b[lo:hi]
    else:
        expected = golden(mode, shape, attrs, x, w, b, e, out)
    expected = np.asarray(expected, dtype=np.int64).ravel()
    shift = IN_FRAC[mode] - out.frac if mode != "wg" else 0
    cfg = engine_config(shape, mode=mode, tm=tm, tn=tn, shift=shift, raw=mode == "wg",
                        bias=bias, bias_shift=ACT.frac, hold=mode == "wg")
    for name, value in cfg.ports.items():
        getattr(dut, name).value = value

    cycles = []
    for i in range(batch):
        # Only the operands the mode reads are streamed in.
        tensors = {"fp": {"x": x[i], "w": w}, "bp": {"w": w, "dy": e[i]},
                   "wg": {"x": x[i], "dy": e[i]}}[mode]
        if i > 0:
            tensors.pop("w", None)  # weights stay in their banks for the whole mini-batch
        if bias and mode == "fp":
            tensors["b"] = b
        await load(dut, tensors, pyrng)
        t0 = await pulse(dut, "start")
        await RisingEdge(dut.done)
        await RisingEdge(dut.clk)  # the edge that samples done: cycles counted while busy
        cycles.append(round((get_sim_time("ns") - t0) / PERIOD_NS))
    if mode == "wg":
        await pulse(dut, "flush")

    sink = StreamSink(dut, ENGINE.stream("m"), rng=pyrng, stall=0.3, expect=cfg.out_count)
    await run_streams(dut, [sink], max_cycles=20 * cfg.out_count + 50)
    got = np.array(sink.beats, dtype=np.int64)
    assert got.shape == expected.shape, f"{case}: got {got.size} values, want {expected.size}"
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{case}: {bad.size} of {expected.size} values differ, first at {bad[0]}: "
        f"got {got[bad[0]]}, expected {expected[bad[0]]}"
    )
    assert sink.lasts == [0] * (got.size - 1) + [1], f"{case}: last misplaced"
    assert int(dut.err_frame.value) == 0, "engine flagged a framing error"
    model = engine_cycles(co=shape.co, ci=shape.ci_group, kh=shape.kh, kw=shape.kw,
                          ho=shape.ho, wo=shape.wo, tm=tm, tn=tn, latency=ENGINE_LATENCY,
                          groups=shape.groups)
    log.info("case %s: %s cycles per image measured, %d modelled", case, cycles, model)
    for c in cycles:
        assert abs(c - model) <= 0.02 * model, f"{case}: {c} cycles measured, model {model}"
    return {"case": case, "cycles": cycles, "model": model}


async def run_overlapped(dut, case: dict, tm: int, tn: int, log) -> dict:
    """A mini-batch with the double buffers in use: images are streamed in back to back (each
    followed by its start pulse, the stream stalling while both halves are taken) while the
    results drain; every image bit-exact, and the runs back to back: the MAC pipeline busy in
    all but a few cycles of the window from the first start to the last done."""
    shape, attrs = case_shape(case)
    mode, batch = case["mode"], case["batch"]
    rng = np.random.default_rng(case["seed"])
    x = rng.integers(-(1 << 12), 1 << 12, size=(batch, shape.ci, shape.h, shape.w))
    w = rng.integers(-(1 << 13), 1 << 13, size=(shape.co, shape.ci_group, shape.kh, shape.kw))
    e = rng.integers(-(1 << 12), 1 << 12, size=(batch, shape.co, shape.ho, shape.wo))
    out = OUT.get(mode)
    if mode == "wg":
        expected = golden(mode, shape, attrs, x, w, None, e, out)
    else:
        expected = np.concatenate([np.asarray(golden(mode, shape, attrs, x[i:i + 1], w, None,
                                                     e[i:i + 1], out)).ravel()
                                   for i in range(batch)])
    expected = np.asarray(expected, dtype=np.int64).ravel()
    cfg = engine_config(shape, mode=mode, tm=tm, tn=tn,
                        shift=IN_FRAC[mode] - out.frac if mode != "wg" else 0,
                        raw=mode == "wg", hold=mode == "wg")
    for name, value in cfg.ports.items():
        getattr(dut, name).value = value
    pyrng = random.Random(case["seed"])
    if mode != "wg":
        await load(dut, {"w": w}, pyrng)
    window = {"busy": 0, "cycles": 0, "runs": 0, "open": False}

    async def watch() -> None:
        while window["runs"] < batch:
            await RisingEdge(dut.clk)
            await ReadOnly()
            window["open"] = window["open"] or bool(dut.busy.value)
            if window["open"]:
                window["cycles"] += 1
                window["busy"] += int(dut.busy.value)
                window["runs"] += int(dut.done.value)

    async def feed() -> None:
        for i in range(batch):
            tensors = {"fp": {"x": x[i]}, "bp": {"dy": e[i]}, "wg": {"x": x[i], "dy": e[i]}}
            sources = [StreamSource(dut, ENGINE.stream(f"s_{n}"), t.ravel().tolist(),
                                    rng=pyrng, idle=0.0) for n, t in tensors[mode].items()]
            await run_streams(dut, sources, max_cycles=4 * run + 500)
            await pulse(dut, "start")

    run = engine_cycles(co=shape.co, ci=shape.ci_group, kh=shape.kh, kw=shape.kw,
                        ho=shape.ho, wo=shape.wo, tm=tm, tn=tn, latency=ENGINE_LATENCY,
                        groups=shape.groups)
    watcher = cocotb.start_soon(watch())
    # the results drain while the next images load and run
    sink = StreamSink(dut, ENGINE.stream("m"), rng=pyrng, stall=0.0, expect=expected.size)
    drained = cocotb.start_soon(run_streams(dut, [sink], max_cycles=4 * run * batch + 500))
    await feed()
    if mode == "wg":
        await pulse(dut, "flush")
    await drained
    await watcher
    got = np.array(sink.beats, dtype=np.int64)
    bad = np.flatnonzero(got != expected)
    assert got.shape == expected.shape and bad.size == 0, (
        f"{case}: {bad.size} of {expected.size} values differ (overlapped images)")
    log.info("overlapped %s: %d of %d cycles busy over %d images of %d cycles", case,
             window["busy"], window["cycles"], batch, run)
    # between runs only the cycle that hands the next half to the loop nest
    assert window["cycles"] <= batch * run + 2 * batch, (
        f"{case}: {window['cycles']} cycles for {batch} runs of {run}: the runs did not "
        f"follow each other")
    return {"case": case, "busy": window["busy"], "window": window["cycles"], "run": run}


@cocotb.test()
async def engine_matches_golden_model(dut):
    args, _, _ = await begin(dut, ENGINE)
    results = [await (run_overlapped if case.get("overlap") else run_case)(
        dut, case, args["tm"], args["tn"], dut._log) for case in args["cases"]]
    if args.get("report"):
        with open(args["report"], "w") as f:
            json.dump(results, f, indent=1)
