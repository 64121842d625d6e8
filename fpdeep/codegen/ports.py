"""The instances of a board top's engines, units and link framing, as plain data the
templates print, made from the module interfaces declared in `fpdeep.hwlib`: each instance with
its parameters, configuration constants and connections (`fpdeep.codegen.board` wires them to
the sequencers and movers).

Which modules serve each kind of unit, and how each of their configuration fields is driven,
is one table, `UNIT_RTL`. Units with two directions (ReLU, pooling) hold both configurations
as constants and pick one with the input ``<unit>_bwd`` that the unit's sequencer sets;
the SGD unit's learning-rate and batch constants are runtime inputs (the host's program sets
them), because the learning rate is chosen when training starts, not when the boards are
generated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from fpdeep.design.engine import ACC_BITS
from fpdeep.design.lower import EngineDesign, SliceDesign
from fpdeep.design.units import BN_TRAIN_RUNTIME, LinkModel, UnitDesign
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import (
    ADD,
    AFFINE,
    BN_FROZEN,
    BN_TRAIN,
    CONVERT,
    DROPOUT,
    ENGINE,
    FANOUT,
    LINK_CHANNEL,
    LINK_END,
    LINK_KEEP,
    LINK_PACK,
    LINK_RX,
    LINK_TX,
    LINK_UNPACK,
    LOSS,
    LRN,
    MEM_MODEL,
    POOL,
    PSUM,
    RELU,
    SGD,
    SGD_MOMENTUM,
    Module,
    compile_order,
)
from fpdeep.hwlib.signature import CLOCK, CONFIG
from fpdeep.planning import perf


@dataclass(frozen=True)
class Instance:
    module: str
    name: str
    comment: str
    params: tuple[tuple[str, int], ...]
    localparams: tuple[tuple[str, int, str], ...]  # (name, width, literal)
    connections: tuple[tuple[str, str], ...]  # (module port, expression)


def literal(value: int, width: int) -> str:
    if value < 0 or value >> width:
        raise FpdeepError(f"configuration constant {value} does not fit in {width} bits")
    return f"{width}'h{value:x}"


def comment_text(name: str) -> str:
    """A model name made safe inside a one-line comment (no newline or control characters)."""
    return "".join(c if c.isprintable() and c.isascii() else "?" for c in name)


@dataclass(frozen=True)
class Part:
    """One RTL instance serving an engine or a unit, and how each of its ports is driven.

    The instance and its board ports are named after the unit with ``suffix`` added. A
    configuration field is a constant from the unit's ``values`` ("forward" or "backward"),
    unless it is in ``inputs`` (field -> board input set at run time, named with that suffix)
    or in ``by_direction`` (field -> the board input that picks its forward or its backward
    constant). Every other port is a board port of its own name. ``params`` are the module
    parameters set per instance; the others keep the RTL's defaults.
    """

    module: Module
    comment: str  # "{layer}" stands for the unit's layer
    suffix: str = ""
    values: str = "forward"
    params: tuple[str, ...] = ("DW",)
    inputs: Mapping[str, str] = field(default_factory=dict)
    by_direction: Mapping[str, str] = field(default_factory=dict)

    def parameters(self, given: Mapping[str, int]) -> dict[str, int]:
        """The module's parameters with the ``given`` ones it has."""
        known = self.module.parameters()
        return self.module.parameters(**{k: v for k, v in given.items() if k in known})

    def instance(self, prefix: str, params: Mapping[str, int], comment: str, *,
                 forward: Mapping[str, int], backward: Mapping[str, int]) -> Instance:
        q = prefix + self.suffix
        ports = self.module.ports(**params)
        own = forward if self.values == "forward" else backward
        consts: list[tuple[str, int, str]] = []
        conns = [(p.name, p.name) for p in ports if p.role == CLOCK]
        fields = [p for p in ports if p.role == CONFIG]
        for p in fields:  # constants first, then what the board drives at run time
            up = f"{q}_{p.name}".upper()
            if p.name in self.by_direction:
                consts += [(f"{up}_F", p.width, literal(forward[p.name], p.width)),
                           (f"{up}_B", p.width, literal(backward[p.name], p.width))]
                conns.append((p.name, f"{q}_{self.by_direction[p.name]} ? {up}_B : {up}_F"))
            elif p.name not in self.inputs:
                consts.append((up, p.width, literal(own[p.name], p.width)))
                conns.append((p.name, up))
        conns += [(p.name, f"{q}_{self.inputs[p.name]}") for p in fields if p.name in self.inputs]
        conns += [(p.name, f"{q}_{p.name}") for p in ports if p.role not in (CLOCK, CONFIG)]
        return Instance(self.module.name, f"u_{q}", comment,
                        tuple((k, params[k]) for k in self.params), tuple(consts), tuple(conns))


