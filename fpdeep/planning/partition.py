"""Partition a network's training work over a chain of boards (DESIGN §4).

The compute layers, in topological order, form one line of output channels (FC: neurons); a
partition is N - 1 cut points on that line, so each board holds consecutive layers and at most
one split layer at each end. Two strategies:

- ``fpdeep``: the paper's split: board b gets a share of the total work proportional to its MAC
  lanes, and the layer where a share ends is split by channels.
- ``optimal``: the cut points that minimise the initiation interval with compute, link traffic
  at every cut (skip connections included) and storage considered together: a binary search on
  the II with an exact greedy feasibility check (every board cost grows with its range, so the
  furthest-reaching cut at each step is never worse). The result is never worse than ``fpdeep``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.ir import Network
from fpdeep.ops import batch_barrier, loop_nest, needs_input_error, spec
from fpdeep.planning import perf
from fpdeep.planning.allocate import EngineShape, Storage, dsp_needed, plan_memory
from fpdeep.planning.cluster import ACCUMULATOR_BITS, Cluster

STRATEGIES = ("fpdeep", "optimal")


@dataclass(frozen=True)
class ChainLayer:
    """A compute layer as the partitioner sees it: a loop nest and its storage per channel."""

    name: str
    index: int
    offset: int  # position of its first channel on the line of all channels
    co: int
    ci: int  # input channels per group (FC: input features)
    kh: int
    kw: int
    ho: int
    wo: int
    has_bp: bool
    weights_per_channel: int  # weight + bias elements per output channel
    in_elems: int
    in_width: int  # input row length (line buffers)
    in_channels: int
    stash_images: int  # images whose input waits on chip between FP and WG
    groups: int = 1  # a grouped conv's groups (co / groups output channels each)
    input_home: int = 0  # position after the channel its input is held with (0: the input's)

    def shapes(self, n: int) -> list[EngineShape]:
        """The FP, BP (when any) and WG loop nests of an n-channel slice."""
        co, groups = slice_groups(n, self.co // self.groups)
        shape = EngineShape(co, self.ci, self.kh, self.kw, self.ho, self.wo, groups=groups)
        return [shape, shape, shape] if self.has_bp else [shape, shape]

    @property
    def macs_per_channel(self) -> int:
        return self.ci * self.kh * self.kw * self.ho * self.wo * (3 if self.has_bp else 2)

    def bank_bits(self, n: int, *, bits: int, acc_bits: int) -> int:
        """Bits the generated engines' banks of an n-channel slice hold, at exact depths (the
        RTL rounds each lane's depth up to a power of two): FP reads X and W into a Y-shaped
        result of two halves, BP reads W and dY into an X-shaped one, WG reads X and dY into
        one W-shaped result; X and dY banks are double. X is the whole input however few
        channels the slice has (`fpdeep.planning.resources.engine_banks`)."""
        x, y, w = self.in_elems, n * self.ho * self.wo, n * self.weights_per_channel
        fp = 2 * x * bits + w * bits + 2 * y * acc_bits
        wg = 2 * x * bits + 2 * y * bits + w * acc_bits
        bp = w * bits + 2 * y * bits + 2 * x * acc_bits if self.has_bp else 0
        return fp + wg + bp

    def storage(self, n: int, *, bits: int, acc_bits: int, pipelining: str) -> Storage:
        """Bits an n-channel slice keeps on its board (the whole input is stashed for WG)."""
        weights = n * self.weights_per_channel
        # Engines read their windows from line buffers: kh + 1 rows of input (a window plus the
        # row being written) and of the slice's output error, for FP and BP.
        rows = self.kh + 1
        buffers = 2 * rows * (self.in_width * self.in_channels + n * self.wo)
        streams = 0
        if pipelining == "image":  # ping-pong pairs: FP output, incoming error, input error
            streams = 4 * n * self.ho * self.wo + (2 * self.in_elems if self.has_bp else 0)
        return Storage(
            buffers=buffers * bits,
            streams=streams * bits,
            weights=weights * bits,
            grads=weights * acc_bits,
            stash=self.in_elems * self.stash_images * bits,
            stash_per_image=self.in_elems * bits,
        )


@dataclass(frozen=True)
class Slice:
    """Output channels [lo, hi) of one compute layer, placed on one board."""

    layer: str
    lo: int
    hi: int

    @property
    def channels(self) -> int:
        return self.hi - self.lo


@dataclass(frozen=True)
class ChainModel:
    """The line of channels of a network, with link bytes per image at every cut position."""

    network: str
    layers: tuple[ChainLayer, ...]
    # bytes per image crossing a cut after g channels (g = 0..total), forward and backward
    forward_bytes: np.ndarray
    backward_bytes: np.ndarray
    # indices of the compute layers right after which a layer waits for the whole batch (a
    # BatchNormalization in training mode): the batch crosses each of them as a whole
    barriers: tuple[int, ...] = ()
    # the non-compute layers' units (see `unit_loads`)
    units: tuple[UnitLoad, ...] = ()
    # bytes of one error word and of one raw partial input error (an accumulator)
    word_bytes: int = 2
    partial_bytes: int = 6

    def unit_floor(self, pixel_lanes: int = 1) -> int:
        """The II no cut can beat: the busiest unit's cycles per image."""
        return max((u.scaled(u.cycles, pixel_lanes) for u in self.units), default=0)

    @property
    def total(self) -> int:
        return self.layers[-1].offset + self.layers[-1].co

    @cached_property
    def _offsets(self) -> list[int]:
        return [layer.offset for layer in self.layers]

    def layer_at(self, position: int) -> int:
        """Index of the layer holding the channel at ``position``."""
        return bisect.bisect_right(self._offsets, position) - 1

    def slices(self, start: int, end: int) -> tuple[Slice, ...]:
        """The slices covering positions [start, end)."""
        out = []
        pos = start
        while pos < end:
            layer = self.layers[self.layer_at(pos)]
            stop = min(end, layer.offset + layer.co)
            out.append(Slice(layer.name, pos - layer.offset, stop - layer.offset))
            pos = stop
        return tuple(out)

    @property
    def work_per_channel(self) -> np.ndarray:
        return np.array([layer.macs_per_channel for layer in self.layers], dtype=np.float64)

    @cached_property
    def cut_allowed(self) -> np.ndarray:
        """Per position 0..total, whether boards may be cut there: not inside a group of a
        grouped convolution, whose engines run whole groups."""
        ok = np.ones(self.total + 1, dtype=bool)
        for layer in self.layers:
            per = layer.co // layer.groups
            if layer.groups > 1 and per > 1:
                inside = np.arange(layer.offset + 1, layer.offset + layer.co)
                ok[inside[(inside - layer.offset) % per != 0]] = False
        return ok


