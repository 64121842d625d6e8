"""The host's side of a simulated run, compiled once for every host: `build_session` turns a
build, a batch and its weights into a script of host operations (`fpdeep.cosim.script`), and
`decode` turns what a host recorded into the steps' figures and every traced tensor.

The session does what a real host does through the boards' top ports only: it checks each
board's design hash, loads the constant tables, the weights and the setup program, runs the
setup, loads the training and forward-only programs, then per step writes the images and
labels, starts every board, waits for each to report done, and reads back by store region
every tensor the golden model traces. A training session (`build_training_session`) keeps
the weights on the boards from step to step, each step on its own images, and reads back the
weights and logits after every step; an inference session runs forward-only passes. Packets
and registers are in the formats of `fpdeep.hwlib.protocol` and `fpdeep.hwlib.csr`; nothing
is compared here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.codegen.board import design_hash
from fpdeep.codegen.layout import (
    TRAINED_UNITS,
    TaskWork,
    affine_item,
    bn_running_item,
    bn_table_item,
    board_layouts,
    constant_contents,
    program_words,
    unit_roles,
)
from fpdeep.codegen.ports import LINK_COUNTERS, SIDES
from fpdeep.codegen.program import compile_step, setup_program
from fpdeep.design.units import BN_TABLE, bn_table
from fpdeep.errors import FpdeepError
from fpdeep.golden import step as golden_step
from fpdeep.hwlib.csr import RegisterMap, register_map
from fpdeep.hwlib.protocol import (
    BEAT_BITS,
    DRAM_BANK,
    ERROR_CODES,
    ERRORS,
    LENGTH_BITS,
    Status,
    header,
    op_end,
    op_wait,
    signed_word,
    word,
)
from fpdeep.ops import spec
from fpdeep.ops.batchnorm import frozen_constants, running_fixed
from fpdeep.schedule.tasks import contribution_item, item

from .script import (
    NO_LINK_FAULTS,
    POLL_OUTCOMES,
    READING_BACK,
    LinkFaults,
    Op,
    Outputs,
    Script,
)

if TYPE_CHECKING:
    from .run import Build

#: Cycles between two reads of STATUS while a step runs.
POLL_INTERVAL = 64
#: Cycles the hosts hold reset before the session begins.
RESET_CYCLES = 6
#: Cycles after a refused packet's status beat until the CSR shows its error code: fpdeep_host
#: raises its fault on the beat's handshake and fpdeep_board_ctl latches it the cycle after.
FAULT_TO_CSR_CYCLES = 2


@dataclass(frozen=True)
class Part:
    """Words ``lo:hi`` of a READ's answer (of several READs' answers one after the other),
    shaped ``shape``, as one piece of a traced tensor."""

    op: int | tuple[int, ...]
    shape: tuple[int, ...]
    lo: int = 0
    hi: int | None = None


@dataclass(frozen=True)
class Traced:
    """A traced tensor: its pieces stacked (one per image) or concatenated (one per slice)."""

    parts: tuple[Part, ...]
    stacked: bool


@dataclass
class BoardFigures:
    """The operations that read one board's counters after a step."""

    board: int
    cycles: tuple[int, int]  # CYCLE_COUNT_LO, CYCLE_COUNT_HI
    busy: dict[str, int]
    stall: dict[str, int]
    window: dict[str, int]  # WINDOW[i]: first to last active cycle
    keys: dict[str, str]  # resource name -> its key in the schedule


@dataclass(frozen=True)
class StepReads:
    """What a training session reads back after one step (``Traced`` by name) and the index of
    its last operation: the step is complete once the host has answered that one."""

    traced: dict[str, Traced]
    last: int


