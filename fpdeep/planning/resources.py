"""What a board's generated RTL takes of its part: LUTs, flip-flops, DSP slices, 36 Kb block
RAMs and UltraRAMs, per unit, as a synthesis tool builds it.

The figures follow the RTL unit by unit: every instance a board top has (engines, sequencers,
movers, store, pooling, loss, SGD, links, host, control) with its parameters, and the store's
banks. RAM is counted in blocks the way Yosys' ``memory_libmap`` maps each memory of the
RTL (the cheapest of flip-flops, LUT RAM and block RAM by the costs of its Xilinx library
files), so a 16 x 48 bank takes a whole RAMB36, not 768 bits. DSPs are each unit's
multipliers. LUTs and flip-flops are a linear model per unit fitted on Yosys' figures
(`LOGIC`); on UltraScale+ Yosys leaves the DSPs' accumulators and pipeline registers in the
fabric, so its LUT and FF counts, and this model's, are upper bounds there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields

from fpdeep.planning.store import URAM_SHAPES, blocks

#: The figures, in the order tables and JSON print them.
RESOURCE_KEYS = ("lut", "ff", "dsp", "bram36", "uram")


@dataclass(frozen=True)
class Resources:
    """Amounts of the five resources; ``bram36`` counts a RAMB18 as a half."""

    lut: int = 0
    ff: int = 0
    dsp: int = 0
    bram36: float = 0.0
    uram: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                            for f in fields(self)})

    def times(self, n: int) -> Resources:
        return Resources(**{f.name: getattr(self, f.name) * n for f in fields(self)})

    def as_dict(self) -> dict[str, int | float]:
        return {key: getattr(self, key) for key in RESOURCE_KEYS}


def total(parts: Iterable[Resources]) -> Resources:
    out = Resources()
    for part in parts:
        out = out + part
    return out


# ----- device families ---------------------------------------------------------------------------
#: Yosys `synth_xilinx -family` of each Xilinx part prefix: 7 series, and UltraScale+ (Zynq
#: UltraScale+ "xczu", Virtex UltraScale+ "xcvu..p", Alveo "xcu2xx").
_FAMILY_PREFIXES = (("xc7", "xc7"), ("xczu", "xcup"), ("xcu2", "xcup"), ("xcu5", "xcup"))
FAMILIES = ("xc7", "xcup")


def family_of(part: str) -> str | None:
    """The `synth_xilinx` family of a part ("xc7vx690t-ffg1761-2" -> "xc7"), or None for a
    part no family here covers (another vendor's)."""
    name = part.lower()
    if name.startswith("xcvu") and name.split("-")[0].endswith("p"):
        return "xcup"
    return next((family for prefix, family in _FAMILY_PREFIXES if name.startswith(prefix)),
                None)


# ----- memories ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Memory:
    """An inferred memory with one write and one read port, read through a register (or
    with a registered address, which Yosys folds into the RAM), ``copies`` times; ``style``
    is its ram_style attribute: "auto" lets the tool choose, "block" forces block RAM,
    "ultra" UltraRAM, "distributed" LUT RAM (also what Yosys builds of a small table read
    by two ports: one copy per port)."""

    depth: int
    width: int
    style: str = "auto"
    copies: int = 1


# The costs below are those of Yosys 0.70's memory_libmap pass (passes/memory/memory_libmap.cc)
# with its Xilinx library files (techlibs/xilinx/brams_xc4v.txt, lutrams_xcu.txt for
# UltraScale(+), lutrams_xc5v.txt for 7 series): flip-flops cost 1 per bit; a block RAM
# configuration costs its block's cost times the blocks, plus 0.5 per bit of the multiplexer
# and write-enable decoder that stacking blocks in depth needs.
_FF_COST_PER_BIT = 1.0
_MUX_COST = 0.5
_BYTE = 9  # block RAM write-enable granularity: the width is padded to whole 9-bit bytes
#: (address bits, data widths, cost, BRAM36 per block): a RAMB18 in simple dual-port mode
#: (1K x 18 ... 512 x 36) and a RAMB36 (up to 512 x 72), Xilinx UG573.
_BRAM_KINDS = ((14, (1, 2, 4, 9, 18, 36), 129, 0.5), (15, (1, 2, 4, 9, 18, 36, 72), 257, 1.0))
#: Per family: (address bits, bits per primitive, LUTs per primitive) of the simple dual-port
#: LUT RAMs (RAM32M16 / RAM64M8 on UltraScale, RAM32M / RAM64M on 7 series), and the
#: library's (cost, widthscale): cost = (cost - widthscale) * primitives + widthscale *
#: stacked * width / bits.
_LUTRAM_KINDS = {"xcup": ((5, 14, 8), (6, 7, 8)), "xc7": ((5, 6, 4), (6, 3, 4))}
_LUTRAM_COST = {"xcup": (16, 16), "xc7": (8, 7)}


def _stacking_cost(stacked: int, width: int) -> float:
    return 0.0 if stacked == 1 else _MUX_COST * ((stacked - 1) * width + stacked)


def _block_ram(depth: int, width: int) -> tuple[float, float]:
    """(cost, BRAM36) of the cheapest block RAM configuration."""
    best = (math.inf, 0.0)
    for abits, widths, cost, bram36 in _BRAM_KINDS:
        for k, unit in enumerate(widths):
            byte = min(_BYTE, unit)
            stacked = math.ceil(depth / (1 << (abits - k)))
            blocks = math.ceil(stacked * math.ceil(width / byte) * byte / unit)
            best = min(best, (cost * blocks + _stacking_cost(stacked, width), blocks * bram36))
    return best


def _lut_ram(depth: int, width: int, family: str) -> tuple[float, int]:
    """(cost, LUTs) of the cheapest LUT RAM configuration."""
    cost, scale = _LUTRAM_COST[family]
    best = (math.inf, 0)
    for abits, bits, luts in _LUTRAM_KINDS[family]:
        stacked = math.ceil(depth / (1 << abits))
        prims = stacked * math.ceil(width / bits)
        price = (cost - scale) * prims + scale * stacked * width / bits
        best = min(best, (price + _stacking_cost(stacked, width), prims * luts))
    return best


def memory_resources(memory: Memory, family: str) -> Resources:
    """What Yosys builds ``memory`` from: flip-flops, LUT RAM or block RAM, whichever its
    cost rule finds cheapest (flip-flops win ties; ram_style "block" allows block RAM only);
    ram_style "ultra" is UltraRAM, counted in blocks of its one 4K x 72 shape."""
    depth, width = memory.depth, memory.width
    if memory.style == "ultra":  # 4K x 72 blocks, side by side and stacked
        return Resources(uram=blocks(depth, width, URAM_SHAPES)).times(memory.copies)
    bram_cost, bram36 = _block_ram(depth, width)
    if memory.style == "block":
        return Resources(bram36=bram36).times(memory.copies)
    lut_cost, luts = _lut_ram(depth, width, family)
    if memory.style == "distributed":
        return Resources(lut=luts).times(memory.copies)
    ff_cost = _FF_COST_PER_BIT * depth * width
    if ff_cost <= min(lut_cost, bram_cost):
        # a register per bit and a read multiplexer of about one LUT6 per 4 words per bit
        built = Resources(ff=depth * width, lut=width * math.ceil(depth / 4))
    elif lut_cost < bram_cost:
        built = Resources(lut=luts)
    else:
        built = Resources(bram36=bram36)
    return built.times(memory.copies)


# ----- units -------------------------------------------------------------------------------------
Params = Mapping[str, int]

#: Words of the link-model FIFO each read mover keeps (hw/board/fpdeep_mover_rd.sv FD) and its
#: entry width: a store word and its last flag.
MOVER_FIFO = Memory(4, 48 + 1)


#: The Conv/FC engine's module, and its banks its URAM parameter builds as UltraRAM, a bit
#: each, bit 0 first (hw/engine/fpdeep_engine.sv).
ENGINE_MODULE = "fpdeep_engine"
ENGINE_URAM_BANKS = ("x", "w", "dy", "result")


def _engine_memories(p: Params) -> list[Memory]:
    """hw/engine/fpdeep_engine.sv: per input lane an X bank, per output lane a dY bank (both
    double buffered), per lane pair a W bank; HALVES (2, or 1 for a WG engine) result half
    banks per lane its mode writes (FP: one per output lane, BP: one per input lane, WG or
    any mode: every lane pair); per
    output lane its bias bank. Each is what the tool finds cheapest (a shallow bank is LUT
    RAM or flip-flops, not a block RAM of its own)."""
    dw, bd, tm = p.get("DW", 16), p["BD"], p["TM"]
    return [m for bank in engine_banks(p) for m in bank] + [Memory(bd, dw)] * tm


def engine_banks(p: Params) -> list[list[Memory]]:
    """The memories of each of `fpdeep_engine`'s banks its URAM parameter may build as
    UltraRAM (`ENGINE_URAM_BANKS`: X, W, dY, result halves), styled as its bits say."""
    tm, tn, dw, acc = p["TM"], p["TN"], p.get("DW", 16), p.get("ACCW", 48)
    lanes = tm * tn
    results = {0: tm, 1: tn}.get(p.get("MODE", 3), lanes)
    banks = {"x": (2 * p["XD"], dw, tn), "w": (p["WD"], dw, lanes), "dy": (2 * p["YD"], dw, tm),
             "result": (p["RD"], acc, p.get("HALVES", 2) * results)}
    uram = p.get("URAM", 0)
    return [[Memory(*banks[name][:2], "ultra" if uram >> k & 1 else "auto")] * banks[name][2]
            for k, name in enumerate(ENGINE_URAM_BANKS)]


def _pool_memories(p: Params) -> list[Memory]:
    """hw/pool/fpdeep_pool.sv: the input, arg-max, side and reciprocal tables, and the
    result bank (block RAM) as deep as the larger tensor."""
    dw, kb, mb, acc = p.get("DW", 16), p.get("KB", 8), p.get("MB", 24), p.get("ACCW", 48)
    deep = max(p["XD"], p["YD"])
    return [Memory(deep, dw), Memory(p["YD"], kb), Memory(1 << kb, mb, "distributed", 2),
            Memory(p["YD"], kb), Memory(deep, acc, "block")]


def _loss_memories(p: Params) -> list[Memory]:
    """hw/loss/fpdeep_loss.sv: the exponential table (257 x 17, read at two addresses) and
    two class buffers."""
    return [Memory(257, 17, "distributed", 2), Memory(p.get("NMAX", 16), p.get("DW", 16)),
            Memory(p.get("NMAX", 16), 17)]


def _lrn_memories(p: Params) -> list[Memory]:
    """hw/eltwise/fpdeep_lrn.sv: rings of the last NMAX planes of the input (read at three
    places), of the window terms and of the direct terms, and a plane of each running sum; all
    read without a register, so LUT RAM."""
    n, pd, dw = p.get("NMAX", 5), p.get("PD", 64), p.get("DW", 16)
    squares = 2 * dw + (n - 1).bit_length() + 1  # 2 DW + clog2(NMAX) + 1
    return [Memory(n * pd, dw, "distributed", 3), Memory(pd, squares, "distributed"),
            Memory(n * pd, 48, "distributed", 2), Memory(pd, 48, "distributed")]


#: The memories of each unit, from its parameters (units not listed have none).
MEMORIES: dict[str, Callable[[Params], list[Memory]]] = {
    "fpdeep_engine": _engine_memories,
    "fpdeep_sequencer": lambda p: [Memory(p.get("PD", 64), 64)],  # the instruction memory
    "fpdeep_mover_rd": lambda p: [MOVER_FIFO],
    "fpdeep_host": lambda p: [MOVER_FIFO],  # its store reads' FIFO
    "fpdeep_pool": _pool_memories,
    "fpdeep_loss": _loss_memories,
    "fpdeep_lrn": _lrn_memories,
    # hw/eltwise/fpdeep_bn_train.sv: its per-channel state, read asynchronously (LUT RAM):
    # two sums, mu, z, k and the unbiased variance or the error factor
    "fpdeep_bn_train": lambda p: [Memory(p["CD"], w, "distributed") for w in (
        p["ACCW"], p["ACCW"], p["DW"] + 6, 17, 6, 2 * p["DW"] + 6)],
    # hw/link/fpdeep_link_end.sv: the framer's replay buffer and the deframer's receive
    # buffer (each beat with its tag and last flag), block RAM
    "fpdeep_link_end": lambda p: [Memory(p["RD"], p["W"], "block"),
                                  Memory(p["RXD"], p.get("TAGW", 1) + 1 + p["W"], "block")],
}

#: DSP slices of each unit (16-bit data, 48-bit accumulators), as Yosys 0.70 maps its
#: multipliers (`synth_xilinx -family xcup` of each unit on its own, up to its memory mapping):
#: an engine's one per MAC lane; SGD: the batch-mean and learning-rate products (4), with
#: momentum and weight decay 6; loss: the exponential's interpolation and the MSE scale (4);
#: pooling: the average's reciprocal products at 48 x 24 bits (7); Dropout: 4; frozen
#: BatchNormalization: 5, trained on batch statistics 11; per-channel Scale and Bias: 2; LRN:
#: 20. The other units multiply nothing.
DSPS: dict[str, Callable[[Params], int]] = {
    "fpdeep_engine": lambda p: p["TM"] * p["TN"],
    "fpdeep_sgd": lambda p: 4,
    # the batch mean (2), decay, momentum and learning-rate products
    "fpdeep_sgd_momentum": lambda p: 6,
    "fpdeep_loss": lambda p: 4,
    "fpdeep_pool": lambda p: 7,
    # the scaling product and the step's seed term (a 32-bit constant times the step)
    "fpdeep_dropout": lambda p: 4,
    # frozen BatchNormalization: (x - mean) * z, gamma * x-hat, the error's factor (and
    # Yosys splits the wide ones)
    "fpdeep_bn_frozen": lambda p: 5,
    # LRN: the two squares, S * M_alpha, the two powers' -L * M and their interpolations,
    # x * v, e * v, e * x * v, A * M_g and B * x (Yosys splits the wide ones)
    "fpdeep_lrn": lambda p: 20,
    # per-channel Scale and Bias: x * s (forward, backward) and e * x (gradient)
    "fpdeep_affine": lambda p: 2,
    # BatchNormalization on batch statistics: d * d, d * z, gamma * x-hat, e * x-hat,
    # x-hat * mean_ex, t * f and the end phases' shared products (Yosys splits the wide ones)
    "fpdeep_bn_train": lambda p: 11,
}

#: What a unit's logic grows with (1 when nothing that matters): an engine's MAC lanes, the
#: store's bank-client pairs (one arbiter input each), the resources a sequencer, the board
#: control and the CSR block count for, the banks the host addresses.
_SIZE: dict[str, Callable[[Params], int]] = {
    "fpdeep_engine": lambda p: p["TM"] * p["TN"],
    "fpdeep_store": lambda p: p["NB"] * (p["NR"] + p["NW"]),
    "fpdeep_sequencer": lambda p: p["NRES"],
    "fpdeep_board_ctl": lambda p: p["NRES"],
    "fpdeep_csr": lambda p: p["N"],
    "fpdeep_host": lambda p: p["NB"],
}

#: LUTs and flip-flops per unit: (LUTs, LUTs per size, FFs, FFs per size), the size being
#: `_SIZE`'s; LUT RAM and memory flip-flops come on top from `memory_resources`. Fitted on
#: Yosys 0.70 `synth_xilinx -family xcup` of each unit on its own with the parameters the
#: demo's boards give it (digits CNN on 2 x ZCU102, batch 4), less its memories: engines a
#: least-squares line over 4 x 1, 1 x 4 and 4 x 4 lanes (6,137 / 5,108 / 9,732 LUTs), the
#: tensor store a line through zero over both boards' stores (28,531 and 23,667 LUTs for
#: 20 x 48 and 17 x 44 bank-client pairs, mostly its read-data multiplexers), the other units
#: one point each, in proportion to their size where they have one. Upper bounds on
#: UltraScale+ (the DSPs' accumulators stay in the fabric); a unit without an entry counts no
#: logic.
LOGIC: dict[str, tuple[float, float, float, float]] = {
    "fpdeep_engine": (4221, 340.5, 1392, 262.7),
    "fpdeep_sequencer": (0, 26.06, 0, 9.94),  # 17 resources: 443 LUT, 169 FF
    "fpdeep_host": (0, 27.10, 0, 19.25),  # 20 banks: 574 LUT, 385 FF
    "fpdeep_store": (0, 30.45, 0, 1.50),  # 960 pairs: 28,531 LUT, 1,411 FF; 748: 23,667, 1,157
    "fpdeep_mover_rd": (214, 0, 124, 0),
    "fpdeep_mover_wr": (186, 0, 154, 0),
    "fpdeep_relu": (820, 0, 18, 0),
    "fpdeep_pool": (3125, 0, 477, 0),
    "fpdeep_psum": (562, 0, 50, 0),
    "fpdeep_sgd": (2301, 0, 18, 0),
    "fpdeep_sgd_momentum": (5258, 0, 43, 0),  # VW 24
    "fpdeep_bn_frozen": (3483, 0, 180, 0),
    "fpdeep_lrn": (5880, 0, 63, 0),  # NMAX 5, PD 16: 6,272 LUTs with its 392 of LUT RAM
    "fpdeep_affine": (1830, 0, 149, 0),
    "fpdeep_bn_train": (4270, 0, 432, 0),  # CD 64, less its 47 RAM64M8 of LUT RAM
    "fpdeep_link_pack": (198, 0, 277, 0),
    "fpdeep_link_unpack": (70, 0, 135, 0),
    "fpdeep_link_tx": (4, 0, 2, 0),
    "fpdeep_link_rx": (1, 0, 0, 0),
    "fpdeep_board_ctl": (0, 112.9, 0, 137.7),  # 17 resources: 1,919 LUT, 2,341 FF
    "fpdeep_csr": (0, 72.5, 0, 6.06),  # 17 resources: 1,232 LUT, 103 FF
    "fpdeep_loss": (1626, 0, 295, 0),
}


def unit_resources(module: str, params: Params, family: str) -> Resources:
    """What one instance of ``module`` with ``params`` takes (the store's banks excepted:
    `store_resources`)."""
    size = _SIZE.get(module, lambda p: 1)(params)
    lut0, lut1, ff0, ff1 = LOGIC.get(module, (0.0, 0.0, 0.0, 0.0))
    logic = Resources(lut=round(lut0 + lut1 * size), ff=round(ff0 + ff1 * size),
                      dsp=DSPS.get(module, lambda p: 0)(params))
    memories = MEMORIES.get(module, lambda p: [])(params)
    return logic + total(memory_resources(m, family) for m in memories)


#: The tensor store's module: its banks are costed from the store itself (`board_resources`).
STORE_MODULE = "fpdeep_store"


def board_resources(units: Iterable[tuple[str, Params] | tuple[str, Params, str]],
                    banks: Iterable[Memory], family: str) -> Resources:
    """A board's figures: every unit instance (module, parameters, and perhaps its name) of
    its top, and the tensor store's banks as memories."""
    return (total(unit_resources(module, params, family) for module, params, *_ in units)
            + total(memory_resources(bank, family) for bank in banks))
