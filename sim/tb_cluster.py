"""cocotb host of a generated cluster: trains on `cluster_top` through its top ports only.

Each board is driven as a real host drives it: packets on its host stream pair (cocotbext-axi
AxiStreamSource / AxiStreamSink) and registers on its CSR slave (AxiLiteMaster), in the
formats of `fpdeep.hwlib.protocol` and `fpdeep.hwlib.csr`. The host loads every sequencer's
instruction stream (`fpdeep.codegen.program`), the weights and the constant tables, then per
step writes the images and labels, starts every board, waits for each to report done, and
reads back by store region every tensor the golden model traces. Nothing inside the boards is
touched; nothing is compared here (``fpdeep sim`` compares the record with the golden model).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiStreamBus, AxiStreamSink, AxiStreamSource
from fpdeep_tb import PERIOD_NS, tb_args

import fpdeep
from fpdeep.codegen.board import design_hash
from fpdeep.codegen.layout import TaskWork, board_layouts, constant_contents, program_words
from fpdeep.codegen.program import compile_step, setup_program
from fpdeep.design.lower import read_design_document
from fpdeep.golden import step as golden_step
from fpdeep.hwlib.csr import register_map
from fpdeep.hwlib.protocol import (
    ERRORS,
    STATES,
    Status,
    header,
    op_end,
    op_wait,
    signed_word,
    word,
)
from fpdeep.ops import spec
from fpdeep.schedule.tasks import contribution_item, item

BEAT_BYTES = 8


class HostError(Exception):
    """A board answered a packet with an error, or a step ended in error."""


class Board:
    """One board as its host sees it: the host stream pair and the CSR slave."""

    def __init__(self, dut, index: int, layout, counters: int) -> None:
        self.index = index
        self.layout = layout
        p = f"b{index}_"
        self.tx = AxiStreamSource(AxiStreamBus.from_prefix(dut, p + "s_axis_host"), dut.clk,
                                  dut.rst_n, reset_active_level=False)
        self.rx = AxiStreamSink(AxiStreamBus.from_prefix(dut, p + "m_axis_host"), dut.clk,
                                dut.rst_n, reset_active_level=False)
        self.csr = AxiLiteMaster(AxiLiteBus.from_prefix(dut, p + "s_axil"), dut.clk, dut.rst_n,
                                 reset_active_level=False)
        self.map = register_map(counters=counters)
        for bus in (self.tx, self.rx, self.csr.write_if, self.csr.read_if):
            bus.log.setLevel("WARNING")

    async def exchange(self, beats: list[int]) -> tuple[Status, list[int]]:
        """Send a packet; its status and the beats after it."""
        await self.tx.send(b"".join(int(b).to_bytes(BEAT_BYTES, "little") for b in beats))
        data = bytes((await self.rx.recv()).tdata)
        out = [int.from_bytes(data[k:k + BEAT_BYTES], "little")
               for k in range(0, len(data), BEAT_BYTES)]
        return Status.decode(out[0]), out[1:]

    async def packet(self, beats: list[int]) -> list[int]:
        """Send a packet; the beats after its status, which must be ok."""
        status, out = await self.exchange(beats)
        if not status.ok:
            raise HostError(f"board {self.index}: {status.message} (opcode {status.opcode:#x})")
        return out

    async def write(self, key: str, values, image: int = -1) -> None:
        bank, address = self.layout.address(key, image)
        words = [word(int(v)) for v in np.asarray(values).ravel()]
        await self.packet([header("WRITE", bank, address, len(words)), *words])

    async def read(self, key: str, count: int, image: int = -1, offset: int = 0) -> np.ndarray:
        bank, address = self.layout.address(key, image, offset)
        got = await self.packet([header("READ", bank, address, count)])
        if len(got) != count:
            raise HostError(f"board {self.index}: read of {count} words of {key} (image "
                            f"{image}) answered {len(got)}")
        return np.array([signed_word(v) for v in got], dtype=np.int64)

    async def program(self, resource: int, words: tuple[int, ...], address: int = 0) -> None:
        await self.packet([header("PROGRAM", resource, address, len(words)), *words])

    async def reg(self, name: str, index: int = 0) -> int:
        data = await self.csr.read_dword(self.map.addr(name, index))
        return int(data)

    async def set(self, name: str, **fields) -> None:
        await self.csr.write_dword(self.map.addr(name), self.map.encode(name, **fields))


class Host:
    """The data side: the golden model's integer weights, images and what is read back."""

    def __init__(self, dut, args: dict) -> None:
        self.dut = dut
        folder = Path(args["dir"])
        document = json.loads((folder / "design.json").read_text())
        self.design, plan, info = read_design_document(document, "design.json")
        self.net = fpdeep.load_onnx(folder / info.model_file, input_shape=info.input_shape)
        self.ctx = golden_step.StepContext.make(self.net, self.design.numerics, self.design.loss)
        inputs = np.load(args["inputs"])
        self.x = self.ctx.input(inputs["x"].astype(np.float64))
        self.y = inputs["y"].astype(np.int64)
        self.batch = len(self.y)
        names = [ref.name for layer in self.net.compute_layers
                 for ref in golden_step.trainable_refs(layer)]
        self.params = golden_step.load_params(self.net, {k: inputs[f"w:{k}"] for k in names},
                                              self.ctx)
        self.layouts = board_layouts(self.design, self.net, batch=plan.totals.batch)
        self.rules = TaskWork(self.design, self.net)
        self.program = compile_step(self.design, self.net, self.layouts, batch=self.batch,
                                    lr=float(args["lr"]))
        # the forward-only pass lives in the second half of each instruction memory
        self.forward = compile_step(self.design, self.net, self.layouts, batch=self.batch,
                                    lr=float(args["lr"]), forward_only=True)
        self.forward_base = program_words(self.design, self.net, self.layouts) // 2
        self.max_cycles = int(args["max_cycles"])
        self.boards = [Board(dut, b.index, self.layouts[b.index], len(self.layouts[b.index]
                                                                        .resources))
                       for b in self.design.boards]
        self.slices = [(b.index, s) for b in self.design.boards for s in b.slices]

    async def configure(self) -> None:
        """Weights and constant tables into every board, the setup program run once (the loss
        unit's table), then the training programs."""
        for b in self.boards:
            want = design_hash(self.design)
            got = await b.reg("ID")
            if got != want:
                raise HostError(f"board {b.index} reports design {got:#010x}, this build is "
                                f"{want:#010x}: the bitstream is not this build's")
            for key, values in constant_contents(self.design, b.layout).items():
                await b.write(key, values)
        for board, s in self.slices:
            p = self.params[s.layer]
            await self.boards[board].write(f"w:{s.ident}", p["weight"][s.lo:s.hi])
            if s.has_bias:
                await self.boards[board].write(f"b:{s.ident}", p["bias"][s.lo:s.hi])
        setup = setup_program(self.design, self.net, self.layouts)
        for b in self.boards:
            for r, words in enumerate(setup[b.index]):
                await b.program(r, words)
        await self.run_step()
        for b in self.boards:
            for r, _ in enumerate(b.layout.resources):
                await b.program(r, self.program.words(b.index, r))
                await b.program(r, self.forward.words(b.index, r), self.forward_base)

    async def step(self) -> dict:
        """Images and labels in, every board started, done awaited; the boards' figures."""
        source = self.design.homes[self.net.input_name]
        for i in range(self.batch):
            await self.boards[source].write(item("act", self.net.input_name), self.x[i], i)
        loss_board = self.design.homes[self.rules.logits]
        for i in range(self.batch):
            await self.boards[loss_board].write("label", [int(self.y[i])], i)
        for b in self.boards:
            await b.set("BATCH", size=self.batch)
        return await self.run_step()

    async def infer(self, rec: dict) -> dict:
        """A forward-only pass over the images in the store (the trained weights); the logits
        read back."""
        figures = await self.run_step(mode="forward")
        tensor = self.rules.logits
        home = self.design.homes[tensor]
        key, offset = self.rules.locate(home, item("act", tensor))
        n = self.rules.size(tensor)
        rec["infer/logits"] = np.stack([await self.boards[home].read(key, n, i, offset)
                                        for i in range(self.batch)])
        return figures

    async def run_step(self, mode: str = "train") -> dict:
        """Start every board and wait until each is done; the boards' figures."""
        for b in self.boards:
            await b.set("CONTROL", start=1, mode=mode)
        started = get_sim_time("ns") / PERIOD_NS
        figures = []
        for b in self.boards:
            while True:
                status = b.map.decode("STATUS", await b.reg("STATUS"))
                state = STATES[status["state"]]
                if state == "done":
                    break
                if state == "error":
                    raise HostError(await self.failure(b, status["error_code"]))
                if get_sim_time("ns") / PERIOD_NS - started > self.max_cycles:
                    raise HostError(await self.overrun(b))
                await ClockCycles(b.tx.clock, 64)
            cycles = await b.reg("CYCLE_COUNT_LO") | await b.reg("CYCLE_COUNT_HI") << 32
            names = [r.name for r in b.layout.resources]
            busy = {n: await b.reg("BUSY", k) for k, n in enumerate(names)}
            stall = {n: await b.reg("STALL", k) for k, n in enumerate(names)}
            window = {n: await b.reg("WINDOW", k) for k, n in enumerate(names)}
            figures.append({"board": b.index, "cycles": cycles, "busy": busy, "stall": stall,
                            "window": window,
                            "keys": {r.name: r.key for r in b.layout.resources}})
        return {"cycles": max(f["cycles"] for f in figures), "boards": figures}

    async def failure(self, b: Board, code: int) -> str:
        text = f"board {b.index}: {ERRORS.get(code, f'error {code}')}"
        if code == 5:
            unit = await b.reg("STALLED_UNIT")
            name = (b.layout.resources[unit].name if unit < len(b.layout.resources)
                    else f"resource {unit}")
            text += f"; stalled: {name}"
        return text

    async def overrun(self, b: Board) -> str:
        """What the board is doing when a step overruns the cycle limit: the resources whose
        busy or stall counters still move."""
        names = [r.name for r in b.layout.resources]

        async def counters() -> list[tuple[int, int]]:
            return [(await b.reg("BUSY", k), await b.reg("STALL", k)) for k in range(len(names))]

        before = await counters()
        after = await counters()
        running = [n for n, x, y in zip(names, before, after, strict=True) if y[0] != x[0]]
        waiting = [n for n, x, y in zip(names, before, after, strict=True) if y[1] != x[1]]
        return (f"cycle limit of {self.max_cycles} cycles per step exceeded on board "
                f"{b.index}; running: {', '.join(running) or 'none'}; waiting: "
                f"{', '.join(waiting) or 'none'}")

    async def faults(self) -> list[dict]:
        """Bad host input, each answered with its error code and shown in the CSR, the board
        left ready: a step before anything is loaded, an unknown opcode, a payload shorter
        than its header says, a read of a bank that does not exist."""
        b = self.boards[0]
        seen = []
        await b.set("CONTROL", start=1)
        seen.append({"case": "step before loading", "status": None,
                     "csr": await self.error_code(b)})
        for case, beats in (("unknown opcode", [0x7F << 56 | 1, 0]),
                            ("short payload", [header("WRITE", 0, 0, 4), 1, 2]),
                            ("unknown bank", [header("READ", len(b.layout.banks), 0, 1)])):
            status, rest = await b.exchange(beats)
            seen.append({"case": case, "status": status.code, "csr": await self.error_code(b),
                         "beats": 1 + len(rest)})
        return seen

    async def error_code(self, b: Board) -> int:
        status = b.map.decode("STATUS", await b.reg("STATUS"))
        return status["error_code"] if STATES[status["state"]] == "error" else 0

    async def record(self, rec: dict, step: int) -> None:
        """Every traced tensor of the step, read back from the boards' stores."""
        net, d = self.net, self.design
        for layer in net.layers:
            if spec(layer.op).in_loss:
                continue
            tensor = self.rules.canon(layer.output)
            home = d.homes[tensor]
            key, offset = self.rules.locate(home, item("act", tensor))
            n = self.rules.size(tensor)
            rec[f"{step}/{layer.name}/output"] = np.stack(
                [(await self.boards[home].read(key, n, i, offset)).reshape(layer.out_shape)
                 for i in range(self.batch)])
        for layer in net.compute_layers:
            slices = d.slices_of(layer.name)
            if "bp" in slices[0][1].engines:
                src = self.rules.canon(layer.inputs[0])
                board = d.homes[src] if len(slices) > 1 else slices[0][0]
                key, offset = self.rules.locate(board, contribution_item(src, layer.name))
                n = self.rules.size(src)
                shape = net.tensors[layer.inputs[0]].shape
                rec[f"{step}/{layer.name}/input_error"] = np.stack(
                    [(await self.boards[board].read(key, n, i, offset)).reshape(shape)
                     for i in range(self.batch)])
            w = self.params[layer.name]["weight"]
            per = int(np.prod(w.shape[1:]))
            acc_w, acc_b, new_w, new_b = [], [], [], []
            for board, s in slices:
                b = self.boards[board]
                rows = s.hi - s.lo
                e = s.engines["wg"]
                acc = await b.read(f"acc:{s.ident}", e.out_beats)
                acc_w.append(acc[:rows * per].reshape((rows, *w.shape[1:])))
                acc_b.append(acc[rows * per:])
                new_w.append((await b.read(f"w:{s.ident}", rows * per)).reshape(
                    (rows, *w.shape[1:])))
                if s.has_bias:
                    new_b.append(await b.read(f"b:{s.ident}", rows))
            rec[f"{step}/{layer.name}/acc_weight"] = np.concatenate(acc_w)
            rec[f"{step}/{layer.name}/new_weight"] = np.concatenate(new_w)
            if layer.weight("bias") is not None:
                rec[f"{step}/{layer.name}/acc_bias"] = np.concatenate(acc_b)
                rec[f"{step}/{layer.name}/new_bias"] = np.concatenate(new_b)


