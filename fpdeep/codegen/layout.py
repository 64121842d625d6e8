"""A board as the controller sees it: its resources (every engine, unit and link direction,
each run by its own sequencer), the movers that feed and drain each of them from the tensor
store, and the store's banks and regions.

A task of the step's task graph (`fpdeep.schedule.tasks`) becomes, on its resource, a list of
`Access`es — which mover reads or writes which stored item — and the resource's runtime
configuration; `task_work` is that rule, used both to size the store (`board_layouts`) and by
the instruction compiler (`fpdeep.codegen.program`).

Items are stored per image where they are per image (activations, errors, partial sums,
argmax), once where they are per board (weights, biases, gradient sums, tables). A slice of a
layer's output or error on the layer's home board is a region inside the whole tensor (a
(C, H, W) tensor is stored channel by channel), a tensor's single error contribution on its
home board is its error: so no task ever copies data to assemble or cut a tensor. The one
exception keeps writers apart: a bank takes one write per cycle, so the home board's own slice
of a split layer's output has a bank of its own beside the bank the other slices arrive in
over the link, and a read of the whole tensor there streams the two banks one after the other
(a chained mover command).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from fpdeep.codegen.ports import (
    ENGINE_PART,
    Part,
    _engine_parameters,
    _unit_parameters,
    unit_parts,
)
from fpdeep.design.lower import BoardDesign, Design, EngineDesign, SliceDesign
from fpdeep.design.units import (
    BN_PASSES,
    BN_TABLE,
    BN_TABLE_BITS,
    UnitDesign,
    bn_pass_config,
    dropout_image_seed,
)
from fpdeep.errors import FpdeepError
from fpdeep.golden import loss as golden_loss
from fpdeep.hwlib import LINK_RX, LINK_TX, Module
from fpdeep.hwlib.protocol import BANK_ADDRESS_BITS, DRAM_BANK
from fpdeep.ir import Network
from fpdeep.ops import needs_error, spec
from fpdeep.planning.store import (
    OFF_CHIP,
    BoardStore,
    StoreBank,
    bank_depth,
    off_chip_kind,
    read_copies,
    signed_bits,
)
from fpdeep.schedule.tasks import (
    OUT,
    Task,
    contribution_item,
    item,
    link_hops,
    parse_item,
    schedule,
    stream_aliases,
)

#: Beats per stored word on a link: a raw 48-bit partial sum is three 16-bit words.
RAW_PARTS = 3


@dataclass(frozen=True)
class Mover:
    """A mover between the store and one stream of a resource (or one side signal of it)."""

    stream: str  # the module's stream, e.g. "s_x" or "m"
    side: str = ""  # a side signal of that stream this mover carries ("arg", "label")
    width: int = 16
    last: bool = True  # the stream has a last flag and this mover carries the data


@dataclass(frozen=True)
class Resource:
    """One engine, unit part or link direction of a board, with its sequencer's movers."""

    name: str  # RTL instance suffix, e.g. "conv1_c0_4_fp", "relu1", "east_tx"
    key: str  # the schedule's resource, e.g. "0:conv1_c0_4_fp", "link:0>1"
    module: Module
    ins: tuple[Mover, ...]
    outs: tuple[Mover, ...]
    cfg: tuple[tuple[str, int], ...] = ()  # runtime configuration inputs (port, width)
    start: bool = False
    flush: bool = False
    done: bool = False
    part: Part | None = None
    engine: EngineDesign | None = None
    unit: UnitDesign | None = None
    shares: str = ""  # the resource whose module instance this one drives too (its results)

    def mover(self, stream: str, side: str = "", *, out: bool = False) -> int:
        movers = self.outs if out else self.ins
        for k, m in enumerate(movers):
            if m.stream == stream and m.side == side:
                return k
        raise FpdeepError(f"resource {self.name} has no {'output' if out else 'input'} "
                          f"stream {stream}{'.' + side if side else ''}")


@dataclass(frozen=True)
class Access:
    """A mover of the task's resource moves ``words`` words of stored ``key`` (of image
    ``image``, -1: a per-board item) from ``offset`` within it; ``hold``: the same word again;
    ``chain``: the mover's next access continues this one's stream."""

    mover: int
    out: bool
    key: str
    words: int
    image: int = -1
    offset: int = 0
    hold: bool = False
    parts: int = 1
    chain: bool = False


@dataclass(frozen=True)
class Work:
    """One pass of a resource: configuration, the accesses, and how the pass runs."""

    accesses: tuple[Access, ...]
    cfg: tuple[tuple[str, int], ...] = ()  # runtime configuration port -> value
    start: bool = False
    flush: bool = False
    wait_done: bool = False
    ends_task: bool = True


@dataclass(frozen=True)
class Region:
    bank: int
    words: int  # per image for a per-image item
    per_image: bool


@dataclass(frozen=True)
class DramRegion:
    """Where an item kept in off-chip memory lies: from byte ``base`` on, each word in
    2^``slot`` bytes, an image's words ``stride`` bytes after the previous image's."""

    base: int
    slot: int
    words: int  # per image for a per-image item
    per_image: bool
    stride: int

    def end(self, images: int) -> int:
        return self.base + self.stride * (images if self.per_image else 1)


#: Off-chip items start on a 4 KB page and each image's words on a 128-byte line (AXI4's
#: widest beat), so bursts start aligned.
DRAM_ITEM_ALIGN, DRAM_IMAGE_ALIGN = 4096, 128


