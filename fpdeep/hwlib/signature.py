"""A hand-written module's interface as data: its parameters, ports, valid/ready streams and
configuration fields, with each width written as the RTL writes it (a number, a parameter name
or a small expression of parameters such as ``"6*CW"``).

Codegen, the testbenches and the docs read these declarations instead of restating them, and
``tests/hw/test_hw_interfaces.py`` checks each one against the module's real ports.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from fpdeep.errors import FpdeepError

#: A width: a number of bits, or an expression over the module's parameters (``+ - * //``,
#: ``clog2(x)`` as SystemVerilog's ``$clog2``, ``max(a, b)``).
Width = int | str

IN, OUT = "input", "output"

# What a port is for. Codegen makes constants of CONFIG ports and wires CLOCK ports to the
# board's clk/rst.
CLOCK, CONFIG, CONTROL, DATA = "clock", "config", "control", "data"
SIDE, LAST, VALID, READY = "side", "last", "valid", "ready"
#: The inputs a driver holds low until it uses them, so that no beat moves and nothing starts
#: before it does: handshakes, controls and configuration (data, last and side may float).
IDLE_LOW = (VALID, READY, CONTROL, CONFIG)


def clog2(n: int) -> int:
    """SystemVerilog's ``$clog2``: the bits that address ``n`` things (0 for ``n <= 1``)."""
    return max(0, (n - 1).bit_length())


_FUNCTIONS = {"clog2": clog2, "max": max}
_OPERATORS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
              ast.FloorDiv: int.__floordiv__}


def evaluate(width: Width, params: Mapping[str, int]) -> int:
    """The value of ``width`` with ``params``; FpdeepError for anything but the small grammar
    of `Width` or a parameter that is not given."""
    if isinstance(width, int):
        return width
    try:
        tree = ast.parse(width, mode="eval").body
    except SyntaxError as exc:
        raise FpdeepError(f"width {width!r} is not an expression") from exc

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in params:
                raise FpdeepError(f"width {width!r} names {node.id!r}, which is not a "
                                  f"parameter; parameters: {', '.join(params) or 'none'}")
            return params[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _FUNCTIONS and not node.keywords):
            return _FUNCTIONS[node.func.id](*(value(a) for a in node.args))
        raise FpdeepError(f"width {width!r}: {ast.unparse(node)!r} is not allowed in a width")

    return value(tree)


@dataclass(frozen=True)
class Port:
    """A port with its width worked out for one parameterisation."""

    direction: str  # IN or OUT
    width: int
    name: str
    role: str = CONTROL


@dataclass(frozen=True)
class Signal:
    """One declared port: name, direction, width and role."""

    name: str
    direction: str
    width: Width = 1
    role: str = CONTROL

    def __post_init__(self) -> None:
        if self.direction not in (IN, OUT):
            raise FpdeepError(f"port {self.name!r}: direction must be {IN!r} or {OUT!r}, got "
                              f"{self.direction!r}")


@dataclass(frozen=True)
class Stream:
    """A valid/ready stream ``<name>_data``, its side signals, ``_last``, ``_valid``, ``_ready``
    (in that port order); ``sink``: the module receives it. ``lanes`` is the width of valid and
    ready where one data bus serves several channels (fpdeep_link_rx)."""

    name: str
    sink: bool
    data: Width
    last: Width | None = 1  # None: the stream has no last flag
    side: tuple[tuple[str, Width], ...] = ()
    lanes: Width = 1

    def signals(self) -> tuple[Signal, ...]:
        into, back = (IN, OUT) if self.sink else (OUT, IN)
        out = [Signal(f"{self.name}_data", into, self.data, DATA)]
        out += [Signal(f"{self.name}_{s}", into, w, SIDE) for s, w in self.side]
        if self.last is not None:
            out.append(Signal(f"{self.name}_last", into, self.last, LAST))
        return (*out, Signal(f"{self.name}_valid", into, self.lanes, VALID),
                Signal(f"{self.name}_ready", back, self.lanes, READY))


def sink(name: str, data: Width, **kw: object) -> Stream:
    return Stream(name, True, data, **kw)


def source(name: str, data: Width, **kw: object) -> Stream:
    return Stream(name, False, data, **kw)


def config(name: str, width: Width) -> Signal:
    return Signal(name, IN, width, CONFIG)


#: The clock and the synchronous active-high reset every clocked module takes first.
CLOCKED = (Signal("clk", IN, 1, CLOCK), Signal("rst", IN, 1, CLOCK))


def axi_lite_slave(prefix: str, addr: Width) -> tuple[Signal, ...]:
    """The ports of a 32-bit AXI4-Lite slave ``<prefix>_aw*, _w*, _b*, _ar*, _r*`` with
    ``addr`` address bits, in the order AMBA lists them."""
    channels = (
        ("aw", (("addr", IN, addr, DATA), ("prot", IN, 3, DATA))),
        ("w", (("data", IN, 32, DATA), ("strb", IN, 4, DATA))),
        ("b", (("resp", OUT, 2, DATA),)),
        ("ar", (("addr", IN, addr, DATA), ("prot", IN, 3, DATA))),
        ("r", (("data", OUT, 32, DATA), ("resp", OUT, 2, DATA))),
    )
    ports = []
    for channel, payload in channels:
        into = payload[0][1]  # the direction the channel's payload travels
        back = OUT if into == IN else IN
        ports += [Signal(f"{prefix}_{channel}{name}", d, w, role) for name, d, w, role in payload]
        ports += [Signal(f"{prefix}_{channel}valid", into, 1, VALID),
                  Signal(f"{prefix}_{channel}ready", back, 1, READY)]
    return tuple(ports)


