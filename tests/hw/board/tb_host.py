"""The host interface on a small store: packets in the format of fpdeep.hwlib.protocol, driven
with cocotbext-axi; good packets write and read back, bad ones answer their error code and
leave the interface ready for the next packet."""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource

from fpdeep.hwlib.protocol import (
    DRAM_BANK,
    ERROR_CODES,
    HOST_OPCODES,
    Status,
    header,
    signed_word,
    word,
)


class Host:
    def __init__(self, dut) -> None:
        self.dut = dut
        self.tx = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.rx = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        self.tx.log.setLevel("WARNING")
        self.rx.log.setLevel("WARNING")

    async def send(self, beats: list[int]) -> tuple[Status, list[int]]:
        await self.tx.send(b"".join(b.to_bytes(8, "little") for b in beats))
        data = bytes((await self.rx.recv()).tdata)
        out = [int.from_bytes(data[k:k + 8], "little") for k in range(0, len(data), 8)]
        return Status.decode(out[0]), out[1:]


async def start(dut) -> Host:
    Clock(dut.clk, 10, unit="ns", impl="gpi").start()
    host = Host(dut)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    return host


@cocotb.test()
async def writes_read_back(dut):
    host = await start(dut)
    values = [5, -3, 2**47 - 1, -(2**47), 0, 77]
    status, _ = await host.send([header("WRITE", 0, 4, len(values)), *map(word, values)])
    assert status.ok and status.opcode == HOST_OPCODES["WRITE"], status
    assert int(dut.written.value) == 0b01
    status, data = await host.send([header("READ", 0, 4, len(values))])
    assert status.ok and status.length == len(values), status
    assert [signed_word(v) for v in data] == values
    # a read from the middle, and bank 1 stays untouched
    status, data = await host.send([header("READ", 0, 5, 2)])
    assert [signed_word(v) for v in data] == values[1:3]
    assert int(dut.written.value) == 0b01


@cocotb.test()
async def a_narrow_bank_reads_back_its_words_sign_extended(dut):
    host = await start(dut)
    # 16-bit data reads back as the 48-bit word it was written as
    values = [-5, 32767, -32768, 0, 1, -1]
    status, _ = await host.send([header("WRITE", 1, 1, len(values)), *map(word, values)])
    assert status.ok, status
    status, data = await host.send([header("READ", 1, 1, len(values))])
    assert [signed_word(v) for v in data] == values
    # a word wider than the bank keeps its low 16 bits: 0x1_8005 reads back as -32763
    status, _ = await host.send([header("WRITE", 1, 0, 1), word(0x1_8005)])
    status, data = await host.send([header("READ", 1, 0, 1)])
    assert [signed_word(v) for v in data] == [0x8005 - (1 << 16)]
    # the 48-bit bank beside it keeps whole words
    status, _ = await host.send([header("WRITE", 0, 0, 1), word(0x1_8005)])
    status, data = await host.send([header("READ", 0, 0, 1)])
    assert [signed_word(v) for v in data] == [0x1_8005]


@cocotb.test()
async def programs_reach_their_memory(dut):
    host = await start(dut)
    seen = []

    async def watch():
        while True:
            await RisingEdge(dut.clk)
            if int(dut.prog_we.value):
                seen.append((int(dut.prog_res.value), int(dut.prog_addr.value),
                             int(dut.prog_data.value)))

    cocotb.start_soon(watch())
    words = [0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321, 7]
    status, _ = await host.send([header("PROGRAM", 1, 2, len(words)), *words])
    await ClockCycles(dut.clk, 2)
    assert status.ok
    assert seen == [(1, 2 + k, w) for k, w in enumerate(words)], seen
    assert int(dut.programmed.value) == 0b10


@cocotb.test()
async def bad_packets_answer_their_error(dut):
    host = await start(dut)
    cases = [
        ([0x7F << 56 | 3, 1, 2, 3], "opcode"),                  # unknown opcode, with payload
        ([header("WRITE", 0, 0, 4), 1, 2], "length"),           # tlast before the stated end
        ([header("READ", 2, 0, 1)], "target"),                  # no bank 2
        ([header("READ", 1, 6, 4)], "target"),                  # beyond bank 1's 8 words
        ([header("WRITE", 1, 7, 2), 1, 2], "target"),
        ([header("PROGRAM", 2, 0, 1), 9], "target"),            # no resource 2
        ([header("PROGRAM", 0, 3, 2), 8, 9], "target"),         # beyond resource 0's 4 words
        ([header("READ", 0, 0, 1), 5], "length"),               # a read carries no payload
    ]
    for beats, code in cases:
        status, data = await host.send(beats)
        assert status.code == ERROR_CODES[code], (beats, status)
        assert data == []
        await RisingEdge(dut.clk)
        assert int(dut.fault_code.value) == ERROR_CODES[code]
    # no target counts as loaded, and a good packet still works
    assert int(dut.written.value) == 0 and int(dut.programmed.value) == 0
    status, _ = await host.send([header("WRITE", 1, 0, 2), 11, 12])
    assert status.ok
    status, data = await host.send([header("READ", 1, 0, 2)])
    assert data == [11, 12]


@cocotb.test()
async def off_chip_words_are_written_and_read_back(dut):
    """A MEMORY packet places the next WRITE and READ of bank 255 in off-chip memory: 16-bit
    words (slot 1) from an unaligned address, read back sign-extended; the memory's bytes
    around them keep what they held."""
    host = await start(dut)
    dram = DRAM_BANK
    around = [0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777, 0x7FFF, 0x0101, 0x0202]
    status, _ = await host.send([header("MEMORY", 1, 0, 1), 0x100])
    assert status.ok and status.opcode == HOST_OPCODES["MEMORY"], status
    status, _ = await host.send([header("WRITE", dram, 0, len(around)), *map(word, around)])
    assert status.ok, status
    values = [-5, 32767, -32768, 7]
    status, _ = await host.send([header("MEMORY", 1, 0, 1), 0x100 + 3 * 2])
    status, _ = await host.send([header("WRITE", dram, 0, len(values)), *map(word, values)])
    assert status.ok and int(dut.written.value) == 0, status
    status, _ = await host.send([header("MEMORY", 1, 0, 1), 0x100])
    status, data = await host.send([header("READ", dram, 0, len(around))])
    assert status.ok and status.length == len(around), status
    expect = [*around[:3], *values, *around[7:]]
    assert [signed_word(v) for v in data] == [v - (1 << 16) if v >= 1 << 15 else v
                                              for v in (e & 0xFFFF for e in expect)]


@cocotb.test()
async def a_cut_short_off_chip_write_is_refused_and_filled(dut):
    """tlast before the stated length: the status says so, the missing words are written as
    0 (the memory writer was told the length), and the next packet is served."""
    host = await start(dut)
    await host.send([header("MEMORY", 3, 0, 1), 0x200])
    status, _ = await host.send([header("WRITE", DRAM_BANK, 0, 4), word(9), word(-9)])
    assert status.code == ERROR_CODES["length"], status
    await host.send([header("MEMORY", 3, 0, 1), 0x200])
    status, data = await host.send([header("READ", DRAM_BANK, 0, 4)])
    assert status.ok and [signed_word(v) for v in data] == [9, -9, 0, 0]
    # a MEMORY packet without its address beat
    status, _ = await host.send([header("MEMORY", 3, 0, 0)])
    assert status.code == ERROR_CODES["length"], status