@dataclass
class Session:
    """A compiled host session: its operations and how to read their answers."""

    boards: int
    resources: dict[int, list[str]]  # per board, its resources in CSR counter order
    ops: list[Op] = field(default_factory=list)
    packets: dict[int, tuple[int, int | None, str]] = field(default_factory=dict)
    traced: dict[str, Traced] = field(default_factory=dict)
    steps: list[tuple[int, int, list[BoardFigures]]] = field(default_factory=list)
    infer: tuple[int, int, list[BoardFigures]] | None = None
    passes: list[tuple[int, int, list[BoardFigures]]] = field(default_factory=list)
    train: list[StepReads] = field(default_factory=list)  # per step of a training session
    faults: list[dict[str, Any]] = field(default_factory=list)
    polls: dict[int, tuple[int, str]] = field(default_factory=dict)
    # per board: STATUS and STALLED_UNIT, then the counters twice (read after a failure)
    diagnosis: dict[int, dict[str, Any]] = field(default_factory=dict)
    link_faults: LinkFaults = NO_LINK_FAULTS  # what the simulated links inject
    # per link direction "a>b": its counters' CSR_READs, the sender's tx_* and receiver's rx_*
    links: dict[str, dict[str, int]] = field(default_factory=dict)

    def script(self) -> Script:
        return Script(self.boards, RESET_CYCLES, tuple(self.ops), self.link_faults)

    def add(self, op: Op) -> int:
        self.ops.append(op)
        return len(self.ops) - 1


