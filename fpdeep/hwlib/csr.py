"""The board's control and status registers as data, compiled from hw/csr/fpdeep_csr.rdl.

The SystemRDL file is the one source of the register map. `register_map` elaborates it for one
board (its number of counted engines and units, its design hash) with systemrdl-compiler; the
host reads addresses, fields and encodings from the result (``rmap.addr("STATUS")``,
``rmap.field("STATUS", "state")``), fpdeep.codegen.csr renders the RTL block from it, and
`markdown_table` writes the docs' register table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

from fpdeep.errors import FpdeepError
from fpdeep.resources import data_dir
from fpdeep.tables import replace_part

#: The register map's source, relative to hw/.
RDL_PATH = "csr/fpdeep_csr.rdl"
#: The SystemRDL addrmap fpdeep elaborates, and the RTL module generated from it.
TOP = "fpdeep_csr"
#: Bytes per register: the AXI4-Lite data bus is 32 bits wide.
WORD_BYTES = 4
#: The counter arrays sit at fixed bases (0x400, 0x800), which leaves room for this many
#: counters each and makes the whole map fit in a 4 KiB window (12 address bits).
MAX_COUNTERS = 256
ADDRESS_BITS = 12

# What a field is, from its SystemRDL access: the RTL wires each kind its own way.
PARAMETER = "parameter"  # sw=r, hw=na, fpdeep_param: reads an RTL parameter (the design hash)
CONSTANT = "constant"  # sw=r, hw=na: reads its reset value
STATUS = "status"  # sw=r, hw=w: shows an input port
CONTROL = "control"  # sw=rw, hw=r: a stored value driving an output port
PULSE = "pulse"  # sw=w, hw=r, singlepulse: writing 1 drives a one-cycle pulse on an output port

#: How the docs write each kind's software access.
ACCESS = MappingProxyType({PARAMETER: "RO", CONSTANT: "RO", STATUS: "RO", CONTROL: "RW",
                           PULSE: "W1P"})


@dataclass(frozen=True)
class CsrField:
    """A field of a register: its bits, its kind, and the RTL port or parameter behind it."""

    name: str
    lsb: int
    width: int
    kind: str
    reset: int = 0
    port: str | None = None  # the fpdeep_csr port (STATUS, CONTROL, PULSE)
    port_lsb: int = 0  # the port bit the field's bit 0 is wired to
    param: str | None = None  # the fpdeep_csr parameter (PARAMETER)
    # value names, where the RDL gives the field an enum
    encoding: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    desc: str = ""

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1

    @property
    def mask(self) -> int:
        """The field's bits in the register word."""
        return ((1 << self.width) - 1) << self.lsb

    def value(self, value: int | str) -> int:
        """``value`` (a number or one of the field's value names) as the field holds it."""
        if isinstance(value, str):
            if value not in self.encoding:
                raise FpdeepError(f"field {self.name!r} has no value {value!r}; its values: "
                                  f"{', '.join(self.encoding) or 'none (it is a number)'}")
            return self.encoding[value]
        if not 0 <= value < 1 << self.width:
            raise FpdeepError(f"field {self.name!r} holds 0 .. {(1 << self.width) - 1}, "
                              f"got {value}")
        return value


@dataclass(frozen=True)
class CsrRegister:
    """A register, or an array of ``count`` registers ``stride`` bytes apart."""

    name: str
    offset: int
    fields: tuple[CsrField, ...]
    count: int = 1
    stride: int = WORD_BYTES
    array: bool = False  # one register per counted engine or unit
    desc: str = ""

    def field(self, name: str) -> CsrField:
        for f in self.fields:
            if f.name == name:
                return f
        raise FpdeepError(f"register {self.name} has no field {name!r}; its fields: "
                          f"{', '.join(f.name for f in self.fields)}")

    def address(self, index: int = 0) -> int:
        """Byte address of this register (entry ``index`` of an array)."""
        if not 0 <= index < self.count:
            raise FpdeepError(f"register {self.name} has {self.count} entr"
                              f"{'y' if self.count == 1 else 'ies'}; index {index} is out of "
                              f"range")
        return self.offset + index * self.stride

    @property
    def reset(self) -> int:
        return sum(f.reset << f.lsb for f in self.fields)