@dataclass
class BoardLayout:
    """The resources and the tensor store of one board, for up to ``batch`` images; the
    items kept off chip (``dram``) and the movers that reach them (resource index, output
    mover?, mover index)."""

    index: int
    batch: int
    resources: list[Resource]
    banks: list[StoreBank] = field(default_factory=list)
    regions: dict[str, Region] = field(default_factory=dict)
    dram: dict[str, DramRegion] = field(default_factory=dict)
    dram_movers: set[tuple[int, bool, int]] = field(default_factory=set)
    dram_traffic: int = 0  # bytes a one-image step reads and writes off chip

    @property
    def dram_bytes(self) -> int:
        """Bytes of off-chip memory the board's items take."""
        return max((r.end(self.batch) for r in self.dram.values()), default=0)

    @property
    def store(self) -> BoardStore:
        return BoardStore(self.index, self.batch, tuple(self.banks), 8 * self.dram_bytes,
                          self.dram_traffic)

    def resource(self, key: str) -> int:
        for k, r in enumerate(self.resources):
            if r.key == key:
                return k
        raise FpdeepError(f"board {self.index} has no resource {key!r}")

    def address(self, key: str, image: int, offset: int = 0) -> tuple[int, int]:
        """(bank, address) of word ``offset`` of stored ``key`` of ``image``; for an item kept
        off chip (`DRAM_BANK`, byte address)."""
        region = self.dram.get(key) or self.regions.get(key)
        if region is None:
            raise FpdeepError(f"board {self.index} stores no {key!r}")
        if region.per_image and not 0 <= image < self.batch:
            raise FpdeepError(f"image {image} of {key!r}: the store of board {self.index} "
                              f"holds {self.batch} image(s); rebuild with a larger --batch")
        first = image if region.per_image else 0
        if isinstance(region, DramRegion):
            return DRAM_BANK, region.base + first * region.stride + (offset << region.slot)
        return region.bank, first * region.words + offset


def _movers(module: Module, params: Mapping[str, int]) -> tuple[tuple[Mover, ...],
                                                               tuple[Mover, ...]]:
    ports = {p.name: p.width for p in module.ports(**params)}
    ins, outs = [], []
    for s in module.streams:
        side = [Mover(s.name, name, ports[f"{s.name}_{name}"], last=False) for name, _ in s.side]
        movers = [Mover(s.name, "", ports[f"{s.name}_data"], s.last is not None), *side]
        (ins if s.sink else outs).extend(movers)
    return tuple(ins), tuple(outs)


def _controls(module: Module) -> dict[str, bool]:
    names = {s.name for s in module.signals()}
    return {"start": "start" in names, "flush": "flush" in names, "done": "done" in names}


def _resources(d: Design, board: BoardDesign) -> list[Resource]:
    out = []
    for s in board.slices:
        for e in s.engines.values():
            # two sequencers per engine, as its double buffers overlap what they do: one
            # streams the operands in and starts runs, one drains results (and flushes)
            params = _engine_parameters(e, d.data_width)
            ins, outs = _movers(ENGINE_PART.module, params)
            key = f"{board.index}:{e.ident}"
            out.append(Resource(e.ident, key, ENGINE_PART.module, ins, (), start=True,
                                done=True, part=ENGINE_PART, engine=e))
            out.append(Resource(e.ident + "_out", key + OUT, ENGINE_PART.module, (), outs,
                                flush=True, part=ENGINE_PART, engine=e, shares=e.ident))
    for u in board.units:
        for part in unit_parts(u):
            params = _unit_parameters(part, u, d.data_width, d.acc_width)
            ins, outs = _movers(part.module, params)
            widths = {p.name: p.width for p in part.module.ports(**params)}
            cfg = tuple((p, widths[p]) for p in part.inputs)
            out.append(Resource(u.ident + part.suffix, f"{board.index}:{u.ident}{part.suffix}",
                                part.module, ins, outs, cfg, **_controls(part.module),
                                part=part, unit=u))
    for side, neighbour in _neighbours(d, board):
        dw = d.data_width
        out.append(Resource(f"{side}_tx", f"link:{board.index}>{neighbour}", LINK_TX,
                            (Mover("s", "", dw, True),), ()))
        out.append(Resource(f"{side}_rx", f"link:{neighbour}>{board.index}", LINK_RX, (),
                            (Mover("m", "", dw, True),)))
    if len(out) > 255:
        raise FpdeepError(f"board {board.index} has {len(out)} engines, units and links; "
                          f"the controller addresses at most 255")
    return out


def _neighbours(d: Design, board: BoardDesign) -> list[tuple[str, int]]:
    out = []
    if board.index < len(d.boards) - 1:
        out.append(("east", board.index + 1))
    if board.index > 0:
        out.append(("west", board.index - 1))
    return out