ENGINE_PART = Part(ENGINE, "", params=("TM", "TN", "XD", "WD", "YD", "RD", "BD", "MODE",
                                       "HALVES", "URAM", "DW", "ACCW"))


def _engine_parameters(e: EngineDesign, dw: int) -> dict[str, int]:
    return ENGINE_PART.parameters({**e.params.as_parameters(), "DW": dw, "ACCW": ACC_BITS})


def engine_instance(e: EngineDesign, s: SliceDesign, dw: int) -> Instance:
    comment = f"{comment_text(s.layer)} channels {s.lo}..{s.hi - 1}, {e.mode.upper()}"
    return ENGINE_PART.instance(e.ident, _engine_parameters(e, dw), comment,
                                forward=e.config.ports, backward={})


def _pool_part(direction: str, values: str) -> Part:
    return Part(POOL, f"pooling {direction.upper()} of layer {{layer}}", suffix=f"_{direction}",
                values=values, params=("DW", "XD", "YD"))


#: The RTL instances of each kind of unit (`fpdeep.design.units.UnitDesign.kind`), in the
#: order of their board ports.
UNIT_RTL: Mapping[str, tuple[Part, ...]] = MappingProxyType({
    # the controller sets <unit>_bwd per task: it also picks the requantisation shift
    "relu": (Part(RELU, "ReLU of layer {layer}", inputs={"cfg_bwd": "bwd"},
                  by_direction={"cfg_shift": "bwd"}),),
    # the controller sets the scaling, threshold and shift per pass and the image's seed
    "dropout": (Part(DROPOUT, "Dropout of layer {layer}",
                     inputs={"cfg_mult": "mult", "cfg_shift": "shift", "cfg_thresh": "thresh",
                             "cfg_seed_image": "seed_image"}),),
    # the controller sets the direction per pass; the constants of each channel come on s_p
    "bn": (Part(BN_FROZEN, "frozen BatchNormalization of layer {layer}",
                inputs={"cfg_bwd": "bwd"}),),
    # trained on batch statistics: the controller sets the pass and the batch's counts per
    # pass; the per-channel state stays in the unit from the statistics to the input error
    "bn_train": (Part(BN_TRAIN, "BatchNormalization of layer {layer}, batch statistics",
                      params=("DW", "ACCW", "CD"),
                      inputs={name: name.removeprefix("cfg_") for name in BN_TRAIN_RUNTIME}),),
    # the controller sets the direction per pass; the rings are as deep as window and plane
    "lrn": (Part(LRN, "LRN of layer {layer}", params=("DW", "NMAX", "PD"),
                 inputs={"cfg_bwd": "bwd"}),),
    # the controller sets the pass (forward, backward, gradient) and its shift; each
    # channel's parameter or accumulator comes on s_p
    "affine": (Part(AFFINE, "per-channel {layer}", params=("DW", "ACCW"),
                    inputs={"cfg_pass": "pass", "cfg_shift": "shift"}),),
    # the controller sets each pass's shift
    "concat": (Part(CONVERT, "Concat of layer {layer}", inputs={"cfg_shift": "shift"}),),
    "shuffle": (Part(CONVERT, "channel shuffle of layer {layer}", inputs={"cfg_shift": "shift"}),),
    # one engine per direction: the engine accumulates its backward result into the buffer
    # its forward pass writes
    "pool": (_pool_part("fp", "forward"), _pool_part("bp", "backward")),
    "add": (Part(ADD, "residual Add of layer {layer}"),
            Part(FANOUT, "error fan-out of layer {layer}", suffix="_bp", values="backward")),
    "fanin": (Part(ADD, "error fan-in of tensor {layer}"),),
    # of three or more readers: the controller raises <unit>_final for the last pass
    "fanin_n": (Part(PSUM, "error fan-in of tensor {layer}", params=("DW", "ACCW"),
                     inputs={"cfg_final": "final"}),),
    # the controller raises <unit>_final for the last pass, which requantises
    "psum": (Part(PSUM, "partial input errors of layer {layer}", params=("DW", "ACCW"),
                  inputs={"cfg_final": "final"}),),
    "loss": (Part(LOSS, "loss error at tensor {layer}", params=("DW", "NMAX", "LW", "DIVW")),),
    "sgd": (Part(SGD, "SGD update of this board's weights", params=("DW", "ACCW"),
                 inputs={name: name for name in SGD.config}),),
    # an SGD unit that keeps velocities (momentum, weight decay)
    "sgd_momentum": (Part(SGD_MOMENTUM, "SGD update with momentum and weight decay",
                          params=("DW", "ACCW", "VW"),
                          inputs={name: name for name in SGD_MOMENTUM.config}),),
})


