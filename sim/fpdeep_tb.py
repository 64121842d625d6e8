"""Shared cocotb helpers of the testbenches: the clock period, clock and reset, two's
complement, and the arguments a run passes."""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from fpdeep.cosim.simulator import tb_args

PERIOD_NS = 10

__all__ = ["PERIOD_NS", "reset", "signed", "tb_args"]


def signed(value: int, bits: int) -> int:
    """Two's-complement reading of an unsigned `bits`-wide value."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


async def reset(dut, cycles: int = 3) -> None:
    """Start the clock and hold `rst` high for a few cycles."""
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    dut.rst.value = 1
    for _ in range(cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
