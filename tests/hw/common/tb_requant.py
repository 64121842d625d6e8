"""cocotb test for the requantiser against fpdeep.numerics.requantise (every shift)."""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import Timer
from fpdeep_tb import signed, tb_args

from fpdeep.hwlib import REQUANT
from fpdeep.numerics import Format, requantise


@cocotb.test()
async def requant_matches_golden(dut):
    args = tb_args()
    params = args["parameters"]
    iw, ow = REQUANT.width("x", **params), REQUANT.width("y", **params)
    rng = random.Random(int(args.get("seed", 1)))
    lo, hi = -(1 << (iw - 1)), (1 << (iw - 1)) - 1
    fmt = Format(ow, 0)
    edges = [lo, hi, 0, -1, 1, (1 << (ow - 1)) - 1, -(1 << (ow - 1)), 1 << (ow - 1)]
    shifts = list(range(-8, min(iw, REQUANT.signed_range("shift", **params)[1] + 1)))
    for i in range(1500):
        x = edges[i % len(edges)] if i < 8 * len(edges) else rng.randint(lo, hi)
        if rng.random() < 0.3:  # exact ties: a multiple of half an output LSB
            s = rng.choice([s for s in shifts if s > 0])
            x = max(lo, min(hi, (rng.randint(-(1 << 12), 1 << 12) * 2 + 1) << (s - 1)))
        else:
            s = shifts[i % len(shifts)]
        dut.x.value = REQUANT.encode("x", x, **params)
        dut.shift.value = REQUANT.encode("shift", s, **params)
        await Timer(1, unit="ns")
        want = int(requantise(np.array([x]), s, fmt)[0])
        got = signed(int(dut.y.value), ow)
        assert got == want, f"x={x} shift={s}: got {got}, expected {want}"
