"""cocotb testbench of a generated cluster: runs training steps on `cluster_top`.

It plays the board controllers of the first-generation design: it starts each task of the
step's task graph (``fpdeep.schedule.tasks``) when the tasks it waits for are done and its engine,
unit or link is free, streams operands into the boards' engines and units, pulses start and
flush and drains the results. Flatten and Identity cost nothing: a tensor's stream already is
its flattened vector.
A tensor reaches another board only through the RTL link framing and link models, and the
receiving board computes with what arrived. Every tensor the boards produce is recorded for
`fpdeep sim` to compare with the golden model; nothing is compared here.

A stream that makes no progress for ``stall_cycles`` cycles, or a step beyond ``max_cycles``,
ends the run with a message naming the board, the engine and the stream.
"""

from __future__ import annotations

import json
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, Event, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time
from fpdeep_tb import PERIOD_NS, reset, signed, tb_args

import fpdeep
from fpdeep.codegen.board import board_ports
from fpdeep.design.lower import BuildInfo, Design, read_design_document
from fpdeep.golden import loss as golden_loss
from fpdeep.golden import sgd
from fpdeep.golden import step as golden_step
from fpdeep.hwlib import SGD
from fpdeep.hwlib.signature import IDLE_LOW
from fpdeep.ops import spec
from fpdeep.schedule.tasks import (
    ELEM_BYTES,
    RAW_BYTES,
    contribution_item,
    item,
    link_hops,
    parse_item,
    schedule,
    stream_aliases,
    task_cycles,
)


class Stalled(Exception):
    """A stream or engine made no progress: the message names board, engine and stream."""