@dataclass(frozen=True)
class RegisterMap:
    """The register map of one board: its registers in address order."""

    name: str
    counters: int  # N: entries of each counter array
    design_hash: int
    registers: tuple[CsrRegister, ...]

    def register(self, name: str) -> CsrRegister:
        for r in self.registers:
            if r.name == name:
                return r
        raise FpdeepError(f"the CSR has no register {name!r}; its registers: "
                          f"{', '.join(r.name for r in self.registers)}")

    def addr(self, name: str, index: int = 0) -> int:
        """Byte address of register ``name`` (entry ``index`` of an array)."""
        return self.register(name).address(index)

    def field(self, register: str, name: str) -> CsrField:
        return self.register(register).field(name)

    def encode(self, register: str, **fields: int | str) -> int:
        """The word that writes ``fields`` (numbers or value names) to ``register``; fields
        not named are 0."""
        reg = self.register(register)
        return sum(reg.field(k).value(v) << reg.field(k).lsb for k, v in fields.items())

    def decode(self, register: str, word: int) -> dict[str, int]:
        """Each field's value in ``word`` read from ``register``."""
        return {f.name: (word & f.mask) >> f.lsb for f in self.register(register).fields}

    @property
    def version(self) -> int:
        return self.register("VERSION").reset

    def ports(self) -> tuple[tuple[str, str, int], ...]:
        """(name, direction, width) of the RTL block's register-side ports in register order,
        array ports ``counters`` entries wide."""
        widths: dict[str, int] = {}
        directions: dict[str, str] = {}
        for reg in self.registers:
            for f in reg.fields:
                if f.port is None:
                    continue
                direction = "input" if f.kind == STATUS else "output"
                if directions.setdefault(f.port, direction) != direction:
                    raise FpdeepError(f"{RDL_PATH}: port {f.port!r} is both read and driven")
                width = (f.port_lsb + f.width) * (reg.count if reg.array else 1)
                widths[f.port] = max(widths.get(f.port, 0), width)
        return tuple((name, directions[name], width) for name, width in widths.items())


class _Collector:
    """systemrdl-compiler's message printer, keeping the messages for an FpdeepError."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print_message(self, severity, text, src_ref) -> None:
        where = ""
        if src_ref is not None and getattr(src_ref, "line", None) is not None:
            where = f"{src_ref.path}:{src_ref.line}: "
        self.lines.append(f"{where}{severity.name.lower()}: {text}")


def _where(node) -> str:
    """``file:line`` of a node's instance in the SystemRDL source."""
    ref = node.inst.inst_src_ref
    line = getattr(ref, "line", None)
    return RDL_PATH if ref is None else f"{ref.path}:{line}" if line else str(ref.path)


def _kind(node) -> str:
    """A field's kind from its SystemRDL access; FpdeepError for access fpdeep does not wire."""
    from systemrdl.rdltypes import AccessType

    sw, hw = node.get_property("sw"), node.get_property("hw")
    param = node.get_property("fpdeep_param", default=None)
    port = node.get_property("fpdeep_port", default=None)
    pulse = node.get_property("singlepulse")
    kind = None
    if sw == AccessType.r and hw == AccessType.na:
        kind = PARAMETER if param is not None else CONSTANT
    elif sw == AccessType.r and hw == AccessType.w:
        kind = STATUS
    elif sw == AccessType.rw and hw == AccessType.r and not pulse:
        kind = CONTROL
    elif sw == AccessType.w and hw == AccessType.r and pulse:
        kind = PULSE
    name = node.get_path()
    if kind is None:
        raise FpdeepError(
            f"{_where(node)}: field {name} has sw={sw.name}, hw={hw.name}"
            f"{', singlepulse' if pulse else ''}; fpdeep wires sw=r hw=na (a constant or, with "
            f"fpdeep_param, a parameter), sw=r hw=w (status), sw=rw hw=r (control) and sw=w "
            f"hw=r singlepulse (a pulse)")
    if (port is None) != (kind in (PARAMETER, CONSTANT)):
        raise FpdeepError(f"{_where(node)}: field {name} ({kind}) "
                          f"{'needs' if port is None else 'cannot have'} an fpdeep_port")
    return kind


def _field(node) -> CsrField:
    kind = _kind(node)
    enum = node.get_property("encode")
    reset = node.get_property("reset")
    if kind in (PARAMETER, CONSTANT, CONTROL, PULSE) and not isinstance(reset, int):
        raise FpdeepError(f"{_where(node)}: field {node.get_path()} ({kind}) needs a constant "
                          f"reset value")
    return CsrField(
        name=node.inst_name, lsb=node.lsb, width=node.width, kind=kind,
        reset=reset if isinstance(reset, int) else 0,
        port=node.get_property("fpdeep_port", default=None),
        port_lsb=node.get_property("fpdeep_port_lsb", default=0),
        param=node.get_property("fpdeep_param", default=None),
        encoding=MappingProxyType({m.name: m.value for m in enum} if enum else {}),
        desc=node.get_property("desc") or "")


@cache
def register_map(*, counters: int, design_hash: int = 0) -> RegisterMap:
    """fpdeep's register map elaborated for a board with ``counters`` counted engines and units
    (1 .. MAX_COUNTERS) whose ID register reads the 32-bit ``design_hash``."""
    return compile_map(data_dir("hw") / RDL_PATH, counters=counters, design_hash=design_hash)


