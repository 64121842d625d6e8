"""The task graph of one training step on the generated boards, and its cycle model.

First-generation boards work at image granularity: the weights are loaded into the FP/BP
engines once per mini-batch; then for each image FP runs layer by layer (the slices of a layer
on their boards), the loss error is formed where the logits are, BP and WG run back through
the layers (a slice's BP and WG engines side by side), and at the batch boundary every WG
engine flushes its sums to the SGD update. ``schedule`` lists these tasks with what each waits
for and the resource it occupies (an engine, a unit, one direction of a link). The board
controller starts a task as soon as its inputs are ready and its resource is free, so the
images of a batch overlap across engines and boards; ``timeline`` replays exactly that.

An engine's image is three tasks, as its double buffers let them overlap: ``engine`` streams
the operands into the free input half and pulses start (the engine's sequencer), ``run`` is the
loop nest (the engine itself; no program), ``drain`` moves the result out of its result half
(the engine's second sequencer, ``<engine>:out``, which also flushes the WG sums). What the
hardware orders by itself (a half free again, a run over) is a task's ``after``: it delays the
task's work but not its instructions, and the programs carry no WAIT for it.

Each task is costed from what the generated RTL does: operands streamed into the engine banks
and results out of them at one beat per cycle around ``fpdeep.planning.perf.engine_cycles``,
element-wise units at one element per cycle, link hops store and forward at the generated
link's word rate (the least of its ports' words per beat, its line rate and the one word per
cycle a store mover supplies) plus its latency and the last beat's unpacking. The
protocol overheads (``LOAD_OVERHEAD`` etc., 1-2 cycles) are what the cluster simulation
measures.

``pipeline_figures`` is the planner's model of the generated design, (B - 1) II + the step of
one image, with II the busiest resource's cycles per image (DESIGN §5).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fpdeep.design.lower import Design, SliceDesign
from fpdeep.design.mapping import VIEW_OPS
from fpdeep.design.units import BN_TABLE, LinkModel, UnitDesign
from fpdeep.errors import FpdeepError, require_positive_int
from fpdeep.hwlib import LOSS
from fpdeep.ir import Network
from fpdeep.ops import needs_error, spec
from fpdeep.planning import perf
from fpdeep.serial import Serial

# Cycles of one engine task beyond its beats and loop nest, as the board's sequencer runs it
# (hw/board/fpdeep_sequencer.sv, measured in the cluster simulation): the movers need a cycle
# to fetch the first word and the sequencer one to see the last one taken; the start pulse is
# a cycle; the writer needs a cycle to store the last result; a flush pulse starts a drain
# after the engine's pipeline has emptied. The instruction words before each run are counted
# apart (`Setup`).
LOAD_OVERHEAD = 2
START_OVERHEAD = 1
DRAIN_OVERHEAD = 2
FLUSH_OVERHEAD = 3
# Layers without an RTL unit that the controller still plays (a Sum of more than two inputs)
# are timed as streaming one element per cycle after a short pipeline.
UNIT_LATENCY = 4
# RTL streaming units, input and output streams running together: ReLU, Add, fan-in, fan-out
# and SGD units have one output register, plus the reader's first fetch, the writer's last
# store and the sequencer's look at the finished movers (measured in the cluster simulation).
STREAM_OVERHEAD = 3
SGD_OVERHEAD = 3
# The loss unit's cycles beyond its per-class work (measured in the cluster simulation).
LOSS_OVERHEAD = 2
# A link hop as the generated boards run it (hw/board/, hw/link/, measured in the cluster
# simulation): the sender's first word enters the packing gearbox a cycle after its
# instructions, its sequencer is free for the next item three cycles after its last word went
# in, and the receiver's task ends two cycles after its gearbox passed on the last word.
LINK_FETCH = 1
LINK_SEND_DONE = 3
LINK_STORE = 2
# The reliable link stores and forwards whole frames (fpdeep_link_end): a frame's header
# leaves the framer LINK_FRAME_START cycles after the word that closes it entered the packing
# gearbox, and the receiving gearbox passes on a frame's first word LINK_FRAME_RELEASE cycles
# after its trailer arrived (the deframer keeps a frame once its CRC-32 checks).
LINK_FRAME_START = 3
LINK_FRAME_RELEASE = 1
# A link's receiving side takes the transfers in order: its sequencer starts the next one
# (instructions and the mover's first word) LINK_RX_RESTART cycles after the one before has
# been stored, its words already waiting in the deframer.
LINK_RX_RESTART = 3
# A trained BatchNormalization's unit (fpdeep_bn_train) at the end of a pass over the batch,
# per channel: the mean; the variance, its rsqrt and the running statistics' update; the
# gradient sums' means and the sums out. A pass over the batch streams image after image,
# each its own mover command: the next image's first word comes BN_IMAGE_RESTART cycles after
# the last one's.
BN_END_MEAN = 2
BN_END_VAR = 12
BN_END_GRAD = 5
BN_IMAGE_RESTART = STREAM_OVERHEAD
# Bytes of one element on a link (16-bit data) and of a raw partial sum (48-bit accumulator,
# sent as three 16-bit words).
ELEM_BYTES = 2
RAW_BYTES = 6


@dataclass(frozen=True)
class Task(Serial):
    """One unit of work on one board. ``kind`` is one of KINDS."""

    kind: str
    board: int
    what: str  # fp, bp, wg, load (weights), flush, loss (softmax CE) or mse, sum (partial
    # errors), sgd, act or err (links), off (a Dropout in an inference pass)
    layer: str = ""
    engine: str = ""  # engine ident for engine tasks
    image: int = -1
    loads: Mapping[str, int] = field(default_factory=dict)  # beats per operand stream
    run: int = 0  # loop-nest cycles incl. latency, 0: no start pulse
    drain: int = 0  # result beats
    elements: int = 0  # units: elements streamed
    rtl: str = ""  # units: the RTL unit that does it (relu, pool, sgd), "" for the controller
    tensors: int = 0  # sgd: tensors streamed through the unit; bn: its constant words; lrn:
    # the cycles of its flush (the planes past the last channel); pool: its bands' runs
    dst: int = -1  # links: receiving board (one hop)
    bytes: int = 0  # links: payload
    item: str = ""  # links: the payload (``item``, ``contribution_item``)
    resource: str = ""  # the engine, unit or link direction it occupies
    deps: tuple[int, ...] = ()  # indices of the tasks it waits for
    after: tuple[int, ...] = ()  # tasks whose end the hardware itself waits for


KINDS = ("engine", "run", "drain", "flush", "unit", "link")

#: The resource suffixes of an engine's loop nest and of its output sequencer.
RUN, OUT = ":run", ":out"


# The items a link carries, also the keys under which the controller keeps each board's data.
def item(kind: str, name: str, lo: int | None = None, hi: int | None = None) -> str:
    """``kind`` "act" (activation), "err" (error) or "psum" (raw partial input errors) of
    tensor or layer ``name``, whole or channels ``lo:hi``: "act:T", "err:T[0:4]"."""
    return f"{kind}:{name}" if lo is None else f"{kind}:{name}[{lo}:{hi}]"


def contribution_item(tensor: str, consumer: str) -> str:
    """Layer ``consumer``'s error contribution to ``tensor``: "err:T<L"."""
    return f"err:{tensor}<{consumer}"