class Bench:
    """The simulated cluster as the testbench drives it: its signals, clock and stall watch."""

    def __init__(self, dut, design: dict, built: Design, args: dict) -> None:
        self.dut = dut
        self.design = design
        self.built = built  # the same design, typed
        self.args = args
        self.stall = int(args.get("stall_cycles", 20000))
        self.max_cycles = int(args["max_cycles"])
        self.t_step = 0.0
        self.where = ""
        self.seen: dict[str, int] = {}  # what each waiting stream or engine last checked at

    def now(self) -> int:
        return round(get_sim_time("ns") / PERIOD_NS)

    def sig(self, board: int, engine: str, port: str):
        return getattr(self.dut, f"b{board}_{engine}_{port}")

    def _check(self, idle: int, what: str) -> None:
        """Called every cycle by whatever waits on a stream or engine (tasks run side by side,
        so a cycle-limit message lists every wait still in flight)."""
        now = self.now()
        self.seen[what] = now
        if idle > self.stall:
            raise Stalled(f"{what} stalled: no progress for {idle} cycles (at cycle "
                          f"{now}, {self.where})")
        if now - self.t_step > self.max_cycles:
            others = sorted(w for w, t in self.seen.items() if t >= now - 1 and w != what)
            also = f"; also in flight: {', '.join(others)}" if others else ""
            raise Stalled(f"cycle limit of {self.max_cycles} cycles per step exceeded while "
                          f"waiting on {what} ({self.where}){also}")

    async def load(self, board: int, engine: str, data: dict[str, list[int]]) -> None:
        """Stream every operand of ``data`` into the engine at once, one beat per cycle."""
        await self.send(board, {f"{engine}_s_{k}": (v, {}) for k, v in data.items()})

    async def send(self, board: int, streams: dict[str, tuple[list[int], dict]]) -> None:
        """Drive the streams ``prefix -> (beats, {side signal: values})`` at full rate."""
        ports = {}
        for prefix, (beats, side) in streams.items():
            last = f"b{board}_{prefix}_last"
            data = self.sig(board, prefix, "data")
            ports[prefix] = (data, self.sig(board, prefix, "valid"),
                             getattr(self.dut, last) if hasattr(self.dut, last) else None,
                             self.sig(board, prefix, "ready"), beats,
                             {k: (self.sig(board, prefix, k), v) for k, v in side.items()})
        index = dict.fromkeys(streams, 0)
        idle = 0
        while any(index[k] < len(p[4]) for k, p in ports.items()):
            await RisingEdge(self.dut.clk)
            for k, (d, v, last, _, beats, side) in ports.items():
                i = index[k]
                if i < len(beats):
                    d.value = beats[i] & ((1 << len(d)) - 1)
                    v.value = 1
                    if last is not None:
                        last.value = int(i == len(beats) - 1)
                    for sig, values in side.values():
                        sig.value = values[i]
                else:
                    v.value = 0
            await ReadOnly()
            moved = False
            for k, (_, _, _, ready, beats, _) in ports.items():
                if index[k] < len(beats) and int(ready.value):
                    index[k] += 1
                    moved = True
            idle = 0 if moved else idle + 1
            stuck = [k for k, p in ports.items() if index[k] < len(p[4])]
            self._check(idle, f"board {board} stream {stuck[0] if stuck else '?'}")
        await RisingEdge(self.dut.clk)
        for _, v, *_ in ports.values():
            v.value = 0

    async def pulse(self, board: int, engine: str, port: str) -> None:
        s = self.sig(board, engine, port)
        s.value = 1
        await RisingEdge(self.dut.clk)
        s.value = 0

    async def wait_done(self, board: int, engine: str) -> None:
        done = self.sig(board, engine, "done")
        idle = 0
        while True:
            await ReadOnly()
            if int(done.value):
                break
            await RisingEdge(self.dut.clk)
            idle += 1
            self._check(idle, f"board {board} engine {engine} (done never came)")
        await RisingEdge(self.dut.clk)

    async def drain(self, board: int, engine: str, count: int, *, width: int | None = None,
                    side: list[int] | None = None, port: str = "m") -> list[int]:
        """Collect ``count`` beats of ``<engine>_<port>`` (signed, ``width`` bits; the
        accumulator width by default); with ``side``, the beats' ``arg`` values go there."""
        data, valid, last, ready = (self.sig(board, engine, f"{port}_{name}")
                                    for name in ("data", "valid", "last", "ready"))
        arg = self.sig(board, engine, f"{port}_arg") if side is not None else None
        width = width or self.built.acc_width
        out: list[int] = []
        idle = 0
        ready.value = 1
        while len(out) < count:
            # Sampled before the edge at which the beat is taken (ready is already high).
            await ReadOnly()
            if int(valid.value):
                out.append(signed(int(data.value), width))
                if arg is not None:
                    side.append(int(arg.value))
                idle = 0
                if int(last.value) != int(len(out) == count):
                    raise Stalled(f"board {board} stream {engine}.{port}: last flag at beat "
                                  f"{len(out)} of {count} ({self.where})")
            else:
                idle += 1
            self._check(idle, f"board {board} stream {engine}.{port} (result)")
            await RisingEdge(self.dut.clk)
        ready.value = 0
        return out