def chain_model(network: Network, *, precision: int, pipelining: str,
                batch: int | None = None) -> ChainModel:
    """Compute layers with their loop nests, and the bytes every cut position must carry.

    With batch barriers (``batch_barriers``), every layer up to the last barrier keeps the
    inputs of the whole ``batch`` for WG: its BP starts only once the batch has crossed them.
    """
    compute = network.compute_layers
    if not compute:
        raise FpdeepError(f"network {network.name!r} has no Conv or FC layer to place on boards")
    needs_bp = needs_input_error(network)
    barriers = batch_barriers(network)
    last_barrier = max(barriers, default=-1)
    _, made_at = layer_anchors(network)
    layers: list[ChainLayer] = []
    offset = 0
    count = len(compute)
    for index, layer in enumerate(compute):
        nest = loop_nest(layer)
        (co, ho, wo), (kh, kw) = nest.out_shape, nest.attrs.kernel
        ci_all, _, in_width = nest.in_shape
        ci = ci_all // nest.attrs.groups
        stash = 2 * (count - 1 - index) + 2 if pipelining == "image" else 2
        if batch is not None and index <= last_barrier:
            stash = max(stash, batch)
        layers.append(
            ChainLayer(
                name=layer.name, index=index, offset=offset, co=co, ci=ci, kh=kh, kw=kw,
                ho=ho, wo=wo, has_bp=layer.name in needs_bp,
                weights_per_channel=ci * kh * kw + (1 if layer.weight("bias") else 0),
                in_elems=math.prod(nest.in_shape),
                in_width=in_width,
                in_channels=ci_all,
                stash_images=stash,
                groups=nest.attrs.groups,
                input_home=_held_after(layers, made_at.get(layer.inputs[0], -1)),
            )
        )
        offset += co
    forward, backward, partial = _cut_traffic(network, layers, needs_bp)
    scale = precision // 8
    # a raw partial sum is an accumulator wide, where ``backward`` counted one error word
    extra = ACCUMULATOR_BITS[precision] // 8 - scale
    return ChainModel(network.name, tuple(layers), forward * scale,
                      backward * scale + partial * extra, barriers,
                      unit_loads(network, needs_bp), scale, scale + extra)