def axi_stream(prefix: str, width: Width, *, sink: bool,
               keep: Width | None = None) -> tuple[Signal, ...]:
    """The ports of an AXI4-Stream ``<prefix>_tdata, [_tkeep,] _tvalid, _tready, _tlast``;
    ``sink``: the module receives it; ``keep``: the width of its byte flags, if it has them."""
    into, back = (IN, OUT) if sink else (OUT, IN)
    flags = () if keep is None else (Signal(f"{prefix}_tkeep", into, keep, SIDE),)
    return (Signal(f"{prefix}_tdata", into, width, DATA), *flags,
            Signal(f"{prefix}_tvalid", into, 1, VALID),
            Signal(f"{prefix}_tready", back, 1, READY), Signal(f"{prefix}_tlast", into, 1, LAST))


def axi_master(prefix: str, data: Width, addr: Width, ident: Width = 1, *,
               slave: bool = False) -> tuple[Signal, ...]:
    """The ports of an AXI4 master ``<prefix>_aw*, _w*, _b*, _ar*, _r*`` with ``data`` data
    bits, ``addr`` address bits and ``ident`` ID bits, in the order AMBA lists them; with
    ``slave``, the same ports of the slave it talks to."""
    strb: Width = data // 8 if isinstance(data, int) else f"({data})//8"
    request = (("id", ident), ("addr", addr), ("len", 8), ("size", 3), ("burst", 2),
               ("lock", 1), ("cache", 4), ("prot", 3), ("qos", 4))
    channels = (
        ("aw", OUT, request),
        ("w", OUT, (("data", data), ("strb", strb), ("last", 1))),
        ("b", IN, (("id", ident), ("resp", 2))),
        ("ar", OUT, request),
        ("r", IN, (("id", ident), ("data", data), ("resp", 2), ("last", 1))),
    )
    ports = []
    for channel, into, payload in channels:
        if slave:
            into = OUT if into == IN else IN
        back = OUT if into == IN else IN
        ports += [Signal(f"{prefix}_{channel}{name}", into, w, DATA) for name, w in payload]
        ports += [Signal(f"{prefix}_{channel}valid", into, 1, VALID),
                  Signal(f"{prefix}_{channel}ready", back, 1, READY)]
    return tuple(ports)


@dataclass(frozen=True)
class Module:
    """A module of ``hw/``: where it lives, what it instantiates and its interface.

    ``params`` are its parameters with the RTL's defaults; ``derived`` are parameters whose
    default the RTL computes from others. ``members`` are its ports and streams in RTL order.
    """

    name: str
    folder: str  # its component folder under hw/
    summary: str
    params: Mapping[str, int | str] = field(default_factory=dict)
    members: tuple[Signal | Stream, ...] = ()
    uses: tuple[str, ...] = ()  # the modules it instantiates
    derived: Mapping[str, Width] = field(default_factory=dict)
    sim_only: bool = False  # a simulation model, never part of a board

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "derived", MappingProxyType(dict(self.derived)))
        names = [s.name for s in self.signals()]
        if len(set(names)) != len(names):
            raise FpdeepError(f"module {self.name}: a port is declared twice")

    @property
    def path(self) -> str:
        """Its file, relative to hw/."""
        return f"{self.folder}/{self.name}.sv"

    def signals(self) -> tuple[Signal, ...]:
        """Every port, streams expanded, in RTL order."""
        return tuple(s for m in self.members
                     for s in (m.signals() if isinstance(m, Stream) else (m,)))

    @property
    def streams(self) -> tuple[Stream, ...]:
        return tuple(m for m in self.members if isinstance(m, Stream))

    def stream(self, name: str) -> Stream:
        for s in self.streams:
            if s.name == name:
                return s
        raise FpdeepError(f"{self.name} has no stream {name!r}; its streams: "
                          f"{', '.join(s.name for s in self.streams) or 'none'}")

    @property
    def config(self) -> tuple[str, ...]:
        """Its configuration fields, in RTL order."""
        return tuple(s.name for s in self.signals() if s.role == CONFIG)

    def parameters(self, **given: int) -> dict[str, int]:
        """Every parameter, derived ones included: the defaults with ``given`` in their place."""
        known = [*self.params, *self.derived]
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise FpdeepError(f"{self.name} has no parameter {', '.join(unknown)}; its "
                              f"parameters: {', '.join(known) or 'none'}")
        values = {**self.params, **{k: v for k, v in given.items() if k in self.params}}
        for name, width in self.derived.items():
            values[name] = given[name] if name in given else evaluate(width, values)
        return values

    def ports(self, **params: int) -> tuple[Port, ...]:
        """Every port with its width for ``params`` (the defaults for any not given)."""
        values = self.parameters(**params)
        return tuple(Port(s.direction, evaluate(s.width, values), s.name, s.role)
                     for s in self.signals())

    def port(self, name: str, **params: int) -> Port:
        for p in self.ports(**params):
            if p.name == name:
                return p
        raise FpdeepError(f"{self.name} has no port {name!r}; its ports: "
                          f"{', '.join(s.name for s in self.signals())}")

    def width(self, name: str, **params: int) -> int:
        return self.port(name, **params).width

    def mask(self, name: str, **params: int) -> int:
        """All ones in the width of port ``name``."""
        return (1 << self.width(name, **params)) - 1

    def encode(self, name: str, value: int, **params: int) -> int:
        """``value`` as port ``name`` carries it: two's complement in the port's width."""
        return value & self.mask(name, **params)

    def signed_range(self, name: str, **params: int) -> tuple[int, int]:
        """The smallest and largest signed value port ``name`` carries."""
        top = 1 << (self.width(name, **params) - 1)
        return -top, top - 1