class Trainer:
    """The data side: activations, errors, accumulators and weights as integers.

    Every tensor lives on a board: ``local[image][(item, board)]`` with the items the links of
    ``fpdeep.schedule.tasks`` carry (``item``, ``contribution_item``: a tensor, a slice's output or
    output error, a layer's error contribution, raw partial input errors). A task reads its
    operands on its own board; only a link task moves data between boards, through the RTL link
    framing and link models.
    """

    def __init__(self, args: dict, design: dict, built: Design, info: BuildInfo) -> None:
        folder = Path(args["dir"])
        self.net = fpdeep.load_onnx(folder / info.model_file, input_shape=info.input_shape)
        self.ctx = golden_step.StepContext.make(self.net, built.numerics, built.loss)
        self.needs = golden_step.needs_error(self.net)
        inputs = np.load(args["inputs"])
        self.x = self.ctx.input(inputs["x"].astype(np.float64))
        self.y = inputs["y"].astype(np.int64)
        self.batch = len(self.y)
        self.layers = {layer.name: layer for layer in self.net.layers}
        self.logits = golden_step.logits_tensor(self.net, built.loss)
        self.params = golden_step.load_params(
            self.net, {k: inputs[f"w:{k}"] for k in _trainable_names(self.net)}, self.ctx)
        self.slices = {(s["layer"], s["lo"]): (b["index"], s)
                       for b in design["boards"] for s in b["slices"]}
        self.units = {u["layer"]: u for b in design["boards"] for u in b["units"]
                      if u["kind"] not in ("sgd", "fanin", "psum", "loss")}
        self.alias = stream_aliases(self.net)  # Flatten/Identity outputs: their input's stream
        # keyed like the schedule's fan-in tasks: by the tensor whose stream it is
        self.fan_ins = {self.canon(u["layer"]): u for b in design["boards"] for u in b["units"]
                        if u["kind"] == "fanin"}
        self.psums = {u["layer"]: u for b in design["boards"] for u in b["units"]
                      if u["kind"] == "psum"}
        self.homes = dict(design["homes"])
        self.order = {layer.name: k for k, layer in enumerate(self.net.layers)}
        self.ranges: dict[str, list[tuple[int, int]]] = {}
        for name, lo in sorted(self.slices):
            self.ranges.setdefault(name, []).append((lo, self.slices[(name, lo)][1]["hi"]))

    def begin_step(self) -> None:
        source = self.homes[self.net.input_name]
        self.local: list[dict[tuple[str, int], np.ndarray]] = [
            {(item("act", self.net.input_name), source): self.x[i]} for i in range(self.batch)]
        self.errs: list[dict[str, np.ndarray]] = [{} for _ in range(self.batch)]
        self.input_errors: dict[str, list] = {}
        self.argmax: list[dict[str, list[int]]] = [{} for _ in range(self.batch)]
        self.accs: dict[tuple[str, int], np.ndarray] = {}

    def put(self, i: int, key: str, board: int, value: np.ndarray) -> None:
        self.local[i][(key, board)] = value

    def shape(self, tensor: str) -> tuple[int, ...]:
        return tuple(self.net.tensors[tensor].shape)

    def get(self, i: int, key: str, board: int) -> np.ndarray:
        """Item ``key`` of image ``i`` on ``board``; a compute layer's output is assembled from
        its slices on its home board, a slice of an error cut from the whole error there."""
        value = self.local[i].get((key, board))
        if value is not None:
            return value
        kind, name, channels = parse_item(key)
        if kind == "act" and channels is None and board == self.homes.get(name):
            layer = self.net.tensors[name].producer
            parts = [self.local[i].get((item("act", name, lo, hi), board))
                     for lo, hi in self.ranges.get(layer, [])]
            if parts and all(p is not None for p in parts):
                value = np.concatenate(parts).reshape(self.shape(name))
                self.put(i, key, board, value)
                return value
        if kind == "err" and channels is not None and board == self.homes.get(name):
            return self.error(i, name)[channels[0]:channels[1]]
        raise Stalled(f"board {board} does not hold {key} of image {i}: the step's task graph "
                      f"and the testbench disagree")

    def canon(self, tensor: str) -> str:
        return self.alias.get(tensor, tensor)

    def act(self, i: int, tensor: str, board: int) -> np.ndarray:
        return self.get(i, item("act", self.canon(tensor)), board)

    def contribute(self, i: int, tensor: str, consumer: str, board: int,
                   value: np.ndarray) -> None:
        """Layer ``consumer``'s error contribution to ``tensor``, made on ``board``."""
        tensor = self.canon(tensor)
        if self.needs.get(tensor, False):
            self.put(i, contribution_item(tensor, consumer), board,
                     value.reshape(self.shape(tensor)))

    def contributions(self, i: int, tensor: str) -> list[np.ndarray]:
        """The error contributions to ``tensor`` that reached its home, in layer order."""
        tensor = self.canon(tensor)
        home, prefix = self.homes[tensor], contribution_item(tensor, "")
        found = [(key[len(prefix):], v) for (key, b), v in self.local[i].items()
                 if b == home and key.startswith(prefix)]
        return [v for _, v in sorted(found, key=lambda kv: self.order.get(kv[0], -1))]

    def error(self, i: int, tensor: str) -> np.ndarray:
        """The whole error of ``tensor`` on its home board (summed by its fan-in unit where
        two layers contribute)."""
        tensor = self.canon(tensor)
        if tensor not in self.errs[i]:
            parts = self.contributions(i, tensor)
            if len(parts) > 1:
                raise Stalled(f"the error of {tensor} (image {i}) is read before its fan-in")
            self.errs[i][tensor] = parts[0] if parts else np.zeros(self.shape(tensor),
                                                                   dtype=np.int64)
        return self.errs[i][tensor]

    def weight_slice(self, layer: str, lo: int, hi: int) -> dict[str, list[int]]:
        p = self.params[layer]
        out = {"w": p["weight"][lo:hi].ravel().tolist()}
        if "bias" in p:
            out["b"] = p["bias"][lo:hi].tolist()
        return out

    def unit(self, task) -> None:
        """The golden model's integer function for a layer without an RTL unit (a Sum of more
        than two inputs)."""
        i, board = task.image, task.board
        layer = self.layers[task.layer]
        ins = [self.act(i, n, board)[None] for n in layer.inputs]
        if task.what == "fp":
            out = spec(layer.op).forward(self.ctx, layer, ins, {})[0]
            self.put(i, item("act", layer.output), board, out)
        elif task.what == "bp":
            e = self.error(i, layer.output)[None]
            errs = spec(layer.op).backward(self.ctx, layer, e, ins, {})
            for name, err in zip(layer.inputs, errs, strict=True):
                self.contribute(i, name, layer.name, board, err[0])

    def add_input_error(self, i: int, layer, board: int, dx: np.ndarray) -> None:
        """A compute layer's whole input error, made on ``board``."""
        dx = dx.reshape(self.shape(layer.inputs[0]))
        self.contribute(i, layer.inputs[0], layer.name, board, dx)
        self.input_errors.setdefault(layer.name, [None] * self.batch)[i] = dx


