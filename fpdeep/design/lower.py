"""From a plan to the hardware of every board: slices, engines and their fixed configuration.

Pure functions: ``lower(network, plan)`` decides, for each board of the plan, which
`fpdeep_engine` instances it holds (an FP, a BP where the layer needs one, and a WG engine per
slice, with the plan's Tm x Tn lanes), the bank depths of each, and every ``cfg_*`` constant
(loop bounds, address jumps, walkers, requantisation shifts from ``docs/numerics.md``). The
board templates only print these values (``fpdeep.codegen.board`` shapes them for Jinja).

First-generation design (documented in the generated README): engine configurations are
constants of the board, the weights stay in the FP/BP engines' banks for a whole mini-batch,
WG engines accumulate over the batch (``cfg_hold``) and hand their raw 48-bit sums to the
weight update, and a layer split over several slices sends raw 48-bit partial input errors so
that the requantisation happens once, after the partial sums are added (§4 of the numerics).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from fpdeep.design.engine import (
    ACC_BITS,
    EngineConfig,
    EngineParams,
    LoopShape,
    engine_config,
    engine_params,
)
from fpdeep.design.mapping import RTL_MAPPING
from fpdeep.design.names import Namer
from fpdeep.design.units import (
    LOSS_CLASS_LIMIT,
    LinkModel,
    UnitDesign,
    fan_in_unit,
    layer_unit,
    link_model,
    loss_unit,
    model_rate,
    psum_unit,
    sgd_unit,
)
from fpdeep.errors import FpdeepError
from fpdeep.golden import sgd
from fpdeep.ir import Layer, Network
from fpdeep.numerics import Numerics
from fpdeep.ops import refusal, spec
from fpdeep.planning import perf
from fpdeep.planning.planner import Plan
from fpdeep.planning.store import OFF_CHIP
from fpdeep.serial import FormatError, Serial

MODES = ("fp", "bp", "wg")


@dataclass(frozen=True)
class EngineDesign(Serial):
    """One `fpdeep_engine` instance: a pass of one slice, its lanes, depths and constants."""

    ident: str  # port prefix on the board, e.g. conv2_c0_4_fp
    mode: str
    params: EngineParams
    config: EngineConfig
    streams: dict[str, int]  # beats per image of each operand stream it reads (0: unused)
    out_beats: int

    @property
    def cycles(self) -> int:
        """Loop-nest cycles per image (without the pipeline latency)."""
        return self.config.shape.iterations(self.params.tm, self.params.tn)


@dataclass(frozen=True)
class SliceDesign(Serial):
    layer: str
    lo: int
    hi: int
    ident: str
    split: bool  # the layer has other slices (on this or other boards)
    has_bias: bool
    engines: dict[str, EngineDesign]


@dataclass(frozen=True)
class BoardDesign(Serial):
    index: int
    module: str
    slices: tuple[SliceDesign, ...]
    units: tuple[UnitDesign, ...] = ()
    # data bits of the board's AXI4 off-chip memory master; 0: the plan keeps all on chip
    dram_bits: int = 0
    # the kinds of stored items (`fpdeep.planning.store.OFF_CHIP`) kept in off-chip memory,
    # which answers a read after ``dram_latency`` cycles and moves dram_num beats of
    # ``dram_bits`` per dram_den cycles
    off_chip: tuple[str, ...] = ()
    dram_latency: int = 0
    dram_num: int = 1
    dram_den: int = 1


@dataclass(frozen=True)
class Design(Serial):
    """Every board's engines and units, the links between them, and the numerics they compute
    with: what `fpdeep build` emits and what `fpdeep sim` checks (``design.json``)."""

    model: str
    boards: tuple[BoardDesign, ...]
    data_width: int
    clock_mhz: float
    link_gbps: tuple[float, ...]
    homes: dict[str, int]  # tensor -> the board that holds all of it
    links: tuple[LinkModel, ...] = ()
    numerics: Numerics = field(default_factory=Numerics)
    loss: str = "softmax_ce"  # the loss unit's error: softmax cross-entropy or MSE
    link_bits: int = perf.LINK_PORT_QUANTUM  # tdata width of every board's link ports
    # SGD with momentum and weight decay (docs/numerics.md §17): the boards keep a velocity
    # per weight when either is set
    momentum: float = 0.0
    weight_decay: float = 0.0

    @property
    def velocity(self) -> bool:
        """Whether the boards keep SGD velocities (momentum or weight decay is set)."""
        return self.momentum > 0 or self.weight_decay > 0

    @property
    def acc_width(self) -> int:
        return self.numerics.acc_width

    def slices_of(self, layer: str) -> list[tuple[int, SliceDesign]]:
        """(board, slice) of every slice of ``layer`` in channel order."""
        found = [(b.index, s) for b in self.boards for s in b.slices if s.layer == layer]
        return sorted(found, key=lambda bs: bs[1].lo)


def _shifts(network: Network, layer: Layer, numerics: Numerics) -> dict[str, int]:
    """Requantisation shifts of the FP result, the BP result and the FP bias alignment."""
    def owner(tensor: str) -> str:
        producer = network.tensors[tensor].producer
        return tensor if producer is None else producer

    fx = numerics.fmt("act", owner(layer.inputs[0])).frac
    fw = numerics.fmt("weight", layer.name).frac
    fy = numerics.fmt("act", layer.name).frac
    fe = numerics.fmt("err", layer.name).frac
    fe_in = numerics.fmt("err", owner(layer.inputs[0])).frac
    return {"fp": fx + fw - fy, "bp": fe + fw - fe_in, "bias": fx}


def tensor_homes(network: Network, layer_boards: dict[str, list[int]]) -> dict[str, int]:
    """The board holding the whole of each tensor: a compute layer's output is gathered on the
    board of its last slice; any other layer runs where its last-finished input is."""
    homes = {network.input_name: 0}
    for layer in network.layers:
        if spec(layer.op).in_loss:
            continue
        if layer.is_compute:
            homes[layer.output] = layer_boards[layer.name][-1]
        else:
            homes[layer.output] = max(homes[t] for t in layer.inputs)
    return homes


def _check_width(numerics: Numerics, network: Network) -> int:
    widths = {numerics.fmt(cls, layer.name).width
              for layer in network.layers for cls in ("act", "weight", "err")}
    widths.add(numerics.fmt("act", network.input_name).width)
    if len(widths) != 1:
        raise FpdeepError(
            f"the generated boards use one data width for activations, weights and errors; "
            f"the numerics give widths {sorted(widths)}"
        )
    return widths.pop()


def _check_velocity_width(numerics: Numerics, network: Network) -> int:
    """The one velocity width of every trainable layer: a board's SGD unit saturates each
    velocity to it (their fractional bits may differ: the unit's shifts follow them)."""
    widths = {numerics.fmt("vel", layer.name).width for layer in network.compute_layers}
    if len(widths) != 1:
        raise FpdeepError(f"the generated boards' SGD unit keeps every velocity in one width; "
                          f"the numerics give the layers' vel formats widths {sorted(widths)}")
    return widths.pop()


def _split_group_problems(network: Network, plan: Plan) -> list[tuple[str, str]]:
    """Slices of a grouped convolution that do not hold whole groups: each engine runs whole
    groups, reading only their input channels."""
    found = []
    for bp in plan.boards:
        for sp in bp.slices:
            layer = network.layer(sp.slice.layer)
            groups = getattr(layer.attrs, "groups", 1)
            per = layer.out_shape[0] // groups
            if groups > 1 and (sp.slice.lo % per or sp.slice.hi % per):
                found.append((layer.name, f"a grouped convolution (groups={groups}) split at "
                              f"channels {sp.slice.lo}..{sp.slice.hi - 1}, not on a boundary "
                              f"of its groups of {per} channels"))
    return found


def _layer_problem(network: Network, layer: Layer) -> str | None:
    """Why the generated RTL cannot run ``layer`` (None when it can)."""
    rtl = RTL_MAPPING.get(layer.op)
    if rtl is None:
        return "no RTL unit for this op yet"
    if (why := refusal(network, layer)) is not None:
        return why
    return rtl.refuse(layer) if rtl.refuse is not None else None


def _off_chip_memory(plan: Plan, index: int, kinds: tuple[str, ...]) -> dict[str, Any]:
    """The BoardDesign fields of board ``index``'s off-chip memory keeping ``kinds``."""
    if not kinds:
        return {}
    unknown = sorted(set(kinds) - set(OFF_CHIP))
    if unknown:
        raise FpdeepError(f"--off-chip {','.join(unknown)}: the kinds of data kept off chip "
                          f"are {', '.join(OFF_CHIP)}")
    board = plan.cluster.boards[index]
    clock = plan.cluster.clock_mhz
    if not board.memory_gbytes:
        raise FpdeepError(f"board {index} ({board.name}) has no off-chip memory in its board "
                          f"file, so it cannot keep {', '.join(kinds)} off chip")
    if not board.memory_latency_ns:
        raise FpdeepError(f"board {index} ({board.name}): its board file gives no [memory] "
                          f"latency_ns (with a latency_source), which off-chip data needs")
    bits = perf.memory_port_bits(gbytes_per_s=board.memory_gbytes_per_s, clock_mhz=clock)
    beats = Fraction(board.memory_gbytes_per_s * 8e3 / (clock * bits))
    rate = model_rate(beats)
    return {"dram_bits": bits, "off_chip": tuple(k for k in OFF_CHIP if k in kinds),
            "dram_latency": math.ceil(board.memory_latency_ns * clock / 1e3 - 1e-9),
            "dram_num": rate.numerator, "dram_den": rate.denominator}


def check_buildable(network: Network, plan: Plan, *, numerics: Numerics | None = None) -> None:
    """Refuse, naming what and why, every plan feature the generated RTL does not implement,
    so that `fpdeep build` never writes a design that differs from its plan."""
    numerics = numerics or Numerics()
    c = plan.cluster
    problems = []
    width = _check_width(numerics, network)
    if numerics.acc_width != ACC_BITS:
        problems.append(f"numerics with {numerics.acc_width}-bit accumulators: the generated "
                        f"engines accumulate in {ACC_BITS} bits (the DSP48 P register)")
    if c.precision != width:
        problems.append(f"--precision {c.precision}: the generated boards compute with "
                        f"{width}-bit data; build with --precision {width}")
    if c.pipelining != "image":
        problems.append(f"--pipelining {c.pipelining}: the generated boards pipeline whole "
                        "images; build with --pipelining image")
    if c.pixel_lanes != 1:
        problems.append(f"--pixel-lanes {c.pixel_lanes} is a planning what-if; the generated "
                        "engines compute one output row at a time, so build needs "
                        "--pixel-lanes 1")
    spills = [f"board {bp.index} ({bp.memory.spilled_bits / 8e6:.1f} MB to {bp.spill_to})"
              for bp in plan.boards if bp.spill_to.startswith("board")]
    if spills:
        problems.append("the plan keeps tensors in a neighbour's memory on " + ", ".join(spills)
                        + "; the generated boards keep data only on chip or in their own "
                        "off-chip memory: use more boards or a larger board")
    classes = math.prod(network.layers[-1].out_shape)
    if classes >= LOSS_CLASS_LIMIT:
        problems.append(f"the loss unit takes fewer than {LOSS_CLASS_LIMIT} classes, the "
                        f"network has {classes}")
    layers = [f"{layer.name!r} ({layer.op}): {why}" for layer in network.layers
              if (why := _layer_problem(network, layer)) is not None]
    layers += [f"{name!r} (Conv): {why}" for name, why in _split_group_problems(network, plan)]
    if layers:
        problems.append("the generated RTL cannot run: " + "; ".join(layers))
    if problems:
        raise FpdeepError("this plan cannot be built: " + "; ".join(problems))


def lower(network: Network, plan: Plan, *, numerics: Numerics | None = None,
           loss: str = "softmax_ce", momentum: float = 0.0,
           weight_decay: float = 0.0, off_chip: Sequence[str] = ()) -> Design:
    """The engines of every board of ``plan`` for ``network`` (the network the plan was made of),
    with the ``loss`` error unit ("softmax_ce" or "mse") where the logits are, and an SGD unit
    with ``momentum`` and ``weight_decay`` on every board. Every board keeps the item kinds
    ``off_chip`` in its off-chip memory; a board the plan spills to its memory keeps all
    of them there."""
    numerics = numerics or Numerics()
    sgd.check_optimiser(momentum, weight_decay)
    if plan.model != network.name:
        raise FpdeepError(
            f"the plan is for model {plan.model!r} but the network is {network.name!r}"
        )
    check_buildable(network, plan, numerics=numerics)
    width = _check_width(numerics, network)
    counts: dict[str, int] = {}
    for bp in plan.boards:
        for sp in bp.slices:
            counts[sp.slice.layer] = counts.get(sp.slice.layer, 0) + 1
    namer = Namer(prefix="l")
    boards = []
    for bp in plan.boards:
        slices = []
        for sp in bp.slices:
            s = sp.slice
            layer = network.layer(s.layer)
            shape = LoopShape.of_layer(layer, co=s.channels, lo=s.lo)
            shifts = _shifts(network, layer, numerics)
            has_bias = layer.weight("bias") is not None
            split = counts[s.layer] > 1
            ident = namer(s.layer, f"c{s.lo}_{s.hi}")
            engines = {}
            for mode in MODES:
                alloc = sp.engines.get(mode)
                if alloc is None:
                    continue
                kwargs: dict[str, Any] = {"shift": 0}
                if mode == "fp":
                    kwargs = {"shift": shifts["fp"], "bias": has_bias,
                              "bias_shift": shifts["bias"]}
                elif mode == "bp":
                    kwargs = {"shift": shifts["bp"], "raw": split}
                else:
                    kwargs = {"raw": True, "hold": True, "bias": has_bias}
                # a WG engine holds its sums over the batch and is drained once, by the
                # step's flush: one result half (the next step starts after the update)
                params = engine_params([shape], tm=alloc.tm, tn=alloc.tn, mode=mode,
                                       halves=1 if kwargs.get("hold") else 2)
                try:
                    config = engine_config(shape, mode=mode, tm=alloc.tm, tn=alloc.tn,
                                           params=params, **kwargs)
                except FpdeepError as exc:
                    raise FpdeepError(f"layer {s.layer!r}, {mode.upper()} engine: {exc}") from exc
                x = shape.ci * shape.h * shape.w
                w = shape.co * shape.ci_group * shape.kh * shape.kw
                dy = shape.co * shape.ho * shape.wo
                streams = {
                    "fp": {"x": x, "w": w, "dy": 0, "b": shape.co if has_bias else 0},
                    "bp": {"x": 0, "w": w, "dy": dy, "b": 0},
                    "wg": {"x": x, "w": 0, "dy": dy, "b": 0},
                }[mode]
                engines[mode] = EngineDesign(f"{ident}_{mode}", mode, params, config, streams,
                                             config.out_count)
            slices.append(SliceDesign(s.layer, s.lo, s.hi, ident, split, has_bias, engines))
        kinds = tuple(OFF_CHIP) if bp.spill_to == "dram" else tuple(off_chip)
        boards.append(BoardDesign(bp.index, f"fpdeep_board_{bp.index}", tuple(slices),
                                  **_off_chip_memory(plan, bp.index, kinds)))
    layer_boards: dict[str, list[int]] = {}
    for b in boards:
        for sd in b.slices:
            layer_boards.setdefault(sd.layer, []).append(b.index)
    homes = tensor_homes(network, layer_boards)
    units: dict[int, list[UnitDesign]] = {b.index: [] for b in boards}
    for layer in network.layers:
        if layer.is_compute or spec(layer.op).in_loss:
            continue
        board = homes[layer.output]
        unit = layer_unit(network, layer, ident=namer(layer.name, "u"),
                          board=board, numerics=numerics)
        if unit is not None:
            units[board].append(unit)
    # the loss error where the logits are gathered
    last = [layer for layer in network.layers if not spec(layer.op).in_loss][-1]
    units[homes[last.output]].append(loss_unit(
        network, last.output, classes=math.prod(last.out_shape),
        ident=namer("loss"), board=homes[last.output], numerics=numerics, loss=loss))
    # a layer split over several slices sums its raw partial input errors where its input is
    for layer in network.compute_layers:
        parts = [(b, sd) for b in boards for sd in b.slices if sd.layer == layer.name]
        if len(parts) > 1 and "bp" in parts[0][1].engines:
            home = homes[layer.inputs[0]]
            units[home].append(psum_unit(
                layer.name, shift=_shifts(network, layer, numerics)["bp"], slices=len(parts),
                elements=math.prod(layer.in_shape),
                ident=namer(layer.name, "psum"), board=home))
    # a tensor whose error comes from several readers gets an RTL fan-in where it is held
    for name, tensor in network.tensors.items():
        if name in homes and name != network.input_name and len(tensor.consumers) > 1:
            shape = network.layer(tensor.producer).out_shape
            units[homes[name]].append(fan_in_unit(
                name, shape, readers=len(tensor.consumers),
                ident=namer(name, "fanin", prefix="t"), board=homes[name]))
    velocity = momentum > 0 or weight_decay > 0
    vel_width = _check_velocity_width(numerics, network) if velocity else 0
    boards = [replace(b, units=(*units[b.index], sgd_unit(b.index, vel_width=vel_width)))
              for b in boards]
    gbps = tuple(lp.gbps_available for lp in plan.links)
    links = tuple(link_model(lp.src, rate=lp.rate, gbps=lp.gbps_available,
                             latency=perf.LINK_HOP_LATENCY) for lp in plan.links)
    return Design(plan.model, tuple(boards), width, plan.totals.clock_mhz, gbps, homes, links,
                  numerics, loss, plan.cluster.link_port_bits, float(momentum),
                  float(weight_decay))


# ----- design.json -------------------------------------------------------------------------------
#: design.json's format: 2 adds the version, the numerics and every engine's full configuration;
#: 3 the link ports' width and each link's beat and word rates.
DESIGN_FORMAT = "fpdeep design"
DESIGN_VERSION = 3


@dataclass(frozen=True)
class BuildInfo(Serial):
    """How a build folder was made: its model file and the input shape given with it."""

    model_file: str = "model.onnx"
    input_shape: tuple[int, ...] | None = None
    bn: str = "train"  # how its BatchNormalizations run (--bn): the model is read so


def with_uram_banks(d: Design, masks: Sequence[Mapping[str, int]]) -> Design:
    """``d`` with the engines ``masks`` names (per board, engine ident -> URAM parameter)
    building those banks as UltraRAM (`fpdeep.planning.planner.engine_banks_in_uram`)."""
    for b, chosen in zip(d.boards, masks, strict=True):
        unknown = set(chosen) - {e.ident for s in b.slices for e in s.engines.values()}
        if unknown:
            raise FpdeepError(f"board {b.index} has no engine {sorted(unknown)[0]!r}")

    def engine(e: EngineDesign, chosen: Mapping[str, int]) -> EngineDesign:
        if e.ident not in chosen:
            return e
        return replace(e, params=replace(e.params, uram=chosen[e.ident]))

    return replace(d, boards=tuple(
        replace(b, slices=tuple(
            replace(s, engines={mode: engine(e, chosen) for mode, e in s.engines.items()})
            for s in b.slices))
        for b, chosen in zip(d.boards, masks, strict=True)))


def design_document(d: Design, plan: Plan, build: BuildInfo) -> dict[str, Any]:
    """The contents of ``design.json``: the design, versioned, with the plan it was lowered
    from and its build information."""
    return {"format": DESIGN_FORMAT, "version": DESIGN_VERSION, **d.to_json(),
            "plan": plan.to_json(), "build": build.to_json()}


def read_design_document(data: Any, where: str) -> tuple[Design, Plan, BuildInfo]:
    """The design, plan and build information in ``design.json`` data; FpdeepError naming
    ``where`` when it is another version or damaged."""
    remake = "rebuild the folder with `fpdeep build MODEL ... -o DIR --force`"
    if not isinstance(data, dict) or data.get("format") != DESIGN_FORMAT:
        version = data.get("version", "1") if isinstance(data, dict) else "?"
        raise FpdeepError(f"{where} is not a version {DESIGN_VERSION} fpdeep design (it was "
                          f"written by an older fpdeep, version {version}, or is damaged); "
                          f"{remake}")
    if data.get("version") != DESIGN_VERSION:
        raise FpdeepError(f"{where} is a version {data.get('version')!r} fpdeep design; this "
                          f"fpdeep reads version {DESIGN_VERSION}: {remake}")
    try:
        body = {k: v for k, v in data.items()
                if k not in ("format", "version", "plan", "build")}
        return (Design.from_json(body), Plan.from_json(data.get("plan")),
                BuildInfo.from_json(data.get("build")))
    except (FormatError, FpdeepError, TypeError) as exc:
        raise FpdeepError(f"{where} is damaged ({exc}); {remake}") from None
