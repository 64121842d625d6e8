"""cocotb test for the simple dual-port RAM: random writes and reads against a dict model."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from fpdeep_tb import PERIOD_NS, tb_args

from fpdeep.hwlib import SDP_RAM


@cocotb.test()
async def ram_reads_what_was_written(dut):
    args = tb_args()
    rng = random.Random(int(args.get("seed", 1)))
    params = SDP_RAM.parameters(**args["parameters"])
    depth, width = params["DEPTH"], params["WIDTH"]
    latency = 1 + params["OUT_REG"]  # the read register, and the optional output register
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    model: dict[int, int] = {}
    pending: list[tuple[int, int | None]] = []  # (cycle due, expected) of issued reads
    checked = 0
    for cycle in range(400):
        await RisingEdge(dut.clk)
        we = rng.random() < 0.5
        re = rng.random() < 0.6
        wa, ra = rng.randrange(depth), rng.randrange(depth)
        wd = rng.randrange(1 << width)
        dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = int(we), wa, wd
        dut.rd_en.value, dut.rd_addr.value = int(re), ra
        await ReadOnly()
        for _due, expected in [p for p in pending if p[0] == cycle]:
            if expected is not None:
                assert int(dut.rd_data.value) == expected, f"cycle {cycle}: read mismatch"
                checked += 1
        pending = [p for p in pending if p[0] > cycle]
        if re:  # read-first: a read that meets a write to its address returns the old word
            pending.append((cycle + latency, model.get(ra)))
        if we:
            model[wa] = wd
    assert checked > 100, f"only {checked} reads of written words were checked"