def _trainable_names(net) -> list[str]:
    return [ref.name for layer in net.compute_layers for ref in golden_step.trainable_refs(layer)]


async def run_engine(cl: Bench, tr: Trainer, task) -> None:
    board, s = tr.slices[(task.layer, _lo_of(tr, task))]
    layer = tr.layers[task.layer]
    lo, hi = s["lo"], s["hi"]
    i = task.image
    if task.what == "load":
        await cl.load(board, task.engine, tr.weight_slice(task.layer, lo, hi))
        return
    x = tr.act(i, layer.inputs[0], board).ravel().tolist()
    if task.what in ("bp", "wg"):
        dy = tr.get(i, item("err", layer.output, lo, hi), board).ravel().tolist()
    data = {"fp": lambda: {"x": x}, "bp": lambda: {"dy": dy},
            "wg": lambda: {"x": x, "dy": dy}}[task.what]()
    await cl.load(board, task.engine, data)
    await cl.pulse(board, task.engine, "start")
    await cl.wait_done(board, task.engine)
    if not task.drain:
        return
    out = np.array(await cl.drain(board, task.engine, task.drain), dtype=np.int64)
    if task.what == "fp":
        tr.put(i, item("act", layer.output, lo, hi), board,
               out.reshape((hi - lo, *layer.out_shape[1:])))
    elif s["split"]:
        tr.put(i, item("psum", layer.name, lo, hi), board, out)
    else:
        tr.add_input_error(i, layer, board, out)


def _lo_of(tr: Trainer, task) -> int:
    for (name, lo), (_, s) in tr.slices.items():
        if name == task.layer and task.engine.startswith(s["ident"] + "_"):
            return lo
    raise KeyError(task.engine)


