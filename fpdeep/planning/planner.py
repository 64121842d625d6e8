"""The cluster plan: partition + allocation + performance of a network on a chain of boards.

``plan(network, cluster)`` is what ``fpdeep plan`` calls; ``sweep`` repeats it over board counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fpdeep.errors import FpdeepError, require_positive_int
from fpdeep.ir import Network
from fpdeep.planning import perf
from fpdeep.planning.allocate import (
    EngineAlloc,
    MemoryPlan,
    Storage,
    allocate_board,
    dsp_needed,
    plan_memory,
)
from fpdeep.planning.cluster import Cluster
from fpdeep.planning.partition import (
    STRATEGIES,
    ChainModel,
    Slice,
    board_limits,
    chain_model,
    check_board_count,
    cuts_exist,
    partition_fpdeep,
    partition_optimal,
    split_partial_bytes,
)
from fpdeep.planning.resources import (
    ENGINE_MODULE,
    STORE_MODULE,
    Memory,
    Params,
    Resources,
    board_resources,
    engine_banks,
    family_of,
    memory_resources,
    unit_resources,
)
from fpdeep.planning.store import BoardStore, place
from fpdeep.serial import Serial

if TYPE_CHECKING:
    from fpdeep.design.lower import Design

PASSES = ("fp", "bp", "wg")
DEFAULT_BATCH = 32


@dataclass(frozen=True)
class SlicePlan:
    slice: Slice
    engines: dict[str, EngineAlloc | None]  # "fp", "bp" (None: no BP), "wg"


@dataclass(frozen=True)
class BoardPlan:
    index: int
    slices: tuple[SlicePlan, ...]
    dsp_used: int
    dsp_available: int
    storage: Storage  # what the slices need, in bits, before placement
    memory: MemoryPlan
    bram_bits_available: int
    uram_bits_available: int
    compute_cycles: int  # the slowest engine: the board's cycles per image
    memory_cycles: int  # off-chip traffic of spilled data per image
    spill_to: str  # "", "dram", "board K" (a neighbour's spare on-chip memory)
    update_cycles: int
    # the generated design's tensor store, once the plan is lowered (`with_stores`): then
    # ``storage`` and ``memory`` are its banks
    store: BoardStore | None = None
    # what the generated board takes of its part (`fpdeep.planning.resources`), once the
    # plan is lowered, on parts with a synthesis family
    resources: Resources | None = None


@dataclass(frozen=True)
class LinkPlan:
    src: int
    dst: int
    bytes_forward: int
    bytes_backward: int
    gbps_available: float
    cycles: int
    rate: perf.LinkRate  # words per cycle the link's ports, source and line carry


@dataclass(frozen=True)
class Totals:
    ii_cycles: int
    clock_mhz: float
    images_per_s: float
    images_per_s_batch: float
    batch: int
    batch_cycles: int
    latency_cycles: int
    update_cycles: int
    macs_per_image: int
    gops: float
    dsp_efficiency: float
    load_imbalance: float
    bottleneck: str
    watts: float
    images_per_joule: float
    # layers the batch crosses as a whole (BatchNormalization in training mode); with any, the
    # II is the batch-synchronous cycles per image of docs/planner.md, not the pipeline's
    barriers: int = 0


@dataclass(frozen=True)
class Plan(Serial):
    model: str
    cluster: Cluster
    strategy: str
    boards: tuple[BoardPlan, ...]
    links: tuple[LinkPlan, ...]
    totals: Totals
    cuts: tuple[int, ...]

    def ideal_batch_cycles(self, batch: int) -> int:
        """The ideal pipeline's step of ``batch`` images (streams overlapped with compute)."""
        return perf.ideal_batch_cycles(batch=batch, ii_cycles=self.totals.ii_cycles,
                                       latency_cycles=self.totals.latency_cycles)

    def gbps_needed(self, link: LinkPlan) -> float:
        """Line rate the link needs at the plan's steady-state throughput."""
        payload = max(link.bytes_forward, link.bytes_backward) * 8 * self.totals.images_per_s
        return payload / perf.LINK_PAYLOAD_EFFICIENCY / 1e9


class DoesNotFit(FpdeepError):
    """A board's data fits neither on chip, nor in its off-chip memory, nor with a neighbour."""


class UnitsTooLarge(DoesNotFit):
    """Engines and units alone take more block RAM than a board has: ``over`` maps each such
    board to (the BRAM36 blocks they take, the blocks the board has within the cap)."""

    def __init__(self, message: str, over: dict[int, tuple[int, int]],
                 design: Design | None = None) -> None:
        super().__init__(message)
        self.over = over
        self.design = design  # the design lowered from the plan, where the caller knows it


