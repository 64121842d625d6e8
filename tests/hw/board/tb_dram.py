"""Two off-chip readers and two writers on one AXI4 master (tests/hw/board/dram_top.sv), with
cocotbext-axi's AxiRam as the memory: words of every slot size written and read back at
unaligned addresses against a byte model packed here, neighbouring bytes kept, bursts within
the AXI rules (beat-aligned, at most BURST beats, never across 4 KB), words as three 16-bit
beats both ways, a chained read as one stream, all four clients at once, and the throughput
of a long read and write with a memory that never pauses, and bursts of two clients back to
back."""

from __future__ import annotations

import logging
import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam
from fpdeep_tb import reset, signed, tb_args

WIDTH, PW = 48, 16
MASK = (1 << WIDTH) - 1
REGION = 0x3000  # the bytes the tests use, all checked against the model


class Bench:
    """The memory, its byte model, the bursts seen on the master and a cycle count."""

    def __init__(self, dut, pause: float, seed: int) -> None:
        self.dut = dut
        self.beat = len(dut.m_axi_wdata) // 8
        self.burst = int(tb_args()["parameters"].get("BURST", 4))
        self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=1 << 16)
        for side in (self.ram.read_if, self.ram.write_if):
            side.log.setLevel(logging.WARNING)  # not a line per burst
        rng = random.Random(seed)
        self.model = bytearray(rng.randbytes(REGION))
        self.ram.write(0, bytes(self.model))
        self.bursts: dict[str, list[tuple[int, int, int, int, int]]] = {"ar": [], "aw": []}
        self.when: dict[str, list[int]] = {ch: [] for ch in ("ar", "aw", "w", "r")}
        self.cycle = 0
        if pause:
            for k, channel in enumerate((self.ram.read_if.ar_channel, self.ram.read_if.r_channel,
                                         self.ram.write_if.aw_channel,
                                         self.ram.write_if.w_channel,
                                         self.ram.write_if.b_channel)):
                channel.set_pause_generator(_pauses(pause, seed * 10 + k))
        cocotb.start_soon(self._watch())

    async def _watch(self) -> None:
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            await ReadOnly()
            for ch in ("ar", "aw"):
                valid, ready = (getattr(dut, f"m_axi_{ch}{s}") for s in ("valid", "ready"))
                if valid.value and ready.value:
                    self.bursts[ch].append(tuple(int(getattr(dut, f"m_axi_{ch}{f}").value)
                                                 for f in ("id", "addr", "len", "size", "burst")))
                    self.when[ch].append(self.cycle)
            for ch in ("r", "w"):
                valid, ready = (getattr(dut, f"m_axi_{ch}{s}") for s in ("valid", "ready"))
                if valid.value and ready.value:
                    self.when[ch].append(self.cycle)

    def check_bursts(self) -> None:
        for ch, seen in self.bursts.items():
            for _, addr, length, size, burst in seen:
                end = addr + (length + 1) * self.beat - 1
                assert (1 << size, burst) == (self.beat, 1), (ch, size, burst)
                assert addr % self.beat == 0, (ch, hex(addr))
                assert length < self.burst, (ch, hex(addr), length)
                assert addr // 4096 == end // 4096, (ch, hex(addr), length)
        assert not any(int(getattr(self.dut, f"{c}_err").value)
                       for c in ("rd0", "rd1", "wr0", "wr1"))

    def check_memory(self) -> None:
        assert bytes(self.ram.read(0, REGION)) == bytes(self.model)


def _pauses(p: float, seed: int):
    rng = random.Random(seed)
    while True:
        yield rng.random() < p


async def start(dut, *, pause: float = 0.3, seed: int = 0) -> Bench:
    for name in ("cmd_valid", "cmd_chain", "m_ready"):
        for k in (0, 1):
            getattr(dut, f"rd{k}_{name}").value = 0
    for k in (0, 1):
        getattr(dut, f"wr{k}_cmd_valid").value = 0
        getattr(dut, f"wr{k}_s_valid").value = 0
    bench = Bench(dut, pause, seed)
    await reset(dut)
    await RisingEdge(dut.clk)
    return bench