class _Builder:
    """Emits the session's operations, in the order a host carries them out."""

    def __init__(self, build: Build, *, x: np.ndarray, y: np.ndarray,
                 weights: Mapping[str, np.ndarray], lr: float, max_cycles: int,
                 batch: int | None = None,
                 velocities: Mapping[str, np.ndarray] | None = None) -> None:
        self.design, self.net = build.design, build.network
        design, net = self.design, self.net
        self.ctx = golden_step.StepContext.make(net, design.numerics, design.loss)
        self.x = self.ctx.input(np.asarray(x, dtype=np.float64))
        self.y = np.asarray(y, dtype=np.int64)
        self.batch = len(self.y) if batch is None else batch
        # every layer's parameters: the trained ones and the constants (running statistics)
        names = [ref.name for layer in net.layers for ref in layer.weights]
        self.params = golden_step.load_params(net, {k: weights[k] for k in names}, self.ctx)
        # the SGD velocities the boards start from (golden StepResult.state; none: zeros)
        self.velocities = golden_step.load_velocities(net, velocities or {}, self.ctx)
        self.layouts = board_layouts(design, net, batch=build.plan.totals.batch)
        self.rules = TaskWork(design, net)
        self.lr = lr
        self.max_cycles = max_cycles
        self.maps: list[RegisterMap] = [
            register_map(counters=len(self.layouts[b.index].resources)) for b in design.boards]
        self.slices = [(b.index, s) for b in design.boards for s in b.slices]
        # trained units (per-channel Scale and Bias, BatchNormalization on batch statistics),
        # whose parameters the boards update too
        self.trained = [(b.index, u) for b in design.boards for u in b.units
                        if u.kind in TRAINED_UNITS]
        self.s = Session(len(design.boards), {
            b: [r.name for r in layout.resources] for b, layout in enumerate(self.layouts)})

    # ---- packets and registers of one board
    def packet(self, board: int, beats: list[int], *, words: int | None = None,
               what: str = "") -> int:
        index = self.s.add(Op("EXCHANGE", board, tuple(beats)))
        self.s.packets[index] = (board, words, what)
        return index

    def locate(self, board: int, key: str, image: int, offset: int = 0) -> tuple[int, int]:
        """The (bank, address) a WRITE or READ of ``key`` names; for an item kept off chip a
        MEMORY packet first tells the board where it lies."""
        layout = self.layouts[board]
        bank, address = layout.address(key, image, offset)
        if bank != DRAM_BANK:
            return bank, address
        self.packet(board, [header("MEMORY", layout.dram[key].slot, 0, 1), address])
        return bank, 0

    def write(self, board: int, key: str, values, image: int = -1) -> None:
        """WRITEs of ``values`` to item ``key``: as many packets as their length field needs
        (a fully connected layer's weights may pass 2^24 words)."""
        words = [word(int(v)) for v in np.asarray(values).ravel()]
        most = (1 << LENGTH_BITS) - 1
        for offset in range(0, max(len(words), 1), most):
            bank, address = self.locate(board, key, image, offset)
            part = words[offset:offset + most]
            self.packet(board, [header("WRITE", bank, address, len(part)), *part])

    def read(self, board: int, key: str, count: int, image: int = -1, offset: int = 0) -> int:
        bank, address = self.locate(board, key, image, offset)
        return self.packet(board, [header("READ", bank, address, count)], words=count,
                           what=f"{key} (image {image})")

    def read_item(self, board: int, key: str, count: int, image: int) -> tuple[int, ...]:
        """READs of the first ``count`` words of item ``key`` of ``image``, piece by piece
        as the board stores it (`TaskWork.segments`)."""
        return tuple(self.read(board, family, n, image, offset)
                     for family, offset, n in self.rules.segments(board, key, count))

    def program(self, board: int, resource: int, words, address: int = 0) -> None:
        self.packet(board, [header("PROGRAM", resource, address, len(words)), *words])

    def reg(self, board: int, name: str, index: int = 0) -> int:
        return self.s.add(Op("CSR_READ", board, (self.maps[board].addr(name, index),)))

    def set(self, board: int, name: str, **fields) -> None:
        rmap = self.maps[board]
        self.s.add(Op("CSR_WRITE", board, (rmap.addr(name), rmap.encode(name, **fields))))

    def counters(self, board: int) -> tuple[dict[str, int], dict[str, int]]:
        names = [r.name for r in self.layouts[board].resources]
        return ({n: self.reg(board, "BUSY", k) for k, n in enumerate(names)},
                {n: self.reg(board, "STALL", k) for k, n in enumerate(names)})

    # ---- the session
    def configure(self) -> None:
        """Every board's design checked; weights and constant tables in, the setup program run
        once (the loss unit's table), then the training and forward-only programs."""
        want = design_hash(self.design)
        for b in self.design.boards:
            rmap = self.maps[b.index]
            index = self.s.add(Op.poll(b.index, rmap.addr("ID"), mask=(1 << 32) - 1,
                                       want=want, bad=(), timeout=0, interval=1))
            self.s.polls[index] = (b.index, "id")
            for key, values in constant_contents(self.design, self.layouts[b.index]).items():
                self.write(b.index, key, values)
        for board, s in self.slices:
            p = self.params[s.layer]
            self.write(board, f"w:{s.ident}", p["weight"][s.lo:s.hi])
            if s.has_bias:
                self.write(board, f"b:{s.ident}", p["bias"][s.lo:s.hi])
            if self.design.velocity:
                self.write(board, f"v:{s.ident}", self.slice_velocities(s))
        for board, u in self.trained:
            p = self.params[u.layer]
            self.write(board, affine_item("p", u.ident),
                       np.concatenate([np.ravel(p[role]) for role in unit_roles(u)]))
            if self.design.velocity:
                self.write(board, f"v:{u.ident}", self.unit_velocities(u))
            if u.kind == "bn_train":  # the running statistics, updated by the boards
                self.write(board, bn_running_item(u.ident),
                           np.concatenate(running_fixed(self.ctx, self.net.layer(u.layer), p)))
        for b in self.design.boards:  # frozen BatchNormalizations' per-channel constants
            for u in b.units:
                if u.kind == "bn":
                    layer = self.net.layer(u.layer)
                    constants = frozen_constants(self.ctx, layer, self.params[u.layer])
                    for what in BN_TABLE:
                        self.write(b.index, bn_table_item(u.ident, what),
                                   bn_table(u.layer, constants, what))
        setup = setup_program(self.design, self.net, self.layouts)
        for b in self.design.boards:
            for r, words in enumerate(setup[b.index]):
                self.program(b.index, r, words)
        self.run_step()
        train = compile_step(self.design, self.net, self.layouts, batch=self.batch, lr=self.lr)
        # the forward-only pass follows the training program in each instruction memory
        forward = compile_step(self.design, self.net, self.layouts, batch=self.batch,
                               lr=self.lr, forward_only=True)
        memories = program_words(self.design, self.net, self.layouts)
        for b in self.design.boards:
            for r, _ in enumerate(self.layouts[b.index].resources):
                self.program(b.index, r, train.words(b.index, r))
                self.program(b.index, r, forward.words(b.index, r),
                             memories[b.index][r].forward)

    def slice_velocities(self, s) -> np.ndarray:
        """Slice ``s``'s velocities as its ``v:`` item holds them: its weights' rows, then its
        biases (zeros for a parameter without a velocity yet)."""
        layer = self.net.layer(s.layer)
        parts = []
        for ref in golden_step.trainable_refs(layer):
            shape = self.params[s.layer][ref.role].shape
            v = self.velocities.get(ref.name, np.zeros(shape, dtype=np.int64))
            parts.append(np.asarray(v, dtype=np.int64)[s.lo:s.hi].ravel())
        return np.concatenate(parts)

    def unit_velocities(self, u) -> np.ndarray:
        """A trained unit's velocities, laid out as its parameters (zeros without one
        yet)."""
        layer = self.net.layer(u.layer)
        return np.concatenate([
            np.asarray(self.velocities.get(layer.weight(role).name,
                                           np.zeros(u.info["channels"])), dtype=np.int64).ravel()
            for role in unit_roles(u)])

    def images(self, images: np.ndarray) -> None:
        """``images`` (quantised) into the store's image slots 0, 1, ..."""
        source = self.design.homes[self.net.input_name]
        for i, image in enumerate(images):
            self.write(source, item("act", self.net.input_name), image, i)

    def step(self, pick: np.ndarray | None = None, *, number: int,
             counters: bool = True) -> None:
        """Images and labels in (the builder's images ``pick``, default the first batch), the
        step's ``number`` (it seeds the Dropout masks), every board started, done awaited, the
        figures read."""
        pick = np.arange(self.batch) if pick is None else np.asarray(pick)
        self.images(self.x[pick])
        loss_board = self.design.homes[self.rules.logits]
        for i, label in enumerate(self.y[pick]):
            self.write(loss_board, "label", [int(label)], i)
        for b in self.design.boards:
            self.set(b.index, "BATCH", size=self.batch)
            self.set(b.index, "DRAW_STEP", step=number)
        self.s.steps.append(self.run_step(counters=counters))

    def run_step(self, mode: str = "train", *,
                 counters: bool = True) -> tuple[int, int, list[BoardFigures]]:
        """Start every board and wait until each is done: (the marks around the run, each
        board's figures; without ``counters`` only its cycles)."""
        for b in self.design.boards:
            self.set(b.index, "CONTROL", start=1, mode=mode)
        began = self.s.add(Op("MARK", 0))
        for b in self.design.boards:
            state = self.maps[b.index].field("STATUS", "state")
            index = self.s.add(Op.poll(b.index, self.maps[b.index].addr("STATUS"),
                                       mask=state.mask, want=state.value("done") << state.lsb,
                                       bad=(state.value("error") << state.lsb,),
                                       timeout=self.max_cycles, interval=POLL_INTERVAL))
            self.s.polls[index] = (b.index, "step")
        ended = self.s.add(Op("MARK", 0))
        figures = []
        for b in self.design.boards:
            cycles = (self.reg(b.index, "CYCLE_COUNT_LO"), self.reg(b.index, "CYCLE_COUNT_HI"))
            resources = self.layouts[b.index].resources
            if not counters:
                figures.append(BoardFigures(b.index, cycles, {}, {}, {}, {}))
                continue
            figures.append(BoardFigures(
                b.index, cycles, *self.counters(b.index),
                {r.name: self.reg(b.index, "WINDOW", k) for k, r in enumerate(resources)},
                {r.name: r.key for r in resources}))
        return began, ended, figures

    def infer(self, key: str = "infer/logits") -> tuple[int, int, list[BoardFigures]]:
        """A forward-only pass over the images in the store (the weights in the store); the
        logits read back as traced tensor ``key``; the pass's figures."""
        figures = self.run_step(mode="forward")
        self.s.traced[key] = self.read_logits()
        return figures

    def passes(self, images: np.ndarray) -> None:
        """Forward-only passes over ``images`` (quantised, a whole number of batches), one
        batch at a time; the logits of pass ``k`` are traced tensor ``infer/k``."""
        count = len(images) // self.batch
        for k in range(count):
            self.s.add(Op("PROGRESS", 0, (k, count, 0)))
            self.images(images[k * self.batch:(k + 1) * self.batch])
            self.s.passes.append(self.infer(f"infer/{k}"))

    def read_logits(self) -> Traced:
        """The logits of the batch's images, read from the store."""
        tensor = self.rules.logits
        home = self.design.homes[tensor]
        n = self.rules.size(tensor)
        return Traced(tuple(Part(self.read_item(home, item("act", tensor), n, i), (n,))
                            for i in range(self.batch)), stacked=True)

    def read_weights(self) -> dict[str, Traced]:
        """Every slice's weights and biases, read from the store: ``LAYER/new_weight`` and
        ``LAYER/new_bias`` in compute layout ((out, in) for an FC layer)."""
        out = {}
        for layer in self.net.compute_layers:
            w = self.params[layer.name]["weight"]
            per = int(np.prod(w.shape[1:]))
            new_w, new_b = [], []
            for board, s in self.design.slices_of(layer.name):
                rows = s.hi - s.lo
                new_w.append(Part(self.read(board, f"w:{s.ident}", rows * per),
                                  (rows, *w.shape[1:])))
                if s.has_bias:
                    new_b.append(Part(self.read(board, f"b:{s.ident}", rows), (rows,)))
            out[f"{layer.name}/new_weight"] = Traced(tuple(new_w), False)
            if layer.weight("bias") is not None:
                out[f"{layer.name}/new_bias"] = Traced(tuple(new_b), False)
        for board, u in self.trained:
            n = u.info["channels"]
            for k, role in enumerate(unit_roles(u)):
                out[f"{u.layer}/new_{role}"] = Traced(
                    (Part(self.read(board, affine_item("p", u.ident), n, offset=k * n), (n,)),),
                    False)
        return out

    def faults(self) -> None:
        """Bad host input, each answered with its error code and shown in the CSR, the board
        left ready: a step before anything is loaded, an unknown opcode, a payload shorter
        than its header says, a read of a bank that does not exist."""
        self.set(0, "CONTROL", start=1)
        self.s.faults.append({"case": "step before loading", "status": None,
                              "csr": self.reg(0, "STATUS")})
        for case, beats in (("unknown opcode", [0x7F << 56 | 1, 0]),
                            ("short payload", [header("WRITE", 0, 0, 4), 1, 2]),
                            ("unknown bank", [header("READ", len(self.layouts[0].banks), 0,
                                                     1)])):
            index = self.s.add(Op("EXCHANGE", 0, tuple(beats)))
            self.s.add(Op("IDLE", 0, (FAULT_TO_CSR_CYCLES,)))
            self.s.faults.append({"case": case, "status": index, "csr": self.reg(0, "STATUS")})

    def deadlock(self) -> None:
        """Resource 0 waits for a task of its own that never comes."""
        self.program(0, 0, (op_wait(0, 1), op_end()))

    def record(self, step: int) -> None:
        """Every traced tensor of the step, read back from the boards' stores."""
        net, d, rules = self.net, self.design, self.rules
        for layer in net.layers:
            if spec(layer.op).in_loss:
                continue
            tensor = rules.canon(layer.output)
            home = d.homes[tensor]
            n = rules.size(tensor)
            self.s.traced[f"{step}/{layer.name}/output"] = Traced(tuple(
                Part(self.read_item(home, item("act", tensor), n, i), tuple(layer.out_shape))
                for i in range(self.batch)), stacked=True)
        for layer in net.compute_layers:
            slices = d.slices_of(layer.name)
            if "bp" in slices[0][1].engines:
                src = rules.canon(layer.inputs[0])
                board = d.homes[src] if len(slices) > 1 else slices[0][0]
                key, offset = rules.locate(board, contribution_item(src, layer.name))
                n = rules.size(src)
                shape = tuple(net.tensors[layer.inputs[0]].shape)
                self.s.traced[f"{step}/{layer.name}/input_error"] = Traced(tuple(
                    Part(self.read(board, key, n, i, offset), shape)
                    for i in range(self.batch)), stacked=True)
            w = self.params[layer.name]["weight"]
            per = int(np.prod(w.shape[1:]))
            acc_w, acc_b = [], []
            for board, s in slices:
                rows = s.hi - s.lo
                acc = self.read(board, f"acc:{s.ident}", s.engines["wg"].out_beats)
                acc_w.append(Part(acc, (rows, *w.shape[1:]), 0, rows * per))
                acc_b.append(Part(acc, (-1,), rows * per))
            traced = {"acc_weight": acc_w}
            if layer.weight("bias") is not None:
                traced |= {"acc_bias": acc_b}
            if d.velocity:  # the velocities the update left, laid out as the sums
                vel = [self.read(board, f"v:{s.ident}", s.engines["wg"].out_beats)
                       for board, s in slices]
                traced |= {"new_velocity_weight": [Part(v, p.shape, p.lo, p.hi)
                                                   for v, p in zip(vel, acc_w, strict=True)]}
                if layer.weight("bias") is not None:
                    traced |= {"new_velocity_bias": [Part(v, p.shape, p.lo, p.hi)
                                                     for v, p in zip(vel, acc_b, strict=True)]}
            for name, parts in traced.items():
                self.s.traced[f"{step}/{layer.name}/{name}"] = Traced(tuple(parts), False)
        for board, u in self.trained:  # a trained unit: its sums and velocities
            n = u.info["channels"]
            for k, role in enumerate(unit_roles(u)):
                keys = {f"acc_{role}": affine_item("acc", u.ident)}
                if d.velocity:
                    keys[f"new_velocity_{role}"] = f"v:{u.ident}"
                if u.kind == "bn_train":  # and the running statistics it updates
                    keys[f"new_{('mean', 'var')[k]}"] = bn_running_item(u.ident)
                for name, key in keys.items():
                    self.s.traced[f"{step}/{u.layer}/{name}"] = Traced(
                        (Part(self.read(board, key, n, offset=k * n), (n,)),), False)
        for key, traced_weights in self.read_weights().items():
            self.s.traced[f"{step}/{key}"] = traced_weights

    def link_counters(self) -> None:
        """Read each link direction's counters: the sending side's and the receiving side's."""
        for b in self.design.boards[:-1]:
            for src, side, dst, other in ((b.index, "EAST", b.index + 1, "WEST"),
                                          (b.index + 1, "WEST", b.index, "EAST")):
                reads = {c: self.reg(src, f"LINK_{side}_{c.upper()}")
                         for c in LINK_COUNTERS if c.startswith("tx_")}
                reads |= {c: self.reg(dst, f"LINK_{other}_{c.upper()}")
                          for c in LINK_COUNTERS if c.startswith("rx_")}
                self.s.links[f"{src}>{dst}"] = reads

    def failure_section(self) -> None:
        """What explains a failed step, read from every board once the session fails."""
        self.s.add(Op("FAIL", 0))
        for b in self.design.boards:
            self.s.diagnosis[b.index] = {
                "status": self.reg(b.index, "STATUS"),
                "stalled": self.reg(b.index, "STALLED_UNIT"),
                "links": self.reg(b.index, "LINK_FLAGS"),
                "before": self.counters(b.index), "after": self.counters(b.index)}