def _storage_of(chain: ChainModel, cluster: Cluster, slices: Iterable[Slice]) -> Storage:
    total = Storage()
    for s in slices:
        layer = chain.layers[chain.layer_at(_position(chain, s))]
        total = total + layer.storage(
            s.channels, bits=cluster.precision, acc_bits=cluster.accumulator_bits,
            pipelining=cluster.pipelining,
        )
    return total


def _position(chain: ChainModel, s: Slice) -> int:
    for layer in chain.layers:
        if layer.name == s.layer:
            return layer.offset + s.lo
    raise KeyError(s.layer)


def _memories(
    chain: ChainModel, cluster: Cluster, board_slices: list[tuple[Slice, ...]]
) -> tuple[list[MemoryPlan], list[str], list[int]]:
    """Memory plan of every board and where its spill goes; raises DoesNotFit."""
    memories: list[MemoryPlan] = []
    for b in range(cluster.size):
        lim = board_limits(cluster, b)
        storage = _storage_of(chain, cluster, board_slices[b])
        mem = plan_memory(storage, bram_bits=lim.bram_bits, uram_bits=lim.uram_bits)
        if not mem.buffers_fit:
            raise DoesNotFit(
                f"board {b} ({cluster.boards[b].name}) needs {storage.buffers / 8e6:.1f} MB of "
                f"line buffers on chip but has {(lim.bram_bits + lim.uram_bits) / 8e6:.1f} MB "
                f"within the {cluster.util_cap:.0%} utilisation cap"
            )
        memories.append(mem)
    spill_to, extra_link = _place_spill(cluster, memories)
    return memories, spill_to, extra_link