def _held_after(layers: list[ChainLayer], made_at: int) -> int:
    """The position after the channel a tensor made at compute layer ``made_at`` is held with
    (its producer's last; ``lower.tensor_homes``), 0 for the network's input."""
    return 0 if made_at < 0 else layers[made_at].offset + layers[made_at].co


def split_partial_bytes(chain: ChainModel, cuts: Sequence[int]) -> np.ndarray:
    """Backward bytes per image on each link (after board b) beyond the chain model's, from
    the layers split over several boards.

    The chain model counts one raw partial input error across each cut inside a layer, as if
    every board added the partial coming from its neighbour to its own. The generated design
    sends every slice's partial on its own to the board where the layer's input is held, whose
    psum unit adds them: a link carries the partials of every slice beyond it.
    """
    bounds = np.asarray(cuts[1:-1])
    extra = np.zeros(len(bounds), dtype=np.int64)

    def board_of(position: int) -> int:
        return int(np.searchsorted(bounds, position, side="right"))

    for layer in chain.layers:
        first, last = board_of(layer.offset), board_of(layer.offset + layer.co - 1)
        if not layer.has_bp or first == last:
            continue
        home = board_of(layer.input_home - 1) if layer.input_home else 0
        for b in range(first, last + 1):  # each board's slice, to the home
            extra[home:b] += layer.in_elems * chain.partial_bytes
        for link in range(home, last):  # what the model counted there
            inside = layer.offset < bounds[link] < layer.offset + layer.co
            extra[link] -= layer.in_elems * (chain.partial_bytes if inside else chain.word_bytes)
    return extra