def pack(values: list[int], slot: int) -> bytes:
    size = 1 << slot
    return b"".join((v & ((1 << 8 * size) - 1)).to_bytes(size, "little") for v in values)


def unpack(data: bytes, slot: int) -> list[int]:
    """The words as the reader gives them: each slot sign-extended to WIDTH bits."""
    size = 1 << slot
    return [int.from_bytes(data[i:i + size], "little", signed=True) & MASK
            for i in range(0, len(data), size)]


def beats(words: list[int], parts: int) -> list[int]:
    """A stream's beats as the reader sends them: word >> PW*part, low part first."""
    return [(w & MASK) >> (PW * p) for w in words for p in range(parts + 1)]


async def command(dut, who: str, addr: int, slot: int, n: int, parts: int = 0, *,
                  chain: bool | None = None) -> None:
    fields = {"valid": 1, "addr": addr, "slot": slot, "len": n, "parts": parts}
    if chain is not None:
        fields["chain"] = int(chain)
    for name, value in fields.items():
        getattr(dut, f"{who}_cmd_{name}").value = value
    await RisingEdge(dut.clk)
    getattr(dut, f"{who}_cmd_valid").value = 0
    if chain is not None:
        getattr(dut, f"{who}_cmd_chain").value = 0


async def read(bench: Bench, k: int, pieces, *, slot: int, parts: int = 0, pause: float = 0.3,
               seed: int = 0) -> list[tuple[int, int, int]]:
    """Reader ``k`` streams ``pieces`` [(address, words)] as one chain: (cycle, beat, last) of
    every beat, its ready dropped at random with ``pause``; checks busy drops."""
    dut, rng = bench.dut, random.Random(seed)
    total = sum(n for _, n in pieces) * (parts + 1)
    ready, valid = getattr(dut, f"rd{k}_m_ready"), getattr(dut, f"rd{k}_m_valid")

    async def collect():
        got = []
        while len(got) < total:
            ready.value = int(rng.random() >= pause)
            await ReadOnly()
            if valid.value and ready.value:
                got.append((bench.cycle, int(getattr(dut, f"rd{k}_m_data").value),
                            int(getattr(dut, f"rd{k}_m_last").value)))
            await RisingEdge(dut.clk)
        ready.value = 0
        return got

    collector = cocotb.start_soon(collect())
    for j, (addr, n) in enumerate(pieces):
        await command(dut, f"rd{k}", addr, slot, n, parts, chain=j < len(pieces) - 1)
    got = await collector
    await ClockCycles(dut.clk, 2)
    assert not getattr(dut, f"rd{k}_busy").value, "the reader is still busy after its words"
    return got


async def write(bench: Bench, k: int, addr: int, slot: int, words: list[int], *,
                parts: int = 0, pause: float = 0.3, seed: int = 0) -> list[int]:
    """Writer ``k`` takes ``words`` at ``addr``, its stream paused at random; the model takes
    their slots; waits for busy to drop. The cycles in which its beats moved."""
    dut, rng = bench.dut, random.Random(seed)
    sent = [w if parts == 0 else (w >> (PW * p)) & ((1 << PW) - 1)
            for w in words for p in range(parts + 1)]
    await command(dut, f"wr{k}", addr, slot, len(words), parts)
    s = {n: getattr(dut, f"wr{k}_s_{n}") for n in ("data", "last", "valid", "ready")}
    i, on, cycles = 0, False, []
    while i < len(sent):
        on = on or rng.random() >= pause  # a beat offered stays until taken
        s["valid"].value = int(on)
        s["data"].value = sent[i] & MASK
        s["last"].value = int(i == len(sent) - 1)
        await ReadOnly()
        moved = on and s["ready"].value
        if moved:
            cycles.append(bench.cycle)
        await RisingEdge(dut.clk)
        if moved:
            i, on = i + 1, False
    s["valid"].value = 0
    while getattr(dut, f"wr{k}_busy").value:
        await RisingEdge(dut.clk)
    assert not getattr(dut, f"wr{k}_err_last").value
    data = pack([signed(w, WIDTH) for w in words], slot)
    bench.model[addr:addr + len(data)] = data
    return cycles