async def run_flush(cl: Bench, tr: Trainer, task) -> None:
    lo = _lo_of(tr, task)
    board, s = tr.slices[(task.layer, lo)]
    await cl.pulse(board, task.engine, "flush")
    out = np.array(await cl.drain(board, task.engine, task.drain), dtype=np.int64)
    w = tr.params[task.layer]["weight"]
    n = (s["hi"] - s["lo"]) * int(np.prod(w.shape[1:]))
    tr.accs[(task.layer, lo)] = (out[:n].reshape((s["hi"] - s["lo"], *w.shape[1:])), out[n:])


async def _through(cl: Bench, board: int, unit: str, streams: dict, count: int,
                   width: int) -> list[int]:
    """Stream into a unit and collect its output at the same time."""
    sender = cocotb.start_soon(cl.send(board, streams))
    out = await cl.drain(board, unit, count, width=width)
    await sender
    return out


async def run_unit(cl: Bench, tr: Trainer, task) -> None:
    """A layer's RTL unit (ReLU or pooling) forward or backward, or a board's SGD update."""
    dw = cl.design["data_width"]
    if task.rtl == "sgd":
        await run_sgd(cl, tr, task.board)
        return
    if task.what == "fanin":
        await run_fan_in(cl, tr, task)
        return
    if task.rtl == "psum":
        await run_psum(cl, tr, task)
        return
    if task.rtl == "loss":
        await run_loss(cl, tr, task)
        return
    unit = tr.units[task.layer]
    p, board, i = unit["ident"], task.board, task.image
    layer = tr.layers[task.layer]
    if unit["kind"] == "add":
        await run_add(cl, tr, task, unit, layer)
        return
    x = tr.act(i, layer.inputs[0], board)
    bwd = int(task.what == "bp")
    if unit["kind"] == "relu":
        cl.sig(board, p, "bwd").value = bwd
        streams = {f"{p}_s_x": (x.ravel().tolist(), {})}
        if bwd:
            streams[f"{p}_s_e"] = (tr.error(i, layer.output).ravel().tolist(), {})
        out = np.array(await _through(cl, board, p, streams, x.size, dw), dtype=np.int64)
    else:
        info = unit["info"]
        p = f"{p}_{task.what}"  # one pooling engine per direction
        table = info["table_bwd" if bwd else "table_fwd"]
        if bwd:
            e = tr.error(i, layer.output).ravel().tolist()
            arg = tr.argmax[i].get(layer.name, [0] * len(e))
            streams = {f"{p}_s_x": (e, {"arg": arg})}
        else:
            streams = {f"{p}_s_x": (x.ravel().tolist(), {"arg": [0] * x.size})}
        if table:
            streams[f"{p}_s_m"] = (list(table), {})
        await cl.send(board, streams)
        await cl.pulse(board, p, "start")
        await cl.wait_done(board, p)
        # the argmax side output only means something out of forward max pooling
        args: list[int] | None = None if bwd or info["avg"] else []
        n_out = info["in"] if bwd else info["out"]
        out = np.array(await cl.drain(board, p, n_out, width=dw, side=args), dtype=np.int64)
        if args is not None:
            tr.argmax[i][layer.name] = args
    if bwd:
        tr.contribute(i, layer.inputs[0], layer.name, board, out)
    else:
        tr.put(i, item("act", layer.output), board, out.reshape(layer.out_shape))


async def run_add(cl: Bench, tr: Trainer, task, unit: dict, layer) -> None:
    """Residual Add forward (two inputs joined), or its error fan-out to both inputs."""
    p, board, i, dw = unit["ident"], task.board, task.image, cl.design["data_width"]
    if task.what == "fp":
        a, b = (tr.act(i, n, board).ravel().tolist() for n in layer.inputs)
        out = await _through(cl, board, p, {f"{p}_s_a": (a, {}), f"{p}_s_b": (b, {})}, len(a),
                             dw)
        tr.put(i, item("act", layer.output), board,
               np.array(out, dtype=np.int64).reshape(layer.out_shape))
        return
    e = tr.error(i, layer.output).ravel().tolist()
    sender = cocotb.start_soon(cl.send(board, {f"{p}_bp_s": (e, {})}))
    second = cocotb.start_soon(cl.drain(board, f"{p}_bp", len(e), width=dw, port="m_b"))
    outs = [await cl.drain(board, f"{p}_bp", len(e), width=dw, port="m_a"), await second]
    await sender
    for name, out in zip(layer.inputs, outs, strict=True):
        tr.contribute(i, name, layer.name, board, np.array(out, dtype=np.int64))


