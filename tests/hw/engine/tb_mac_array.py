"""cocotb test for the MAC array: every reduction mode, random operands, against Python sums."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from fpdeep_tb import reset, signed, tb_args

from fpdeep.hwlib import MAC_ARRAY

LATENCY = 3


def pack(values, bits):
    word = 0
    for i, v in enumerate(values):
        word |= (v & ((1 << bits) - 1)) << (i * bits)
    return word


@cocotb.test()
async def mac_array_sums(dut):
    args = tb_args()
    rng = random.Random(int(args.get("seed", 1)))
    params = MAC_ARRAY.parameters(**args["parameters"])
    tm, tn, dw, accw = (params[k] for k in ("TM", "TN", "DW", "ACCW"))
    lo, hi = -(1 << (dw - 1)), (1 << (dw - 1)) - 1
    await reset(dut)
    expected: dict[int, list[int]] = {}
    checked = 0
    for cycle in range(300):
        await RisingEdge(dut.clk)
        valid = rng.random() < 0.7
        mode = rng.randrange(3)
        # Corner operands (most negative, most positive) are as likely as random ones.
        a = [rng.choice([lo, hi, rng.randint(lo, hi)]) for _ in range(tm * tn)]
        b = [rng.choice([lo, hi, rng.randint(lo, hi)]) for _ in range(tm * tn)]
        dut.in_valid.value = int(valid)
        dut.reduce.value = mode
        dut.a.value = pack(a, dw)
        dut.b.value = pack(b, dw)
        if valid:
            prod = [a[i] * b[i] for i in range(tm * tn)]
            out = [0] * (tm * tn)
            for m in range(tm):
                for n in range(tn):
                    if mode == 0:
                        out[m * tn] += prod[m * tn + n]
                    elif mode == 1:
                        out[n] += prod[m * tn + n]
                    else:
                        out[m * tn + n] = prod[m * tn + n]
            expected[cycle + LATENCY] = out
        await ReadOnly()
        assert int(dut.out_valid.value) == int(cycle in expected), f"out_valid wrong at {cycle}"
        if cycle in expected:
            word = int(dut.sum.value)
            got = [signed(word >> (i * accw), accw) for i in range(tm * tn)]
            assert got == expected.pop(cycle), f"cycle {cycle}: sums differ"
            checked += 1
    assert checked > 100
