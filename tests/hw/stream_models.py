"""Valid/ready stream endpoints with random stalls, driving the streams a module declares in
fpdeep.hwlib: the ports, whether there is a last flag and the side signals come from the
declaration, the widths from the ports of the build being driven.

Every cycle runs in two phases, after the rising edge (drive) and in the read-only phase
(observe), so a handshake is seen exactly when valid and ready are both high at the next edge.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from fpdeep_tb import reset, signed, tb_args

from fpdeep.hwlib import Module, Stream
from fpdeep.hwlib.signature import IDLE_LOW

__all__ = ["StreamSink", "StreamSource", "begin", "run_streams"]


async def begin(dut, module: Module) -> tuple[dict, np.random.Generator, random.Random]:
    """Hold every handshake, control and configuration input of ``module`` low and reset it;
    the testbench's arguments, and a numpy and a Python random generator seeded with its
    ``seed`` (1 if none)."""
    args = tb_args()
    seed = int(args.get("seed", 1))
    for port in module.ports():
        if port.direction == "input" and port.role in IDLE_LOW:
            getattr(dut, port.name).value = 0
    await reset(dut)
    return args, np.random.default_rng(seed), random.Random(seed)


class _Endpoint:
    def __init__(self, dut, stream: Stream) -> None:
        self.stream = stream
        self.data = getattr(dut, f"{stream.name}_data")
        self.valid = getattr(dut, f"{stream.name}_valid")
        self.ready = getattr(dut, f"{stream.name}_ready")
        self.lastsig = None if stream.last is None else getattr(dut, f"{stream.name}_last")
        self.sidesigs = {name: getattr(dut, f"{stream.name}_{name}") for name, _ in stream.side}
        self.width = len(self.data)


class StreamSource(_Endpoint):
    """Drives a sink stream of the module with ``beats`` (and, per side signal, ``side``
    values), idling at random."""

    def __init__(self, dut, stream: Stream, beats: Sequence[int], *, rng: random.Random,
                 idle: float = 0.3, side: Mapping[str, Sequence[int]] | None = None) -> None:
        super().__init__(dut, stream)
        if not stream.sink:
            raise ValueError(f"{stream.name} is a stream the module sends, not one it receives")
        side = side or {}
        if set(side) != set(self.sidesigs):
            raise ValueError(f"{stream.name} carries side signals {sorted(self.sidesigs)}, "
                             f"values were given for {sorted(side)}")
        self.beats = list(beats)
        self.side = {name: list(values) for name, values in side.items()}
        self.rng = rng
        self.idle = idle
        self.index = 0
        self.fired = False
        self.valid.value = 0

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
        self.data.value = self.beats[self.index] & ((1 << self.width) - 1)
        for name, sig in self.sidesigs.items():
            sig.value = self.side[name][self.index]
        if self.lastsig is not None:
            self.lastsig.value = int(self.index == len(self.beats) - 1)

    def observe(self) -> None:
        self.fired = bool(self.valid.value) and bool(self.ready.value)


class StreamSink(_Endpoint):
    """Collects the beats (signed), last flags and side signals of a stream the module sends,
    pulling ready low at random; done after ``expect`` beats, or else at the last flag."""

    def __init__(self, dut, stream: Stream, *, rng: random.Random, stall: float = 0.3,
                 expect: int | None = None) -> None:
        super().__init__(dut, stream)
        if stream.sink:
            raise ValueError(f"{stream.name} is a stream the module receives, not one it sends")
        self.rng = rng
        self.stall = stall
        self.expect = expect
        self.beats: list[int] = []
        self.lasts: list[int] = []
        self.sides: dict[str, list[int]] = {name: [] for name in self.sidesigs}
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
            for name, sig in self.sidesigs.items():
                self.sides[name].append(int(sig.value))


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