def build_session(build: Build, *, x: np.ndarray, y: np.ndarray,
                  weights: Mapping[str, np.ndarray], steps: int, lr: float, max_cycles: int,
                  checks: Mapping[str, bool] | None = None,
                  link_faults: LinkFaults = NO_LINK_FAULTS,
                  frame_beats: int | None = None) -> Session:
    """The host session of ``steps`` training steps on ``x, y`` from ``weights``; ``checks``
    as `fpdeep.cosim.run.simulate` takes them (``faults``, ``deadlock``, ``infer``);
    ``link_faults``: what the simulated links inject; ``frame_beats``: the links' data frame
    length the host sets (CSR LINK_FRAME; None: the built one)."""
    checks = dict(checks or {})
    unknown = set(checks) - {"faults", "deadlock", "infer"}
    if unknown:
        raise FpdeepError(f"unknown host checks {sorted(unknown)}; valid: deadlock, faults, "
                          "infer")
    b = _Builder(build, x=x, y=y, weights=weights, lr=lr, max_cycles=max_cycles)
    b.s.link_faults = link_faults
    if checks.get("faults"):
        b.faults()
    if frame_beats is not None:
        for board in build.design.boards:
            b.set(board.index, "LINK_FRAME", beats=frame_beats)
    b.configure()
    if checks.get("deadlock"):
        b.deadlock()
    for step in range(steps):
        b.s.add(Op("PROGRESS", 0, (step, steps, 0)))
        b.step(number=step)
        b.s.add(Op("PROGRESS", 0, (step, steps, 0, READING_BACK)))
        b.record(step)
    if checks.get("infer"):
        b.s.infer = b.infer()
    b.link_counters()
    b.s.add(Op("PROGRESS", 0, (steps - 1, steps, 1)))
    b.failure_section()
    return b.s