@cocotb.test()
async def cluster_trains(dut):
    args = tb_args()
    Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst_n.value = 0
    # the bus drivers start once the boards' outputs have left X in reset (Icarus starts X)
    await ClockCycles(dut.clk, 4)
    host = Host(dut, args)
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    progress = Path(args["progress"])
    result: dict = {"steps": [], "error": None}
    rec: dict[str, np.ndarray] = {}
    steps = int(args["steps"])
    wall = time.monotonic()
    try:
        if args.get("faults"):
            result["faults"] = await host.faults()
        await host.configure()
        if args.get("deadlock"):
            # resource 0 waits for a task of its own that never comes
            await host.boards[0].program(0, (op_wait(0, 1), op_end()))
        for step in range(steps):
            progress.write_text(json.dumps({"step": step, "steps": steps, "task": 0,
                                            "tasks": 1}))
            began = time.monotonic()
            result["steps"].append(await host.step())
            result["steps"][-1]["wall_s"] = time.monotonic() - began
            await host.record(rec, step)
        if args.get("infer"):
            result["infer"] = await host.infer(rec)
        progress.write_text(json.dumps({"step": steps - 1, "steps": steps, "task": 1,
                                        "tasks": 1}))
    except HostError as exc:
        result["error"] = str(exc)
    # simulated cycles per second of wall time, configuration and read-back included
    result["cycles_per_s"] = round(get_sim_time("ns") / PERIOD_NS / (time.monotonic() - wall))
    await Timer(1, "ns")
    np.savez(args["record"], **rec)
    Path(args["out"]).write_text(json.dumps(result))
    assert result["error"] is None, result["error"]
