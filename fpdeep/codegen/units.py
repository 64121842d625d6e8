"""The element-wise units of a board (ReLU, pooling, SGD) and the ports/instances of a board top.

A board top is described as plain data: its ports, and instances with their parameters,
configuration constants and connections. ``board.sv.j2`` prints that data and
``cluster_top.sv.j2`` repeats the same port list with a ``b<index>_`` prefix, so the two
templates cannot disagree.

Units with two directions (ReLU, pooling) hold both configurations as constants and pick one
with the board input ``<unit>_bwd`` that the board controller sets; the SGD unit's learning-rate
and batch constants are runtime inputs (the host writes them), because the learning rate is
chosen when training starts, not when the boards are generated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fpdeep.engine import AFFINE_BITS, COUNT_BITS
from fpdeep.errors import FpdeepError
from fpdeep.golden.loss import LOSSES
from fpdeep.golden.numerics import Numerics, scale_constant
from fpdeep.ir import Layer, Network, Op
from fpdeep.pool_engine import RECIP_BITS, TAP_BITS, PoolShape, pool_config

#: Shift inputs of the units are 7-bit two's complement (RTL parameter SW = 7).
SHIFT_BITS = 7
#: Mantissa width of the SGD unit's 1/B and learning-rate constants (RTL parameter MW).
SGD_MANTISSA_BITS = 17
POOL_CFG_WIDTHS: dict[str, int] = {
    "cfg_mode": 2, "cfg_bound": 5 * COUNT_BITS, "cfg_init": 5 * AFFINE_BITS,
    "cfg_jump": 25 * AFFINE_BITS, "cfg_h": COUNT_BITS, "cfg_w": COUNT_BITS,
    "cfg_kh": COUNT_BITS, "cfg_kw": COUNT_BITS, "cfg_rlo": COUNT_BITS, "cfg_rhi": COUNT_BITS,
    "cfg_clo": COUNT_BITS, "cfg_chi": COUNT_BITS, "cfg_shift": SHIFT_BITS,
    "cfg_in_count": AFFINE_BITS, "cfg_out_count": AFFINE_BITS,
}
#: Layers with an RTL unit, by op; the others (Flatten, Identity, Sum of more than two) are
#: done by the controller.
RTL_UNIT_OPS = {Op.RELU: "relu", Op.MAXPOOL: "pool", Op.AVGPOOL: "pool",
                Op.GLOBAL_AVGPOOL: "pool", Op.ADD: "add"}
#: Left-shift field width of fpdeep_add (RTL parameter LW).
ADD_SHIFT_BITS = 5


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


@dataclass(frozen=True)
class UnitDesign:
    """One RTL unit on a board: a ReLU or pooling layer, or the board's SGD unit."""

    kind: str  # relu, pool, sgd
    layer: str  # "" for the SGD unit
    ident: str
    board: int
    params: dict[str, int] = field(default_factory=dict)
    forward: dict[str, int] = field(default_factory=dict)  # cfg port -> value
    backward: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # what the controller needs to drive it


def literal(value: int, width: int) -> str:
    if value < 0 or value >> width:
        raise FpdeepError(f"configuration constant {value} does not fit in {width} bits")
    return f"{width}'h{value:x}"


def _pow2(n: int) -> int:
    return max(2, 1 << (n - 1).bit_length())


def _owner(network: Network, tensor: str) -> str:
    producer = network.tensors[tensor].producer
    return tensor if producer is None else producer


def layer_unit(network: Network, layer: Layer, *, ident: str, board: int,
               numerics: Numerics) -> UnitDesign | None:
    """The RTL unit of a non-compute layer, or None when the controller does it."""
    kind = RTL_UNIT_OPS.get(layer.op)
    if kind is None or (kind == "add" and len(layer.inputs) != 2):
        return None
    if kind == "add":
        return _add_unit(network, layer, ident=ident, board=board, numerics=numerics)
    src = _owner(network, layer.inputs[0])
    act_in, act_out = numerics.fmt("act", src).frac, numerics.fmt("act", layer.name).frac
    err_in, err_out = numerics.fmt("err", src).frac, numerics.fmt("err", layer.name).frac
    if kind == "relu":
        return UnitDesign("relu", layer.name, ident, board, {},
                          {"cfg_shift": (act_in - act_out) % (1 << SHIFT_BITS)},
                          {"cfg_shift": (err_out - err_in) % (1 << SHIFT_BITS)},
                          {"elements": math.prod(layer.in_shape)})
    c, h, w = layer.in_shape
    attrs = layer.attrs
    if layer.op is Op.GLOBAL_AVGPOOL:
        from fpdeep.golden.pool import global_attrs

        attrs = global_attrs((h, w))
    shape = PoolShape.of(attrs, c=c, in_hw=(h, w))
    avg = layer.op is not Op.MAXPOOL
    fwd = pool_config(shape, mode="avg_fwd" if avg else "max_fwd", in_frac=act_in,
                      out_frac=act_out)
    bwd = pool_config(shape, mode="avg_bwd" if avg else "max_bwd", in_frac=err_out,
                      out_frac=err_in)
    n_in, n_out = c * h * w, c * shape.out_hw[0] * shape.out_hw[1]
    return UnitDesign("pool", layer.name, ident, board,
                      {"XD": _pow2(n_in), "YD": _pow2(n_out)}, dict(fwd.ports), dict(bwd.ports),
                      {"avg": avg, "in": n_in, "out": n_out, "cycles": shape.cycles(),
                       "table_fwd": list(fwd.table), "table_bwd": list(bwd.table)})