def unit_parts(u: UnitDesign) -> tuple[Part, ...]:
    """The RTL parts of unit ``u`` (`UNIT_RTL`): by its kind, the SGD unit by whether it
    keeps velocities, an error fan-in by its number of readers."""
    kind = u.kind
    if u.kind == "sgd" and u.info.get("velocity"):
        kind = "sgd_momentum"
    elif u.kind == "fanin" and u.info.get("readers", 2) > 2:
        kind = "fanin_n"
    parts = UNIT_RTL.get(kind)
    if parts is None:
        raise FpdeepError(f"unit kind {kind!r} has no RTL; valid kinds: {', '.join(UNIT_RTL)}")
    return parts


def _unit_parameters(part: Part, u: UnitDesign, dw: int, accw: int) -> dict[str, int]:
    return part.parameters({"DW": dw, "ACCW": accw, **u.params})


def unit_instances(u: UnitDesign, dw: int, accw: int) -> list[Instance]:
    """The RTL instances of a unit, one per entry of `UNIT_RTL`."""
    return [part.instance(u.ident, _unit_parameters(part, u, dw, accw),
                          part.comment.format(layer=u.layer), forward=u.forward,
                          backward=u.backward)
            for part in unit_parts(u)]


#: Sides of a board in the chain: east towards higher board indices, west towards lower.
SIDES = ("east", "west")
#: One channel each way per neighbour.
LINK_CHANNELS = 1
#: The streams of one neighbour, ``<side>_<name>``, each a stream of a framing module: the
#: streams to send and received, then the link words that travel between boards (behind the
#: board top's link ports).
LINK_STREAMS: Mapping[str, tuple[Module, str]] = MappingProxyType({
    "s": (LINK_TX, "s"), "m": (LINK_RX, "m"), "tx": (LINK_TX, "m"), "rx": (LINK_RX, "s")})
LINK_FRAMING = ((LINK_TX, "tx", "link framing towards the {side}"),
                (LINK_RX, "rx", "link framing from the {side}"))


def _renamed(port: str, stream: str, prefix: str) -> str:
    """A stream's port under another stream name: ("s_valid", "s", "east_tx") -> east_tx_valid."""
    return prefix + port[len(stream):]


def link_word_bits(dw: int) -> int:
    """Width of a link word of fpdeep_link_tx with one channel: {channel, last, data}."""
    return LINK_TX.width("m_data", DW=dw, NCH=LINK_CHANNELS)


def link_instances(side: str, dw: int) -> list[Instance]:
    """Framing for one neighbour (fpdeep_link_tx/_rx, one channel each way)."""
    wired = {(m.name, s.name): _renamed(s.name, stream, f"{side}_{name}")
             for name, (m, stream) in LINK_STREAMS.items() for s in m.stream(stream).signals()}
    return [Instance(m.name, f"u_{side}_{suffix}", comment.format(side=side),
                     (("DW", dw), ("NCH", LINK_CHANNELS)), (),
                     tuple((s.name, s.name if s.role == CLOCK else wired[(m.name, s.name)])
                           for s in m.signals()))
            for m, suffix, comment in LINK_FRAMING]


#: Words the simulation link model buffers: more than any link's latency times its rate.
LINK_MODEL_DEPTH = 256

#: The reliable link's replay and receive buffers in beats (fpdeep_link_end): a round trip
#: of beats at the planner's hop latency.
LINK_BUFFER_BEATS = 1024
#: Cycles without progress before a link end calls its link stuck: well inside the board's
#: deadlock watchdog, so a stuck link is reported as such.
LINK_STUCK_CYCLES = 1 << 14