@dataclass(frozen=True)
class UnitLoad:
    """What a non-compute layer's unit streams per image, forward and backward, in cycles."""

    layer: str
    anchor: int  # the latest compute layer it depends on (-1: none)
    forward: int
    backward: int

    @property
    def cycles(self) -> int:
        return self.forward + self.backward

    @staticmethod
    def scaled(cycles: int, pixel_lanes: int) -> int:
        """``cycles`` on a unit as wide as pixel-parallel engines (the `--pixel-lanes`
        what-if: the units keep up with them)."""
        return -(-cycles // pixel_lanes)


def layer_anchors(network: Network) -> tuple[dict[str, int], dict[str, int]]:
    """Each layer's anchor, the index of the latest compute layer it depends on (a compute
    layer its own, -1 for none), and the anchor each tensor is made at (the input's -1)."""
    index = {layer.name: i for i, layer in enumerate(network.compute_layers)}
    anchor: dict[str, int] = {}
    made_at: dict[str, int] = {network.input_name: -1}
    for layer in network.layers:
        anchor[layer.name] = index.get(layer.name, max((made_at.get(t, -1)
                                                         for t in layer.inputs), default=-1))
        made_at[layer.output] = anchor[layer.name]
    return anchor, made_at


def unit_loads(network: Network, needs_bp: set[str]) -> tuple[UnitLoad, ...]:
    """The units of the non-compute layers: the generated units stream one element a cycle,
    a pass forward and, where the error goes on back, a pass backward; a BatchNormalization
    on batch statistics makes three passes forward (mean, variance, normalise) and two back
    (the gamma and beta sums, the error). A lower bound: a pooling window's extra reads and
    each unit's few cycles of start-up come on top."""
    anchor, _ = layer_anchors(network)
    out = []
    for layer in network.layers:
        s = spec(layer.op)
        if layer.is_compute or s.in_loss or s.view:
            continue
        elements = max(math.prod(layer.in_shape), math.prod(layer.out_shape))
        passes_fwd, passes_bwd = (3, 2) if batch_barrier(layer) else (1, 1)
        back = passes_bwd if layer.name in needs_bp else passes_bwd - 1
        out.append(UnitLoad(layer.name, anchor[layer.name], elements * passes_fwd,
                            elements * back))
    return tuple(out)


def slice_groups(n: int, per_group: int) -> tuple[int, int]:
    """(output channels, groups) an n-channel slice of a grouped conv runs as (``per_group``
    output channels a group): whole groups, or one when the slice lies inside a group (it then
    reads that group's inputs only, as an ungrouped conv). A slice with part of a group at an
    end is costed as the groups it touches, padded to whole ones (an upper bound)."""
    if n % per_group == 0:
        return n, n // per_group
    if n < per_group:
        return n, 1
    groups = -(-n // per_group)
    return groups * per_group, groups


def batch_barriers(network: Network) -> tuple[int, ...]:
    """Compute-layer indices after which a layer needs the whole batch's statistics: the latest
    compute layer each such layer depends on (one before any compute layer waits for nothing:
    the host holds the whole batch)."""
    anchor, _ = layer_anchors(network)
    return tuple(sorted({anchor[layer.name] for layer in network.layers
                         if batch_barrier(layer) and anchor[layer.name] >= 0}))


def _cut_traffic(
    network: Network, layers: list[ChainLayer], needs_bp: set[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elements per image crossing each cut position: forward (activations), backward (errors)
    and, of those backward, the ones that cross as raw partial sums.

    Every layer is anchored at the latest compute layer it depends on (non-compute layers run
    beside it); a tensor made at anchor s and last read at anchor d > s crosses every cut from
    inside layer s (the channels made left of the cut) up to the end of layer d (all of it). So
    a skip connection is carried over every board between its producer and its Add or Concat,
    and the input of a split layer is sent on to every board holding part of it. Backward, a
    tensor's error is summed where the tensor is held (``lower.tensor_homes``: with its
    producer's last channel), each reader sending its own contribution there; and a layer cut
    inside sends its raw partial input errors over the cut, to be added before they are
    requantised (``lower``'s psum unit).
    """
    anchor, made_at = layer_anchors(network)
    total = layers[-1].offset + layers[-1].co
    position = np.arange(total + 1, dtype=np.int64)
    forward = np.zeros(total + 1, dtype=np.int64)
    backward = np.zeros(total + 1, dtype=np.int64)
    partial = np.zeros(total + 1, dtype=np.int64)
    for tensor in network.tensors.values():
        if not tensor.consumers or tensor.name not in made_at:
            continue
        src = made_at[tensor.name]
        dst = max(anchor[c] for c in tensor.consumers)
        if dst <= src:
            continue
        size = math.prod(tensor.shape)
        if src < 0:
            made_left = np.full(total + 1, size, dtype=np.int64)
        else:
            prod = layers[src]
            done = np.clip(position - prod.offset, 0, prod.co)
            made_left = -(-size * done // prod.co)
        end = layers[dst].offset + layers[dst].co
        forward += np.where(position < end, made_left, 0)
        # errors: the readers' contributions are added where the tensor is held, after its
        # producer's last channel; a cut before that carries the summed error of the part
        # made left of it, a cut after it each reader's contribution from beyond the cut
        home = 0 if src < 0 else layers[src].offset + layers[src].co
        readers = [anchor[r] for r in dict.fromkeys(tensor.consumers)
                   if r in needs_bp and anchor[r] > src]
        if readers:
            backward += np.where(position < home, made_left, 0)
        for r in readers:
            reader_end = layers[r].offset + layers[r].co
            backward += np.where((position >= home) & (position < reader_end), size, 0)
    for layer in layers:
        if layer.has_bp:
            inside = (position > layer.offset) & (position < layer.offset + layer.co)
            partial += np.where(inside, layer.in_elems, 0)
    return forward, backward, partial


# ---------------------------------------------------------------------------- strategies


def check_board_count(chain: ChainModel, boards: int) -> None:
    if boards > chain.total:
        raise FpdeepError(
            f"cannot spread network {chain.network!r} over {boards} boards: it has only "
            f"{chain.total} output channels/neurons in all, and each board needs at least one "
            f"(use at most {chain.total} boards)"
        )


def partition_fpdeep(chain: ChainModel, cluster: Cluster) -> tuple[int, ...]:
    """Cut positions (0, c1, ..., total) giving board b work in proportion to its MAC lanes."""
    n = cluster.size
    check_board_count(chain, n)
    per_channel = chain.work_per_channel
    sizes = np.array([layer.co for layer in chain.layers], dtype=np.float64)
    before = np.concatenate([[0.0], np.cumsum(per_channel * sizes)])
    lanes = np.array([cluster.mac_lanes(b) for b in range(n)], dtype=np.float64)
    shares = np.cumsum(lanes) / lanes.sum() * before[-1]
    cuts = [0]
    for b in range(n - 1):
        i = min(int(np.searchsorted(before, shares[b], side="right")) - 1, len(chain.layers) - 1)
        k = int(round((shares[b] - before[i]) / per_channel[i]))
        pos = chain.layers[i].offset + min(k, chain.layers[i].co)
        pos = max(pos, cuts[-1] + 1)  # every board gets at least one channel
        pos = min(pos, chain.total - (n - 1 - b))
        cuts.append(_allowed_near(chain, pos, cuts[-1], chain.total - (n - 1 - b)))
    cuts.append(chain.total)
    return tuple(cuts)


def _allowed_near(chain: ChainModel, pos: int, after: int, most: int) -> int:
    """The allowed cut position nearest ``pos`` in (``after``, ``most``] (``pos`` when there
    is none: `check_buildable` then names the grouped convolution cut inside a group)."""
    ok = np.nonzero(chain.cut_allowed[after + 1:most + 1])[0] + after + 1
    return pos if ok.size == 0 else int(ok[np.argmin(np.abs(ok - pos))])


@dataclass(frozen=True)
class _Limits:
    """What one board may take at a given II."""

    dsp: int
    dsp_per_mac: float
    bram_bits: int
    uram_bits: int
    dram_bits: float
    dram_bytes_per_cycle: float  # 0 without off-chip memory
    bank_bits: float  # what its engines' banks may take (`Cluster.bank_share`; inf: any)


def board_limits(cluster: Cluster, b: int) -> _Limits:
    board = cluster.boards[b]
    cap = cluster.util_cap
    per_cycle = board.memory_gbytes_per_s * 1e9 / (cluster.clock_mhz * 1e6)
    return _Limits(
        dsp=cluster.dsp_budget(b),
        dsp_per_mac=cluster.dsp_per_mac(b),
        bram_bits=math.floor(board.bram_bits * cap),
        uram_bits=math.floor(board.uram_bits * cap),
        dram_bits=board.memory_gbytes * 8e9,
        dram_bytes_per_cycle=per_cycle,
        bank_bits=(cluster.bank_share * (board.bram_bits + board.uram_bits) * cap
                   if cluster.bank_share else math.inf),
    )


def memory_ok(storage: Storage, limits: _Limits, ii: int, clock_mhz: float, gbps: float) -> bool:
    """Storage fits on chip plus off-chip memory, whose traffic stays within the II."""
    mem = plan_memory(storage, bram_bits=limits.bram_bits, uram_bits=limits.uram_bits)
    if not mem.buffers_fit:
        return False
    if mem.spilled_bits == 0:
        return True
    if mem.spilled_bits > limits.dram_bits or gbps <= 0:
        return False
    cycles = perf.memory_cycles(
        bytes_per_image=mem.traffic_bytes_per_image, gbytes_per_s=gbps, clock_mhz=clock_mhz
    )
    return cycles <= ii


class _Search:
    """Feasibility of an II for a fixed chain and cluster (the optimal strategy's inner loop).

    Its links carry the chain model's traffic, one raw partial error a cut inside a layer; the
    plan's links also carry the partials every further slice sends (`split_partial_bytes`),
    which depend on the cuts after a link, so the greedy search cannot count them. Where a layer
    spans three boards, or its input is held on a board before its first slice, the plan's II
    can be higher than the one searched for, and other cuts lower."""

    def __init__(self, chain: ChainModel, cluster: Cluster) -> None:
        self.chain = chain
        self.cluster = cluster
        self.limits = [board_limits(cluster, b) for b in range(cluster.size)]
        self.link_bytes = np.maximum(chain.forward_bytes, chain.backward_bytes)
        self._link_cycles: dict[float, np.ndarray] = {}
        self.bank_scale = dict(cluster.bank_scale)

    def link_cycles(self, gbps: float) -> np.ndarray:
        if gbps not in self._link_cycles:
            c = self.cluster
            rate = perf.link_rate(gbps=gbps, clock_mhz=c.clock_mhz, data_bits=c.precision,
                                  port_bits=c.link_port_bits)
            self._link_cycles[gbps] = np.array(
                [perf.link_cycles(bytes_per_image=int(v), rate=rate) for v in self.link_bytes],
                dtype=np.int64,
            )
        return self._link_cycles[gbps]

    def _fits(self, b: int, ii: int, dsp: float, storage: Storage, banks: float) -> bool:
        lim = self.limits[b]
        if dsp > lim.dsp or banks > lim.bank_bits:
            return False
        board = self.cluster.boards[b]
        return memory_ok(storage, lim, ii, self.cluster.clock_mhz, board.memory_gbytes_per_s)

    def reach(self, b: int, start: int, ii: int) -> int:
        """Furthest end position board b can take from ``start`` within the II (start if none)."""
        chain, cluster = self.chain, self.cluster
        widths = {"bits": cluster.precision, "acc_bits": cluster.accumulator_bits}
        kw = {**widths, "pipelining": cluster.pipelining}
        per_mac = self.limits[b].dsp_per_mac
        dsp = 0.0
        storage = Storage()
        banks = 0.0
        pos = start
        while pos < chain.total:
            layer = chain.layers[chain.layer_at(pos)]
            rest = layer.co - (pos - layer.offset)
            more = dsp_needed(layer.shapes(rest), ii, per_mac, cluster.pixel_lanes)
            scale = self.bank_scale.get(layer.name, 1.0)
            more_banks = layer.bank_bits(rest, **widths) * scale
            if self._fits(b, ii, dsp + more, storage + layer.storage(rest, **kw),
                          banks + more_banks):
                dsp += more
                storage = storage + layer.storage(rest, **kw)
                banks += more_banks
                pos += rest
                continue
            good, bad = 0, rest  # channels of this layer that fit: good fits, bad does not
            while bad - good > 1:
                mid = (good + bad) // 2
                more = dsp_needed(layer.shapes(mid), ii, per_mac, cluster.pixel_lanes)
                if self._fits(b, ii, dsp + more, storage + layer.storage(mid, **kw),
                              banks + layer.bank_bits(mid, **widths) * scale):
                    good = mid
                else:
                    bad = mid
            return pos + good
        return pos

    def cut(self, b: int, start: int, end: int, ii: int) -> int | None:
        """Largest position in (start, end] whose cut after board b the link carries in the II."""
        if end >= self.chain.total:
            return self.chain.total
        if end <= start or b >= len(self.cluster.link_gbps):  # the last board must finish
            return None
        cycles = self.link_cycles(self.cluster.link_gbps[b])[start + 1 : end + 1]
        ok = np.nonzero((cycles <= ii) & self.chain.cut_allowed[start + 1 : end + 1])[0]
        return None if ok.size == 0 else start + 1 + int(ok[-1])

    def greedy(self, ii: int) -> list[int] | None:
        """Cut positions using as few boards as possible at this II, or None if N do not do."""
        cuts = [0]
        for b in range(self.cluster.size):
            end = self.cut(b, cuts[-1], self.reach(b, cuts[-1], ii), ii)
            if end is None:
                return None
            cuts.append(end)
            if end == self.chain.total:
                return cuts
        return None

    def feasible(self, ii: int) -> list[int] | None:
        """Greedy cuts at this II when the remaining boards can take link-feasible cuts too."""
        cuts = self.greedy(ii)
        if cuts is None:
            return None
        missing = self.cluster.size - (len(cuts) - 1)
        if missing:
            free = np.nonzero(self.spare_cuts(ii))[0]
            if np.count_nonzero(~np.isin(free, cuts)) < missing:
                return None
        return cuts

    def spare_cuts(self, ii: int) -> np.ndarray:
        """Positions where the slowest link of the chain carries the cut's traffic in the II."""
        cycles = self.link_cycles(min(self.cluster.link_gbps))
        ok = (cycles <= ii) & self.chain.cut_allowed
        ok[0] = ok[-1] = False
        return ok


def cuts_exist(chain: ChainModel, cluster: Cluster) -> bool:
    """Whether any cuts fit every board's data, however slow (the optimal search's model)."""
    return _Search(chain, cluster).feasible(2**60) is not None


def partition_optimal(
    chain: ChainModel, cluster: Cluster, *, upper_ii: int
) -> tuple[int, ...] | None:
    """Cuts minimising the II (binary search, greedy check), or None when no II up to
    ``upper_ii`` is feasible in the search model (which leaves out neighbour spill).
    """
    check_board_count(chain, cluster.size)
    search = _Search(chain, cluster)
    hi = upper_ii
    if search.feasible(hi) is None:
        return None
    # no cut gives an II below the busiest unit's
    lo = max(1, min(chain.unit_floor(cluster.pixel_lanes), hi))
    while lo < hi:
        mid = (lo + hi) // 2
        if search.feasible(mid) is not None:
            hi = mid
        else:
            lo = mid + 1
    cuts = search.feasible(lo)
    assert cuts is not None
    return _use_every_board(search, cuts, lo)


def _use_every_board(search: _Search, cuts: list[int], ii: int) -> tuple[int, ...]:
    """Split the heaviest ranges at link-feasible cuts until every board has work.

    A sub-range never costs more than its range, so the II does not grow on a uniform chain.
    """
    work = search.chain.work_per_channel
    per_position = np.repeat(work, [layer.co for layer in search.chain.layers])
    done = np.concatenate([[0.0], np.cumsum(per_position)])
    spare = search.spare_cuts(ii) if search.cluster.size > 1 else None
    while len(cuts) - 1 < search.cluster.size:
        spans = sorted(
            range(len(cuts) - 1), key=lambda i: done[cuts[i + 1]] - done[cuts[i]], reverse=True
        )
        for i in spans:
            lo, hi = cuts[i], cuts[i + 1]
            ok = np.arange(lo + 1, hi)[spare[lo + 1 : hi]]
            if ok.size:
                middle = (done[lo] + done[hi]) / 2
                cuts.insert(i + 1, int(ok[np.argmin(np.abs(done[ok] - middle))]))
                break
        else:  # pragma: no cover - feasible() checked there are enough spare cuts
            raise AssertionError("no link-feasible cut left")
    return tuple(cuts)