async def run_loss(cl: Bench, tr: Trainer, task) -> None:
    """The per-sample softmax cross-entropy error of one image's logits."""
    i = task.image
    p = next(u["ident"] for b in cl.design["boards"] for u in b["units"] if u["kind"] == "loss")
    z = tr.act(i, tr.logits, task.board).ravel().tolist()
    label = int(tr.y[i])
    streams = {f"{p}_s_z": (z, {"label": [label] * len(z)})}
    out = await _through(cl, task.board, p, streams, len(z), cl.design["data_width"])
    tr.contribute(i, tr.logits, "loss", task.board, np.array(out, dtype=np.int64))


async def run_psum(cl: Bench, tr: Trainer, task) -> None:
    """A split layer's raw partial input errors added pass by pass; the last pass
    requantises."""
    unit, i = tr.psums[task.layer], task.image
    p, acw = unit["ident"], cl.built.acc_width
    layer = tr.layers[task.layer]
    parts = [tr.get(i, item("psum", layer.name, lo, hi), task.board)
             for lo, hi in tr.ranges[layer.name]]
    acc = parts[0]
    for k, part in enumerate(parts[1:], start=1):
        final = k == len(parts) - 1
        cl.sig(task.board, p, "final").value = int(final)
        streams = {f"{p}_s_a": (acc.tolist(), {}), f"{p}_s_b": (part.tolist(), {})}
        acc = np.array(await _through(cl, task.board, p, streams, acc.size, acw), dtype=np.int64)
    tr.add_input_error(i, layer, task.board, acc)


async def run_fan_in(cl: Bench, tr: Trainer, task) -> None:
    """The two error contributions of a tensor summed by its fan-in unit."""
    unit, i = tr.fan_ins[task.layer], task.image
    parts = tr.contributions(i, task.layer)
    if len(parts) != 2:
        raise Stalled(f"tensor {task.layer} has {len(parts)} error contributions at its fan-in, "
                      f"expected 2 ({cl.where})")
    p = unit["ident"]
    streams = {f"{p}_s_a": (parts[0].ravel().tolist(), {}),
               f"{p}_s_b": (parts[1].ravel().tolist(), {})}
    out = await _through(cl, task.board, p, streams, parts[0].size, cl.design["data_width"])
    tr.errs[i][task.layer] = np.array(out, dtype=np.int64).reshape(parts[0].shape)


async def run_sgd(cl: Bench, tr: Trainer, board: int) -> None:
    p, dw = "sgd", cl.design["data_width"]
    mb, rb = sgd.batch_constant(tr.batch)
    mlr, rlr = sgd.lr_constant(tr.lr)
    for (name, lo), (b, s) in tr.slices.items():
        if b != board:
            continue
        layer = tr.layers[name]
        acc_w, acc_b = tr.accs[(name, lo)]
        g_fmt, w_fmt = tr.ctx.fmt("grad", name), tr.ctx.fmt("weight", name)
        fe = tr.ctx.err(layer.output).frac
        for role, acc, frac in (("weight", acc_w, fe + tr.ctx.act(layer.inputs[0]).frac),
                                ("bias", acc_b, fe)):
            if role not in tr.params[name]:
                continue
            cl.sig(board, p, "cfg_mb").value = mb
            cl.sig(board, p, "cfg_sb").value = SGD.encode("cfg_sb", frac + rb - g_fmt.frac)
            cl.sig(board, p, "cfg_mlr").value = mlr
            cl.sig(board, p, "cfg_slr").value = SGD.encode("cfg_slr",
                                                           g_fmt.frac + rlr - w_fmt.frac)
            w = tr.params[name][role]
            old = w[s["lo"]:s["hi"]]
            streams = {f"{p}_s_g": (acc.ravel().tolist(), {}),
                       f"{p}_s_w": (old.ravel().tolist(), {})}
            new = await _through(cl, board, p, streams, old.size, dw)
            w[s["lo"]:s["hi"]] = np.array(new, dtype=np.int64).reshape(old.shape)