class TaskWork:
    """What each task of a step does on its resource (`Work`), and where each item lives."""

    def __init__(self, d: Design, network: Network) -> None:
        self.d, self.network = d, network
        self.alias = stream_aliases(network)
        self.needs = needs_error(network)
        self.homes = dict(d.homes)
        self.layers = {layer.name: layer for layer in network.layers}
        self.slices = {(s.layer, e.ident): (b.index, s) for b in d.boards for s in b.slices
                       for e in s.engines.values()}
        self.fan_ins = {self.canon(u.layer) for b in d.boards for u in b.units
                        if u.kind == "fanin"}
        self.logits = self.canon(_last_layer(network).output)
        # output tensor of a layer split over boards -> the channels of its home's own slice,
        # kept in a bank of their own (the other slices arrive over the link meanwhile)
        self.own_slice: dict[str, tuple[int, int]] = {}
        for layer in network.compute_layers:
            slices = d.slices_of(layer.name)
            tensor = self.canon(layer.output)
            own = [s for b, s in slices if b == self.homes.get(tensor)]
            if len({b for b, _ in slices}) > 1 and len(own) == 1:
                self.own_slice[tensor] = (own[0].lo, own[0].hi)

    def canon(self, tensor: str) -> str:
        return self.alias.get(tensor, tensor)

    def size(self, tensor: str) -> int:
        return math.prod(self.network.tensors[tensor].shape)

    # ---- where things are -----------------------------------------------------------------

    def plane(self, tensor: str) -> int:
        """Words of one channel of ``tensor``."""
        return self.size(tensor) // self.network.tensors[tensor].shape[0]

    def locate(self, board: int, key: str) -> tuple[str, int]:
        """(stored family, word offset) of item ``key`` on ``board``: slices and single
        contributions on the home board live inside the whole tensor (but for the home's own
        slice of a split layer, `own_slice`)."""
        kind, name, channels = parse_item(key)
        if kind in ("act", "err") and "<" not in name:
            name = self.canon(name)
            at_home = board == self.homes.get(name)
            own = at_home and kind == "act" and self.own_slice.get(name) == channels
            if channels is not None and at_home and not own:
                return f"{kind}:{name}", channels[0] * self.plane(name)
            return (item(kind, name, *channels) if channels else f"{kind}:{name}"), 0
        if kind == "err" and "<" in name:
            tensor = self.canon(name.split("<", 1)[0])
            if board == self.homes.get(tensor) and tensor not in self.fan_ins:
                return f"err:{tensor}", 0
            return key, 0
        return key, 0

    def segments(self, board: int, key: str, words: int, start: int = 0
                 ) -> list[tuple[str, int, int]]:
        """(stored family, word offset, words) of each stored piece of ``words`` words of item
        ``key`` on ``board`` from word ``start``: one, or two where the read reaches the
        home's own slice of a split layer's output."""
        family, offset = self.locate(board, key)
        offset += start
        kind, name, channels = parse_item(family)
        own = self.own_slice.get(name)
        if kind != "act" or channels is not None or own is None \
                or board != self.homes.get(name):
            return [(family, offset, words)]
        split = own[0] * self.plane(name)  # the words before the home's own slice
        end = offset + words
        pieces = [(family, offset, min(end, split) - offset)] if offset < split else []
        if end > split:
            start = max(offset, split)
            pieces.append((item("act", name, *own), start - split, end - start))
        return pieces

    def reads(self, mover: int, board: int, key: str, words: int, image: int, start: int = 0
              ) -> tuple[Access, ...]:
        """``mover`` reads ``words`` words of item ``key`` of ``image`` on ``board`` from word
        ``start``: an access per stored piece, chained."""
        pieces = self.segments(board, key, words, start)
        return tuple(Access(mover, False, family, n, image, offset, chain=k < len(pieces) - 1)
                     for k, (family, offset, n) in enumerate(pieces))

    def stored_words(self, board: int, family: str) -> tuple[int, bool]:
        """(words, per image) of a stored family on ``board``: the whole item's, but for a
        tensor whose home keeps its own slice apart (`own_slice`), the words before it."""
        kind, name, channels = parse_item(family)
        own = self.own_slice.get(name)
        if kind == "act" and channels is None and own is not None \
                and board == self.homes.get(name):
            return own[0] * self.plane(name), True
        return self.words(family)

    def words(self, family: str) -> tuple[int, bool]:
        """(words, per image) of a stored family."""
        kind, name, channels = parse_item(family)
        if kind in ("act", "err"):
            tensor = self.canon(name.split("<", 1)[0])
            n = self.size(tensor)
            if channels is not None:
                n = n // self.network.tensors[tensor].shape[0] * (channels[1] - channels[0])
            return n, True
        if kind == "psum":
            layer = self.layers[name]
            return self.size(self.canon(layer.inputs[0])), True
        raise FpdeepError(f"no size rule for stored item {family!r}")

    # ---- what each task does --------------------------------------------------------------

    def work(self, task: Task, board: int, layout: BoardLayout) -> list[Work]:
        if task.kind == "run":  # the engine's own loop nest: no instructions
            return []
        res = layout.resources[layout.resource(task.resource)]
        if task.kind == "link":
            return self._link(task, board, res)
        if task.kind in ("engine", "drain", "flush"):
            return self._engine(task, res)
        return self._unit(task, res)

    def _link(self, task: Task, board: int, res: Resource) -> list[Work]:
        (a, _b), = link_hops(task)
        parts = RAW_PARTS if parse_item(task.item)[0] == "psum" else 1
        n = self.words(task.item)[0]
        if board == a:  # the sending side reads the item
            return [Work(tuple(replace(acc, parts=parts)
                               for acc in self.reads(0, board, task.item, n, task.image)))]
        key, offset = self.locate(board, task.item)
        return [Work((Access(0, True, key, n, task.image, offset, parts=parts),))]

    def _engine(self, task: Task, res: Resource) -> list[Work]:
        board, s = self.slices[(task.layer, task.engine)]
        layer = self.layers[task.layer]
        e = res.engine
        i = task.image
        if task.what == "load":
            acc = [Access(res.mover("s_w"), False, f"w:{s.ident}", e.streams["w"])]
            if e.streams.get("b"):
                acc.append(Access(res.mover("s_b"), False, f"b:{s.ident}", e.streams["b"]))
            return [Work(tuple(acc))]
        if task.kind == "flush":
            return [Work((Access(res.mover("m", out=True), True, f"acc:{s.ident}",
                                 e.out_beats),), flush=True)]
        if task.kind == "drain":
            if task.what == "fp":
                target = item("act", layer.output, s.lo, s.hi)
            else:
                src = self.canon(layer.inputs[0])
                target = (item("psum", layer.name, s.lo, s.hi) if s.split
                          else contribution_item(src, layer.name))
            out = self.locate(board, target)
            return [Work((Access(res.mover("m", out=True), True, out[0], e.out_beats, i,
                                 out[1]),))]
        x_item = item("act", self.canon(layer.inputs[0]))
        dy_key = self.locate(board, item("err", layer.output, s.lo, s.hi))
        acc: list[Access] = []
        if task.what in ("fp", "wg"):
            acc += self.reads(res.mover("s_x"), board, x_item, e.streams["x"], i)
        if task.what in ("bp", "wg"):
            acc.append(Access(res.mover("s_dy"), False, dy_key[0], e.streams["dy"], i,
                              dy_key[1]))
        return [Work(tuple(acc), start=True)]

    def _unit(self, task: Task, res: Resource) -> list[Work]:
        u, i, board = res.unit, task.image, task.board
        if u is None or not task.rtl:
            raise FpdeepError(f"task {task.what} of layer {task.layer!r} has no RTL unit")
        kind = u.kind
        loc = self.locate
        if kind == "sgd":
            return self._sgd(task, res)
        if kind == "loss":
            n = self.size(self.logits)
            err = loc(board, contribution_item(self.logits, "loss"))
            return [Work((*self.reads(res.mover("s_z"), board, item("act", self.logits), n, i),
                          Access(res.mover("s_z", "label"), False, "label", n, i, hold=True),
                          Access(res.mover("m", out=True), True, err[0], n, i, err[1])))]
        if kind == "fanin":
            # two contributions: one pass of the Add unit; more: a pass of the partial-sum
            # unit per further one, the exact running sum kept in the error item (as wide as
            # the raw sum, hw/eltwise/fpdeep_psum.sv), saturated by the last pass
            tensor = task.layer
            parts = [loc(board, contribution_item(tensor, c))
                     for c in self._contributors(tensor)]
            out = (f"err:{tensor}", 0)
            return self._summing_passes(res, parts, out, out, self.size(tensor), i,
                                        flagged=len(parts) > 2)
        if kind == "psum":
            layer = self.layers[task.layer]
            src = self.canon(layer.inputs[0])
            ranges = [(s.lo, s.hi) for _, s in self.d.slices_of(layer.name)]
            parts = [loc(board, item("psum", layer.name, lo, hi)) for lo, hi in ranges]
            final = loc(board, contribution_item(src, layer.name))
            return self._summing_passes(res, parts, parts[0], final, self.size(src), i,
                                        flagged=True)
        layer = self.layers[task.layer]
        x_item = item("act", self.canon(layer.inputs[0]))
        y = loc(board, item("act", layer.output))
        n_in, n_out = self.size(self.canon(layer.inputs[0])), self.size(self.canon(layer.output))
        if kind in ("relu", "lrn"):  # LRN's backward, too, reads the forward input again
            bwd = task.what == "bp"
            acc = [*self.reads(res.mover("s_x"), board, x_item, n_in, i)]
            if bwd:
                e = loc(board, item("err", layer.output))
                out = loc(board, contribution_item(self.canon(layer.inputs[0]), layer.name))
                acc += [Access(res.mover("s_e"), False, e[0], n_in, i, e[1]),
                        Access(res.mover("m", out=True), True, out[0], n_in, i, out[1])]
            else:
                acc.append(Access(res.mover("m", out=True), True, y[0], n_out, i, y[1]))
                # the error input idles: the forward pass reads no error
            return [Work(tuple(acc), cfg=(("cfg_bwd", int(bwd)),))]
        if kind in ("concat", "shuffle"):
            # a converter pass per part (an input of a Concat, a channel of a shuffle):
            # forward from its place in the input into its place in the output, backward the
            # error of that place out to the input's (where the input needs one)
            parts = [p for p in u.info["parts"]
                     if task.what == "fp" or self.needs[p["tensor"]]]
            works = []
            for k, p in enumerate(parts):
                src, n = self.canon(p["tensor"]), p["words"]
                if task.what == "fp":
                    acc = (*self.reads(res.mover("s"), board, item("act", src), n, i,
                                       p["from"]),
                           Access(res.mover("m", out=True), True, y[0], n, i,
                                  y[1] + p["offset"]))
                else:
                    e = loc(board, item("err", layer.output))
                    out = loc(board, contribution_item(src, layer.name))
                    acc = (Access(res.mover("s"), False, e[0], n, i, e[1] + p["offset"]),
                           Access(res.mover("m", out=True), True, out[0], n, i,
                                  out[1] + p["from"]))
                works.append(Work(acc, cfg=(("cfg_shift", p[task.what]),),
                                  ends_task=k == len(parts) - 1))
            return works
        if kind == "bn":
            # the pass's per-channel constants on s_p (the host loads them from the running
            # statistics), the activation or the output's error on s_x
            what = "bp" if task.what == "bp" else "fp"
            table = Access(res.mover("s_p"), False, bn_table_item(u.ident, what),
                           u.info["channels"] * len(BN_TABLE[what]))
            if what == "bp":
                e = loc(board, item("err", layer.output))
                out = loc(board, contribution_item(self.canon(layer.inputs[0]), layer.name))
                return [Work((table, Access(res.mover("s_x"), False, e[0], n_in, i, e[1]),
                              Access(res.mover("m", out=True), True, out[0], n_in, i, out[1])),
                             cfg=(("cfg_bwd", 1),))]
            return [Work((table, *self.reads(res.mover("s_x"), board, x_item, n_in, i),
                          Access(res.mover("m", out=True), True, y[0], n_out, i, y[1])),
                         cfg=(("cfg_bwd", 0),))]
        if kind == "affine":
            return [self._affine(task, res, x_item, n_in)]
        if kind == "bn_train":
            return self._bn_train(task, res, x_item, n_in)
        if kind == "dropout":
            # forward (or off): the input activation in; backward: the output's error in, the
            # mask made again from the same seed
            cfg = (*u.info["passes"][task.what].items(),
                   ("cfg_seed_image", dropout_image_seed(i)))
            if task.what == "bp":
                e = loc(board, item("err", layer.output))
                out = loc(board, contribution_item(self.canon(layer.inputs[0]), layer.name))
                return [Work((Access(res.mover("s_x"), False, e[0], n_in, i, e[1]),
                              Access(res.mover("m", out=True), True, out[0], n_in, i, out[1])),
                             cfg=cfg)]
            return [Work((*self.reads(res.mover("s_x"), board, x_item, n_in, i),
                          Access(res.mover("m", out=True), True, y[0], n_out, i, y[1])),
                         cfg=cfg)]
        if kind == "add":
            if task.what == "fp":
                a, b = (item("act", self.canon(n)) for n in layer.inputs)
                return [Work((*self.reads(res.mover("s_a"), board, a, n_out, i),
                              *self.reads(res.mover("s_b"), board, b, n_out, i),
                              Access(res.mover("m", out=True), True, y[0], n_out, i, y[1])))]
            e = loc(board, item("err", layer.output))
            oa, ob = (loc(board, contribution_item(self.canon(n), layer.name))
                      for n in layer.inputs)
            return [Work((Access(res.mover("s"), False, e[0], n_out, i, e[1]),
                          Access(res.mover("m_a", out=True), True, oa[0], n_out, i, oa[1]),
                          Access(res.mover("m_b", out=True), True, ob[0], n_out, i, ob[1])))]
        if kind == "pool":
            return self._pool(task, res, x_item, y)
        raise FpdeepError(f"unit kind {kind!r} has no task rule")

    def _pool(self, task: Task, res: Resource, x_item: str, y: tuple[str, int]) -> list[Work]:
        """A pooling engine's pass over an image: a run per band of channels
        (`fpdeep.design.pool.band_channels`), each the band's input (forward: the activation;
        backward: the output's error and its argmax) and the reciprocal table in, the band's
        result (forward: and its argmax) out; a channel's words are consecutive, so band ``j``
        is the words from ``j`` times a band's on. The argmax of a backward pass, which no one
        reads, goes to one band-sized item."""
        u, i, board = res.unit, task.image, task.board
        layer = self.layers[task.layer]
        bands, n_in, n_out = u.info.get("bands", 1), u.info["in"], u.info["out"]
        bwd = task.what == "bp"
        table = u.info["table_bwd" if bwd else "table_fwd"]
        if bwd:
            e = self.locate(board, item("err", layer.output))
            out = self.locate(board, contribution_item(self.canon(layer.inputs[0]), layer.name))
        works = []
        for j in range(bands):
            at_in, at_out = j * n_in, j * n_out
            if bwd:
                acc = [Access(res.mover("s_x"), False, e[0], n_out, i, e[1] + at_out),
                       (Access(res.mover("s_x", "arg"), False, f"argmax:{u.ident}", n_out, i,
                               at_out)
                        if not u.info["avg"] else
                        Access(res.mover("s_x", "arg"), False, "zero", n_out, hold=True)),
                       Access(res.mover("m", out=True), True, out[0], n_in, i, out[1] + at_in),
                       Access(res.mover("m", "arg", out=True), True, f"discard:{u.ident}",
                              n_in)]
            else:
                acc = [*self.reads(res.mover("s_x"), board, x_item, n_in, i, at_in),
                       Access(res.mover("s_x", "arg"), False, "zero", n_in, hold=True),
                       Access(res.mover("m", out=True), True, y[0], n_out, i, y[1] + at_out),
                       Access(res.mover("m", "arg", out=True), True, f"argmax:{u.ident}",
                              n_out, i, at_out)]
            if table:
                acc.append(Access(res.mover("s_m"), False, f"table:{res.name}", len(table)))
            works.append(Work(tuple(acc), start=True, wait_done=True,
                              ends_task=j == bands - 1))
        return works

    def _affine(self, task: Task, res: Resource, x_item: str, n: int) -> Work:
        """A per-channel Scale or Bias: forward, the parameter (``p:<unit>``) ahead of each
        channel and the activation; backward, the parameter and the output's error; gradient,
        the output's error (and for a Scale the activation) and the accumulators so far
        (``acc:<unit>``; zeros for the batch's first image) in and back."""
        u, i, board = res.unit, task.image, task.board
        layer = self.layers[task.layer]
        words = u.info["channels"]
        params = Access(res.mover("s_p"), False, affine_item("p", u.ident), words)
        e = self.locate(board, item("err", layer.output))
        if task.what == "wg":
            acc = affine_item("acc", u.ident)
            accesses = [Access(res.mover("s_p"), False, "zero", words, hold=True) if i == 0
                        else Access(res.mover("s_p"), False, acc, words),
                        Access(res.mover("s_x"), False, e[0], n, i, e[1])]
            if u.info["role"] == "scale":
                accesses += self.reads(res.mover("s_y"), board, x_item, n, i)
            accesses.append(Access(res.mover("m_g", out=True), True, acc, words))
            return Work(tuple(accesses), cfg=(("cfg_pass", 2), ("cfg_shift", 0)))
        shift = u.info["shift"]["bp" if task.what == "bp" else "fp"]
        if task.what == "bp":
            out = self.locate(board, contribution_item(self.canon(layer.inputs[0]), layer.name))
            return Work((params, Access(res.mover("s_x"), False, e[0], n, i, e[1]),
                         Access(res.mover("m", out=True), True, out[0], n, i, out[1])),
                        cfg=(("cfg_pass", 1), ("cfg_shift", shift)))
        y = self.locate(board, item("act", layer.output))
        return Work((params, *self.reads(res.mover("s_x"), board, x_item, n, i),
                     Access(res.mover("m", out=True), True, y[0], n, i, y[1])),
                    cfg=(("cfg_pass", 0), ("cfg_shift", shift)))

    def _bn_train(self, task: Task, res: Resource, x_item: str, n: int) -> list[Work]:
        """A BatchNormalization trained on batch statistics (fpdeep_bn_train). An image's
        forward pass: gamma and beta (``p:<unit>``, every channel's gamma, then every
        channel's beta) and the activation in, the output out; its backward pass: gamma,
        the activation and the output's error in, the input's error out. A pass over the
        batch streams one image after another (the activation, and for the gradient sums the
        error too); at its end the variance pass updates the running statistics
        (``r:<unit>``: the means, then the variances) in place, and the gradient pass writes
        the sums of gamma and beta (``acc:<unit>``, as ``p:``)."""
        u, board = res.unit, task.board
        layer = self.layers[task.layer]
        c = u.info["channels"]
        e = self.locate(board, item("err", layer.output))
        if task.what in ("fp", "bp"):
            i = task.image
            fp = task.what == "fp"
            params = Access(res.mover("s_p"), False, affine_item("p", u.ident),
                            2 * c if fp else c)
            x = self.reads(res.mover("s_x"), board, x_item, n, i)
            if fp:
                y = self.locate(board, item("act", layer.output))
                return [Work((params, *x, Access(res.mover("m", out=True), True, y[0], n, i,
                                                 y[1])),
                             cfg=(("cfg_pass", BN_PASSES["fp"]),))]
            out = self.locate(board, contribution_item(self.canon(layer.inputs[0]),
                                                       layer.name))
            return [Work((params, *x, Access(res.mover("s_e"), False, e[0], n, i, e[1]),
                          Access(res.mover("m", out=True), True, out[0], n, i, out[1])),
                         cfg=(("cfg_pass", BN_PASSES["bp"]),))]
        images = task.elements // u.info["elements"]
        works = []
        for i in range(images):
            acc = [*self.reads(res.mover("s_x"), board, x_item, n, i)]
            if task.what == "grad":
                acc.append(Access(res.mover("s_e"), False, e[0], n, i, e[1]))
            if i == images - 1 and task.what.startswith("var"):
                running = bn_running_item(u.ident)
                acc += [Access(res.mover("s_p"), False, running, 2 * c),
                        Access(res.mover("m_g", out=True), True, running, 2 * c)]
            if i == images - 1 and task.what == "grad":
                acc.append(Access(res.mover("m_g", out=True), True, affine_item("acc", u.ident),
                                  2 * c))
            # the configuration once, before the first image
            works.append(Work(tuple(acc), cfg=bn_pass_config(u, task.what, images) if not i
                              else (), ends_task=i == images - 1))
        return works

    def loss_table(self, res: Resource) -> Work:
        """The loss unit's exp table into the unit: once, when the host configures the board."""
        return Work((Access(res.mover("s_t"), False, "exp", len(golden_loss.EXP2_TABLE)),))

    @staticmethod
    def _summing_passes(res: Resource, parts: Sequence[tuple[str, int]], acc: tuple[str, int],
                        final: tuple[str, int], n: int, image: int, *,
                        flagged: bool) -> list[Work]:
        """The passes of a two-input summing unit (fpdeep_add, fpdeep_psum) over the stored
        ``parts`` (family, offset): each pass adds the next part to the running sum (parts[0]
        at first, then ``acc``) and writes it to ``acc``, the last pass to ``final``.
        ``flagged``: every pass sets cfg_final, 1 on the last."""
        works, running = [], parts[0]
        for k in range(1, len(parts)):
            last = k == len(parts) - 1
            out = final if last else acc
            works.append(Work((Access(res.mover("s_a"), False, running[0], n, image, running[1]),
                               Access(res.mover("s_b"), False, parts[k][0], n, image,
                                      parts[k][1]),
                               Access(res.mover("m", out=True), True, out[0], n, image, out[1])),
                              cfg=(("cfg_final", int(last)),) if flagged else (),
                              ends_task=last))
            running = acc
        return works

    def _contributors(self, tensor: str) -> list[str]:
        """The layers whose error contributions to ``tensor`` its fan-in adds, in layer
        order."""
        order = [layer.name for layer in self.network.layers]
        users = [layer.name for layer in self.network.layers
                 if any(self.canon(n) == tensor for n in layer.inputs)]
        return sorted(users, key=order.index)

    def _sgd(self, task: Task, res: Resource) -> list[Work]:
        """Per slice of the board, per trainable role: the gradient sums and the weights in,
        the new weights back in place; with velocities (item ``v:<slice>``, laid out as the
        gradient sums: weights, then biases) also the velocities in and back. The constants
        come from the compiler (``cfg_*`` = None here)."""
        works = []
        roles = self.sgd_roles(task.board)
        velocity = bool(res.unit.info.get("velocity"))
        for k, (s, role) in enumerate(roles):
            if isinstance(s, UnitDesign):  # a trained unit's parameter: its place in p:
                n = s.info["channels"]
                off = woff = n * unit_roles(s).index(role)
                store = affine_item("p", s.ident)
            else:
                nw = s.engines["wg"].out_beats - ((s.hi - s.lo) if s.has_bias else 0)
                n, off = (nw, 0) if role == "weight" else (s.hi - s.lo, nw)
                store, woff = f"w:{s.ident}" if role == "weight" else f"b:{s.ident}", 0
            accesses = [Access(res.mover("s_g"), False, f"acc:{s.ident}", n, -1, off),
                        Access(res.mover("s_w"), False, store, n, -1, woff),
                        Access(res.mover("m", out=True), True, store, n, -1, woff)]
            if velocity:
                accesses += [Access(res.mover("s_v"), False, f"v:{s.ident}", n, -1, off),
                             Access(res.mover("m_v", out=True), True, f"v:{s.ident}", n, -1,
                                    off)]
            works.append(Work(tuple(accesses), cfg=(("sgd", k),),
                              ends_task=k == len(roles) - 1))
        return works

    def sgd_roles(self, board: int) -> list[tuple[SliceDesign | UnitDesign, str]]:
        """The (slice, role) of each pass of board ``board``'s SGD task, in order; then the
        (unit, role) of each trained unit's parameter (a per-channel Scale or Bias)."""
        slices = [s for b in self.d.boards if b.index == board for s in b.slices]
        units = [u for b in self.d.boards if b.index == board for u in b.units
                 if u.kind in TRAINED_UNITS]
        return [*((s, role) for s in slices for role in ("weight", "bias")
                  if role == "weight" or s.has_bias),
                *((u, role) for u in units for role in unit_roles(u))]