def parse_item(text: str) -> tuple[str, str, tuple[int, int] | None]:
    """(kind, name, channel range or None) of an item made by ``item``."""
    kind, name = text.split(":", 1)
    match = re.fullmatch(r"(.+)\[(\d+):(\d+)\]", name)
    return (kind, match[1], (int(match[2]), int(match[3]))) if match else (kind, name, None)


def hop_cycles(words: int, link: LinkModel) -> int:
    """Cycles to move ``words`` over one link of the design, from the end of the sender's
    instructions until the receiver has stored the last word."""
    return LINK_FETCH + _through_gearboxes(words, link) + LINK_STORE


def hop_tail(words: int, link: LinkModel) -> int:
    """Cycles of a hop after the sender is free again: the words in flight."""
    return hop_cycles(words, link) - _send_cycles(words, link)


def _send_cycles(words: int, link: LinkModel) -> int:
    return LINK_FETCH + _at_word_rate(words, link) + LINK_SEND_DONE


def _at_word_rate(words: int, link: LinkModel) -> int:
    """Cycles for ``words`` to enter the sending gearbox: at the hop's word rate, except that
    the reliable link's replay buffer takes them faster than a slow line carries them."""
    if link.bound == "line rate":
        return math.ceil(words / perf.LINK_SOURCE_WORDS_PER_CYCLE)
    return -(-words * link.word_den // link.word_num)


def _through_gearboxes(words: int, link: LinkModel) -> int:
    """Cycles from the first word entering the sending gearbox until the last leaves the
    receiving one (`_frames`)."""
    return _frames(words, link)[2]


def _frames(words: int, link: LinkModel) -> tuple[int, int, int]:
    """(when the first header enters the line, when the last trailer has, when the last word
    leaves the receiving gearbox), in cycles from the first word entering the sending
    gearbox. Words go into beats at the link's word rate and beats into frames of up to
    ``link.frame_beats``; a frame leaves once closed, header, payload and trailer at the line's
    beat rate, and arrives ``latency`` later; the receiving gearbox passes on a kept frame's
    words one a cycle, after the frames before it."""
    if not words:
        return 0, 0, 0
    per_frame = link.words_per_beat * link.frame_beats
    begin = sent = out = 0  # first header; when the last trailer entered the line; last word
    for first in range(0, words, per_frame):
        count = min(per_frame, words - first)
        beats = -(-count // link.words_per_beat)
        closed = _at_word_rate(first + count, link)
        header = max(closed + LINK_FRAME_START, sent + 1)
        begin = begin if first else header
        sent = header + -(-(beats + perf.LINK_FRAME_OVERHEAD - 1) * link.den // link.num)
        out = max(sent + link.latency + LINK_FRAME_RELEASE, out + 1) + count - 1
    return begin, sent, out


def line_spans(task: Task, *, links: Sequence[LinkModel]
               ) -> tuple[tuple[str, int, int, int, int], ...]:
    """For a link task, per hop (the line "a>b", when its first frame enters that line, when
    its last has, when the receiver has stored its last word, its words), in cycles from the
    start of the task's transfer: a line carries one frame at a time, so a transfer's frames
    queue behind those of the transfer before it on the same line, and the receiving side
    takes transfers in order, so it stores this one's words only after the one before;
    () for any other task."""
    if task.kind != "link":
        return ()
    words = _link_words(task)
    spans, at = [], 0
    for a, b in link_hops(task):
        link = links[min(a, b)]
        begin, sent, _ = _frames(words, link)
        done = at + hop_cycles(words, link)
        spans.append((f"{a}>{b}", at + LINK_FETCH + begin, at + LINK_FETCH + sent, done, words))
        at = done
    return tuple(spans)


def _link_words(task: Task) -> int:
    return -(-task.bytes // ELEM_BYTES)


def link_hops(task: Task) -> list[tuple[int, int]]:
    """The board-to-board hops of a link task, in order (store and forward)."""
    step = 1 if task.dst > task.board else -1
    return [(b, b + step) for b in range(task.board, task.dst, step)]


def _engine_cycles(task: Task) -> int:
    """Operands in, the loop nest, results out: what of these the task does (an engine's
    operands and start pulse, its run, its drain or flush; a pooling engine all three)."""
    if task.kind == "run":
        return task.run
    beats = max(task.loads.values(), default=0)
    cycles = beats + LOAD_OVERHEAD if beats else 0
    if task.run or task.kind == "engine" and task.image >= 0:
        cycles += task.run + START_OVERHEAD
    if task.drain:
        cycles += task.drain + DRAIN_OVERHEAD
    if task.kind == "flush":
        cycles += FLUSH_OVERHEAD
    return cycles


def _loss_cycles(task: Task) -> int:
    if task.what == "mse":
        return 2 * task.elements + LOSS_OVERHEAD  # load the logits, then one error per cycle
    # per class: load, exp, a restoring division of one bit per cycle and the emit
    return task.elements * (LOSS.params["DIVW"] + 4) + LOSS_OVERHEAD


def _stream_and_extra(task: Task) -> int:
    """A streaming unit's elements plus its extra cycles (``tensors``)."""
    return task.elements + task.tensors + STREAM_OVERHEAD


#: The passes of a trained BatchNormalization over the whole batch (its barriers).
BN_BATCH_PASSES = ("mean", "var", "var_off", "grad")
#: What bounds the images of a step through barriers.
BARRIER_BOTTLENECK = "batch barriers (BatchNormalization on batch statistics)"


def bn_train_extra(what: str, channels: int, images: int) -> int:
    """Cycles of a trained BatchNormalization's pass (fpdeep_bn_train) beyond its elements
    and `STREAM_OVERHEAD`: the per-channel words it takes first (an image's gamma and beta,
    or gamma), the end of a pass over the batch (the statistics, the rsqrt, the running
    statistics' update, the gradient sums out), and each further image's pass of the
    controller."""
    per_channel = {"mean": BN_END_MEAN, "var": BN_END_VAR, "var_off": BN_END_VAR,
                   "fp": 2, "grad": BN_END_GRAD, "bp": 1}[what]
    return channels * per_channel + (images - 1) * BN_IMAGE_RESTART


#: Cycles of a unit task by the RTL that runs it ("": a layer the controller plays).
_UNIT_CYCLES: dict[str, Callable[[Task], int]] = {
    # a run per band of channels (tensors), each: the pooling engine's result leaves a
    # cycle sooner than the Conv/FC engine's
    "pool": lambda t: max(t.tensors, 1) * (_engine_cycles(t) - 1),
    "relu": lambda t: t.elements + STREAM_OVERHEAD,
    "dropout": lambda t: t.elements + STREAM_OVERHEAD,
    # tensors: BN's constant words, LRN's flush steps, a Scale's or Bias's channel words
    "bn": _stream_and_extra,
    "lrn": _stream_and_extra,
    "bn_train": _stream_and_extra,
    "affine": _stream_and_extra,
    "convert": lambda t: t.elements + t.tensors * STREAM_OVERHEAD,  # Concat, shuffle
    "add": lambda t: t.elements + STREAM_OVERHEAD,
    "fanout": lambda t: t.elements + STREAM_OVERHEAD,
    "sgd": lambda t: t.elements + t.tensors * SGD_OVERHEAD,
    "loss": _loss_cycles,
    "psum": lambda t: t.tensors * (t.elements + STREAM_OVERHEAD),  # a pass per extra partial
    "": lambda t: t.elements + UNIT_LATENCY,
}


def task_cycles(task: Task, *, links: Sequence[LinkModel]) -> int:
    """Modelled cycles of one task; ``links`` are the design's."""
    if task.kind in ("engine", "run", "drain", "flush"):
        return _engine_cycles(task)
    if task.kind == "unit":
        if task.rtl not in _UNIT_CYCLES:
            raise FpdeepError(f"no cycle model for unit {task.rtl!r}; known: "
                              + ", ".join(repr(k) for k in _UNIT_CYCLES))
        return _UNIT_CYCLES[task.rtl](task)
    if task.kind == "link":
        return sum(hop_cycles(_link_words(task), links[min(a, b)]) for a, b in link_hops(task))
    raise FpdeepError(f"unknown task kind {task.kind!r}; known: {', '.join(KINDS)}")


def link_latency(task: Task, *, links: Sequence[LinkModel]) -> int:
    """Cycles of a link task after its last word has left the sender: the words in flight
    (the link takes the next item meanwhile); 0 for any other task."""
    if task.kind != "link":
        return 0
    words = _link_words(task)
    return sum(hop_tail(words, links[min(a, b)]) for a, b in link_hops(task))


def timeline(tasks: Sequence[Task], durations: Sequence[int],
             tails: Sequence[int] | None = None,
             setups: Sequence[int] | None = None,
             lines: Sequence[tuple[tuple[str, int, int], ...]] | None = None
             ) -> list[tuple[int, int]]:
    """(start, end) of every task when each starts as soon as its dependencies have ended and
    its resource is free; a resource freed at some cycle goes to the waiting task that comes
    first in ``tasks`` (the older image). This is what the board controller does. ``tails``:
    the last cycles of each task during which its resource is already free again (a link's
    words in flight). ``setups``: the first cycles of each task's duration, its instructions,
    which do not wait for its ``after`` tasks; the rest starts once those have ended too.
    ``lines``: a link task's use of each line it crosses (`line_spans`); its frames wait
    for the line to carry the frames before them, which delays its end, not its sender."""
    n = len(tasks)
    waiting_on = [len(t.deps) + len(t.after) for t in tasks]
    users: list[list[int]] = [[] for _ in range(n)]
    for k, t in enumerate(tasks):
        for d in (*t.deps, *t.after):
            users[d].append(k)
    ready_at = [0] * n
    hard_at = [0] * n
    free_at: dict[str, int] = {}
    line_free: dict[str, int] = {}  # when each line has carried the last frame given it
    stored: dict[str, int] = {}  # when each line's receiver has stored its last transfer
    queue = [(0, k) for k in range(n) if not waiting_on[k]]
    heapq.heapify(queue)
    span: list[tuple[int, int]] = [(-1, -1)] * n
    # Every queued task is ready; take the one that can start first (ties: the older task).
    while queue:
        ready, k = heapq.heappop(queue)
        res = tasks[k].resource or f"task {k}"
        start = max(ready, free_at.get(res, 0))
        if start > ready:  # the resource is busy: queue again at the time it frees
            heapq.heappush(queue, (start, k))
            continue
        setup = setups[k] if setups is not None else 0
        end = max(start + durations[k], hard_at[k] + durations[k] - setup)
        tail = tails[k] if tails is not None else 0
        if lines is not None and lines[k]:
            base, wait = end - durations[k] + setup, 0
            for line, first, last, done, words in lines[k]:
                wait += max(0, line_free.get(line, 0) - (base + wait + first))
                line_free[line] = base + wait + last
                # the receiver stores the words once it has stored the transfer before
                after = stored.get(line, 0) + LINK_RX_RESTART + words
                wait += max(0, after - (base + wait + done))
                stored[line] = base + wait + done
            end, tail = end + wait, tail + wait
        span[k] = (start, end)
        free_at[res] = end - tail
        for u in users[k]:
            if k in tasks[u].after:
                hard_at[u] = max(hard_at[u], end)
            else:
                ready_at[u] = max(ready_at[u], end)
            waiting_on[u] -= 1
            if not waiting_on[u]:
                heapq.heappush(queue, (ready_at[u], u))
    return span


#: The cycles each task's controller spends on instructions besides running it (fetching its
#: waits, configuration and mover commands), per task; None: none.
Setup = Callable[[Sequence[Task]], Sequence[int]] | None


def durations(tasks: Sequence[Task], *, links: Sequence[LinkModel],
              setup: Setup = None, memory: Setup = None) -> list[int]:
    """Modelled cycles of every task: running it, plus its instructions (``setup``) and its
    waits for off-chip memory (``memory``)."""
    extra = setup(tasks) if setup is not None else [0] * len(tasks)
    waits = memory(tasks) if memory is not None else [0] * len(tasks)
    return [task_cycles(t, links=links) + x + m
            for t, x, m in zip(tasks, extra, waits, strict=True)]


def replay(tasks: Sequence[Task], *, links: Sequence[LinkModel],
           setup: Setup = None, memory: Setup = None) -> list[tuple[int, int]]:
    """The ``timeline`` of ``tasks`` on the generated boards: each task's modelled cycles,
    its instructions (``setup``) first, a link free again while its words fly."""
    extra = list(setup(tasks)) if setup is not None else [0] * len(tasks)
    cycles = durations(tasks, links=links, setup=lambda _: extra, memory=memory)
    return timeline(tasks, cycles, [link_latency(t, links=links) for t in tasks], extra,
                    [line_spans(t, links=links) for t in tasks])


def step_cycles(tasks: Sequence[Task], *, links: Sequence[LinkModel],
                setup: Setup = None, memory: Setup = None) -> int:
    """Modelled cycles of one training step: the end of the last task of ``timeline``."""
    return max((end for _, end in replay(tasks, links=links, setup=setup, memory=memory)),
               default=0)


def _elements(shape: Sequence[int]) -> int:
    return math.prod(shape)


def stream_aliases(network: Network) -> dict[str, str]:
    """Tensor -> the tensor whose stream it is: the output of a Flatten or Identity whose input
    feeds nothing else (a tensor read twice keeps its own name, for its error fan-in)."""
    alias: dict[str, str] = {}
    for layer in network.layers:
        source = layer.inputs[0] if layer.inputs else ""
        # a (C, H, W) tensor streamed channel by channel, row by row, is already its vector
        if layer.op in VIEW_OPS and len(network.tensors[source].consumers) == 1:
            alias[layer.output] = alias.get(source, source)
    return alias


@dataclass(frozen=True)
class Schedule(Serial):
    """The tasks of one training step of ``batch`` images, in priority order."""

    batch: int
    tasks: tuple[Task, ...]

    def cycles(self, links: Sequence[LinkModel], setup: Setup = None,
               memory: Setup = None) -> int:
        """Modelled cycles of the step (the end of its last task)."""
        return step_cycles(self.tasks, links=links, setup=setup, memory=memory)


def schedule(design: Design, network: Network, *, batch: int,
             forward_only: bool = False) -> Schedule:
    """The tasks of one training step of ``batch`` images on the boards of ``design``, in
    priority order: every task's dependencies come before it, and an older image's task before
    a younger one's. ``forward_only``: an inference pass instead (weights into the FP engines,
    the forward pass of every image; no loss, backward pass or update)."""
    require_positive_int("batch", batch)
    return Schedule(batch, tuple(_StepGraph(design, network).build(batch, forward_only)))


class _StepGraph:
    """Builds the task graph of a step: per image the forward pass layer by layer, the loss,
    the backward pass in reverse; tensors travel between boards hop by hop."""

    def __init__(self, design: Design, network: Network) -> None:
        self.network = network
        self.forward_only = False
        self.needs_error = needs_error(network)
        self.slices: dict[str, list[tuple[int, dict]]] = {}
        for b in design.boards:
            for s in b.slices:
                self.slices.setdefault(s.layer, []).append((b.index, s))
        for entries in self.slices.values():
            entries.sort(key=lambda bs: bs[1].lo)
        self.homes = dict(design.homes)
        self.alias = stream_aliases(network)
        units = [(b.index, u) for b in design.boards for u in b.units]
        self.units = {u.layer: u for _, u in units
                      if u.kind not in ("sgd", "fanin", "psum", "loss")}
        self.fan_ins = {self.canon(u.layer): u for _, u in units if u.kind == "fanin"}
        self.psums = {u.layer: u.ident for _, u in units if u.kind == "psum"}
        self.board_units = {(b, u.kind): u.ident for b, u in units
                            if u.kind in ("sgd", "loss")}
        self.loss = design.loss
        self.layers = [layer for layer in network.layers if not spec(layer.op).in_loss]
        self.tasks: list[Task] = []
        self.loaded: dict[str, int] = {}  # engine ident -> its weight load
        # engine ident -> its operand tasks, runs and drains, image by image
        self.feeds: dict[str, list[int]] = {}
        self.runs: dict[str, list[int]] = {}
        self.drains: dict[str, list[int]] = {}
        # per image: where activations and errors are (tensor -> board -> tasks to wait for)
        self.image = -1
        self.acts: dict[str, dict[int, list[int]]] = {}
        self.errors: dict[str, dict[int, list[int]]] = {}
        self.contributions: dict[str, list[int]] = {}
        # a trained unit layer's gradient tasks, image by image (a trained BatchNormalization:
        # its one pass over the batch)
        self.gradients: dict[str, list[int]] = {}
        # a trained BatchNormalization's statistics pass, which its forward passes wait for
        self.stats: dict[str, int] = {}

    def canon(self, tensor: str) -> str:
        return self.alias.get(tensor, tensor)

    def size_of(self, tensor: str) -> int:
        """Elements per image of ``tensor``."""
        return _elements(self.network.tensors[tensor].shape)

    def add(self, task: Task, deps: Sequence[int], after: Sequence[int] = ()) -> int:
        self.tasks.append(replace(task, deps=tuple(sorted(set(deps))),
                                  after=tuple(sorted(set(after)))))
        return len(self.tasks) - 1

    def engine(self, board: int, s: SliceDesign, mode: str, deps: Sequence[int], *,
               drain: bool = True) -> int:
        """An image through an engine: its operands in, its run, its result out (``drain``;
        a WG engine keeps its sums for the flush). Returns the task whose end has the result
        in the store (or, without a drain, the run)."""
        e = s.engines[mode]
        key = f"{board}:{e.ident}"
        feeds, runs = self.feeds.setdefault(e.ident, []), self.runs.setdefault(e.ident, [])
        drains = self.drains.setdefault(e.ident, [])
        loads = {k: v for k, v in e.streams.items() if v and k not in ("w", "b")}
        # an input half is free once the run two images back has read it; a result half
        # once the drain two images back has emptied it
        feeds.append(self.add(Task("engine", board, mode, s.layer, e.ident, self.image, loads,
                                   resource=key), deps, runs[-2:-1]))
        runs.append(self.add(Task("run", board, mode, s.layer, e.ident, self.image,
                                  run=e.cycles + perf.ENGINE_LATENCY, resource=key + RUN),
                             (), [feeds[-1], *drains[-2:-1]]))
        if not drain:
            return runs[-1]
        drains.append(self.add(Task("drain", board, mode, s.layer, e.ident, self.image,
                                    drain=e.out_beats, resource=key + OUT), (), runs[-1:]))
        return drains[-1]

    def send(self, src: int, dst: int, deps: list[int], payload: str, nbytes: int,
             have: dict[int, list[int]] | None = None) -> list[int]:
        """Tasks after which ``payload`` (an item) made on ``src`` (once ``deps`` are done) is
        on ``dst``: hop by hop, store and forward; ``have`` records it on every board it
        passes."""
        step = 1 if dst > src else -1
        what = "act" if parse_item(payload)[0] == "act" else "err"
        for a in range(src, dst, step):
            deps = [self.add(Task("link", a, what, item=payload, image=self.image, dst=a + step,
                                  bytes=nbytes, resource=f"link:{a}>{a + step}"), deps)]
            if have is not None:
                have[a + step] = deps
        return deps

    def act_at(self, tensor: str, dst: int) -> list[int]:
        """Tasks after which activation ``tensor`` is on ``dst``, sent once per image from the
        nearest board that has it."""
        have = self.acts[tensor]
        if dst not in have:
            src = min(have, key=lambda b: abs(b - dst))
            self.send(src, dst, have[src], item("act", tensor),
                      self.size_of(tensor) * ELEM_BYTES, have)
        return have[dst]

    def error_at_home(self, tensor: str) -> list[int]:
        """Tasks after which ``tensor``'s whole error is on its home board (its contributions
        summed by the fan-in unit where there are several: two in one pass of an Add unit,
        more in a pass per further contribution of a partial-sum unit)."""
        if tensor not in self.errors:
            home = self.homes[tensor]
            parts = self.contributions.get(tensor, [])
            if tensor in self.fan_ins and len(parts) > 1:
                unit = self.fan_ins[tensor]
                readers = unit.info.get("readers", 2)
                rtl, passes = ("add", 0) if readers == 2 else ("psum", readers - 1)
                parts = [self.add(Task("unit", home, "fanin", tensor, image=self.image,
                                       elements=unit.info["elements"], rtl=rtl,
                                       tensors=passes, resource=f"{home}:{unit.ident}"),
                                  parts)]
            self.errors[tensor] = {home: parts}
        return self.errors[tensor][self.homes[tensor]]

    def contribute(self, tensor: str, consumer: str, board: int, deps: list[int]) -> None:
        """The error contribution of layer ``consumer`` to ``tensor``, made on ``board``, goes
        to the tensor's home."""
        nbytes = self.size_of(tensor) * ELEM_BYTES
        self.contributions.setdefault(tensor, []).extend(
            self.send(board, self.homes[tensor], deps, contribution_item(tensor, consumer),
                      nbytes))

    def build(self, batch: int, forward_only: bool = False) -> list[Task]:
        self.forward_only = forward_only
        # Weights (and biases) into the FP and BP engine banks, once per mini-batch.
        for entries in self.slices.values():
            for board, s in entries:
                for m in ("fp",) if forward_only else ("fp", "bp"):
                    if m in s.engines:
                        e = s.engines[m]
                        self.loaded[e.ident] = self.add(Task(
                            "engine", board, "load", s.layer, e.ident, -1,
                            {k: v for k, v in e.streams.items() if k in ("w", "b") and v},
                            resource=f"{board}:{e.ident}"), ())
        # A BatchNormalization trained on batch statistics is a barrier: its segment waits
        # for every image's input (the batch's statistics), the segment before it for every
        # image's error at its output (the batch's gradient sums). Without one, each image
        # runs its forward pass and then its backward pass, images overlapping.
        segments = self.segments()
        states = [self.fresh_state() for _ in range(batch)]
        last = len(segments) - 1
        for k, seg in enumerate(segments):
            if k:
                self.batch_statistics(seg[0], states)
            for image in range(batch):
                self.enter(image, states)
                self.forward(seg)
                if k == last and not forward_only:
                    self.backward(seg[1:] if k else seg, loss=True)
        if forward_only:
            return self.tasks
        for k in range(last, 0, -1):
            bn = segments[k][0]
            self.batch_gradient(bn, states)
            for image in range(batch):
                self.enter(image, states)
                self.backward_unit(bn)
                self.backward(segments[k - 1][1:] if k > 1 else segments[0], loss=False)
        # Batch boundary: WG sums out of every engine, then the SGD update per board.
        flushes: dict[int, list[int]] = {}
        per_board: dict[int, list[int]] = {}
        for entries in self.slices.values():
            for board, s in entries:
                e = s.engines["wg"]
                # once every image's start has been given, and (the engine sees to it) every
                # run is over
                flushes.setdefault(board, []).append(self.add(Task(
                    "flush", board, "flush", s.layer, e.ident, drain=e.out_beats,
                    resource=f"{board}:{e.ident}{OUT}"), self.feeds[e.ident], self.runs[e.ident]))
                count = per_board.setdefault(board, [0, 0])
                count[0] += e.out_beats
                count[1] += 2 if s.has_bias else 1
        for layer, grads in self.gradients.items():  # a trained unit's parameters too
            unit = self.units[layer]
            tensors = 2 if unit.kind == "bn_train" else 1  # gamma and beta
            count = per_board.setdefault(unit.board, [0, 0])
            count[0] += tensors * unit.info["channels"]
            count[1] += tensors
            flushes.setdefault(unit.board, []).extend(grads)
        for board, (n, t) in sorted(per_board.items()):
            self.add(Task("unit", board, "sgd", elements=n, rtl="sgd", tensors=t,
                          resource=f"{board}:{self.board_units[(board, 'sgd')]}"),
                     flushes[board])
        return self.tasks

    def segments(self) -> list[list[Any]]:
        """The layers cut before each BatchNormalization trained on batch statistics: every
        segment but the first starts with one."""
        out: list[list[Any]] = [[]]
        for layer in self.layers:
            unit = self.units.get(layer.name)
            if unit is not None and unit.kind == "bn_train":
                out.append([])
            out[-1].append(layer)
        return out

    def fresh_state(self) -> dict[str, dict]:
        """An image's state before its forward pass: the network's input on its home board."""
        return {"acts": {self.network.input_name: {self.homes[self.network.input_name]: []}},
                "errors": {}, "contributions": {}}

    def enter(self, image: int, states: Sequence[dict[str, dict]]) -> None:
        """Work on ``image`` from here on: its activations, errors and contributions."""
        self.image = image
        state = states[image]
        self.acts, self.errors = state["acts"], state["errors"]
        self.contributions = state["contributions"]

    def _bn_task(self, layer: Any, what: str, images: int, deps: Sequence[int]) -> int:
        unit = self.units[layer.name]
        n = unit.info["elements"]
        return self.add(Task("unit", unit.board, what, layer.name, elements=images * n,
                             rtl="bn_train",
                             tensors=bn_train_extra(what, unit.info["channels"], images),
                             resource=f"{unit.board}:{unit.ident}"), deps)

    def batch_statistics(self, layer: Any, states: Sequence[dict[str, dict]]) -> None:
        """A trained BatchNormalization's statistics: the sums of every image's input, then
        of the centred squares (in an inference pass leaving the running statistics as
        they are)."""
        home, src = self.homes[layer.output], self.canon(layer.inputs[0])
        deps = []
        for image in range(len(states)):
            self.enter(image, states)
            deps += self.act_at(src, home)
        mean = self._bn_task(layer, "mean", len(states), deps)
        self.stats[layer.name] = self._bn_task(
            layer, "var_off" if self.forward_only else "var", len(states), [mean])

    def batch_gradient(self, layer: Any, states: Sequence[dict[str, dict]]) -> None:
        """A trained BatchNormalization's gradient sums over every image's output error."""
        deps = [self.stats[layer.name]]
        for image in range(len(states)):
            self.enter(image, states)
            deps += self.error_at_home(layer.output)
        self.gradients[layer.name] = [self._bn_task(layer, "grad", len(states), deps)]

    def forward(self, layers: Sequence[Any]) -> None:
        for layer in layers:
            home = self.homes[layer.output]
            if layer.output in self.alias:
                continue
            if layer.is_compute:
                outs = []
                for board, s in self.slices[layer.name]:
                    deps = [*self.act_at(self.canon(layer.inputs[0]), board),
                            self.loaded[s.engines["fp"].ident]]
                    fp = self.engine(board, s, "fp", deps)
                    outs += self.send(board, home, [fp],
                                      item("act", layer.output, s.lo, s.hi),
                                      _slice_elems(layer, s) * ELEM_BYTES)
                self.acts[layer.output] = {home: outs}
            else:
                deps = [d for name in layer.inputs for d in self.act_at(self.canon(name), home)]
                elements = sum(self.size_of(n) for n in layer.inputs)
                unit = self.units.get(layer.name)
                # Dropout is off in an inference pass
                off = self.forward_only and unit is not None and unit.kind == "dropout"
                task = _unit_task(unit, home, "off" if off else "fp", layer.name, self.image,
                                  elements, self.needs_error)
                if unit is not None and unit.kind == "bn_train":  # after the batch's stats
                    deps.append(self.stats[layer.name])
                self.acts[layer.output] = {home: [self.add(task, deps)]}

    def backward(self, layers: Sequence[Any], *, loss: bool) -> None:
        """The backward pass of ``layers`` for the current image; ``loss``: from the loss
        error at the logits."""
        if loss:
            last = self.layers[-1]
            logits = self.canon(last.output)
            board = self.homes[logits]
            task = Task("unit", board, "mse" if self.loss == "mse" else "loss", last.name,
                        image=self.image, elements=self.size_of(logits), rtl="loss",
                        resource=f"{board}:{self.board_units[(board, 'loss')]}")
            self.errors[logits] = {board: [self.add(task, self.acts[logits][board])]}
        for layer in reversed(layers):
            if layer.output in self.alias:
                continue
            if layer.is_compute:
                self.backward_compute(layer)
            else:
                self.backward_unit(layer)

    def backward_unit(self, layer: Any) -> None:
        """A unit layer's input error where an input needs one; a trained unit's (a per-channel
        Scale or Bias) gradient sums, added image after image to its accumulators."""
        home = self.homes[layer.output]
        unit = self.units.get(layer.name)
        if any(self.needs_error[name] for name in layer.inputs):
            task = _unit_task(unit, home, "bp", layer.name, self.image,
                              _elements(layer.out_shape), self.needs_error)
            deps = list(self.error_at_home(layer.output))
            if unit is not None and unit.kind == "bn_train":  # after the batch's sums
                deps += self.gradients[layer.name]
            bp = self.add(task, deps)
            for name in layer.inputs:
                if self.needs_error[name]:
                    self.contribute(self.canon(name), layer.name, home, [bp])
        if unit is not None and unit.kind == "affine":
            grads = self.gradients.setdefault(layer.name, [])
            task = _unit_task(unit, home, "wg", layer.name, self.image, 0, self.needs_error)
            grads.append(self.add(task, [*self.error_at_home(layer.output), *grads[-1:]]))

    def backward_compute(self, layer: Any) -> None:
        """BP and WG of a compute layer's slices; a split layer's raw partial input errors go
        to the input's home, are added there, and requantised once."""
        home = self.homes[layer.output]
        at_home = self.error_at_home(layer.output)
        bps = []
        for board, s in self.slices[layer.name]:
            e_at = self.send(home, board, at_home, item("err", layer.output, s.lo, s.hi),
                             _slice_elems(layer, s) * ELEM_BYTES)
            self.engine(board, s, "wg", e_at, drain=False)
            if "bp" in s.engines:
                deps = [*e_at, self.loaded[s.engines["bp"].ident]]
                bps.append((board, s, self.engine(board, s, "bp", deps)))
        if not bps:
            return
        src = self.canon(layer.inputs[0])
        n_in = self.size_of(src)
        if len(bps) == 1:
            self.contribute(src, layer.name, bps[0][0], [bps[0][2]])
            return
        dst = self.homes[src]
        parts = [d for board, s, bp in bps for d in self.send(
            board, dst, [bp], item("psum", layer.name, s.lo, s.hi), n_in * RAW_BYTES)]
        total = Task("unit", dst, "sum", layer.name, image=self.image, elements=n_in,
                     rtl="psum", tensors=len(bps) - 1, resource=f"{dst}:{self.psums[layer.name]}")
        self.contributions.setdefault(src, []).append(self.add(total, parts))


def _unit_task(unit: UnitDesign | None, board: int, what: str, layer: str, image: int,
               elements: int, needs: Mapping[str, bool]) -> Task:
    """A layer's unit task: its RTL unit's timing when it has one, else a streaming stand-in."""
    if unit is None:
        return Task("unit", board, what, layer, image=image, elements=elements,
                    resource=f"{board}:controller {what} {layer}")
    if unit.kind in ("relu", "add", "dropout"):
        rtl = "fanout" if unit.kind == "add" and what == "bp" else unit.kind
        # one ReLU (or Dropout) unit serves both directions; Add has a forward and a fan-out
        # unit
        resource = f"{board}:{unit.ident}" + ("_bp" if rtl == "fanout" else "")
        return Task("unit", board, what, layer, image=image, elements=unit.info["elements"],
                    rtl=rtl, resource=resource)
    if unit.kind == "bn":  # each channel's constants, then its elements
        words = len(BN_TABLE["bp" if what == "bp" else "fp"])
        return Task("unit", board, what, layer, image=image, elements=unit.info["elements"],
                    rtl="bn", tensors=unit.info["channels"] * words,
                    resource=f"{board}:{unit.ident}")
    if unit.kind == "bn_train":  # an image's pass: its per-channel words, then its elements
        return Task("unit", board, what, layer, image=image, elements=unit.info["elements"],
                    rtl="bn_train", tensors=bn_train_extra(what, unit.info["channels"], 1),
                    resource=f"{board}:{unit.ident}")
    if unit.kind == "lrn":  # the channels, then the window's last planes flushed
        flush = unit.info["flush"]["bp" if what == "bp" else "fp"] * unit.info["plane"]
        return Task("unit", board, what, layer, image=image, elements=unit.info["elements"],
                    rtl="lrn", tensors=flush, resource=f"{board}:{unit.ident}")
    if unit.kind == "affine":  # tensors: the parameter's (or accumulator's) words
        return Task("unit", board, what, layer, image=image, elements=unit.info["elements"],
                    rtl="affine", tensors=unit.info["channels"],
                    resource=f"{board}:{unit.ident}")
    if unit.kind in ("concat", "shuffle"):  # a converter pass per part (backward: per part
        # whose input needs an error)
        parts = [p for p in unit.info["parts"] if what == "fp" or needs[p["tensor"]]]
        return Task("unit", board, what, layer, image=image,
                    elements=sum(p["words"] for p in parts), rtl="convert", tensors=len(parts),
                    resource=f"{board}:{unit.ident}")
    info = unit.info
    n_in, n_out = (info["in"], info["out"]) if what == "fp" else (info["out"], info["in"])
    table = len(info["table_fwd" if what == "fp" else "table_bwd"])
    # loads, run, drain: of each band's run
    return Task("unit", board, what, layer, image=image, loads={"x": max(n_in, table)},
                run=info["cycles"], drain=n_out, rtl="pool", tensors=info.get("bands", 1),
                resource=f"{board}:{unit.ident}_{what}")


def _slice_elems(layer: Any, s: SliceDesign) -> int:
    """Output elements per image of one slice of a compute layer."""
    per_channel = _elements(layer.out_shape) // layer.out_shape[0]
    return (s.hi - s.lo) * per_channel


@dataclass(frozen=True)
class PipelineFigures:
    """The planner's figures for a generated design: a step of B images takes
    ``first_image_cycles + (B - 1) * ii_cycles`` (DESIGN §5's (B-1)*II + fill/drain + update)."""

    ii_cycles: int  # the busiest engine, unit or link direction: its cycles per image
    bottleneck: str  # that resource
    first_image_cycles: int  # a step of one image: weight load, fill, drain, flush and SGD

    def batch_cycles(self, batch: int) -> int:
        require_positive_int("batch", batch)
        return self.first_image_cycles + (batch - 1) * self.ii_cycles

    def as_dict(self) -> dict[str, Any]:
        return {"ii_cycles": self.ii_cycles, "bottleneck": self.bottleneck,
                "first_image_cycles": self.first_image_cycles}


def pipeline_figures(design: Design, network: Network, *,
                     setup: Setup = None, memory: Setup = None) -> PipelineFigures:
    """II and one-image step of the generated design, from the task graph of one image;
    ``setup``: the controllers' instruction cycles, ``memory``: their waits for off-chip
    memory (`fpdeep.codegen.program`)."""
    tasks = schedule(design, network, batch=1).tasks
    first = max(end for _, end in replay(tasks, links=design.links, setup=setup,
                                         memory=memory))
    if any(t.what in BN_BATCH_PASSES for t in tasks):
        # barriers keep images from overlapping across them: an image more costs what a
        # second image adds to the step
        second = schedule(design, network, batch=2).cycles(design.links, setup, memory)
        return PipelineFigures(second - first, BARRIER_BOTTLENECK, first)
    cycles_of = durations(tasks, links=design.links, setup=setup, memory=memory)
    busy: dict[str, int] = {}
    for task, cycles in zip(tasks, cycles_of, strict=True):
        if task.image >= 0:  # a link is busy until its last word left, not while words fly
            busy[task.resource] = (busy.get(task.resource, 0) + cycles
                                   - link_latency(task, links=design.links))
    bottleneck = max(busy, key=lambda r: (busy[r], r))
    return PipelineFigures(busy[bottleneck], bottleneck, first)
