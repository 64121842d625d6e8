"""cocotb test of fpdeep_csr through its AXI4-Lite slave, as a host sees it: cocotbext-axi's
AxiLiteMaster at the addresses of the register map compiled for this build's N and design
hash; the register side is driven and watched at its ports."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp
from fpdeep_tb import PERIOD_NS, tb_args

from fpdeep.hwlib import CSR
from fpdeep.hwlib.csr import register_map
from fpdeep.hwlib.signature import IDLE_LOW


class Pulses:
    """Records the cycles in which ``start`` and ``soft_reset`` are high."""

    def __init__(self, dut) -> None:
        self.dut = dut
        self.cycle = 0
        self.seen: dict[str, list[int]] = {"start": [], "soft_reset": []}
        cocotb.start_soon(self._watch())

    async def _watch(self) -> None:
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            self.cycle += 1
            for name, cycles in self.seen.items():
                if int(getattr(self.dut, name).value):
                    cycles.append(self.cycle)

    def take(self) -> dict[str, list[int]]:
        seen = {name: list(cycles) for name, cycles in self.seen.items()}
        for cycles in self.seen.values():
            cycles.clear()
        return seen


async def _start(dut):
    params = tb_args()["parameters"]
    n = int(params["N"])
    rmap = register_map(counters=n, design_hash=int(params["DESIGN_HASH"]))
    for port in CSR.ports(N=n):
        if port.direction == "input" and port.role in IDLE_LOW:
            getattr(dut, port.name).value = 0
    for name, direction, _ in rmap.ports():
        if direction == "input":
            getattr(dut, name).value = 0
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    dut.rst_n.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst_n.value = 1
    bus = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst_n,
                        reset_active_level=False)
    return rmap, bus, Pulses(dut)


async def _read(bus, address: int) -> int:
    resp = await bus.read(address, 4)
    assert resp.resp == AxiResp.OKAY, f"read of {address:#x} answered {resp.resp!r}"
    return int.from_bytes(resp.data, "little")


async def _write(bus, address: int, word: int, resp=AxiResp.OKAY) -> None:
    got = await bus.write(address, word.to_bytes(4, "little"))
    assert got.resp == resp, f"write of {address:#x} answered {got.resp!r}, not {resp!r}"


async def _settle(dut, cycles: int = 3) -> None:
    for _ in range(cycles):
        await RisingEdge(dut.clk)


@cocotb.test()
async def identity_control_and_batch(dut):
    rmap, bus, pulses = await _start(dut)
    params = tb_args()["parameters"]
    assert await _read(bus, rmap.addr("ID")) == int(params["DESIGN_HASH"])
    assert await _read(bus, rmap.addr("VERSION")) == rmap.version == 4
    # reset values as the RDL gives them: train mode, batch 1
    assert await _read(bus, rmap.addr("CONTROL")) == 0
    assert await _read(bus, rmap.addr("BATCH")) == 1
    assert (int(dut.mode.value), int(dut.batch.value)) == (0, 1)

    await _write(bus, rmap.addr("CONTROL"), rmap.encode("CONTROL", start=1))
    await _settle(dut)
    assert [len(c) for c in pulses.take().values()] == [1, 0]  # one start pulse, one cycle
    await _write(bus, rmap.addr("CONTROL"), rmap.encode("CONTROL", mode="forward"))
    await _settle(dut)
    assert pulses.take() == {"start": [], "soft_reset": []}
    assert int(dut.mode.value) == 1
    # pulse fields read 0, the stored mode reads back
    assert await _read(bus, rmap.addr("CONTROL")) == rmap.encode("CONTROL", mode="forward")
    await _write(bus, rmap.addr("CONTROL"),
                 rmap.encode("CONTROL", soft_reset=1, mode="forward"))
    await _settle(dut)
    assert [len(c) for c in pulses.take().values()] == [0, 1]
    assert int(dut.mode.value) == 1  # a soft reset keeps the CSR's values

    await _write(bus, rmap.addr("BATCH"), 32)
    assert await _read(bus, rmap.addr("BATCH")) == 32 and int(dut.batch.value) == 32
    # byte strobes: one byte written at BATCH + 1 changes bits 15:8 only
    got = await bus.write(rmap.addr("BATCH") + 1, bytes([0x01]))
    assert got.resp == AxiResp.OKAY
    assert await _read(bus, rmap.addr("BATCH")) == 0x0120
    # bits above the field are dropped
    await _write(bus, rmap.addr("BATCH"), 0xFFFF_FFFF)
    assert await _read(bus, rmap.addr("BATCH")) == 0xFFFF == int(dut.batch.value)
    # the Dropout step number: all 32 bits, reset 0
    assert await _read(bus, rmap.addr("DRAW_STEP")) == 0 == int(dut.draw_step.value)
    await _write(bus, rmap.addr("DRAW_STEP"), 0x8000_0005)
    assert await _read(bus, rmap.addr("DRAW_STEP")) == 0x8000_0005 == int(dut.draw_step.value)
    # the links' frame length: 16 bits, reset 0 (the built length)
    assert await _read(bus, rmap.addr("LINK_FRAME")) == 0 == int(dut.link_frame.value)
    await _write(bus, rmap.addr("LINK_FRAME"), 0xABCD_0003)
    assert await _read(bus, rmap.addr("LINK_FRAME")) == 3 == int(dut.link_frame.value)


@cocotb.test()
async def status_and_counters_read_from_their_inputs(dut):
    rmap, bus, pulses = await _start(dut)
    rng = random.Random(int(tb_args().get("seed", 1)))
    n = rmap.counters
    state, error, steps = 3, rng.randrange(1, 256), rng.getrandbits(32)
    cycles, unit = rng.getrandbits(64) | 1 << 63, rng.getrandbits(16)
    busy = [rng.getrandbits(32) for _ in range(n)]
    stall = [rng.getrandbits(32) for _ in range(n)]
    dut.state.value = state
    dut.error_code.value = error
    dut.step_count.value = steps
    dut.cycle_count.value = cycles
    dut.stalled_unit.value = unit
    dut.busy_count.value = sum(v << (32 * i) for i, v in enumerate(busy))
    dut.stall_count.value = sum(v << (32 * i) for i, v in enumerate(stall))
    # the links' counters, one port each, and their flags
    links = {reg.name: (reg.fields[0].port, rng.getrandbits(32)) for reg in rmap.registers
             if reg.name.startswith(("LINK_EAST_", "LINK_WEST_"))}
    for port, value in links.values():
        getattr(dut, port).value = value
    flags = {f.name: rng.getrandbits(1) for f in rmap.register("LINK_FLAGS").fields}
    for name, value in flags.items():
        getattr(dut, name).value = value
    await RisingEdge(dut.clk)

    status = rmap.decode("STATUS", await _read(bus, rmap.addr("STATUS")))
    assert status == {"state": state, "error_code": error}
    assert await _read(bus, rmap.addr("STEP_COUNT")) == steps
    lo = await _read(bus, rmap.addr("CYCLE_COUNT_LO"))
    hi = await _read(bus, rmap.addr("CYCLE_COUNT_HI"))
    assert hi << 32 | lo == cycles
    assert await _read(bus, rmap.addr("STALLED_UNIT")) == unit
    for i in range(n):
        assert await _read(bus, rmap.addr("BUSY", i)) == busy[i], f"BUSY[{i}]"
        assert await _read(bus, rmap.addr("STALL", i)) == stall[i], f"STALL[{i}]"
    assert len(links) == 12
    for name, (_, value) in links.items():
        assert await _read(bus, rmap.addr(name)) == value, name
    assert rmap.decode("LINK_FLAGS", await _read(bus, rmap.addr("LINK_FLAGS"))) == flags

    # writes to read-only registers answer OKAY and change nothing
    await _write(bus, rmap.addr("STATUS"), 0)
    await _write(bus, rmap.addr("ID"), 0x1234_5678)
    assert rmap.decode("STATUS", await _read(bus, rmap.addr("STATUS")))["state"] == state
    assert await _read(bus, rmap.addr("ID")) == rmap.design_hash
    assert pulses.take() == {"start": [], "soft_reset": []}


@cocotb.test()
async def unmapped_addresses_answer_slverr(dut):
    rmap, bus, pulses = await _start(dut)
    n = rmap.counters
    after_arrays = rmap.addr("STALL", n - 1) + 4
    holes = [rmap.addr("LINK_FRAME") + 4, rmap.addr("LINK_EAST_RX_CRC_ERRORS") + 4,
             rmap.addr("LINK_FLAGS") + 4, rmap.addr("BUSY", n - 1) + 4, after_arrays, 0xFFC]
    for address in holes:
        resp = await bus.read(address, 4)
        assert (resp.resp, bytes(resp.data)) == (AxiResp.SLVERR, bytes(4)), hex(address)
        await _write(bus, address, 0xFFFF_FFFF, resp=AxiResp.SLVERR)
    # nothing a write to a hole could have reached changed
    assert await _read(bus, rmap.addr("CONTROL")) == 0
    assert await _read(bus, rmap.addr("BATCH")) == 1
    assert pulses.take() == {"start": [], "soft_reset": []}