def build_inference_session(build: Build, *, x: np.ndarray, weights: Mapping[str, np.ndarray],
                            batch: int, max_cycles: int) -> Session:
    """Forward-only passes over ``x`` (a whole number of ``batch``-image passes), ``batch``
    images at a time; the logits of pass ``k`` are traced tensor ``infer/k``."""
    passes, rest = divmod(len(x), batch)
    if rest:
        raise FpdeepError(f"{len(x)} images are not a whole number of passes of {batch}")
    b = _Builder(build, x=x, y=np.zeros(len(x), dtype=np.int64), weights=weights, lr=1.0,
                 max_cycles=max_cycles, batch=batch)
    b.configure()
    b.passes(b.x)
    b.s.add(Op("PROGRESS", 0, (passes - 1, passes, 1)))
    b.failure_section()
    return b.s


def build_training_session(build: Build, *, x: np.ndarray, y: np.ndarray,
                           order: Sequence[np.ndarray], weights: Mapping[str, np.ndarray],
                           lr: float, batch: int, max_cycles: int, first: int = 0,
                           total: int | None = None,
                           test_x: np.ndarray | None = None,
                           velocities: Mapping[str, np.ndarray] | None = None) -> Session:
    """Training steps from ``weights``, step ``k`` on images ``x[order[k]]`` (``batch`` of
    them), the weights staying on the boards from step to step; after each step the host
    reads back every weight and the logits (``Session.train[k]``: ``LAYER/new_weight``,
    ``LAYER/new_bias``, ``logits``). With ``test_x`` (a whole number of batches),
    forward-only passes over it follow the last step (traced ``infer/k``). ``first`` and
    ``total``: the steps' numbers in the whole run, for the host's progress file;
    ``velocities``: the SGD momentum buffers to start from (golden ``StepResult.state``)."""
    total = len(order) if total is None else total
    b = _Builder(build, x=x, y=y, weights=weights, lr=lr, max_cycles=max_cycles, batch=batch,
                 velocities=velocities)
    b.configure()
    for k, pick in enumerate(order):
        b.s.add(Op("PROGRESS", 0, (first + k, total, 0)))
        b.step(pick, number=first + k, counters=False)
        b.s.add(Op("PROGRESS", 0, (first + k, total, 0, READING_BACK)))
        reads = {**b.read_weights(), "logits": b.read_logits()}
        b.s.train.append(StepReads(reads, len(b.s.ops) - 1))
    if test_x is not None:
        b.passes(b.ctx.input(np.asarray(test_x, dtype=np.float64)))
    b.s.add(Op("PROGRESS", 0, (first + len(order) - 1, total, 1)))
    b.failure_section()
    return b.s


