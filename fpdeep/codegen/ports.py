"""The ports and instances of a board top, as plain data the templates print.

A board top is described by its ports and by instances with their parameters, configuration
constants and connections. ``board.sv.j2`` prints that data and ``cluster_top.sv.j2`` repeats
the same port list with a ``b<index>_`` prefix, so the two templates cannot disagree.

Units with two directions (ReLU, pooling) hold both configurations as constants and pick one
with the board input ``<unit>_bwd`` that the board controller sets; the SGD unit's learning-rate
and batch constants are runtime inputs (the host writes them), because the learning rate is
chosen when training starts, not when the boards are generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fpdeep.design.engine import ACC_BITS, AFFINE_BITS, COUNT_BITS
from fpdeep.design.lower import EngineDesign, SliceDesign
from fpdeep.design.pool import RECIP_BITS, TAP_BITS
from fpdeep.design.units import (
    ADD_SHIFT_BITS,
    LOSS_DIVIDER_BITS,
    LOSS_LABEL_BITS,
    SGD_MANTISSA_BITS,
    SHIFT_BITS,
    UnitDesign,
)
from fpdeep.errors import FpdeepError


@dataclass(frozen=True)
class Port:
    direction: str  # "input" or "output"
    width: int
    name: str
    link: bool = False  # a link-side port: wired to a link model in the cluster top


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


POOL_CFG_WIDTHS: dict[str, int] = {
    "cfg_mode": 2, "cfg_bound": 5 * COUNT_BITS, "cfg_init": 5 * AFFINE_BITS,
    "cfg_jump": 25 * AFFINE_BITS, "cfg_h": COUNT_BITS, "cfg_w": COUNT_BITS,
    "cfg_kh": COUNT_BITS, "cfg_kw": COUNT_BITS, "cfg_rlo": COUNT_BITS, "cfg_rhi": COUNT_BITS,
    "cfg_clo": COUNT_BITS, "cfg_chi": COUNT_BITS, "cfg_shift": SHIFT_BITS,
    "cfg_in_count": AFFINE_BITS, "cfg_out_count": AFFINE_BITS,
}


LOSS_CFG_WIDTHS = {"cfg_kind": 1, "cfg_n": LOSS_LABEL_BITS, "cfg_ushift": SHIFT_BITS,
                   "cfg_fe": 6, "cfg_fz": 6, "cfg_mse_m": 17, "cfg_mse_shift": SHIFT_BITS}


#: Width in bits of every configuration port of `fpdeep_engine` (CW = 16, AW = 32).
CFG_WIDTHS: dict[str, int] = {
    "cfg_mode": 2, "cfg_co": COUNT_BITS, "cfg_ci": COUNT_BITS, "cfg_h": COUNT_BITS,
    "cfg_w": COUNT_BITS, "cfg_bound": 6 * COUNT_BITS, "cfg_init": 7 * AFFINE_BITS,
    "cfg_jump": 42 * AFFINE_BITS, "cfg_shift": 7, "cfg_raw": 1, "cfg_hold": 1, "cfg_bias": 1,
    "cfg_bias_shift": 6, "cfg_ld_x": 5 * COUNT_BITS, "cfg_ld_w": 5 * COUNT_BITS,
    "cfg_ld_dy": 5 * COUNT_BITS, "cfg_ld_b": 5 * COUNT_BITS, "cfg_drain": 5 * COUNT_BITS,
    "cfg_drain_b": 5 * COUNT_BITS,
}


#: Operand streams of an engine, and the result stream.
IN_STREAMS = ("x", "w", "dy", "b")


def engine_ports(e: EngineDesign, dw: int) -> list[Port]:
    p = e.ident
    ports = [port for name in IN_STREAMS for port in stream(f"{p}_s_{name}", dw, sink=True)]
    ports += [Port("input", 1, f"{p}_start"), Port("input", 1, f"{p}_flush"),
              Port("output", 1, f"{p}_busy"), Port("output", 1, f"{p}_done"),
              Port("output", 1, f"{p}_err_frame"), *stream(f"{p}_m", ACC_BITS, sink=False)]
    return ports


def engine_instance(e: EngineDesign, s: SliceDesign, dw: int) -> Instance:
    p = e.ident
    consts = tuple((f"{p}_{name}".upper(), width, literal(e.config.ports[name], width))
                   for name, width in CFG_WIDTHS.items())
    conns = [("clk", "clk"), ("rst", "rst")]
    conns += [(name, f"{p}_{name}".upper()) for name in CFG_WIDTHS]
    conns += [(port.name[len(p) + 1:], port.name) for port in engine_ports(e, dw)]
    params = (*e.params.as_parameters().items(), ("DW", dw), ("ACCW", ACC_BITS))
    comment = f"{comment_text(s.layer)} channels {s.lo}..{s.hi - 1}, {e.mode.upper()}"
    return Instance("fpdeep_engine", f"u_{p}", comment, params, consts, tuple(conns))


def comment_text(name: str) -> str:
    """A model name made safe inside a one-line comment (no newline or control characters)."""
    return "".join(c if c.isprintable() and c.isascii() else "?" for c in name)


def stream(prefix: str, width: int, *, sink: bool, last: bool = True,
           side: Sequence[tuple[str, int]] = ()) -> list[Port]:
    """Ports of a valid/ready stream; ``sink``: the board receives it."""
    into, out = ("input", "output") if sink else ("output", "input")
    ports = [Port(into, width, f"{prefix}_data")]
    ports += [Port(into, w, f"{prefix}_{name}") for name, w in side]
    if last:
        ports.append(Port(into, 1, f"{prefix}_last"))
    return ports + [Port(into, 1, f"{prefix}_valid"), Port(out, 1, f"{prefix}_ready")]


def unit_ports(u: UnitDesign, dw: int, accw: int) -> list[Port]:
    p = u.ident
    if u.kind == "relu":
        return [Port("input", 1, f"{p}_bwd"), *stream(f"{p}_s_x", dw, sink=True),
                *stream(f"{p}_s_e", dw, sink=True), *stream(f"{p}_m", dw, sink=False)]
    if u.kind == "pool":
        return [port for d in ("fp", "bp") for port in _pool_ports(f"{p}_{d}", dw)]
    if u.kind == "loss":
        return [*stream(f"{p}_s_t", 17, sink=True, last=False),
                *stream(f"{p}_s_z", dw, sink=True, side=[("label", LOSS_LABEL_BITS)]),
                *stream(f"{p}_m", dw, sink=False)]
    if u.kind == "psum":
        return [Port("input", 1, f"{p}_final"), *stream(f"{p}_s_a", accw, sink=True),
                *stream(f"{p}_s_b", accw, sink=True), *stream(f"{p}_m", accw, sink=False)]
    if u.kind in ("add", "fanin"):
        return [*stream(f"{p}_s_a", dw, sink=True), *stream(f"{p}_s_b", dw, sink=True),
                *stream(f"{p}_m", dw, sink=False),
                *([*stream(f"{p}_bp_s", dw, sink=True), *stream(f"{p}_bp_m_a", dw, sink=False),
                   *stream(f"{p}_bp_m_b", dw, sink=False)] if u.kind == "add" else [])]
    m, s = SGD_MANTISSA_BITS, SHIFT_BITS
    return [Port("input", m, f"{p}_cfg_mb"), Port("input", s, f"{p}_cfg_sb"),
            Port("input", m, f"{p}_cfg_mlr"), Port("input", s, f"{p}_cfg_slr"),
            *stream(f"{p}_s_g", accw, sink=True), *stream(f"{p}_s_w", dw, sink=True),
            *stream(f"{p}_m", dw, sink=False)]


def _pool_ports(p: str, dw: int) -> list[Port]:
    return [*stream(f"{p}_s_m", RECIP_BITS, sink=True, last=False),
            *stream(f"{p}_s_x", dw, sink=True, side=[("arg", TAP_BITS)]),
            Port("input", 1, f"{p}_start"), Port("output", 1, f"{p}_busy"),
            Port("output", 1, f"{p}_done"), Port("output", 1, f"{p}_err_frame"),
            *stream(f"{p}_m", dw, sink=False, side=[("arg", TAP_BITS)])]


def _own(ports: list[Port], prefix: str) -> list[tuple[str, str]]:
    """Connect every module port to the board port of the same name under ``prefix``."""
    return [(port.name[len(prefix) + 1:], port.name) for port in ports]


def unit_instances(u: UnitDesign, dw: int, accw: int) -> list[Instance]:
    """The RTL instances of a unit. A pooling layer gets one engine per direction: the engine
    accumulates its backward result into the buffer its forward pass writes."""
    p = u.ident
    clock = [("clk", "clk"), ("rst", "rst")]
    if u.kind == "sgd":
        return [Instance("fpdeep_sgd", f"u_{p}", "SGD update of this board's weights",
                         (("DW", dw), ("ACCW", accw)), (), tuple(clock + _own(
                             unit_ports(u, dw, accw), p)))]
    if u.kind == "pool":
        out = []
        for d, cfg in (("fp", u.forward), ("bp", u.backward)):
            q = f"{p}_{d}"
            consts = tuple((f"{q}_{name}".upper(), width, literal(cfg[name], width))
                           for name, width in POOL_CFG_WIDTHS.items())
            conns = clock + [(name, f"{q}_{name}".upper()) for name in POOL_CFG_WIDTHS]
            conns += _own(_pool_ports(q, dw), q)
            out.append(Instance("fpdeep_pool", f"u_{q}", f"pooling {d.upper()} of layer {u.layer}",
                                (("DW", dw), *sorted(u.params.items())), consts, tuple(conns)))
        return out
    if u.kind == "loss":
        consts = tuple((f"{p}_{name}".upper(), w, literal(u.forward[name], w))
                       for name, w in LOSS_CFG_WIDTHS.items())
        conns = clock + [(name, f"{p}_{name}".upper()) for name in LOSS_CFG_WIDTHS]
        conns += _own(unit_ports(u, dw, accw), p)
        return [Instance("fpdeep_loss", f"u_{p}", f"loss error at tensor {u.layer}",
                         (("DW", dw), ("NMAX", u.params["NMAX"]), ("LW", LOSS_LABEL_BITS),
                          ("DIVW", LOSS_DIVIDER_BITS)), consts, tuple(conns))]
    if u.kind == "psum":
        up = f"{p}_cfg_shift".upper()
        conns = clock + [("cfg_shift", up), ("cfg_final", f"{p}_final")]
        conns += [(mp, bp) for mp, bp in _own(unit_ports(u, dw, accw), p) if mp != "final"]
        return [Instance("fpdeep_psum", f"u_{p}", f"partial input errors of layer {u.layer}",
                         (("DW", dw), ("ACCW", accw)),
                         ((up, SHIFT_BITS, literal(u.forward["cfg_shift"], SHIFT_BITS)),),
                         tuple(conns))]
    if u.kind in ("add", "fanin"):
        widths = {"cfg_la": ADD_SHIFT_BITS, "cfg_lb": ADD_SHIFT_BITS, "cfg_shift": SHIFT_BITS}
        ports = unit_ports(u, dw, accw)
        fwd = [port for port in ports if not port.name.startswith(f"{p}_bp_")]
        conns = clock + [(name, f"{p}_{name}".upper()) for name in widths] + _own(fwd, p)
        consts = tuple((f"{p}_{name}".upper(), w, literal(u.forward[name], w))
                       for name, w in widths.items())
        what = "error fan-in of tensor" if u.kind == "fanin" else "residual Add of layer"
        out = [Instance("fpdeep_add", f"u_{p}", f"{what} {u.layer}", (("DW", dw),), consts,
                        tuple(conns))]
        if u.kind == "add":
            q = f"{p}_bp"
            consts = tuple((f"{q}_{name}".upper(), SHIFT_BITS,
                            literal(u.backward[name], SHIFT_BITS))
                           for name in ("cfg_shift_a", "cfg_shift_b"))
            conns = clock + [(name, f"{q}_{name}".upper()) for name in ("cfg_shift_a",
                                                                         "cfg_shift_b")]
            conns += _own([port for port in ports if port.name.startswith(f"{q}_")], q)
            out.append(Instance("fpdeep_fanout", f"u_{q}", f"error fan-out of layer {u.layer}",
                                (("DW", dw),), consts, tuple(conns)))
        return out
    up = f"{p}_cfg_shift".upper()
    consts = ((f"{up}_F", SHIFT_BITS, literal(u.forward["cfg_shift"], SHIFT_BITS)),
              (f"{up}_B", SHIFT_BITS, literal(u.backward["cfg_shift"], SHIFT_BITS)))
    conns = clock + [("cfg_shift", f"{p}_bwd ? {up}_B : {up}_F"), ("cfg_bwd", f"{p}_bwd")]
    conns += [(mp, bp) for mp, bp in _own(unit_ports(u, dw, accw), p) if mp != "bwd"]
    return [Instance("fpdeep_relu", f"u_{p}", f"ReLU of layer {u.layer}", (("DW", dw),), consts,
                     tuple(conns))]


#: Sides of a board in the chain: east towards higher board indices, west towards lower.
SIDES = ("east", "west")


def link_word_bits(dw: int) -> int:
    """Width of a link word of fpdeep_link_tx with one channel: {channel, last, data}."""
    return 1 + 1 + dw


def link_ports(side: str, dw: int) -> list[Port]:
    """The board's ports for one neighbour: streams to send and received, and the link words."""
    w = link_word_bits(dw)
    words = [Port(d, width, f"{side}_{name}", True) for d, width, name in (
        ("output", w, "tx_data"), ("output", 1, "tx_valid"), ("input", 1, "tx_ready"),
        ("input", w, "rx_data"), ("input", 1, "rx_valid"), ("output", 1, "rx_ready"))]
    return [*stream(f"{side}_s", dw, sink=True), *stream(f"{side}_m", dw, sink=False), *words]


