"""Shared cocotb helpers: clock/reset, valid/ready stream endpoints with random stalls.

Every cycle runs in two phases, after the rising edge (drive) and in the read-only phase
(observe), so a handshake is seen exactly when valid and ready are both high at the next edge.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from fpdeep.cosim.simulator import tb_args

PERIOD_NS = 10

__all__ = ["PERIOD_NS", "StreamSink", "StreamSource", "reset", "run_streams", "signed", "tb_args"]


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


class StreamSource:
    """Drives `<prefix>_data/_last/_valid`, honours `<prefix>_ready`, idles at random."""

    def __init__(self, dut, prefix: str, beats: Sequence[int], *, rng: random.Random,
                 idle: float = 0.3, last: bool = True, width: int = 16,
                 side: tuple[str, Sequence[int]] | None = None) -> None:
        self.data = getattr(dut, f"{prefix}_data")
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.lastsig = getattr(dut, f"{prefix}_last") if last else None
        self.beats = list(beats)
        self.rng = rng
        self.idle = idle
        self.mask = (1 << width) - 1
        self.index = 0
        self.fired = False
        self.valid.value = 0
        # optional sideband signal (AXI-Stream TUSER style) sent with each beat
        self.side = (getattr(dut, f"{prefix}_{side[0]}"), list(side[1])) if side else None

    @property
    def done(self) -> bool:
        return self.index >= len(self.beats)

    def drive(self) -> None:
        if self.fired:
            self.index += 1
        if self.done or self.rng.random() < self.idle:
            self.valid.value = 0
            return
        self.valid.value = 1
        self.data.value = self.beats[self.index] & self.mask
        if self.side is not None:
            self.side[0].value = self.side[1][self.index]
        if self.lastsig is not None:
            self.lastsig.value = int(self.index == len(self.beats) - 1)

    def observe(self) -> None:
        self.fired = bool(self.valid.value) and bool(self.ready.value)


class StreamSink:
    """Collects beats of `<prefix>_*` and pulls `<prefix>_ready` low at random."""

    def __init__(self, dut, prefix: str, *, rng: random.Random, stall: float = 0.3,
                 last: bool = True, width: int = 16, expect: int | None = None,
                 side: str | None = None) -> None:
        self.data = getattr(dut, f"{prefix}_data")
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.lastsig = getattr(dut, f"{prefix}_last") if last else None
        self.rng = rng
        self.stall = stall
        self.width = width
        self.expect = expect
        self.beats: list[int] = []
        self.lasts: list[int] = []
        self.side = getattr(dut, f"{prefix}_{side}") if side else None
        self.sides: list[int] = []
        self.ready.value = 0

    @property
    def done(self) -> bool:
        if self.expect is not None:
            return len(self.beats) >= self.expect
        return bool(self.lasts) and self.lasts[-1] == 1

    def drive(self) -> None:
        self.ready.value = int(self.rng.random() >= self.stall)

    def observe(self) -> None:
        if bool(self.valid.value) and bool(self.ready.value):
            self.beats.append(signed(int(self.data.value), self.width))
            if self.lastsig is not None:
                self.lasts.append(int(self.lastsig.value))
            if self.side is not None:
                self.sides.append(int(self.side.value))


async def run_streams(dut, endpoints: Sequence[StreamSource | StreamSink], *,
                      max_cycles: int, until: Callable[[], bool] | None = None) -> int:
    """Run all endpoints cycle by cycle until every one is done (or `until()`); return cycles."""
    for cycle in range(max_cycles):
        await RisingEdge(dut.clk)
        for ep in endpoints:
            ep.drive()
        await ReadOnly()
        for ep in endpoints:
            ep.observe()
        finished = until() if until is not None else all(ep.done for ep in endpoints)
        if finished:
            await RisingEdge(dut.clk)
            for ep in endpoints:
                if isinstance(ep, StreamSource):
                    ep.drive()  # retire the final beat and drop valid
            return cycle + 1
    raise AssertionError(f"streams did not finish within {max_cycles} cycles")