# ---- decoding -----------------------------------------------------------------------------------
class HostError(FpdeepError):
    """A board answered a packet with an error, or a step ended in error."""


def _answer(out: Outputs, index: int) -> tuple[int, ...]:
    if index not in out.answers:
        raise HostError(f"the host recorded no answer to operation {index}")
    return out.answers[index]


def _value(out: Outputs, index: int) -> int:
    return _answer(out, index)[0]


def _figures(out: Outputs, marks: tuple[int, int, list[BoardFigures]]) -> dict[str, Any]:
    began, ended, boards = marks
    figures = []
    for f in boards:
        cycles = _value(out, f.cycles[0]) | _value(out, f.cycles[1]) << 32
        figures.append({"board": f.board, "cycles": cycles,
                        "busy": {n: _value(out, i) for n, i in f.busy.items()},
                        "stall": {n: _value(out, i) for n, i in f.stall.items()},
                        "window": {n: _value(out, i) for n, i in f.window.items()},
                        "keys": f.keys})
    wall = (_answer(out, ended)[1] - _answer(out, began)[1]) * 1e-9
    return {"cycles": max(f["cycles"] for f in figures), "boards": figures, "wall_s": wall}


def _first_error(session: Session, out: Outputs, resources: Mapping[int, list[str]],
                 max_cycles: int) -> tuple[int, str] | None:
    """(operation index, message) of the first packet refused or step failed, if any."""
    errors = []
    for index, (board, words, what) in session.packets.items():
        if index not in out.answers:
            continue
        beats = out.answers[index]
        status = Status.decode(beats[0])
        if not status.ok:
            errors.append((index, f"board {board}: {status.message} (opcode "
                                  f"{status.opcode:#x})"))
        elif words is not None and len(beats) - 1 != words:
            errors.append((index, f"board {board}: read of {words} words of {what} answered "
                                  f"{len(beats) - 1}"))
        if errors:
            break
    if out.failed is not None:
        board, kind = session.polls[out.failed]
        value, outcome, _ = _answer(out, out.failed)
        if kind == "id":
            text = (f"board {board} reports design {value:#010x}, this build is "
                    f"{session.ops[out.failed].args[2]:#010x}: the bitstream is not this "
                    "build's")
        elif POLL_OUTCOMES[outcome] == "bad":
            text = _failure(session, out, board, resources[board])
        else:
            text = _overrun(session, out, board, resources[board], max_cycles)
        errors.append((out.failed, text))
    return min(errors) if errors else None


