"""cocotb host of a generated cluster: runs a host session on `cluster_top` through its top
ports only.

fpdeep compiles the session (`fpdeep.cosim.session`) into a script of host operations
(`fpdeep.cosim.script`); this host carries them out one by one, as the compiled host
(sim/native_host.cpp) does, with cocotbext-axi's bus models: packets on each board's host
stream pair (AxiStreamSource / AxiStreamSink) and registers on its CSR slave (AxiLiteMaster).
It writes every answer to the outputs file as it goes (flushed at every PROGRESS operation);
nothing is decoded or compared here.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer, gather
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiStreamBus, AxiStreamSink, AxiStreamSource
from fpdeep_tb import PERIOD_NS, tb_args

from fpdeep.cosim.script import POLL_OUTCOMES, READING_BACK, OutputsWriter, read_script

BEAT_BYTES = 8


class Board:
    """One board as its host sees it: the host stream pair and the CSR slave."""

    def __init__(self, dut, index: int, pause: bool = False) -> None:
        p = f"b{index}_"
        self.tx = AxiStreamSource(AxiStreamBus.from_prefix(dut, p + "s_axis_host"), dut.clk,
                                  dut.rst_n, reset_active_level=False)
        self.rx = AxiStreamSink(AxiStreamBus.from_prefix(dut, p + "m_axis_host"), dut.clk,
                                dut.rst_n, reset_active_level=False)
        self.csr = AxiLiteMaster(AxiLiteBus.from_prefix(dut, p + "s_axil"), dut.clk, dut.rst_n,
                                 reset_active_level=False)
        for bus in (self.tx, self.rx, self.csr.write_if, self.csr.read_if):
            bus.log.setLevel("WARNING")
        if pause:  # a busy host: gaps in what it sends, back-pressure on what it receives
            self.tx.set_pause_generator(itertools.cycle((0, 1, 1, 0, 0, 0, 1)))
            self.rx.set_pause_generator(itertools.cycle((0, 0, 1, 0, 1)))

    async def exchange(self, beats: tuple[int, ...]) -> list[int]:
        """Send a packet; every beat of its answer."""
        await self.tx.send(b"".join(int(b).to_bytes(BEAT_BYTES, "little") for b in beats))
        data = bytes((await self.rx.recv()).tdata)
        return [int.from_bytes(data[k:k + BEAT_BYTES], "little")
                for k in range(0, len(data), BEAT_BYTES)]

    async def read(self, address: int) -> int:
        return int(await self.csr.read_dword(address))


def now() -> int:
    return int(get_sim_time("ns") // PERIOD_NS)


class Session:
    def __init__(self, dut, script, progress: Path, outputs: Path, pause: bool = False) -> None:
        self.script = script
        self.boards = [Board(dut, b, pause) for b in range(script.boards)]
        self.progress = progress
        self.outputs = OutputsWriter(outputs)
        self.began = time.monotonic_ns()
        self.mark = now()

    async def run(self) -> int | None:
        """Carry the operations out; the index of the POLL that failed, if one did."""
        ops = self.script.ops
        failed, index = None, 0
        while index < len(ops):
            op = ops[index]
            if op.name == "FAIL":
                if failed is None:
                    break
            elif op.name == "EXCHANGE":
                index = await self.exchanges(index)
            elif await self.do(index, op) and failed is None:
                failed = index
                index = next(k for k, o in enumerate(ops) if o.name == "FAIL")
            index += 1
        return failed

    async def exchanges(self, first: int) -> int:
        """The EXCHANGE at ``first`` and those right after it, every board's packets in their
        order but boards side by side, as the native host does (in such a run no step runs
        and no board reads what another writes); the index of the last."""
        ops = self.script.ops
        last = first
        while last + 1 < len(ops) and ops[last + 1].name == "EXCHANGE":
            last += 1
        queues: dict[int, list[int]] = {}
        for k in range(first, last + 1):
            queues.setdefault(ops[k].board, []).append(k)
        answers = {}

        async def send(board: int, indices: list[int]) -> None:
            for k in indices:
                answers[k] = await self.boards[board].exchange(ops[k].args)

        await gather(*(send(board, indices) for board, indices in queues.items()))
        for k in range(first, last + 1):
            self.outputs.answer(k, answers[k])
        return last

    async def do(self, index: int, op) -> bool:
        """One operation (not an EXCHANGE); True when it is a POLL that failed."""
        board = self.boards[op.board]
        if op.name == "CSR_WRITE":
            await board.csr.write_dword(*op.args)
        elif op.name == "CSR_READ":
            self.outputs.answer(index, (await board.read(op.args[0]),))
        elif op.name == "MARK":
            self.mark = now()
            self.outputs.answer(index, (self.mark, time.monotonic_ns() - self.began))
        elif op.name == "IDLE":
            await ClockCycles(board.tx.clock, op.args[0])
        elif op.name == "PROGRESS":
            step, steps, task, *reading = op.args
            self.outputs.flush()
            shown = {"step": step, "steps": steps, "task": task, "tasks": 1, "cycle": now()}
            if reading == [READING_BACK]:
                shown["reading"] = True
            self.progress.write_text(json.dumps(shown))
        elif op.name == "POLL":
            address, mask, want, timeout, interval, *bad = op.args
            while True:
                value = await board.read(address)
                if value & mask == want:
                    outcome = "wanted"
                elif value & mask in bad:
                    outcome = "bad"
                elif now() - self.mark > timeout:
                    outcome = "timeout"
                else:
                    await ClockCycles(board.tx.clock, interval)
                    continue
                self.outputs.answer(index, (value, POLL_OUTCOMES.index(outcome), now()))
                return outcome != "wanted"
        return False


@cocotb.test()
async def cluster_trains(dut):
    args = tb_args()
    script = read_script(Path(args["script"]))
    Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst_n.value = 0
    # the link channels take their faults at reset
    dut.link_seed.value = script.faults.seed
    dut.link_ber.value = script.faults.ber
    dut.link_drop.value = script.faults.drop
    # the bus drivers start once the boards' outputs have left X in reset (Icarus starts X)
    await ClockCycles(dut.clk, script.reset_cycles - 2)
    session = Session(dut, script, Path(args["progress"]), Path(args["outputs"]),
                      bool(args.get("pause")))
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    session.began, session.mark = time.monotonic_ns(), now()
    failed = await session.run()
    cycles, wall_ns = now(), time.monotonic_ns() - session.began
    await Timer(1, "ns")
    session.outputs.close(failed, cycles, wall_ns)