#: The units whose parameters train: per-channel Scale and Bias, BatchNormalization on
#: batch statistics.
TRAINED_UNITS = ("affine", "bn_train")


def unit_roles(u: UnitDesign) -> tuple[str, ...]:
    """The parameters of a trained unit in the order its ``p:`` item (and ``acc:``, ``v:``)
    holds them, each ``channels`` words: a Scale's or Bias's one; gamma and beta."""
    return ("scale", "bias") if u.kind == "bn_train" else (u.info["role"],)


def _last_layer(network: Network):
    layers = [layer for layer in network.layers if not spec(layer.op).in_loss]
    return layers[-1]


def board_layouts(d: Design, network: Network, *, batch: int) -> list[BoardLayout]:
    """Every board's resources and store for steps of up to ``batch`` images."""
    rules = TaskWork(d, network)
    layouts = [BoardLayout(b.index, batch, _resources(d, b)) for b in d.boards]
    sizes: list[dict[str, tuple[int, bool]]] = [{} for _ in d.boards]
    readers: list[dict[str, set[str]]] = [{} for _ in d.boards]
    widths: list[dict[str, int]] = [{} for _ in d.boards]
    held: list[set[str]] = [set() for _ in d.boards]
    moved: list[dict[str, int]] = [{} for _ in d.boards]  # words each item moves in a step
    movers: list[dict[tuple[int, bool, int], set[str]]] = [{} for _ in d.boards]

    def need(board: int, key: str, words: int, per_image: bool) -> None:
        old = sizes[board].get(key, (0, per_image))
        sizes[board][key] = (max(old[0], words), per_image)

    tasks = schedule(d, network, batch=1).tasks
    for t in tasks:
        if t.kind == "run":  # an engine's loop nest moves nothing through the store
            continue
        boards = [t.board, t.dst] if t.kind == "link" else [t.board]
        for b in boards:
            r = layouts[b].resource(t.resource)
            res = layouts[b].resources[r]
            for w in rules.work(t, b, layouts[b]):
                for a in w.accesses:
                    need(b, a.key, a.offset + a.words if not a.hold else 1, a.image >= 0)
                    movers[b].setdefault((r, a.out, a.mover), set()).add(a.key)
                    moved[b][a.key] = moved[b].get(a.key, 0) + a.words
                    if a.hold:
                        held[b].add(a.key)
                    if a.out:
                        bits = _written_bits(res, w, a, d.data_width)
                        widths[b][a.key] = max(widths[b].get(a.key, 0), bits)
                    else:
                        readers[b].setdefault(a.key, set()).add(t.resource)
    for layout in layouts:
        if any(r.unit is not None and r.unit.kind == "loss" for r in layout.resources):
            need(layout.index, "exp", len(golden_loss.EXP2_TABLE), False)
        items: list[tuple[str, int]] = []  # (item, depth), in bank order
        board = d.boards[layout.index]
        dram: list[tuple[str, int, bool]] = []
        for key, (words, per_image) in sorted(sizes[layout.index].items()):
            if key.startswith(("act:", "err:", "psum:")):
                full, per_image = rules.stored_words(layout.index, key)
                words = max(words, full)
            depth = bank_depth(words, per_image=per_image, images=batch)
            kind = off_chip_kind(key)
            too_deep = depth > 1 << BANK_ADDRESS_BITS
            # a held item (the zero word, a label) is one word read again and again: on chip
            if kind is not None and key not in held[layout.index] and (
                    kind in board.off_chip or (too_deep and board.dram_bits)):
                dram.append((key, words, per_image))
                continue
            if too_deep:
                advice = f"keep it off chip (--off-chip {kind}), " if kind else ""
                raise FpdeepError(f"board {layout.index}: {key} needs {depth} words, more "
                                  f"than a store bank addresses ({1 << BANK_ADDRESS_BITS}); "
                                  f"{advice}use more boards or a smaller --batch")
            layout.regions[key] = Region(len(items), words, per_image)
            items.append((key, depth))
        if not items:  # everything off chip: the store still has a bank (the zero word)
            layout.regions["zero"] = Region(0, 1, False)
            items.append(("zero", bank_depth(1, per_image=False, images=batch)))
        if len(items) > DRAM_BANK:  # bank numbers 0 .. DRAM_BANK - 1; DRAM_BANK is off chip
            kept = ",".join(OFF_CHIP)
            advice = (f"keep data off chip (--off-chip {kept}) or "
                      if set(OFF_CHIP) - set(board.off_chip) else "")
            raise FpdeepError(f"board {layout.index}: its tensor store needs {len(items)} "
                              f"banks, more than the {DRAM_BANK} an instruction's bank number "
                              f"tells apart; {advice}use more boards")
        constants = constant_contents(d, layout)
        for key, depth in items:
            # what no task writes the host loads: constants as wide as their values, weights,
            # biases, images and labels as data
            width = widths[layout.index].get(key) or (
                signed_bits(constants[key]) if key in constants
                else BN_TABLE_BITS if key.startswith("bn:") else d.data_width)
            # resources reading one bank at once would share its rate: a copy for each
            copies = read_copies(len(readers[layout.index].get(key, ())))
            layout.banks.append(StoreBank(key, depth, width, copies))
        _place_off_chip(layout, dram, widths[layout.index], d.data_width)
        layout.dram_movers = {m for m, keys in movers[layout.index].items()
                              if keys & layout.dram.keys()}
        layout.dram_traffic = sum(moved[layout.index][k] << r.slot
                                  for k, r in layout.dram.items())
    return layouts