def _error_code(rmap: RegisterMap, value: int) -> int:
    status = rmap.decode("STATUS", value)
    error = rmap.field("STATUS", "state").value("error")
    return status["error_code"] if status["state"] == error else 0


def _failure(session: Session, out: Outputs, board: int, names: list[str]) -> str:
    seen = session.diagnosis[board]
    rmap = register_map(counters=len(names))
    code = _error_code(rmap, _value(out, seen["status"]))
    text = f"board {board}: {ERRORS.get(code, f'error {code}')}"
    if code == 5:
        unit = _value(out, seen["stalled"])
        text += f"; stalled: {names[unit] if unit < len(names) else f'resource {unit}'}"
    if code == ERROR_CODES["link"]:
        flags = rmap.decode("LINK_FLAGS", _value(out, seen["links"]))
        text += "; " + ", ".join(
            f"the link to the {side} (board {board} -> board "
            f"{board + (1 if side == 'east' else -1)}) is {what}"
            for side in SIDES for flag, what in (("stuck", "stuck"),
                                                  ("overflow", "overrun by its peer"))
            if flags[f"{side}_{flag}"])
    return text


def _overrun(session: Session, out: Outputs, board: int, names: list[str],
             max_cycles: int) -> str:
    """What the board is doing when a step overruns the cycle limit: the resources whose busy
    or stall counters still move."""
    seen = session.diagnosis[board]
    (busy0, stall0), (busy1, stall1) = seen["before"], seen["after"]
    running = [n for n in names if _value(out, busy1[n]) != _value(out, busy0[n])]
    waiting = [n for n in names if _value(out, stall1[n]) != _value(out, stall0[n])]
    return (f"cycle limit of {max_cycles} cycles per step exceeded on board {board}; running: "
            f"{', '.join(running) or 'none'}; waiting: {', '.join(waiting) or 'none'}")