def _add_unit(network: Network, layer: Layer, *, ident: str, board: int,
              numerics: Numerics) -> UnitDesign:
    """Residual Add forward (fpdeep_add, §8) and its error fan-out (fpdeep_fanout)."""
    acts = [numerics.fmt("act", _owner(network, t)).frac for t in layer.inputs]
    errs = [numerics.fmt("err", _owner(network, t)).frac for t in layer.inputs]
    top = max(acts)
    fy, fe = numerics.fmt("act", layer.name).frac, numerics.fmt("err", layer.name).frac
    lefts = [top - f for f in acts]
    if max(lefts) >= 1 << ADD_SHIFT_BITS:
        raise FpdeepError(f"layer {layer.name!r}: Add inputs differ by {max(lefts)} fractional "
                          f"bits; the add unit aligns at most {(1 << ADD_SHIFT_BITS) - 1}")
    mod = 1 << SHIFT_BITS
    return UnitDesign("add", layer.name, ident, board, {},
                      {"cfg_la": lefts[0], "cfg_lb": lefts[1], "cfg_shift": (top - fy) % mod},
                      {"cfg_shift_a": (fe - errs[0]) % mod, "cfg_shift_b": (fe - errs[1]) % mod},
                      {"elements": math.prod(layer.out_shape)})


def fan_in_unit(tensor: str, shape: Sequence[int], *, ident: str, board: int) -> UnitDesign:
    """The exact sum of two error contributions to ``tensor``, saturated once (§8)."""
    return UnitDesign("fanin", tensor, ident, board, {},
                      {"cfg_la": 0, "cfg_lb": 0, "cfg_shift": 0}, {},
                      {"elements": math.prod(shape), "tensor": tensor})


#: Label sideband width of fpdeep_loss (RTL parameter LW) and its divider width (DIVW).
LOSS_LABEL_BITS = 8
LOSS_DIVIDER_BITS = 48


def loss_unit(network: Network, logits: str, *, classes: int, ident: str, board: int,
              numerics: Numerics, loss: str = "softmax_ce") -> UnitDesign:
    """The error at the logits (fpdeep_loss): softmax cross-entropy (numerics §10.1) or MSE
    (the difference times the 16-bit constant of 2/N)."""
    if loss not in LOSSES:
        raise FpdeepError(f"loss {loss!r} is not supported; choose one of {', '.join(LOSSES)}")
    if classes >= 1 << LOSS_LABEL_BITS:
        raise FpdeepError(f"the loss unit takes fewer than {1 << LOSS_LABEL_BITS} classes, "
                          f"the network has {classes}")
    owner = _owner(network, logits)
    fz, fe = numerics.fmt("act", owner).frac, numerics.fmt("err", owner).frac
    mse_m, mse_r = scale_constant(2 / classes) if loss == "mse" else (0, 0)
    mse_shift = (fz + mse_r - fe) % (1 << SHIFT_BITS) if loss == "mse" else 0
    return UnitDesign("loss", logits, ident, board, {"NMAX": _pow2(classes)},
                      {"cfg_kind": int(loss == "mse"), "cfg_n": classes,
                       "cfg_ushift": (fz + 15 - 16) % (1 << SHIFT_BITS), "cfg_fe": fe,
                       "cfg_fz": fz, "cfg_mse_m": mse_m, "cfg_mse_shift": mse_shift},
                      {}, {"elements": classes, "loss": loss})


LOSS_CFG_WIDTHS = {"cfg_kind": 1, "cfg_n": LOSS_LABEL_BITS, "cfg_ushift": SHIFT_BITS,
                   "cfg_fe": 6, "cfg_fz": 6, "cfg_mse_m": 17, "cfg_mse_shift": SHIFT_BITS}


def psum_unit(layer: str, *, shift: int, slices: int, elements: int, ident: str,
              board: int) -> UnitDesign:
    """The reduction of a split layer's raw partial input errors (fpdeep_psum)."""
    return UnitDesign("psum", layer, ident, board, {},
                      {"cfg_shift": shift % (1 << SHIFT_BITS)}, {},
                      {"elements": elements, "slices": slices})


def sgd_unit(board: int) -> UnitDesign:
    return UnitDesign("sgd", "", "sgd", board)


# ----------------------------------------------------------------------------- ports


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


# ----------------------------------------------------------------------------- links

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


@dataclass(frozen=True)
class LinkModel:
    """A simulation-only link between board ``west`` and board ``west + 1`` (both directions):
    ``num`` words per ``den`` cycles after ``latency`` cycles."""

    west: int
    latency: int
    num: int
    den: int


#: Finest link rate the simulation link model is given: num/den words per cycle, den <= this.
LINK_RATE_DENOMINATOR = 1 << 10


def link_model(west: int, *, gbps: float, clock_mhz: float, dw: int, latency: int,
               payload_efficiency: float) -> LinkModel:
    """The link between boards ``west`` and ``west + 1``: its payload rate in data words per
    cycle as a fraction of at most 1 (framing moves one word per cycle), and its latency."""
    from fractions import Fraction

    words = Fraction(gbps * 1e9 * payload_efficiency / dw / (clock_mhz * 1e6))
    if words < Fraction(1, LINK_RATE_DENOMINATOR):
        least = dw * clock_mhz * 1e6 / LINK_RATE_DENOMINATOR / payload_efficiency / 1e9
        raise FpdeepError(
            f"the link between boards {west} and {west + 1} carries {float(words):.3g} words "
            f"per cycle at {clock_mhz:g} MHz; the generated link model needs at least "
            f"1/{LINK_RATE_DENOMINATOR} (--link-gbps {least:.3g} or more at this clock)")
    rate = min(Fraction(1), words).limit_denominator(LINK_RATE_DENOMINATOR)
    return LinkModel(west, latency, rate.numerator, rate.denominator)