def values(rng: random.Random, n: int) -> list[int]:
    return [rng.getrandbits(WIDTH) for _ in range(n)]


@cocotb.test()
async def writes_of_every_slot_keep_their_neighbours(dut):
    bench = await start(dut, seed=1)
    rng = random.Random(1)
    for slot in range(4):
        size = 1 << slot
        for j, n in enumerate((1, 3, 2 * bench.beat // size + 1)):
            # unaligned starts: the first and last beats are partial
            addr = 0x100 * (4 * slot + j) + size * (1 + 2 * j)
            await write(bench, (slot + j) % 2, addr, slot, values(rng, n), seed=slot * 10 + j)
    bench.check_memory()
    bench.check_bursts()


@cocotb.test()
async def reads_of_every_slot_sign_extend(dut):
    bench = await start(dut, seed=2)
    for slot in range(4):
        size = 1 << slot
        for j, n in enumerate((1, 4, 2 * bench.beat // size + 3)):
            addr = 0x100 * (4 * slot + j) + size * (2 * j + 1)
            got = await read(bench, (slot + j) % 2, [(addr, n)], slot=slot, seed=slot * 10 + j)
            want = unpack(bytes(bench.model[addr:addr + n * size]), slot)
            assert [b for _, b, _ in got] == want, (slot, n, hex(addr))
            assert [last for _, _, last in got] == [0] * (n - 1) + [1]
    bench.check_bursts()


@cocotb.test()
async def bursts_stop_at_4k_and_at_burst(dut):
    bench = await start(dut, seed=3)
    rng = random.Random(3)
    n = 3 * bench.burst * bench.beat // 8 + 5      # longer than three bursts of 8-byte words
    addr = 0x1000 - 8 * (n // 2) - 8 * bench.beat // 2 + 8  # across 4 KB, mid-beat
    await write(bench, 0, addr, 3, values(rng, n), seed=3)
    got = await read(bench, 1, [(addr, n)], slot=3, seed=3)
    assert [b for _, b, _ in got] == unpack(bytes(bench.model[addr:addr + 8 * n]), 3)
    bench.check_memory()
    bench.check_bursts()
    for ch in ("ar", "aw"):
        ends = [a + (length + 1) * bench.beat for _, a, length, _, _ in bench.bursts[ch]]
        assert 0x1000 in ends, ch
        assert max(length for _, _, length, _, _ in bench.bursts[ch]) == bench.burst - 1, ch


@cocotb.test()
async def words_as_three_beats_both_ways(dut):
    bench = await start(dut, seed=4)
    rng = random.Random(4)
    words = values(rng, 11)
    for slot, addr in ((3, 0x208), (2, 0x404)):
        await write(bench, 1, addr, slot, words, parts=2, seed=slot)
        got = await read(bench, 0, [(addr, len(words))], slot=slot, parts=2, seed=slot)
        want = unpack(bytes(bench.model[addr:addr + (len(words) << slot)]), slot)
        if slot == 3:
            assert want == words
        assert [b for _, b, _ in got] == beats(want, 2)
        assert [last for _, _, last in got] == [0] * (3 * len(words) - 1) + [1]
    bench.check_memory()
    bench.check_bursts()


@cocotb.test()
async def a_chained_read_is_one_stream(dut):
    bench = await start(dut, seed=5)
    for pieces in ([(0x102, 7), (0x2F0, 9)], [(0x41E, 1), (0x800, 3)]):
        got = await read(bench, 1, pieces, slot=1, seed=len(pieces[0]))
        want = [w for a, n in pieces for w in unpack(bytes(bench.model[a:a + 2 * n]), 1)]
        assert [b for _, b, _ in got] == want
        assert [last for _, _, last in got] == [0] * (len(want) - 1) + [1]
    bench.check_bursts()


@cocotb.test()
async def four_clients_at_once(dut):
    bench = await start(dut, seed=6)
    rng = random.Random(6)
    w0, w1 = values(rng, 37), values(rng, 29)
    r0 = (0x1800 + 3, 45)
    r1 = (0x2100 + 12, 23)
    before = bytes(bench.model)
    tasks = [cocotb.start_soon(write(bench, 0, 0x0A02, 1, w0, seed=60)),
             cocotb.start_soon(write(bench, 1, 0x0C04, 2, w1, seed=61)),
             cocotb.start_soon(read(bench, 0, [r0], slot=0, seed=62)),
             cocotb.start_soon(read(bench, 1, [r1], slot=2, parts=1, seed=63))]
    for t in tasks[:2]:
        await t
    got0, got1 = await tasks[2], await tasks[3]
    assert [b for _, b, _ in got0] == unpack(before[r0[0]:r0[0] + r0[1]], 0)
    assert [b for _, b, _ in got1] == beats(unpack(before[r1[0]:r1[0] + 4 * r1[1]], 2), 1)
    bench.check_memory()
    bench.check_bursts()
    for ch in ("ar", "aw"):
        assert {ident for ident, *_ in bench.bursts[ch]} == {0, 1}, ch


@cocotb.test()
async def a_long_transfer_moves_a_word_a_cycle(dut):
    bench = await start(dut, pause=0.0, seed=7)
    rng = random.Random(7)
    n = 96
    start_cycle = bench.cycle
    moved = await write(bench, 0, 0x408, 3, values(rng, n), pause=0.0)
    written = bench.cycle - start_cycle
    start_cycle = bench.cycle
    got = await read(bench, 1, [(0x408, n)], slot=3, pause=0.0)
    first, last = got[0][0] - start_cycle, got[-1][0] - start_cycle
    ar, r = bench.when["ar"][-1] - start_cycle, bench.when["r"][-1] - start_cycle
    ar_first = min(c for c in bench.when["ar"] if c > start_cycle) - start_cycle
    r_first = min(c for c in bench.when["r"] if c > start_cycle) - start_cycle
    dut._log.info("write of %d 8-byte words: stream %d cycles, last response %d cycles after "
                  "the command; read: first AR, R, word %d, %d, %d cycles after the command, "
                  "last AR, R, word %d, %d, %d", n, moved[-1] - moved[0] + 1, written,
                  ar_first, r_first, first, ar, r, last)
    assert [b for _, b, _ in got] == unpack(bytes(bench.model[0x408:0x408 + 8 * n]), 3)
    # a word every cycle on both streams
    assert moved[-1] - moved[0] == n - 1 and last - first == n - 1, (moved, first, last)
    # the read: the port's two skid stages, the beat buffer and the word register after the
    # memory's first beat; the write: the last burst's beats follow its AW, then the response
    assert first - r_first <= 4 and r_first <= 8, (r_first, first)
    assert last <= n + 10 and written <= n + bench.burst + 10, (written, last)
    bench.check_memory()
    bench.check_bursts()


@cocotb.test()
async def two_clients_keep_the_bus_busy(dut):
    bench = await start(dut, pause=0.0, seed=8)
    rng = random.Random(8)
    n = 6 * bench.burst * bench.beat // 8  # 6 bursts of 8-byte words each
    await cocotb.triggers.Combine(
        cocotb.start_soon(write(bench, 0, 0x400, 3, values(rng, n), pause=0.0)),
        cocotb.start_soon(write(bench, 1, 0x1400, 3, values(rng, n), pause=0.0)))
    reads = [cocotb.start_soon(read(bench, k, [(0x400 + 0x1000 * k, n)], slot=3, pause=0.0))
             for k in (0, 1)]
    got = [await t for t in reads]
    for k in (0, 1):
        a = 0x400 + 0x1000 * k
        assert [b for _, b, _ in got[k]] == unpack(bytes(bench.model[a:a + 8 * n]), 3)
    # two streams offer twice what the bus carries: once going, a beat every cycle
    for ch in ("w", "r"):
        seen = bench.when[ch]
        assert len(seen) == 2 * n * 8 // bench.beat, ch
        assert seen[-1] - seen[0] + 1 == len(seen), (ch, seen)
    assert {i for i, *_ in bench.bursts["aw"][:2]} == {0, 1}
    bench.check_memory()
    bench.check_bursts()