def decode(session: Session, out: Outputs, *, max_cycles: int
           ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(the run's figures as result.json's host part, every traced tensor) from what a host
    recorded; the figures' ``error`` names the first refused packet or failed step."""
    resources = session.resources
    result: dict[str, Any] = {"steps": [], "error": None, "cycles_per_s": out.cycles_per_s,
                              "cycles_total": out.cycles}
    record: dict[str, np.ndarray] = {}
    if session.faults:
        rmap = register_map(counters=len(resources[0]))
        result["faults"] = []
        for f in session.faults:
            seen = {"case": f["case"], "status": None,
                    "csr": _error_code(rmap, _value(out, f["csr"]))}
            if f["status"] is not None:
                beats = _answer(out, f["status"])
                seen |= {"status": Status.decode(beats[0]).code, "beats": len(beats)}
            result["faults"].append(seen)
    failed = _first_error(session, out, resources, max_cycles)
    if failed is not None:
        result["error"] = failed[1]
        return result, record
    result["links"] = {name: {c: _value(out, i) for c, i in reads.items()}
                       for name, reads in session.links.items()}
    result["link_replays"] = sum(v["tx_replays"] for v in result["links"].values())
    result["link_crc_errors"] = sum(v["rx_crc_errors"] for v in result["links"].values())
    result["steps"] = [_figures(out, marks) for marks in session.steps]
    result["passes"] = [_figures(out, marks) for marks in session.passes]
    if session.infer is not None:
        result["infer"] = _figures(out, session.infer)
    record.update(tensors(out.answers, session.traced))
    return result, record


def tensors(answers: Mapping[int, tuple[int, ...]],
            traced: Mapping[str, Traced]) -> dict[str, np.ndarray]:
    """The tensors ``traced`` from a host's answers to their reads (signed words)."""
    out = {}
    for key, t in traced.items():
        pieces = []
        for p in t.parts:
            ops = p.op if isinstance(p.op, tuple) else (p.op,)
            if missing := [op for op in ops if op not in answers]:
                raise HostError(f"the host recorded no answer to operation {missing[0]}")
            beats = [v for op in ops for v in answers[op][1:]]
            words = (np.array(beats, dtype=np.uint64).view(np.int64) if BEAT_BITS == 64
                     else np.array([signed_word(v) for v in beats], dtype=np.int64))
            pieces.append(words[p.lo:p.hi].reshape(p.shape))
        out[key] = np.stack(pieces) if t.stacked else np.concatenate(pieces)
    return out