def _place_off_chip(layout: BoardLayout, items: Sequence[tuple[str, int, bool]],
                    widths: Mapping[str, int], data_width: int) -> None:
    """Lay out the (item, words, per image) kept off chip one after the other, each word in
    the fewest bytes (a power of two) that hold the bits written to it."""
    base = 0
    for key, words, per_image in items:
        bits = widths.get(key) or data_width
        slot = max(0, math.ceil(bits / 8) - 1).bit_length()
        stride = _round_up(words << slot, DRAM_IMAGE_ALIGN)
        layout.dram[key] = DramRegion(base, slot, words, per_image, stride)
        base = _round_up(layout.dram[key].end(layout.batch), DRAM_ITEM_ALIGN)


def _round_up(n: int, quantum: int) -> int:
    return -(-n // quantum) * quantum


def affine_item(kind: str, unit: str) -> str:
    """The store item of a per-channel Scale or Bias unit's parameter (``p``) or gradient
    accumulators (``acc``)."""
    return f"{kind}:{unit}"


def bn_running_item(unit: str) -> str:
    """The store item of a trained BatchNormalization unit's running statistics: every
    channel's mean, then every channel's variance (Q32 at the formats of
    `fpdeep.golden.batchnorm.running_formats`)."""
    return f"r:{unit}"


def bn_table_item(unit: str, what: str) -> str:
    """The store item of a frozen BatchNormalization unit's constants for pass ``what``."""
    return f"bn:{unit}:{what}"


def _written_bits(res: Resource, work: Work, access: Access, data_width: int) -> int:
    """Bits of the store word that ``access`` of ``work`` writes, as the word is the sign
    extension of them: a raw sum in parts is whole, a data stream is sign-extended from its
    width, a side signal zero-extended (so one bit more)."""
    if access.parts > 1:
        return RAW_PARTS * data_width
    # requantised results on accumulator-wide ports, sign-extended: an engine's that is not
    # raw, the partial-sum unit's final pass (hw/eltwise/fpdeep_psum.sv)
    if res.engine is not None and not res.engine.config.raw:
        return data_width
    if dict(work.cfg).get("cfg_final") == 1:
        return data_width
    mover = res.outs[access.mover]
    return mover.width + 1 if mover.side else mover.width


def constant_contents(d: Design, layout: BoardLayout) -> dict[str, list[int]]:
    """The per-board items the host writes before the first step besides the weights: the
    loss unit's exp table, the pooling tables and the zero word."""
    out: dict[str, list[int]] = {}
    for key in layout.regions:
        if key == "zero":
            out[key] = [0]
        elif key == "exp":
            out[key] = [int(v) for v in golden_loss.EXP2_TABLE]
        elif key.startswith("table:"):
            name = key.split(":", 1)[1]
            res = next(r for r in layout.resources if r.name == name)
            out[key] = list(res.unit.info["table_bwd" if name.endswith("_bp")
                                          else "table_fwd"])
    return out


@dataclass(frozen=True)
class ProgramMemory:
    """A sequencer's instruction memory: ``words`` deep (a power of two), the training
    program at 0 and the forward-only program from ``forward`` on."""

    words: int
    forward: int


def program_words(d: Design, network: Network,
                  layouts: Sequence[BoardLayout]) -> tuple[tuple[ProgramMemory, ...], ...]:
    """Per board, per resource: its sequencer's instruction memory, holding its training
    program of a step of the stores' full batch and after it its forward-only program (an
    inference pass of up to that batch), and its setup program from 0. Each sequencer has
    its own: a pooling engine's bands or a long SGD task make one program long, and the
    others need not be as deep."""
    from fpdeep.codegen.program import compile_step, setup_program
    batch = min(layout.batch for layout in layouts)
    train = compile_step(d, network, layouts, batch=batch, lr=2.0 ** -6)
    forward = compile_step(d, network, layouts, batch=batch, lr=2.0 ** -6, forward_only=True)
    setup = setup_program(d, network, layouts)
    return tuple(
        tuple(ProgramMemory(1 << (max(len(t) + len(f), len(s)) - 1).bit_length(), len(t))
              for t, f, s in zip(ts, fs, ss, strict=True))
        for ts, fs, ss in zip(train.boards, forward.boards, setup, strict=True))
