"""A read mover on a small store: a chained pair of commands streams two banks as one tensor,
without a gap and with `last` only on its final beat; a single command is unchanged."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

BANKS = {0: [1000 + k for k in range(16)], 1: [-(2000 + k) for k in range(8)]}


async def start(dut) -> None:
    Clock(dut.clk, 10, unit="ns", impl="gpi").start()
    for name in ("wr_req", "cmd_valid", "cmd_hold", "cmd_chain", "cmd_parts", "m_ready"):
        getattr(dut, name).value = 0
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    for bank, words in BANKS.items():
        for addr, value in enumerate(words):
            dut.wr_req.value, dut.wr_bank.value, dut.wr_addr.value = 1, bank, addr
            dut.wr_data.value = value & ((1 << 48) - 1)
            await RisingEdge(dut.clk)
    dut.wr_req.value = 0
    await RisingEdge(dut.clk)


async def command(dut, bank: int, addr: int, words: int, *, chain: bool = False) -> None:
    dut.cmd_valid.value, dut.cmd_bank.value, dut.cmd_addr.value = 1, bank, addr
    dut.cmd_len.value, dut.cmd_chain.value = words, int(chain)
    await RisingEdge(dut.clk)
    dut.cmd_valid.value, dut.cmd_chain.value = 0, 0


async def collect(dut, count: int, pause: float, seed: int) -> list[tuple[int, int, int]]:
    """(cycle, word, last) of ``count`` beats, ready dropped at random with ``pause``."""
    rng = random.Random(seed)
    got, cycle = [], 0
    while len(got) < count:
        dut.m_ready.value = int(rng.random() >= pause)
        await ReadOnly()
        if dut.m_valid.value and dut.m_ready.value:
            got.append((cycle, dut.m_data.value.to_signed(), int(dut.m_last.value)))
        await RisingEdge(dut.clk)
        cycle += 1
    dut.m_ready.value = 0
    return got


async def read(dut, pieces, pause: float = 0.0, seed: int = 0):
    """Issue ``pieces`` (bank, address, words) as a chain, one command a cycle, as the
    sequencer does; the beats that come out."""
    total = sum(n for _, _, n in pieces)
    collector = cocotb.start_soon(collect(dut, total, pause, seed))
    for k, (bank, addr, n) in enumerate(pieces):
        await command(dut, bank, addr, n, chain=k < len(pieces) - 1)
    beats = await collector
    await ClockCycles(dut.clk, 3)
    assert not dut.busy.value, "the mover is still busy after its words"
    return beats


def expected(pieces) -> list[int]:
    return [v for bank, addr, n in pieces for v in BANKS[bank][addr:addr + n]]


@cocotb.test()
async def one_command(dut):
    await start(dut)
    beats = await read(dut, [(0, 3, 6)])
    assert [w for _, w, _ in beats] == expected([(0, 3, 6)])
    assert [last for _, _, last in beats] == [0] * 5 + [1]


@cocotb.test()
async def a_chain_streams_two_banks_as_one(dut):
    await start(dut)
    for pieces in ([(0, 10, 6), (1, 0, 8)], [(0, 0, 1), (1, 2, 3)], [(1, 5, 3), (0, 0, 16)]):
        beats = await read(dut, pieces)
        assert [w for _, w, _ in beats] == expected(pieces), pieces
        assert [last for _, _, last in beats] == [0] * (len(beats) - 1) + [1], pieces
        # an always-ready reader gets a beat every cycle: the second bank follows at once
        cycles = [c for c, _, _ in beats]
        assert cycles == list(range(cycles[0], cycles[0] + len(beats))), (pieces, cycles)


@cocotb.test()
async def a_chain_under_back_pressure(dut):
    await start(dut)
    for seed in range(4):
        pieces = [(0, seed, 9), (1, 1, 7)]
        beats = await read(dut, pieces, pause=0.4, seed=seed)
        assert [w for _, w, _ in beats] == expected(pieces)
        assert [last for _, _, last in beats] == [0] * 15 + [1]
