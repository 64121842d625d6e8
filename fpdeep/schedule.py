"""The static schedule of one training step on the generated boards, and its cycle model.

First-generation boards work at image granularity and in order: the weights are loaded into the
FP/BP engines once per mini-batch; then, image after image, FP runs layer by layer (the slices
of one layer on their boards at the same time), the loss error is formed at the last board, BP
and WG run back through the layers (a slice's BP and WG engines at the same time), and at the
batch boundary every WG engine flushes its sums to the SGD update. The schedule is a list of
phases; the tasks of a phase run concurrently and a phase ends when its slowest task does.

``step_cycles`` is the performance model of exactly this design. It differs from the planner's
steady-state model (``fpdeep.perf``/``fpdeep.planner``), which assumes a pipeline in which FP,
BP and WG of different images overlap: here nothing overlaps across layers or images, so a step
costs the sum of its phases, and it adds the terms the planner leaves out: streaming operands
into the engine banks and results out of them (one beat per cycle), the element-wise units
(one element per cycle), and link transfers hop by hop (store and forward) with their latency;
the generated link framing moves at most one 16-bit word per cycle, so a link is never faster
than the fabric stream, whatever its line rate.

Engine tasks are costed from ``fpdeep.perf.engine_cycles`` plus the handshake overheads of the
stream protocol (``LOAD_OVERHEAD`` etc.), which the cluster simulation measures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fpdeep import perf
from fpdeep.codegen.units import LOSS_DIVIDER_BITS
from fpdeep.errors import FpdeepError, require_positive_int
from fpdeep.ir import Network, Op

# Protocol overheads of one engine task, in cycles (see sim/tb_cluster.py): a load needs one
# cycle after its last beat to drop valid; a run is timed from the start pulse's edge to the
# edge after done; a drain needs one cycle to raise ready before the first beat.
LOAD_OVERHEAD = 1
START_OVERHEAD = 1
DRAIN_OVERHEAD = 1
# Units the controller still plays (Add, Flatten, loss, partial-sum reduction) are timed as
# streaming one element per cycle after a short pipeline.
UNIT_LATENCY = 4
# RTL streaming units, input and output streams running together: ReLU, Add, fan-in, fan-out
# and SGD units have
# one output register, plus one cycle to see the first beat and one to drop valid after the
# last (measured in the cluster simulation).
STREAM_OVERHEAD = 2
SGD_OVERHEAD = 2
# The loss unit's cycles beyond its per-class work (measured in the cluster simulation).
LOSS_OVERHEAD = 1
# Cycles a link hop adds to its words and latency: the receiver's handshake of the last word
# (measured in the cluster simulation).
LINK_OVERHEAD = 1
# Bytes of one element on a link (16-bit data) and of a raw partial sum (48-bit accumulator,
# sent as three 16-bit words).
ELEM_BYTES = 2
RAW_BYTES = 6


@dataclass(frozen=True)
class Task:
    """One unit of work on one board. ``kind`` is one of KINDS."""

    kind: str
    board: int
    what: str  # fp, bp, wg, load (weights), flush, loss, sum (partial errors), sgd, link
    layer: str = ""
    engine: str = ""  # engine ident for engine tasks
    image: int = -1
    loads: Mapping[str, int] = field(default_factory=dict)  # beats per operand stream
    run: int = 0  # loop-nest cycles incl. latency, 0: no start pulse
    drain: int = 0  # result beats
    elements: int = 0  # units: elements streamed
    rtl: str = ""  # units: the RTL unit that does it (relu, pool, sgd), "" for the controller
    tensors: int = 0  # sgd: tensors streamed through the unit
    dst: int = -1  # links: receiving board
    bytes: int = 0  # links: payload


KINDS = ("engine", "flush", "unit", "link")


def hop_cycles(words: int, link: Mapping[str, int]) -> int:
    """Cycles to move ``words`` over one link of the design (``design.json`` "links"): at
    ``num`` words per ``den`` cycles, after its latency, plus the framing's handshakes."""
    return -(-words * link["den"] // link["num"]) + link["latency"] + LINK_OVERHEAD


def link_hops(task: Task) -> list[tuple[int, int]]:
    """The board-to-board hops of a link task, in order (store and forward)."""
    step = 1 if task.dst > task.board else -1
    return [(b, b + step) for b in range(task.board, task.dst, step)]


def task_cycles(task: Task, *, links: Sequence[Mapping[str, int]]) -> int:
    """Modelled cycles of one task; ``links`` as in ``design.json``."""
    if task.kind in ("engine", "flush") or task.rtl == "pool":
        beats = max(task.loads.values(), default=0)
        cycles = beats + LOAD_OVERHEAD if beats else 0
        if task.run:
            cycles += task.run + START_OVERHEAD
        if task.drain:
            cycles += task.drain + DRAIN_OVERHEAD
        return cycles
    if task.kind == "unit" and task.rtl in ("relu", "add", "fanout"):
        return task.elements + STREAM_OVERHEAD
    if task.kind == "unit" and task.rtl == "sgd":
        return task.elements + task.tensors * SGD_OVERHEAD
    if task.kind == "unit" and task.rtl == "loss":
        # per class: load, exp, a restoring division of one bit per cycle and the emit
        return task.elements * (LOSS_DIVIDER_BITS + 4) + LOSS_OVERHEAD
    if task.kind == "unit" and task.rtl == "psum":  # one pass per partial after the first
        return task.tensors * (task.elements + STREAM_OVERHEAD)
    if task.kind == "unit":
        return task.elements + UNIT_LATENCY
    if task.kind == "link":
        words = -(-task.bytes // ELEM_BYTES)
        return sum(hop_cycles(words, links[min(a, b)]) for a, b in link_hops(task))
    raise FpdeepError(f"unknown task kind {task.kind!r}; known: {', '.join(KINDS)}")


def step_cycles(phases: Sequence[Sequence[Task]], *,
                links: Sequence[Mapping[str, int]]) -> int:
    """Modelled cycles of one training step: the sum over phases of the slowest task."""
    return sum(max((task_cycles(t, links=links) for t in phase), default=0) for phase in phases)


def _separate_links(tasks: list[Task]) -> list[list[Task]]:
    """Link tasks in sub-phases in which no two use the same hop in the same direction (a link
    port carries one tensor at a time)."""
    rounds: list[tuple[set, list[Task]]] = []
    for task in tasks:
        hops = set(link_hops(task))
        for used, members in rounds:
            if not used & hops:
                used |= hops
                members.append(task)
                break
        else:
            rounds.append((hops, [task]))
    return [members for _, members in rounds]


def _elements(shape: Sequence[int]) -> int:
    return math.prod(shape)


def schedule(design: Mapping[str, Any], network: Network, *, batch: int) -> list[list[Task]]:
    """The phases of one training step of ``batch`` images on the boards of ``design``
    (the ``design.json`` of a build)."""
    require_positive_int("batch", batch)
    slices: dict[str, list[tuple[int, dict]]] = {}
    for b in design["boards"]:
        for s in b["slices"]:
            slices.setdefault(s["layer"], []).append((b["index"], s))
    for entries in slices.values():
        entries.sort(key=lambda bs: bs[1]["lo"])
    homes = dict(design["homes"])
    units = {u["layer"]: u for b in design["boards"] for u in b["units"]
             if u["kind"] not in ("sgd", "fanin", "psum", "loss")}
    fan_ins = {u["layer"]: u for b in design["boards"] for u in b["units"] if u["kind"] == "fanin"}
    layers = [layer for layer in network.layers if layer.op is not Op.SOFTMAX]
    shapes = {network.input_name: network.input_shape}
    shapes.update({layer.output: layer.out_shape for layer in layers})

    def link(src: int, dst: int, nbytes: int) -> list[Task]:
        return [] if src == dst else [Task("link", src, "link", bytes=nbytes, dst=dst)]

    def engine(board: int, s: dict, mode: str, image: int, *, run: bool = True,
               with_w: bool = False, drain: bool = True) -> Task:
        e = s["engines"][mode]
        loads = {k: v for k, v in e["streams"].items() if v and (with_w or k not in ("w", "b"))}
        return Task("engine", board, mode, s["layer"], e["ident"], image, loads,
                    e["cycles"] + perf.ENGINE_LATENCY if run else 0,
                    e["out_beats"] if drain else 0)

    phases: list[list[Task]] = []
    # Weights (and biases) into the FP and BP engine banks, all boards at once.
    phases.append([
        Task("engine", board, "load", s["layer"], s["engines"][m]["ident"], -1,
             {k: v for k, v in s["engines"][m]["streams"].items() if k in ("w", "b") and v})
        for entries in slices.values() for board, s in entries for m in ("fp", "bp")
        if m in s["engines"]
    ])
    last = layers[-1]
    for image in range(batch):
        for layer in layers:
            src = homes[layer.inputs[0]]
            size = _elements(shapes[layer.inputs[0]]) * ELEM_BYTES
            if layer.is_compute:
                fan = [t for board, _ in slices[layer.name] for t in link(src, board, size)]
                phases.append(fan)
                phases.append([engine(board, s, "fp", image) for board, s in slices[layer.name]])
                home = homes[layer.output]
                phases.append([t for board, s in slices[layer.name]
                               for t in link(board, home, _slice_elems(layer, s) * ELEM_BYTES)])
            else:
                home = homes[layer.output]
                phases.append([t for name in layer.inputs for t in link(
                    homes[name], home, _elements(shapes[name]) * ELEM_BYTES)])
                phases.append([_unit_task(units.get(layer.name), home, "fp", layer.name,
                                          image, sum(_elements(shapes[n]) for n in layer.inputs))])
        phases.append([Task("unit", homes[last.output], "loss", last.name, image=image,
                            elements=_elements(shapes[last.output]), rtl="loss")])
        for layer in reversed(layers):
            home = homes[layer.output]
            if layer.output in fan_ins and _needs_error(network, layer.output):
                phases.append([Task("unit", home, "fanin", layer.output, image=image,
                                    elements=fan_ins[layer.output]["info"]["elements"],
                                    rtl="add")])
            if layer.is_compute:
                phases.append([t for board, s in slices[layer.name]
                               for t in link(home, board, _slice_elems(layer, s) * ELEM_BYTES)])
                tasks = []
                for board, s in slices[layer.name]:
                    tasks.append(engine(board, s, "wg", image, drain=False))
                    if "bp" in s["engines"]:
                        tasks.append(engine(board, s, "bp", image))
                phases.append(tasks)
                if "bp" in slices[layer.name][0][1]["engines"]:
                    dst = homes[layer.inputs[0]]
                    n_in = _elements(shapes[layer.inputs[0]])
                    split = len(slices[layer.name]) > 1
                    phases.append([t for board, _ in slices[layer.name] for t in link(
                        board, dst, n_in * (RAW_BYTES if split else ELEM_BYTES))])
                    if split:  # partial input errors summed, then requantised once
                        phases.append([Task("unit", dst, "sum", layer.name, image=image,
                                            elements=n_in, rtl="psum",
                                            tensors=len(slices[layer.name]) - 1)])
            elif any(_needs_error(network, name) for name in layer.inputs):
                phases.append([_unit_task(units.get(layer.name), home, "bp", layer.name,
                                          image, _elements(layer.out_shape))])
                phases.append([t for name in layer.inputs for t in link(
                    home, homes[name], _elements(shapes[name]) * ELEM_BYTES)])
    # Batch boundary: WG sums out of every engine, then the SGD update per board.
    phases.append([Task("flush", board, "flush", s["layer"], s["engines"]["wg"]["ident"],
                        drain=s["engines"]["wg"]["out_beats"])
                   for entries in slices.values() for board, s in entries])
    per_board: dict[int, list[int]] = {}
    for entries in slices.values():
        for board, s in entries:
            count = per_board.setdefault(board, [0, 0])
            count[0] += s["engines"]["wg"]["out_beats"]
            count[1] += 2 if s["has_bias"] else 1
    phases.append([Task("unit", board, "sgd", elements=n, rtl="sgd", tensors=t)
                   for board, (n, t) in sorted(per_board.items())])
    out: list[list[Task]] = []
    for phase in phases:
        if phase and all(t.kind == "link" for t in phase):
            out += _separate_links(phase)
        elif phase:
            out.append(phase)
    return out


def _unit_task(unit: Mapping[str, Any] | None, board: int, what: str, layer: str, image: int,
               elements: int) -> Task:
    """A layer's unit task: its RTL unit's timing when it has one, else a streaming stand-in."""
    if unit is None:
        return Task("unit", board, what, layer, image=image, elements=elements)
    if unit["kind"] in ("relu", "add"):
        rtl = "fanout" if unit["kind"] == "add" and what == "bp" else unit["kind"]
        return Task("unit", board, what, layer, image=image, elements=unit["info"]["elements"],
                    rtl=rtl)
    info = unit["info"]
    n_in, n_out = (info["in"], info["out"]) if what == "fp" else (info["out"], info["in"])
    table = len(info["table_fwd" if what == "fp" else "table_bwd"])
    return Task("unit", board, what, layer, image=image, loads={"x": max(n_in, table)},
                run=info["cycles"], drain=n_out, rtl="pool")


def _slice_elems(layer: Any, s: Mapping[str, Any]) -> int:
    """Output elements per image of one slice of a compute layer."""
    per_channel = _elements(layer.out_shape) // layer.out_shape[0]
    return (s["hi"] - s["lo"]) * per_channel


def _needs_error(network: Network, tensor: str) -> bool:
    """A tensor carries an error when a trainable layer lies upstream of it."""
    producer = network.tensors[tensor].producer
    if producer is None:
        return False
    layer = network.layer(producer)
    return layer.is_compute or any(_needs_error(network, t) for t in layer.inputs)