def evaluate(
    chain: ChainModel, cluster: Cluster, cuts: tuple[int, ...], *, strategy: str, batch: int
) -> Plan:
    """Allocate, place memory and model the performance of the partition given by ``cuts``."""
    n = cluster.size
    by_name = {layer.name: layer for layer in chain.layers}
    clock = cluster.clock_mhz
    board_slices = [chain.slices(cuts[b], cuts[b + 1]) for b in range(n)]
    memories, spill_to, extra_link = _memories(chain, cluster, board_slices)

    boards: list[BoardPlan] = []
    for b in range(n):
        dpm = cluster.dsp_per_mac(b)
        shapes, owners = [], []
        for s in board_slices[b]:
            layer = by_name[s.layer]
            for p, shape in zip(("fp", "bp", "wg") if layer.has_bp else ("fp", "wg"),
                                layer.shapes(s.channels), strict=True):
                shapes.append(shape)
                owners.append((s, p))
        allocs = allocate_board(shapes, dsp_budget=cluster.dsp_budget(b), dsp_per_mac=dpm,
                                max_tp=cluster.pixel_lanes)
        if allocs is None:
            raise DoesNotFit(
                f"board {b} ({cluster.boards[b].name}) has {len(shapes)} engines but only "
                f"{cluster.dsp_budget(b)} DSPs within the {cluster.util_cap:.0%} cap"
            )
        slices = []
        update = 0
        for s in board_slices[b]:
            engines: dict[str, EngineAlloc | None] = dict.fromkeys(PASSES)
            for (owner, p), alloc in zip(owners, allocs, strict=True):
                if owner is s:
                    engines[p] = alloc
            slices.append(SlicePlan(s, engines))
            wg = engines["wg"]
            assert wg is not None
            weights = s.channels * by_name[s.layer].weights_per_channel
            update = max(update, -(-weights // (wg.tm * wg.tn)))
        board = cluster.boards[b]
        mem = memories[b]
        mem_cycles = 0
        if spill_to[b] == "dram":
            mem_cycles = perf.memory_cycles(
                bytes_per_image=mem.traffic_bytes_per_image,
                gbytes_per_s=board.memory_gbytes_per_s, clock_mhz=clock,
            )
        dsp_used = sum(a.dsp for a in allocs)
        boards.append(
            BoardPlan(
                index=b,
                slices=tuple(slices),
                dsp_used=dsp_used,
                dsp_available=board.dsp,
                storage=_storage_of(chain, cluster, board_slices[b]),
                memory=mem,
                bram_bits_available=board.bram_bits,
                uram_bits_available=board.uram_bits,
                compute_cycles=max((a.cycles for a in allocs), default=0),
                memory_cycles=mem_cycles,
                spill_to=spill_to[b],
                update_cycles=update,
            )
        )

    links = []
    partials = split_partial_bytes(chain, cuts)
    for b in range(n - 1):
        fwd = int(chain.forward_bytes[cuts[b + 1]]) + extra_link[b]
        bwd = int(chain.backward_bytes[cuts[b + 1]] + partials[b]) + extra_link[b]
        rate = cluster.link_rate(b)
        cycles = perf.link_cycles(bytes_per_image=max(fwd, bwd), rate=rate)
        links.append(LinkPlan(b, b + 1, fwd, bwd, cluster.link_gbps[b], cycles, rate))
    totals = _totals(chain, cluster, boards, links, batch, cuts)
    return Plan(chain.network, cluster, strategy, tuple(boards), tuple(links), totals, cuts)


def _beside_store(units: Sequence[tuple[str, Params, str]], family: str) -> Resources:
    """What a board's engines and units take, all but its tensor store (whose banks are
    placed in what they leave)."""
    return board_resources([u for u in units if u[0] != STORE_MODULE], (), family)


def _units_too_large(index: int, board: str, units: Sequence[tuple[str, Params, str]],
                     family: str, taken: int, bram: int, cap: float,
                     engine_uram: int = 0) -> str:
    """Why board ``index``'s engines and units alone do not fit its block RAM, naming the
    instances that take the most."""
    costs = sorted(((math.ceil(unit_resources(module, params, family).bram36), name)
                    for module, params, name in units if module != STORE_MODULE), reverse=True)
    largest = ", ".join(f"{name} {blocks:,}" for blocks, name in costs[:3] if blocks)
    alone = (f"{costs[0][1]} alone takes more than the board has (more boards help only as "
             "far as they share out its layer's output channels): use a smaller input "
             "(--input-shape) or a board with more block RAM"
             if costs and costs[0][0] > bram else
             "use a smaller input (--input-shape), more boards (a layer split among them "
             "shares out its output channels) or a board with more block RAM")
    in_uram = (f" (with {engine_uram:,} UltraRAMs holding engine banks, those that free the "
               f"most)" if engine_uram else "")
    return (f"board {index} ({board}): its engines and units alone take {taken:,} BRAM36 "
            f"blocks{in_uram}, more than the {bram:,} it has within the {cap:.0%} utilisation cap "
            f"(largest: {largest}). A Conv/FC engine keeps its slice's whole input, output "
            f"and weights on chip (a pooling engine works a band of channels at a time), so "
            f"those of this input size do not fit: {alone}")


def engine_banks_in_uram(plan: Plan, units: Sequence[Sequence[tuple[str, Params, str]]],
                         stores: Sequence[BoardStore]) -> list[dict[str, int]]:
    """Per board, the engines whose banks to build as UltraRAM (instance name -> their URAM
    parameter, `ENGINE_URAM_BANKS` bits) so that its units' block RAM, and beside it its
    tensor store (``stores``, in block RAM or the UltraRAM left), come within what it has,
    or as near as its UltraRAM allows: a board where they fit keeps its engines in block
    RAM; one where they do not moves the banks that free the most block RAM per UltraRAM
    block first, within the utilisation cap. Only UltraScale+ parts have UltraRAM; a board
    of another family gets none."""
    cap = plan.cluster.util_cap
    masks: list[dict[str, int]] = []
    for k, bp in enumerate(plan.boards):
        board = plan.cluster.boards[bp.index]
        family = family_of(board.part)
        chosen: dict[str, int] = {}
        masks.append(chosen)
        uram_left = math.floor(board.uram_blocks * cap)
        if family != "xcup" or uram_left == 0:
            continue
        bram_taken = _beside_store(units[k], family).bram36
        bram = math.floor(board.bram_blocks * cap)
        moves = []  # (block RAM freed per UltraRAM block, freed, UltraRAMs, instance, bit)
        for module, params, name in units[k]:
            if module != ENGINE_MODULE:
                continue
            for bit, bank in enumerate(engine_banks(params)):
                freed = sum(memory_resources(m, family).bram36 for m in bank)
                if freed and not params.get("URAM", 0) >> bit & 1:
                    cost = sum(memory_resources(replace(m, style="ultra"), family).uram
                               for m in bank)
                    moves.append((freed / cost, freed, cost, name, bit))
        for _, freed, cost, name, bit in sorted(moves, key=lambda m: (-m[0], -m[1])):
            if bram_taken <= bram and place(stores[k], bram_blocks=math.floor(bram - bram_taken),
                                            uram_blocks=uram_left) is not None:
                break  # the units fit, and the store beside them
            if cost <= uram_left:
                chosen[name] = chosen.get(name, 0) | 1 << bit
                bram_taken, uram_left = bram_taken - freed, uram_left - cost
    return masks


def with_stores(plan: Plan, stores: Sequence[BoardStore],
                units: Sequence[Sequence[tuple[str, Params, str]]] | None = None) -> Plan:
    """``plan`` with every board's memory figures taken from the tensor store of the design
    lowered from it: the banks' bits and BRAM36 blocks, placed in block RAM (then UltraRAM)
    within the utilisation cap. With ``units`` (per board, the (module, parameters, instance
    name) of every instance of its top), also the board's resources, and the block RAM its
    units take (engine banks, instruction memories, ...) is not the store's to use.
    DoesNotFit naming the board when a store fits in neither; UnitsTooLarge (a DoesNotFit)
    naming the first board whose units alone take more block RAM than it has, with every
    such board in its ``over``."""
    if [s.board for s in stores] != [bp.index for bp in plan.boards]:
        raise FpdeepError(f"the stores are of boards {[s.board for s in stores]}; the plan "
                          f"has boards {[bp.index for bp in plan.boards]}")
    cap = plan.cluster.util_cap
    fixed_of, over, first = [], {}, ""
    for k, bp in enumerate(plan.boards):
        board = plan.cluster.boards[bp.index]
        family = family_of(board.part)
        fixed = None
        if units is not None and family is not None:
            fixed = _beside_store(units[k], family)
        fixed_of.append(fixed)
        taken = math.ceil(fixed.bram36) if fixed is not None else 0
        bram = math.floor(board.bram_blocks * cap)
        if taken > bram:
            over[bp.index] = (taken, bram)
            first = first or _units_too_large(bp.index, board.name, units[k], family, taken,
                                              bram, cap, fixed.uram)
    if over:
        if len(over) > 1:  # how far each board is from fitting tells how many more it needs
            first += (f"; {len(over)} of the {len(plan.boards)} boards take too much, "
                      + ", ".join(f"board {b} {t:,}" for b, (t, _) in sorted(over.items())))
        raise UnitsTooLarge(first, over)
    boards = []
    for k, (bp, store) in enumerate(zip(plan.boards, stores, strict=True)):
        board = plan.cluster.boards[bp.index]
        family = family_of(board.part)
        fixed = fixed_of[k]
        taken = math.ceil(fixed.bram36) if fixed is not None else 0
        bram, uram = math.floor(board.bram_blocks * cap), math.floor(board.uram_blocks * cap)
        engine_uram = fixed.uram if fixed is not None else 0  # engine banks built as UltraRAM
        placed = place(store, bram_blocks=bram - taken, uram_blocks=uram - engine_uram)
        if placed is None:
            units_note = (f" beside the {taken:,} its engines and units take" if taken else "")
            if engine_uram:
                units_note += f" and the {engine_uram:,} URAM blocks its engine banks take"
            raise DoesNotFit(
                f"board {bp.index} ({board.name}): its tensor store for {store.images} "
                f"image(s) takes {store.bram_blocks:,} BRAM36 blocks ({store.bits / 8e6:.2f} MB "
                f"in {len(store.banks)} bank(s)), more than its {bram:,} BRAM36 and {uram:,} URAM "
                f"blocks within the {cap:.0%} utilisation cap hold{units_note}: use more "
                f"boards, a larger board or a smaller --batch")
        resources = None
        if fixed is not None:
            in_bram = [Memory(b.depth, b.width, copies=b.copies) for b in placed.bram]
            store_units = [u for u in units[k] if u[0] == STORE_MODULE]
            resources = (fixed + board_resources(store_units, in_bram, family)
                         + Resources(uram=placed.uram_blocks))
        memory = MemoryPlan(bram_bits=sum(b.bits for b in placed.bram),
                            uram_bits=sum(b.bits for b in placed.uram),
                            spilled_bits=store.off_chip_bits,
                            traffic_bytes_per_image=float(store.off_chip_traffic),
                            buffers_fit=True,
                            bram_blocks=placed.bram_blocks, uram_blocks=placed.uram_blocks)
        off_chip = {"spill_to": "dram", "memory_cycles": perf.memory_cycles(
            bytes_per_image=store.off_chip_traffic, gbytes_per_s=board.memory_gbytes_per_s,
            clock_mhz=plan.cluster.clock_mhz)} if store.off_chip_bits else {}
        stash = store.bits_of("act:", "err:", "psum:", "argmax:", "label")
        # gradient sums and SGD velocities both count as the optimiser's (grads)
        weights, grads = store.bits_of("w:", "b:"), store.bits_of("acc:", "v:")
        # the rest (tables, the zero word, discarded side outputs) must stay on chip
        storage = Storage(buffers=store.bits - stash - weights - grads, weights=weights,
                          grads=grads, stash=stash, stash_per_image=stash // store.images)
        boards.append(replace(bp, storage=storage, memory=memory, store=store,
                              resources=resources, **off_chip))
    return replace(plan, boards=tuple(boards))


def _place_spill(cluster: Cluster, memories: list[MemoryPlan]) -> tuple[list[str], list[int]]:
    """Send each board's spilled data to its DRAM, else to a neighbour's spare on-chip memory.

    Data kept by a neighbour crosses the link twice per image each way (read and write back).
    """
    n = cluster.size
    spare = []
    for b, mem in enumerate(memories):
        lim = board_limits(cluster, b)
        spare.append(lim.bram_bits + lim.uram_bits - mem.bram_bits - mem.uram_bits)
    spill_to = [""] * n
    extra = [0] * max(n - 1, 0)
    for b, mem in enumerate(memories):
        if mem.spilled_bits == 0:
            continue
        board = cluster.boards[b]
        if mem.spilled_bits <= board.memory_gbytes * 8e9:
            spill_to[b] = "dram"
            continue
        for nb in (b - 1, b + 1):
            if 0 <= nb < n and spare[nb] >= mem.spilled_bits:
                spare[nb] -= mem.spilled_bits
                spill_to[b] = f"board {nb}"
                extra[min(b, nb)] += math.ceil(mem.traffic_bytes_per_image)
                break
        else:
            where = f"its {board.memory_gbytes:g} GB of off-chip memory" if board.memory_gbytes \
                else "no off-chip memory"
            raise DoesNotFit(
                f"board {b} ({board.name}) must keep {mem.spilled_bits / 8e6:.1f} MB off chip "
                f"(weights, gradient accumulators and activation stash beyond its on-chip RAM), "
                f"more than {where} or a neighbour's spare on-chip memory holds"
            )
    return spill_to, extra


def _barrier_cycles(chain: ChainModel, boards: list[BoardPlan], links: list[LinkPlan],
                    cuts: tuple[int, ...], lanes: int) -> int:
    """Cycles per image when the batch crosses every barrier as a whole.

    The barriers cut the compute layers into segments. Before the last barrier, a segment's FP
    runs the whole batch at its own II (the slowest FP engine, unit, link or off-chip memory it
    uses) while the rest of the chain waits, and so does its BP/WG later; only the tail after
    the last barrier overlaps FP and BP of different images as the barrier-free pipeline does.
    A trained BatchNormalization's unit is in the segment it closes, with its five passes.
    """
    index = {layer.name: layer.index for layer in chain.layers}
    bounds = [-1, *chain.barriers, len(chain.layers) - 1]
    total = 0
    for k in range(len(bounds) - 1):
        lo, hi = bounds[k], bounds[k + 1]
        if hi <= lo:  # a barrier after the last compute layer leaves no tail
            continue
        fp = back = 0
        for board in boards:
            held = [sp for sp in board.slices if lo < index[sp.slice.layer] <= hi]
            if held:
                fp, back = max(fp, board.memory_cycles), max(back, board.memory_cycles)
            for sp in held:
                fp = max(fp, sp.engines["fp"].cycles if sp.engines["fp"] else 0)
                back = max(back, *(e.cycles for e in (sp.engines["bp"], sp.engines["wg"]) if e))
        for unit in chain.units:  # a unit's passes, the batch statistics' among them
            if lo < unit.anchor <= hi or (k == 0 and unit.anchor < 0):
                fp = max(fp, unit.scaled(unit.forward, lanes))
                back = max(back, unit.scaled(unit.backward, lanes))
        start = chain.layers[lo + 1].offset
        end = chain.layers[hi].offset + chain.layers[hi].co
        for link in links:
            if start <= cuts[link.src + 1] <= end:
                fp, back = max(fp, link.cycles), max(back, link.cycles)
        total += max(fp, back) if k == len(bounds) - 2 else fp + back
    return total


def _totals(chain: ChainModel, cluster: Cluster, boards: list[BoardPlan],
            links: list[LinkPlan], batch: int, cuts: tuple[int, ...]) -> Totals:
    clock = cluster.clock_mhz
    candidates = [(bp.compute_cycles, f"compute on board {bp.index}") for bp in boards]
    candidates += [(lp.cycles, f"link {lp.src}->{lp.dst}") for lp in links]
    candidates += [(bp.memory_cycles, f"off-chip memory of board {bp.index}") for bp in boards]
    lanes = cluster.pixel_lanes
    candidates += [(u.scaled(u.cycles, lanes), f"the unit of layer {u.layer!r}")
                   for u in chain.units]
    ii = perf.initiation_interval(engine_cycles=[c for c, _ in candidates])
    bottleneck = next(what for c, what in candidates if c == ii)
    if chain.barriers:
        pipeline_ii = ii
        ii = _barrier_cycles(chain, boards, links, cuts, lanes)
        bottleneck = (f"{len(chain.barriers)} batch-norm barriers, the batch crossing each as a "
                      f"whole; the barrier-free pipeline's II would be {pipeline_ii:,} "
                      f"({bottleneck})")
    hops = 2 * (len(boards) - 1) * perf.LINK_HOP_LATENCY
    if cluster.pipelining == "image":
        # Each compute layer is one FP stage and one BP/WG stage; an image visits them in turn.
        # In a stage an engine loads its operands (a word a cycle: the input, or the slice's
        # output error), runs, and drains its results (the slice's output, or the input
        # error); in steady state the next image's load and run overlap these, not in latency.
        layer_of = {layer.name: layer for layer in chain.layers}
        fp_stage: dict[str, int] = {}
        bp_stage: dict[str, int] = {}
        for bp in boards:
            for sp in bp.slices:
                name = sp.slice.layer
                layer = layer_of[name]
                x, y = layer.in_elems, sp.slice.channels * layer.ho * layer.wo
                fp, bp_engine, wg = (sp.engines[k] for k in ("fp", "bp", "wg"))
                back = max(bp_engine.cycles + y + x if bp_engine else 0,
                           wg.cycles + max(x, y) if wg else 0)
                fp_stage[name] = max(fp_stage.get(name, 0), fp.cycles + x + y if fp else 0)
                bp_stage[name] = max(bp_stage.get(name, 0), back)
        # and each non-compute layer's unit, forward and back, is one more stage in its path
        units = sum(u.scaled(u.cycles, lanes) for u in chain.units)
        latency = sum(fp_stage.values()) + sum(bp_stage.values()) + units + hops
    else:  # row pipelining: all layers work on the same image, offset by a few rows
        latency = 2 * ii + hops
    update = max(bp.update_cycles for bp in boards)
    t_batch = perf.batch_cycles(batch=batch, ii_cycles=ii, latency_cycles=latency,
                                update_cycles=update)
    ips = perf.images_per_second(ii_cycles=ii, clock_mhz=clock)
    macs = sum(layer.macs_per_channel * layer.co for layer in chain.layers)
    lanes = sum(b.dsp / b.dsp_per_mac[cluster.precision] for b in cluster.boards)
    compute = [bp.compute_cycles for bp in boards]
    watts = sum(b.watts for b in cluster.boards)
    return Totals(
        ii_cycles=ii,
        clock_mhz=clock,
        images_per_s=ips,
        images_per_s_batch=perf.images_per_second_batch(
            batch=batch, batch_cycles=t_batch, clock_mhz=clock
        ),
        batch=batch,
        batch_cycles=t_batch,
        latency_cycles=latency,
        update_cycles=update,
        macs_per_image=macs,
        gops=perf.gops(macs_per_image=macs, images_per_s=ips),
        dsp_efficiency=perf.dsp_efficiency(macs_per_image=macs, mac_lanes=lanes, ii_cycles=ii),
        load_imbalance=max(compute) / (sum(compute) / len(compute)),
        bottleneck=bottleneck,
        watts=watts,
        images_per_joule=perf.images_per_joule(images_per_s=ips, watts=watts),
        barriers=len(chain.barriers),
    )


def _check_batch(batch: object) -> int:
    return require_positive_int("batch", batch)


def plan(
    network: Network,
    cluster: Cluster,
    *,
    strategy: str = "fpdeep",
    batch: int = DEFAULT_BATCH,
    chain: ChainModel | None = None,
) -> Plan:
    """Partition ``network`` over ``cluster`` with ``strategy``, allocate and model performance.

    ``optimal`` searches for the cuts of least II and keeps the ``fpdeep`` split when the search
    finds nothing better, so it is never worse. ``chain`` reuses a chain model (sweeps).
    """
    if strategy not in STRATEGIES:
        raise FpdeepError(
            f"unknown partition strategy {strategy!r}; known: {', '.join(STRATEGIES)}"
        )
    _check_batch(batch)
    if chain is None:
        chain = chain_model(network, precision=cluster.precision, pipelining=cluster.pipelining,
                            batch=batch)
    check_board_count(chain, cluster.size)
    base: Plan | None = None
    failure: DoesNotFit | None = None
    try:
        base = evaluate(chain, cluster, partition_fpdeep(chain, cluster), strategy="fpdeep",
                        batch=batch)
    except DoesNotFit as exc:
        failure = exc
    best = base
    if strategy == "optimal":
        upper = base.totals.ii_cycles if base is not None else 2**60
        cuts = partition_optimal(chain, cluster, upper_ii=upper)
        if cuts is not None:
            found = evaluate(chain, cluster, cuts, strategy="optimal", batch=batch)
            if best is None or found.totals.ii_cycles < best.totals.ii_cycles:
                best = found
    if best is None:
        assert failure is not None
        raise _no_fit(chain, cluster, failure, strategy)
    return replace(best, strategy=strategy)


#: How much further than in proportion a board's DSPs are cut when its lanes' banks take too
#: much block RAM: not all of it shrinks with the lanes (deep banks, instruction memories).
LANE_CUT_MARGIN = 0.9


def with_lanes_fitting(network: Network, planned: Plan, over: dict[int, tuple[int, int]]
                       ) -> Plan | None:
    """``planned``'s partition (its cuts) again, each board of ``over`` (board -> the BRAM36
    blocks its engines and units take, the blocks it has) with its MAC lanes held to fewer
    DSPs, in proportion to the block RAM it is over by: a lane has banks of its own, and
    shallow ones each take a whole block RAM, so fewer, deeper lanes take fewer. None when
    no board's lanes can shrink, or the partition does not fit with fewer lanes."""
    caps = {}
    for b, (taken, bram) in over.items():
        used = planned.boards[b].dsp_used
        cap = math.floor(used * bram / taken * LANE_CUT_MARGIN)
        if 0 < cap < used:
            caps[b] = cap
    if not caps:
        return None
    cluster = planned.cluster.with_dsp_caps(caps)
    batch = planned.totals.batch
    chain = chain_model(network, precision=cluster.precision, pipelining=cluster.pipelining,
                        batch=batch)
    try:
        fitted = evaluate(chain, cluster, planned.cuts, strategy=planned.strategy, batch=batch)
    except DoesNotFit:
        return None
    return replace(fitted, strategy=planned.strategy)


def _slice_bank_bits(chain: ChainModel, cluster: Cluster, s: Slice) -> int:
    """`ChainLayer.bank_bits` of one slice, unscaled."""
    return chain.layers[chain.layer_at(_position(chain, s))].bank_bits(
        s.channels, bits=cluster.precision, acc_bits=cluster.accumulator_bits)


def bank_bits(chain: ChainModel, cluster: Cluster, board: BoardPlan) -> float:
    """What the search model counts for a board's engine banks (`ChainLayer.bank_bits`, times
    `Cluster.bank_scale`)."""
    scale = dict(cluster.bank_scale)
    return sum(_slice_bank_bits(chain, cluster, s.slice) * scale.get(s.slice.layer, 1.0)
               for s in board.slices)


#: The shares of a board's RAM the search lets engine banks take, one a round, as the flow
#: cuts the boards where their banks take less: the rest is the tensor store's, the
#: sequencers' and the other units'.
BANK_SHARES = (0.8, 0.65, 0.5, 0.35)


def bank_scale(chain: ChainModel, planned: Plan, design: Design
               ) -> tuple[tuple[str, float], ...]:
    """Per compute layer, the RAM its engines take in ``design`` (lowered from ``planned``),
    block RAM and UltraRAM in whole blocks, over what the search counts for its slices'
    banks: the count's exact depths leave out each lane's rounding to a power of two and
    to whole, fixed-width RAMs, which differ from layer to layer."""
    cluster = planned.cluster
    counted: dict[str, float] = {}
    taken: dict[str, float] = {}
    for board, built in zip(planned.boards, design.boards, strict=True):
        spec = cluster.boards[board.index]
        family = family_of(spec.part)
        for s in board.slices:
            counted[s.slice.layer] = (counted.get(s.slice.layer, 0.0)
                                      + _slice_bank_bits(chain, cluster, s.slice))
        for piece in built.slices if family else ():
            for engine in piece.engines.values():
                used = unit_resources(ENGINE_MODULE, engine.params.as_parameters(), family)
                taken[piece.layer] = (taken.get(piece.layer, 0.0) + used.bram36
                                      * spec.bram_block_bits + used.uram * spec.uram_block_bits)
    return tuple((name, taken[name] / bits) for name, bits in counted.items()
                 if bits and name in taken)


def with_banks_spread(network: Network, planned: Plan, design: Design,
                      share: float) -> Plan | None:
    """The cuts of least II that give no board's engine banks more than ``share`` of its
    on-chip RAM, as the search counts them scaled by what ``design`` (lowered from
    ``planned``) took (`bank_scale`), however much slower, every board's lanes as the cap
    allows; None when no such cuts exist."""
    batch = planned.totals.batch
    chain = chain_model(network, precision=planned.cluster.precision,
                        pipelining=planned.cluster.pipelining, batch=batch)
    scale = dict(planned.cluster.bank_scale)
    scale.update(bank_scale(chain, planned, design))
    cluster = replace(planned.cluster, bank_share=share, bank_scale=tuple(sorted(scale.items())),
                      dsp_caps=())
    cuts = partition_optimal(chain, cluster, upper_ii=2**60)
    if cuts is None:
        return None
    try:
        spread = evaluate(chain, cluster, cuts, strategy="optimal", batch=batch)
        # lanes enough for the II: a slice spread thin over a full DSP budget gets shallow
        # per-lane banks, each a whole RAM
        caps = _lanes_for(chain, cluster, spread, _work_ii(chain, spread) // SPREAD_LANE_SLACK)
        if caps:
            spread = evaluate(chain, cluster.with_dsp_caps(caps), cuts, strategy="optimal",
                              batch=batch)
    except DoesNotFit:
        return None
    return replace(spread, strategy=planned.strategy)


def _work_ii(chain: ChainModel, planned: Plan) -> int:
    """The II the boards' own work sets: their engines, units and off-chip memory, not the
    links or the batch barriers. Lanes sized to a longer II a link or barrier sets would not
    make it shorter, but would make each image's way through the chain longer, and a barrier
    waits for the whole batch to take that way."""
    lanes = planned.cluster.pixel_lanes
    return max([max(b.compute_cycles, b.memory_cycles) for b in planned.boards]
               + [u.scaled(u.cycles, lanes) for u in chain.units])


#: Where the boards are cut for engine banks, each board's lanes run its slices in at most
#: 1/SPREAD_LANE_SLACK of the II (the rest of its DSP budget stays unused): an image's latency
#: through the chain grows, its rate does not.
SPREAD_LANE_SLACK = 2


def _lanes_for(chain: ChainModel, cluster: Cluster, planned: Plan, cycles: int
               ) -> dict[int, int]:
    """Per board whose lanes take more DSPs than its slices need to run in ``cycles`` an
    image, those DSPs."""
    by_name = {layer.name: layer for layer in chain.layers}
    caps = {}
    for bp in planned.boards:
        shapes = [shape for s in bp.slices
                  for shape in by_name[s.slice.layer].shapes(s.slice.channels)]
        need = dsp_needed(shapes, cycles, cluster.dsp_per_mac(bp.index), cluster.pixel_lanes)
        if math.isfinite(need) and 0 < math.ceil(need) < bp.dsp_used:  # inf: none is enough
            caps[bp.index] = math.ceil(need)
    return caps


def _fits(chain: ChainModel, cluster: Cluster, strategy: str) -> bool:
    """Whether the network's data fits the cluster somewhere (speed aside) with ``strategy``."""
    cuts = partition_fpdeep(chain, cluster)
    try:
        _memories(chain, cluster, [chain.slices(cuts[b], cuts[b + 1]) for b in range(cluster.size)])
        return True
    except DoesNotFit:
        pass
    # optimal also places cuts by storage; with an unbounded II only capacity counts.
    return strategy == "optimal" and cuts_exist(chain, cluster)


def _smallest(chain: ChainModel, cluster: Cluster, strategy: str, limit: int) -> int | None:
    """Fewest boards of the cluster's type (more than it has) that fit, up to ``limit``."""

    def fits(count: int) -> bool:
        sized = replace(cluster, boards=cluster.boards[:1] * count,
                        link_gbps=(cluster.link_gbps[:1] or (1.0,)) * (count - 1))
        return _fits(chain, sized, strategy)

    lo, hi = cluster.size, cluster.size  # lo does not fit
    while not fits(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def _no_fit(
    chain: ChainModel, cluster: Cluster, failure: DoesNotFit, strategy: str
) -> FpdeepError:
    """The error for a network too big for the cluster, with the smallest board count that fits."""
    n = cluster.size
    head = f"network {chain.network!r} does not fit on {n} x {cluster.boards[0].name}: {failure}"
    if len({b.name for b in cluster.boards}) > 1:
        return FpdeepError(f"{head}. Add boards or use larger ones.")
    limit = min(chain.total, 4096)
    count = _smallest(chain, cluster, strategy, limit)
    if count is None:
        return FpdeepError(f"{head}. No number of boards fits (tried up to {limit}).")
    text = f"{head}. The smallest chain that fits has {count} boards"
    if strategy == "fpdeep":
        other = _smallest(chain, cluster, "optimal", count)
        if other is not None and other < count:
            text += f" ({other} with --partition optimal, which also balances storage)"
    return FpdeepError(text + ".")


def sweep(
    network: Network,
    clusters: Iterable[Cluster],
    *,
    strategy: str = "fpdeep",
    batch: int = DEFAULT_BATCH,
) -> list[Plan | FpdeepError]:
    """One plan per cluster (typically 1..N boards); a cluster that cannot work gives its error."""
    chains: dict[tuple[int, str], ChainModel] = {}
    out: list[Plan | FpdeepError] = []
    for cluster in clusters:
        key = (cluster.precision, cluster.pipelining)
        if key not in chains:
            chains[key] = chain_model(network, precision=key[0], pipelining=key[1], batch=batch)
        try:
            out.append(plan(network, cluster, strategy=strategy, batch=batch, chain=chains[key]))
        except FpdeepError as exc:
            out.append(exc)
    return out