def compile_map(source: Path, *, counters: int, design_hash: int = 0) -> RegisterMap:
    """The addrmap `TOP` of SystemRDL file ``source`` elaborated with N=``counters`` and
    DESIGN_HASH=``design_hash``; FpdeepError with the compiler's messages where it fails, or
    naming the field whose access fpdeep cannot wire."""
    from systemrdl import RDLCompileError, RDLCompiler
    from systemrdl.node import RegNode

    if not 1 <= counters <= MAX_COUNTERS:
        raise FpdeepError(f"the CSR counts 1 .. {MAX_COUNTERS} engines and units, got "
                          f"counters={counters}")
    if not 0 <= design_hash < 1 << 32:
        raise FpdeepError(f"the design hash is 32 bits, got {design_hash:#x}")
    messages = _Collector()
    compiler = RDLCompiler(message_printer=messages)
    try:
        compiler.compile_file(str(source))
        top = compiler.elaborate(TOP, parameters={"N": counters,
                                                  "DESIGN_HASH": design_hash}).top
    except RDLCompileError as exc:
        raise FpdeepError(f"{source} does not compile: " + "; ".join(messages.lines or [str(exc)])
                          ) from exc
    registers = []
    for node in top.children():
        if not isinstance(node, RegNode):
            raise FpdeepError(f"{_where(node)}: {node.get_path()} is not a register; the CSR map "
                              f"is flat")
        registers.append(CsrRegister(
            name=node.inst_name, offset=node.raw_address_offset,
            fields=tuple(_field(f) for f in node.fields()),
            count=node.array_dimensions[0] if node.is_array else 1,
            stride=node.array_stride if node.is_array else WORD_BYTES,
            array=node.is_array, desc=node.get_property("desc") or ""))
    rmap = RegisterMap(name=top.get_property("name") or TOP, counters=counters,
                       design_hash=design_hash, registers=tuple(registers))
    rmap.ports()  # checks that no port is both read and driven
    return rmap


# --- docs/csr.md -------------------------------------------------------------------------------

BEGIN = "<!-- generated from hw/csr/fpdeep_csr.rdl by `python -m fpdeep.codegen.csr` -->"
END = "<!-- end of the generated part -->"


def _bits(f: CsrField) -> str:
    return f"{f.msb}:{f.lsb}" if f.width > 1 else str(f.lsb)


def _meaning(reg: CsrRegister, f: CsrField, widths: Mapping[str, int]) -> str:
    parts = [f.desc] if f.desc else []
    if f.encoding:
        parts.append(", ".join(f"{v} {k}" for k, v in f.encoding.items()))
    if f.kind == PARAMETER:
        parts.append(f"parameter `{f.param}`")
    elif f.port is not None:
        if reg.array:
            bits = f"[i*{f.width}+:{f.width}]"
        elif widths[f.port] != f.width:
            bits = f"[{f.port_lsb + f.width - 1}:{f.port_lsb}]"
        else:
            bits = ""
        parts.append(f"port `{f.port}{bits}`")
    return "; ".join(parts)


def markdown_table() -> str:
    """The generated part of docs/csr.md, markers included: every register and field, arrays
    written with their entry index ``i`` (0 .. N-1)."""
    rmap = register_map(counters=1)
    widths = {name: width for name, _, width in rmap.ports()}
    lines = [BEGIN, "", f"Format version {rmap.version}. Arrays have N entries, one per "
             f"counted engine or unit (N <= {MAX_COUNTERS}); the map fits in "
             f"{1 << ADDRESS_BITS} bytes.", "",
             "| offset | register | field | bits | access | reset | meaning |",
             "|---|---|---|---|---|---|---|"]
    for reg in rmap.registers:
        offset = (f"`{reg.offset:#05x} + {reg.stride}*i`" if reg.array
                  else f"`{reg.offset:#05x}`")
        name = f"{reg.name}[i]" if reg.array else reg.name
        for k, f in enumerate(reg.fields):
            head = (f"| {offset} | `{name}` — {reg.desc} " if k == 0 else "| | ")
            reset = "—" if f.kind in (STATUS, PARAMETER) else f"{f.reset:#x}"
            lines.append(f"{head}| `{f.name}` | {_bits(f)} | {ACCESS[f.kind]} | {reset} | "
                         f"{_meaning(reg, f, widths)} |")
    return "\n".join([*lines, "", END])


def updated_doc(text: str) -> str:
    """``text`` (docs/csr.md) with its generated part rewritten."""
    return replace_part(text, BEGIN, END, markdown_table(), where="docs/csr.md")