def link_round_trip(lk: LinkModel) -> int:
    """Cycles for a whole frame to cross ``lk`` and its ACK to come back behind another."""
    frame = -(-(perf.LINK_FRAME_BEATS + 2) * lk.den // lk.num)
    return 2 * (lk.latency + frame)


def link_end_timers(lk: LinkModel) -> dict[str, int]:
    """fpdeep_link_end's timers for ``lk``: a replay after twice a round trip without an ACK
    (never at BER 0), a repeated NAK after one, control frames at least every timeout."""
    trip = link_round_trip(lk)
    return {"cfg_timeout": 2 * trip, "cfg_stuck": LINK_STUCK_CYCLES,
            "cfg_refresh": 2 * trip, "cfg_holdoff": trip}


def frame_beats_for(ber: float, beat_bits: int) -> int:
    """The data frame length (payload beats, at most the built LINK_FRAME_BEATS) that carries
    the most payload through a line flipping bits at ``ber``: a frame of L beats has two more
    (header, trailer) and arrives whole with probability (1 - ber)^((L + 2) * bits)."""
    def goodput(beats: int) -> float:
        return beats / (beats + 2) * (1.0 - ber) ** ((beats + 2) * beat_bits)

    return max(range(1, perf.LINK_FRAME_BEATS + 1), key=goodput)


#: fpdeep_link_end's counters and flags, per link side, as the CSR shows them.
LINK_COUNTERS = ("tx_frames", "tx_replays", "tx_timeouts", "tx_credit_stalls", "rx_frames",
                 "rx_crc_errors")
LINK_FLAGS = ("stuck", "overflow")


def link_end_instances(side: str, lk: LinkModel, *, word: int, beat: int,
                       dw: int) -> tuple[Instance, Instance]:
    """The reliable link end between a side's gearboxes (``<side>_beat_*`` out of the
    packing one, ``<side>_got_*`` into the unpacking one) and its link ports, with
    ``<side>_<counter>`` wires for the CSR; and the keep flags the ports do not carry."""
    timers = link_end_timers(lk)
    params = {"W": beat, "TAGW": 1, "MAXLEN": perf.LINK_FRAME_BEATS, "RD": LINK_BUFFER_BEATS,
              "RXD": LINK_BUFFER_BEATS}
    streams = {"s": f"{side}_beat", "m": f"{side}_got", "tx": f"m_axis_{side}",
               "rx": f"s_axis_{side}"}
    conns: list[tuple[str, str]] = []
    consts: list[tuple[str, int, str]] = []
    for sig in LINK_END.signals():
        if sig.role == CLOCK:
            conns.append((sig.name, sig.name))
        elif sig.name == "cfg_maxlen":  # the host sets the frame length (CSR LINK_FRAME)
            conns.append((sig.name, "csr_link_frame"))
        elif sig.role == CONFIG:
            name = f"{side}_link_{sig.name}".upper()
            consts.append((name, 32, literal(timers[sig.name], 32)))
            conns.append((sig.name, name))
        elif sig.name == "s_tag":
            conns.append((sig.name, "1'b0"))
        elif any(sig in s.signals() for s in LINK_END.streams):
            stream, rest = sig.name.split("_", 1)
            port = "t" + rest if stream in ("tx", "rx") else rest  # AXI4-Stream names
            conns.append((sig.name, f"{streams[stream]}_{port}"))
        else:  # a counter or a flag
            conns.append((sig.name, f"{side}_{sig.name}"))
    end = Instance(LINK_END.name, f"u_{side}_link",
                   f"reliable link towards the {side}: frames, CRC-32, credits, replay",
                   tuple((k, params[k]) for k in ("W", "TAGW", "MAXLEN", "RD", "RXD")),
                   tuple(consts), tuple(conns))
    keep = Instance(LINK_KEEP.name, f"u_{side}_keep", f"keep flags of the beats from the {side}",
                    (("WW", word), ("TW", beat), ("LAST", dw)), (),
                    (("data", f"{side}_got_data"), ("keep", f"{side}_got_keep")))
    return end, keep


#: The modules every board top has besides its engines, units and link framing.
BOARD_INFRASTRUCTURE = ("fpdeep_store", "fpdeep_mover_rd", "fpdeep_mover_wr",
                        "fpdeep_dram_rd", "fpdeep_dram_wr", "fpdeep_dram_port",
                        "fpdeep_sequencer", "fpdeep_host", "fpdeep_board_ctl", "fpdeep_csr")


def board_modules() -> tuple[Module, ...]:
    """Every module a board top instantiates, with what they use, in compile order."""
    return compile_order([ENGINE.name, *(part.module.name for parts in UNIT_RTL.values()
                                         for part in parts), LINK_TX.name, LINK_RX.name,
                          LINK_PACK.name, LINK_UNPACK.name, LINK_END.name, LINK_KEEP.name,
                          *BOARD_INFRASTRUCTURE])


def cluster_modules() -> tuple[Module, ...]:
    """The board modules, the simulation link channel and memory model: the cluster top's
    library."""
    return compile_order([m.name for m in board_modules()] + [LINK_CHANNEL.name,
                                                              MEM_MODEL.name])
