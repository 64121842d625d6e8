"""The instruction streams of one training step: every resource of every board gets its tasks
in the order the planner's timeline starts them (`fpdeep.schedule.tasks.timeline`), each
preceded by a WAIT for every other resource of its board whose tasks it needs, then the
configuration, the movers' commands and a GO per pass (`fpdeep.codegen.layout.TaskWork`).

A dependency on another board is always a link hop that ends on this board, so it is a WAIT
on this board's receiving side of that link. A static order per resource cannot deadlock: it
is the order of one feasible execution, and every wait points back in that execution's time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fpdeep.codegen.board import DRAM_BURST_BEATS
from fpdeep.codegen.layout import BoardLayout, Resource, TaskWork, Work, board_layouts
from fpdeep.design.lower import Design
from fpdeep.errors import FpdeepError
from fpdeep.golden import sgd
from fpdeep.golden import step as golden_step
from fpdeep.hwlib import SGD, SGD_MOMENTUM
from fpdeep.hwlib.protocol import (
    DRAM_BANK,
    DRAM_WORD_LENGTH_BITS,
    WORD_LENGTH_BITS,
    op_cfg,
    op_end,
    op_go,
    op_in,
    op_mem,
    op_out,
    op_wait,
)
from fpdeep.ir import Network
from fpdeep.numerics import scale_constant
from fpdeep.schedule.tasks import (
    PipelineFigures,
    Task,
    link_hops,
    pipeline_figures,
    replay,
    schedule,
)


@dataclass(frozen=True)
class StepProgram:
    """Per board, per resource: its instruction words; and the schedule they come from."""

    boards: tuple[tuple[tuple[int, ...], ...], ...]
    tasks: tuple[Task, ...]

    def words(self, board: int, resource: int) -> tuple[int, ...]:
        return self.boards[board][resource]


def _places(task: Task, layouts: Sequence[BoardLayout]) -> list[tuple[int, int]]:
    """(board, resource index) of every sequencer that runs part of ``task`` (none for an
    engine's run: the engine starts it)."""
    if task.kind == "run":
        return []
    if task.kind == "link":
        (a, b), = link_hops(task)
        return [(a, layouts[a].resource(task.resource)), (b, layouts[b].resource(task.resource))]
    return [(task.board, layouts[task.board].resource(task.resource))]


def compile_step(d: Design, network: Network, layouts: Sequence[BoardLayout], *, batch: int,
                 lr: float, forward_only: bool = False) -> StepProgram:
    """The instruction streams of a training step of ``batch`` images at learning rate
    ``lr``, or with ``forward_only`` of an inference pass (loaded in the second half of each
    instruction memory, run with the CSR's mode 1)."""
    if batch > min(layout.batch for layout in layouts):
        raise FpdeepError(f"batch {batch}: the boards' stores were sized for "
                          f"{layouts[0].batch} image(s); rebuild with --batch {batch}")
    tasks = schedule(d, network, batch=batch, forward_only=forward_only).tasks
    span = replay(tasks, links=d.links, setup=instruction_cycles(d, network, layouts),
                  memory=memory_cycles(d, network, layouts))
    order: dict[tuple[int, int], list[int]] = {}
    for k in sorted(range(len(tasks)), key=lambda k: (span[k][0], k)):
        for place in _places(tasks[k], layouts):
            order.setdefault(place, []).append(k)
    position = {(k, place[0]): (place[1], n + 1) for place, ks in order.items()
                for n, k in enumerate(ks)}
    rules = TaskWork(d, network)
    consts = _SgdConstants(d, network, batch, lr)
    programs = [[[] for _ in layout.resources] for layout in layouts]
    for (board, res), ks in sorted(order.items()):
        layout = layouts[board]
        words = programs[board][res]
        for k in ks:
            waits: dict[int, int] = {}
            # the receiving side of a link waits for nothing: the words arrive when sent
            receiving = tasks[k].kind == "link" and tasks[k].board != board
            for dep in () if receiving else tasks[k].deps:
                found = position.get((dep, board))
                if found is None:
                    raise FpdeepError(f"task {k} ({tasks[k].what} {tasks[k].layer}) on board "
                                      f"{board} waits for task {dep} of another board that no "
                                      f"link brings here")
                other, count = found
                if other != res:
                    waits[other] = max(waits.get(other, 0), count)
            words += [op_wait(r, n) for r, n in sorted(waits.items())]
            for work in rules.work(tasks[k], board, layout):
                words += _encode(work, layout, layout.resources[res], consts, board)
    for board_programs in programs:
        for words in board_programs:
            words.append(op_end())
    return StepProgram(tuple(tuple(tuple(w) for w in p) for p in programs), tasks)


def setup_program(d: Design, network: Network,
                  layouts: Sequence[BoardLayout]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """What every sequencer runs once when the host configures the boards: the loss unit
    takes its exp table; everything else ends at once."""
    rules = TaskWork(d, network)
    consts = _SgdConstants(d, network, 1, 1.0)
    out = []
    for layout in layouts:
        board = []
        for res in layout.resources:
            words = []
            if res.unit is not None and res.unit.kind == "loss":
                words += _encode(rules.loss_table(res), layout, res, consts, layout.index)
            board.append((*words, op_end()))
        out.append(tuple(board))
    return tuple(out)


def _encode(work: Work, layout: BoardLayout, res: Resource, consts: _SgdConstants,
            board: int) -> list[int]:
    words = []
    fields = [name for name, _ in res.cfg]
    for name, value in work.cfg:
        if name == "sgd":  # the k-th pass of the board's SGD task: its four constants
            for port, v in consts.values(board, value).items():
                words.append(op_cfg(fields.index(port), v))
        else:
            words.append(op_cfg(fields.index(name), value))
    for k, a in enumerate(work.accesses):
        bank, address = layout.address(a.key, a.image, a.offset)
        bits = DRAM_WORD_LENGTH_BITS if bank == DRAM_BANK else WORD_LENGTH_BITS
        if a.words >= 1 << bits:
            raise FpdeepError(f"board {board}: {res.name} moves {a.words:,} words of {a.key} "
                              f"at once, more than a mover command's {bits}-bit "
                              f"length holds ({(1 << bits) - 1:,}); use more "
                              "boards, so that each holds a smaller slice")
        if bank == DRAM_BANK:  # the MEM word before says where
            words.append(op_mem(layout.dram[a.key].slot, address))
            address = 0
            if a.chain and work.accesses[k + 1].key not in layout.dram:
                raise FpdeepError(f"board {board}: {res.name} streams {a.key} (off chip) and "
                                  f"{work.accesses[k + 1].key} (on chip) as one; keep both "
                                  "on chip or both off chip")
        op = op_out if a.out else op_in
        extra = {} if a.out else {"hold": a.hold, "chain": a.chain}
        words.append(op(a.mover, bank, address, a.words, parts=a.parts, **extra))
    words.append(op_go(start=work.start, flush=work.flush, wait_done=work.wait_done,
                       ends_task=work.ends_task))
    return words


def sgd_config_words(d: Design) -> int:
    """Configuration words of one pass of a board's SGD unit: one per runtime constant."""
    return len((SGD_MOMENTUM if d.velocity else SGD).config)


class _SgdConstants:
    """The SGD unit's runtime constants for each pass of a board's update (fpdeep.golden.sgd):
    1/B, the learning rate and, where the boards keep velocities, the momentum and the weight
    decay as mantissa and shift, aligned to each tensor's formats. A momentum or decay of 0
    has mantissa 0, which turns its term off."""

    def __init__(self, d: Design, network: Network, batch: int, lr: float) -> None:
        self.ctx = golden_step.StepContext.make(network, d.numerics, d.loss)
        self.mb, self.rb = sgd.batch_constant(batch)
        self.mlr, self.rlr = sgd.lr_constant(lr)
        self.velocity = d.velocity
        self.mmu, self.rmu = scale_constant(d.momentum) if d.momentum > 0 else (0, 0)
        self.mwd, self.rwd = scale_constant(d.weight_decay) if d.weight_decay > 0 else (0, 0)
        self.rules = TaskWork(d, network)
        self.layers = {layer.name: layer for layer in network.layers}

    def values(self, board: int, k: int) -> dict[str, int]:
        s, role = self.rules.sgd_roles(board)[k]
        layer = self.layers[s.layer]
        g_fmt, w_fmt = self.ctx.fmt("grad", s.layer), self.ctx.fmt("weight", s.layer)
        frac = golden_step.accumulator_frac(self.ctx, layer, role)
        mean = {"cfg_mb": self.mb, "cfg_sb": SGD.encode("cfg_sb", frac + self.rb - g_fmt.frac),
                "cfg_mlr": self.mlr}
        if not self.velocity:
            return mean | {"cfg_slr": SGD.encode("cfg_slr",
                                                 g_fmt.frac + self.rlr - w_fmt.frac)}
        fv = self.ctx.fmt("vel", s.layer).frac
        enc = SGD_MOMENTUM.encode
        return mean | {"cfg_sgv": enc("cfg_sgv", g_fmt.frac - fv),
                       "cfg_mwd": self.mwd, "cfg_swd": enc("cfg_swd", w_fmt.frac + self.rwd - fv),
                       "cfg_mmu": self.mmu, "cfg_smu": enc("cfg_smu", self.rmu),
                       "cfg_slr": enc("cfg_slr", fv + self.rlr - w_fmt.frac)}


def instruction_cycles(d: Design, network: Network,
                       layouts: Sequence[BoardLayout] | None = None):
    """The cycles each task's sequencer spends fetching instructions (one per word: its
    waits, configuration, mover commands and GOs), for `fpdeep.schedule.tasks.durations`;
    a link counts its sending side (the receiving side is armed ahead)."""
    boards = list(layouts) if layouts is not None else board_layouts(d, network, batch=1)
    rules = TaskWork(d, network)

    def setup(tasks: Sequence[Task]) -> list[int]:
        out = []
        for t in tasks:
            own = boards[t.board]
            waits = {tasks[dep].resource for dep in t.deps} - {t.resource}
            # a wait on another board's task is a wait on this board's side of its link
            words = len(waits)
            for work in rules.work(t, t.board, own):
                # an SGD pass sets each of the unit's runtime constants
                words += sum(sgd_config_words(d) if name == "sgd" else 1
                             for name, _ in work.cfg)
                # an access off chip has a MEM word before it
                words += sum(2 if a.key in own.dram else 1 for a in work.accesses) + 1
            out.append(words)
        return out

    return setup


#: Cycles an off-chip memory reader adds before its first word, besides the memory's own
#: latency: the command to the port's AR (3), its skid buffer (1), the R skid buffer and the
#: reader's unpacking (4); a writer after its last word, besides the memory's latency and
#: its last burst's beats (held until the burst is whole): the AW and W skid buffers and
#: the B response back.
DRAM_READ_CYCLES, DRAM_WRITE_CYCLES = 8, 6


def bursts(address: int, nbytes: int, beat_bytes: int) -> list[int]:
    """Beats of each burst an off-chip memory mover asks for, for ``nbytes`` from byte
    ``address`` on: at most `DRAM_BURST_BEATS` beats, never across a 4 KB page."""
    beat = address // beat_bytes
    left = (address % beat_bytes + nbytes + beat_bytes - 1) // beat_bytes
    out = []
    while left:
        to_page = (4096 - beat * beat_bytes % 4096) // beat_bytes
        out.append(min(left, DRAM_BURST_BEATS, to_page))
        beat, left = beat + out[-1], left - out[-1]
    return out


def memory_cycles(d: Design, network: Network,
                  layouts: Sequence[BoardLayout] | None = None):
    """The cycles off-chip memory adds to each task, for `fpdeep.schedule.tasks.durations`:
    per pass, a reader's first word waits for the memory's latency, and the pass ends once
    a writer's last burst is written (the memory's latency again); both sides of a link."""
    boards = list(layouts) if layouts is not None else board_layouts(d, network, batch=1)
    rules = TaskWork(d, network)

    def extra(tasks: Sequence[Task]) -> list[int]:
        out = []
        for t in tasks:
            cycles = 0
            sides = link_hops(t)[0] if t.kind == "link" else (t.board,)
            for board in sides:
                own = boards[board]
                if not own.dram:
                    continue
                bd = d.boards[board]
                for work in rules.work(t, board, own):
                    # every image's words lie alike within beats and pages: image 0's
                    first, last = [], []
                    for a in work.accesses:
                        if a.key in own.dram:
                            beats = bursts(own.address(a.key, 0, a.offset)[1],
                                           a.words << own.dram[a.key].slot, bd.dram_bits // 8)
                            (last if a.out else first).append(beats[-1 if a.out else 0])
                    if first:
                        # the readers' first bursts come one after another at the memory's
                        # rate; the pass starts once each reader has its first words
                        queued = (sum(first) - max(first)) * bd.dram_den / bd.dram_num
                        cycles += bd.dram_latency + DRAM_READ_CYCLES + math.ceil(queued)
                    if last:
                        cycles += bd.dram_latency + DRAM_WRITE_CYCLES + max(last)
            out.append(cycles)
        return out

    return extra


def design_figures(d: Design, network: Network) -> PipelineFigures:
    """The planner's figures for the generated design: the task graph's timeline with every
    task's instruction cycles and off-chip memory latencies."""
    layouts = board_layouts(d, network, batch=1)
    return pipeline_figures(d, network, setup=instruction_cycles(d, network, layouts),
                            memory=memory_cycles(d, network, layouts))