def link_instances(side: str, dw: int) -> list[Instance]:
    """Framing for one neighbour (fpdeep_link_tx/_rx, one channel each way)."""
    clock = [("clk", "clk"), ("rst", "rst")]
    tx = clock + [("s_data", f"{side}_s_data"), ("s_last", f"{side}_s_last"),
                  ("s_valid", f"{side}_s_valid"), ("s_ready", f"{side}_s_ready"),
                  ("m_data", f"{side}_tx_data"), ("m_valid", f"{side}_tx_valid"),
                  ("m_ready", f"{side}_tx_ready")]
    rx = [("s_data", f"{side}_rx_data"), ("s_valid", f"{side}_rx_valid"),
          ("s_ready", f"{side}_rx_ready"), ("m_data", f"{side}_m_data"),
          ("m_last", f"{side}_m_last"), ("m_valid", f"{side}_m_valid"),
          ("m_ready", f"{side}_m_ready")]
    return [Instance("fpdeep_link_tx", f"u_{side}_tx", f"link framing towards the {side}",
                     (("DW", dw), ("NCH", 1)), (), tuple(tx)),
            Instance("fpdeep_link_rx", f"u_{side}_rx", f"link framing from the {side}",
                     (("DW", dw), ("NCH", 1)), (), tuple(rx))]

