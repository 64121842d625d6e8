"""The tensor store's arbitration against a model of what its header promises: per bank one
write and READS[b] reads a cycle, round robin among the clients that ask for it (the first
asking clients at or after the pointer, which then moves past the last one served), read data
one cycle after the grant, a narrow bank's words sign-extended. Random traffic, every grant
and every returned word compared, each cycle."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

NR, NW, AW, WIDTH, BW = 5, 3, 20, 48, 8
DEPTH = 16
WIDTHS = (48, 16, 48)
READS = (1, 2, 3)
MASK = (1 << WIDTH) - 1


class StoreModel:
    def __init__(self) -> None:
        self.mem = [[0] * DEPTH for _ in WIDTHS]
        self.rd_ptr = [0] * len(WIDTHS)
        self.wr_ptr = [0] * len(WIDTHS)

    @staticmethod
    def _round_robin(ptr: int, asking: list[bool], ports: int) -> list[int]:
        order = [(ptr + k) % len(asking) for k in range(len(asking))]
        return [c for c in order if asking[c]][:ports]

    def cycle(self, rd, wr):
        """``rd``/``wr``: per client None or (bank, address[, data]). The clients granted
        reads and writes, and each granted reader's word (as it returns next cycle)."""
        rd_gnt, wr_gnt, words = set(), set(), {}
        writes = []
        for b, width in enumerate(WIDTHS):
            readers = self._round_robin(self.rd_ptr[b], [r is not None and r[0] == b for r in rd],
                                        READS[b])
            for c in readers:
                word = self.mem[b][rd[c][1]]
                words[c] = word - (1 << width) if word >> (width - 1) else word
            if readers:
                self.rd_ptr[b] = (readers[-1] + 1) % NR
            rd_gnt.update(readers)
            writer = self._round_robin(self.wr_ptr[b], [w is not None and w[0] == b for w in wr], 1)
            for c in writer:
                writes.append((b, wr[c][1], wr[c][2] & ((1 << width) - 1)))
                self.wr_ptr[b] = (c + 1) % NW
            wr_gnt.update(writer)
        for b, addr, data in writes:   # the RAM reads the old word
            self.mem[b][addr] = data
        return rd_gnt, wr_gnt, words


def pack(values, bits):
    return sum((v & ((1 << bits) - 1)) << (bits * i) for i, v in enumerate(values))


def bits_of(value, n):
    return {i for i in range(n) if (int(value) >> i) & 1}


@cocotb.test()
async def random_traffic_matches_the_model(dut):
    Clock(dut.clk, 10, unit="ns", impl="gpi").start()
    dut.rd_req.value = 0
    dut.wr_req.value = 0
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    rng = random.Random(7)
    model = StoreModel()
    expected_words: dict[int, int] = {}
    served = {"rd": 0, "wr": 0, "contended": 0}
    for cycle in range(1500):
        # bank 3 exists in no store: its requests are never granted
        busy = rng.random()
        rd = [(rng.randrange(4), rng.randrange(DEPTH)) if rng.random() < busy else None
              for _ in range(NR)]
        wr = [(rng.randrange(4), rng.randrange(DEPTH), rng.getrandbits(WIDTH))
              if rng.random() < busy / 2 else None for _ in range(NW)]
        dut.rd_req.value = pack([r is not None for r in rd], 1)
        dut.rd_bank.value = pack([r[0] if r else 0 for r in rd], BW)
        dut.rd_addr.value = pack([r[1] if r else 0 for r in rd], AW)
        dut.wr_req.value = pack([w is not None for w in wr], 1)
        dut.wr_bank.value = pack([w[0] if w else 0 for w in wr], BW)
        dut.wr_addr.value = pack([w[1] if w else 0 for w in wr], AW)
        dut.wr_data.value = pack([w[2] if w else 0 for w in wr], WIDTH)
        await ReadOnly()
        rd_gnt, wr_gnt, words = model.cycle(rd, wr)
        assert bits_of(dut.rd_gnt.value, NR) == rd_gnt, (cycle, rd)
        assert bits_of(dut.wr_gnt.value, NW) == wr_gnt, (cycle, wr)
        assert bits_of(dut.rd_valid.value, NR) == set(expected_words), cycle
        data = int(dut.rd_data.value)
        for c, word in expected_words.items():
            got = (data >> (WIDTH * c)) & MASK
            assert got == word & MASK, (cycle, c, hex(got), hex(word & MASK))
        expected_words = words
        served["rd"] += len(rd_gnt)
        served["wr"] += len(wr_gnt)
        served["contended"] += sum(1 for b in range(3)
                                   if sum(r is not None and r[0] == b for r in rd) > READS[b])
        await RisingEdge(dut.clk)
    # the traffic exercised what it should: many grants, many cycles with more readers than ports
    assert served["rd"] > 1500 and served["wr"] > 500 and served["contended"] > 200, served