async def run_link(cl: Bench, tr: Trainer, task) -> None:
    """Move the task's item from one board to its neighbour through the RTL link framing and
    link model: encoded as data words (a raw partial sum is several, low first), decoded on the
    far side, where later tasks read it."""
    (a, b), = link_hops(task)
    value = tr.get(task.image, task.item, a)
    per = RAW_BYTES // ELEM_BYTES if parse_item(task.item)[0] == "psum" else 1
    word = cl.design["data_width"]  # the link streams carry the boards' data words
    mask = (1 << word) - 1
    words = [(int(v) >> (word * k)) & mask for v in value.ravel() for k in range(per)]
    if len(words) * ELEM_BYTES != task.bytes:
        raise Stalled(f"link {a} -> {b}: {task.item} is {len(words)} words, the schedule "
                      f"says {task.bytes} bytes")
    side, other = ("east", "west") if b > a else ("west", "east")
    sender = cocotb.start_soon(cl.send(a, {f"{side}_s": (words, {})}))
    got = [w & mask for w in await cl.drain(b, other, len(words), width=word)]
    await sender
    groups = np.array(got, dtype=np.int64).reshape(-1, per)
    raw = sum(groups[:, k] << (word * k) for k in range(per))
    width = word * per
    decoded = np.where(raw >= 1 << (width - 1), raw - (1 << width), raw)
    tr.put(task.image, task.item, b, decoded.reshape(value.shape))


async def run_task(cl: Bench, tr: Trainer, task) -> None:
    if task.kind == "unit" and task.rtl:
        await run_unit(cl, tr, task)
    elif task.kind == "engine":
        await run_engine(cl, tr, task)
    elif task.kind == "flush":
        await run_flush(cl, tr, task)
    elif task.kind == "link":
        await run_link(cl, tr, task)
    else:
        tr.unit(task)
        await ClockCycles(cl.dut.clk, task_cycles(task, links=cl.built.links))


class Controller:
    """Plays the step's task graph the way the board controllers do: a task starts as soon as
    the tasks it waits for have ended and its engine, unit or link is free; a freed resource
    goes to the waiting task that comes first in the graph (the older image)."""

    def __init__(self, cl: Bench, tr: Trainer, tasks: list, progress: Path, step: int,
                 steps: int) -> None:
        self.cl, self.tr, self.tasks = cl, tr, tasks
        self.ended = [Event() for _ in tasks]
        self.busy: set[str] = set()
        self.waiting: dict[str, list[tuple[int, Event]]] = {}
        self.spans: list[list[int]] = [[-1, -1] for _ in tasks]
        self.errors: list[Stalled] = []
        self.stop = Event()
        self.count = 0
        self.progress, self.step, self.steps = progress, step, steps

    async def acquire(self, resource: str, k: int) -> None:
        if resource not in self.busy:
            self.busy.add(resource)
            return
        turn = Event()
        self.waiting.setdefault(resource, []).append((k, turn))
        await turn.wait()

    def release(self, resource: str) -> None:
        queue = self.waiting.get(resource)
        if queue:  # handed over at once: the resource stays busy
            queue.sort(key=lambda entry: entry[0])
            queue.pop(0)[1].set()
        else:
            self.busy.discard(resource)

    async def run(self, k: int) -> None:
        task = self.tasks[k]
        try:
            for d in task.deps:
                await self.ended[d].wait()
            resource = task.resource or f"task {k}"
            await self.acquire(resource, k)
            self.spans[k][0] = self.cl.now()
            await run_task(self.cl, self.tr, task)
            self.spans[k][1] = self.cl.now()
            self.release(resource)
        except Stalled as exc:  # handed to the step: a failing task would end the test silently
            self.errors.append(exc)
            self.stop.set()
            return
        self.ended[k].set()
        self.count += 1
        if self.count % 16 == 0 or self.count == len(self.tasks):
            self.progress.write_text(json.dumps({"step": self.step, "steps": self.steps,
                                                 "task": self.count, "tasks": len(self.tasks)}))
        if self.count == len(self.tasks):
            self.stop.set()

    async def play(self) -> None:
        runners = [cocotb.start_soon(self.run(k)) for k in range(len(self.tasks))]
        await self.stop.wait()
        if self.errors:
            for r in runners:
                if not r.done():
                    r.cancel()
            raise self.errors[0]


def _record(tr: Trainer, rec: dict, step: int) -> None:
    for name, layer in tr.layers.items():
        if spec(layer.op).in_loss:
            continue
        home = tr.homes[layer.output]
        rec[f"{step}/{name}/output"] = np.stack(
            [tr.act(i, layer.output, home).reshape(layer.out_shape) for i in range(tr.batch)])
    for name, errs in tr.input_errors.items():
        rec[f"{step}/{name}/input_error"] = np.stack(errs)
    for layer in tr.net.compute_layers:
        parts = sorted((lo, acc) for (n, lo), acc in tr.accs.items() if n == layer.name)
        rec[f"{step}/{layer.name}/acc_weight"] = np.concatenate([a[0] for _, a in parts])
        if layer.weight("bias") is not None:
            rec[f"{step}/{layer.name}/acc_bias"] = np.concatenate([a[1] for _, a in parts])
        for role, value in tr.params[layer.name].items():
            rec[f"{step}/{layer.name}/new_{role}"] = value.copy()


@cocotb.test()
async def cluster_trains(dut):
    args = tb_args()
    design = json.loads((Path(args["dir"]) / "design.json").read_text())
    built, _, info = read_design_document(design, "design.json")
    cl = Bench(dut, design, built, args)
    tr = Trainer(args, design, built, info)
    tr.lr = float(args["lr"])
    # nothing moves or starts before the controller drives it: every handshake, control and
    # configuration input of every board idles low
    for b in built.boards:
        for port in board_ports(built, b):
            if port.direction == "input" and port.role in IDLE_LOW and not port.link:
                getattr(dut, f"b{b.index}_{port.name}").value = 0
    await reset(dut)
    # the loss unit's 2^(i/256) table, once after reset (before any step is timed)
    loss_board, loss = next((b["index"], u["ident"]) for b in design["boards"]
                            for u in b["units"] if u["kind"] == "loss")
    await cl.send(loss_board, {f"{loss}_s_t": ([int(v) for v in golden_loss.EXP2_TABLE], {})})
    tasks = schedule(built, tr.net, batch=tr.batch).tasks
    modelled = [task_cycles(t, links=built.links) for t in tasks]
    progress = Path(args["progress"])
    result: dict = {"steps": [], "error": None}
    rec: dict[str, np.ndarray] = {}
    try:
        for step in range(int(args["steps"])):
            tr.begin_step()
            await RisingEdge(dut.clk)
            cl.t_step = cl.now()
            cl.where = f"step {step + 1}"
            ctl = Controller(cl, tr, tasks, progress, step, args["steps"])
            await ctl.play()
            log = [[start - cl.t_step, end - start, model, t.kind, t.what, t.resource]
                   for (start, end), model, t in zip(ctl.spans, modelled, tasks, strict=True)]
            result["steps"].append({"cycles": cl.now() - cl.t_step, "tasks": log})
            _record(tr, rec, step)
            frames = [cl.sig(b["index"], e["ident"], "err_frame").value
                      for b in design["boards"] for s in b["slices"] for e in s["engines"].values()]
            if any(int(f) for f in frames):
                raise Stalled("an engine flagged a stream framing error (last flag misplaced)")
    except Stalled as exc:
        result["error"] = str(exc)
    np.savez(args["record"], **rec)
    Path(args["out"]).write_text(json.dumps(result))
    assert result["error"] is None, result["error"]
