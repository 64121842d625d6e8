"""docs/board.md's tables, written from the declarations: the board top's ports
(`fpdeep.codegen.board.top_ports`), and the host protocol and instruction format
(`fpdeep.hwlib.protocol`), with worked packets encoded by the protocol's own encoders.

``python -m fpdeep.codegen.board_doc`` rewrites every generated part of docs/board.md (each
between its own pair of markers, so the prose around them stays as written); a test fails
while any part differs from the declarations.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from fpdeep.codegen.board import DRAM_PREFIX, SIDES, WATCHDOG_MIN, top_ports
from fpdeep.design.lower import Design
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import protocol as p
from fpdeep.numerics import Numerics
from fpdeep.planning import perf
from fpdeep.resources import PACKAGE_DIR
from fpdeep.tables import replace_part

#: The document, relative to the checkout.
DOC_PATH = "docs/board.md"
COMMAND = "python -m fpdeep.codegen.board_doc"


def begin(name: str) -> str:
    return f"<!-- generated part `{name}`: `{COMMAND}` rewrites it -->"


def end(name: str) -> str:
    return f"<!-- end of generated part `{name}` -->"


def _data_width() -> int:
    """The data width of the default numerics: the width the ports table is written for."""
    return Numerics().fmt("act", "input").width


def _interface(name: str) -> str:
    if name in ("clk", "rst_n"):
        return "clock" if name == "clk" else "reset, active low"
    if name.startswith("s_axil_"):
        return "CSR, AXI4-Lite slave (docs/csr.md)"
    for prefix, what in (("s_axis_host_", "host in"), ("m_axis_host_", "host out")):
        if name.startswith(prefix):
            return f"{what}, AXI4-Stream"
    for side in SIDES:
        for prefix, what in ((f"m_axis_{side}_", "to"), (f"s_axis_{side}_", "from")):
            if name.startswith(prefix):
                return f"link {what} the {side} neighbour, AXI4-Stream"
    if name.startswith(DRAM_PREFIX + "_"):
        return "off-chip memory, AXI4 master (only where the plan keeps tensors off chip)"
    raise FpdeepError(f"board top port {name!r} belongs to no documented interface")


def ports_table() -> str:
    dw = _data_width()
    design = Design(model="", boards=(), data_width=dw, clock_mhz=0.0, link_gbps=(), homes={})
    lines = [f"For {dw}-bit data (the default numerics). The link ports' `tdata` is a "
             "parameter of the design: the planned link's payload bits per clock cycle, "
             f"rounded up to a multiple of {perf.LINK_PORT_QUANTUM} bits, "
             f"{design.link_bits} bits here (the least); each beat holds as many "
             f"{dw + perf.LINK_FRAMING_BITS}-bit link words as fit. The beats travel in the "
             "reliable link's frames (a header beat, payload beats, a CRC-32 trailer beat "
             "with `tlast`); `tkeep` is driven all ones and ignored on input.", "",
             "| port | direction | bits | interface |", "|---|---|---|---|"]
    lines += [f"| `{t.name}` | {t.direction} | {t.width} | {_interface(t.name)} |"
              for t in top_ports(design)]
    return "\n".join(lines)


def _field_rows(fields: Mapping[str, p.Field]) -> list[str]:
    return [f"| `{f.name}` | {f.bits} | {f.width} | {f.meaning} |"
            for f in sorted(fields.values(), key=lambda f: -f.lsb)]


def header_table() -> str:
    return "\n".join(["| field | bits | width | meaning |", "|---|---|---|---|",
                      *_field_rows(p.HEADER)])


def status_table() -> str:
    return "\n".join(["| field | bits | width | meaning |", "|---|---|---|---|",
                      *_field_rows(p.STATUS)])


def opcodes_table() -> str:
    lines = ["| opcode | value | response `[63:56]` | what it does |", "|---|---|---|---|"]
    lines += [f"| `{name}` | `{code:#04x}` | `{p.RESPONSE | code:#04x}` | "
              f"{p.HOST_OPCODE_MEANINGS[name]} |" for name, code in p.HOST_OPCODES.items()]
    return "\n".join(lines)


def errors_table() -> str:
    lines = ["| code | name | meaning | reported in | when |", "|---|---|---|---|---|"]
    for name, code in p.ERROR_CODES.items():
        where = ("status response and CSR `STATUS`" if name in p.PACKET_ERRORS
                 else "CSR `STATUS`")
        lines.append(f"| {code} | `{name}` | {p.ERRORS[code]} | {where} | "
                     f"{p.ERROR_CAUSES[name]} |")
    lines += ["", f"The watchdog's limit (`fpdeep_board_ctl`'s `WATCHDOG`) is twice the cycles "
              "the build models for a step of its planned batch, rounded up to a power of two, "
              f"and at least {WATCHDOG_MIN}: a board idles while the rest of the chain works on "
              "an image, up to nearly a whole step."]
    return "\n".join(lines)


def instructions_table() -> str:
    lines = ["| op | `op` | what it does | field | bits | meaning |", "|---|---|---|---|---|---|"]
    for name, code in p.OPS.items():
        fields = [f for f in sorted(p.INSTRUCTIONS[name].values(), key=lambda f: -f.lsb)
                  if f is not p.OP]
        head = f"| `{name}` | {code} | {p.OP_MEANINGS[name]} |"
        if not fields:
            lines.append(f"{head} — | | |")
        for k, f in enumerate(fields):
            lead = head if k == 0 else "| | | |"
            lines.append(f"{lead} `{f.name}` | {f.bits} | {f.meaning} |")
    lines += ["", f"`op` is bits {p.OP.bits} of every instruction; bits no field names are 0."]
    return "\n".join(lines)


def _hex(beat: int) -> str:
    return f"{beat:016x}"


def _beats(rows: list[tuple[int, str]]) -> list[str]:
    return ["```", *(f"{_hex(b)}  {what}" for b, what in rows), "```"]


def examples() -> str:
    """A WRITE, a READ, a PROGRAM and a bad packet, beat by beat, with their answers."""
    bank, address = 2, 0x10
    values = [1, -2, 0x7FFF]
    n = len(values)
    program = [(p.op_wait(0, 1), "WAIT resource 0, count 1"),
               (p.op_in(0, bank, address, n), f"IN mover 0, bank {bank}, address {address}, "
                                              f"{n} words"),
               (p.op_out(0, 3, 0, n), f"OUT mover 0, bank 3, address 0, {n} words"),
               (p.op_go(start=True, wait_done=True), "GO start, wait_done, ends_task"),
               (p.op_end(), "END")]
    bad = p.HEADER["opcode"].place(0x07, "header")  # no such opcode
    lines = [f"A WRITE of the words {values} to bank {bank} from address {address} "
             f"({address:#x}):", "",
             "Host to board:", "",
             *_beats([(p.header("WRITE", bank, address, n), "header: WRITE, target "
                       f"{bank}, address {address:#x}, length {n}"),
                      *((p.word(v), f"word {v}") for v in values[:-1]),
                      (p.word(values[-1]), f"word {values[-1]}, tlast")]),
             "", "Board to host:", "",
             *_beats([(p.Status(p.HOST_OPCODES["WRITE"], 0, n).encode(),
                       f"status: WRITE, ok, length {n}, tlast")]),
             "", "A READ of the same words:", "", "Host to board:", "",
             *_beats([(p.header("READ", bank, address, n), f"header: READ, target {bank}, "
                       f"address {address:#x}, length {n}, tlast")]),
             "", "Board to host (each word sign-extended to 64 bits):", "",
             *_beats([(p.Status(p.HOST_OPCODES["READ"], 0, n).encode(),
                       f"status: READ, ok, length {n}"),
                      *((v & ((1 << p.BEAT_BITS) - 1), f"word {v}") for v in values[:-1]),
                      (values[-1] & ((1 << p.BEAT_BITS) - 1), f"word {values[-1]}, tlast")]),
             "", f"A PROGRAM of {len(program)} instructions into resource 1 from address 0:",
             "", "Host to board:", "",
             *_beats([(p.header("PROGRAM", 1, 0, len(program)),
                       f"header: PROGRAM, target 1, address 0, length {len(program)}"),
                      *program[:-1], (program[-1][0], program[-1][1] + ", tlast")]),
             "", "Board to host:", "",
             *_beats([(p.Status(p.HOST_OPCODES["PROGRAM"], 0, len(program)).encode(),
                       f"status: PROGRAM, ok, length {len(program)}, tlast")]),
             "", "A packet with an unknown opcode (0x07), one beat:", "",
             *_beats([(bad, "header, tlast")]),
             "", "Board to host:", "",
             *_beats([(p.Status(0x07, p.ERROR_CODES["opcode"], 0).encode(),
                       "status: opcode 0x07, error 1 (unknown opcode), length 0, tlast")])]
    return "\n".join(lines)


#: Every generated part of docs/board.md, by name.
PARTS: Mapping[str, Callable[[], str]] = {
    "ports": ports_table, "header": header_table, "status": status_table,
    "opcodes": opcodes_table, "errors": errors_table, "instructions": instructions_table,
    "examples": examples,
}


def part(name: str) -> str:
    """Generated part ``name``, markers included."""
    return f"{begin(name)}\n\n{PARTS[name]()}\n\n{end(name)}"


def updated(text: str) -> str:
    """``text`` (docs/board.md) with every generated part rewritten."""
    for name in PARTS:
        text = replace_part(text, begin(name), end(name), part(name), where=DOC_PATH)
    return text


def main(argv: list[str]) -> int:
    if argv:
        print(f"usage: {COMMAND}  (rewrites {DOC_PATH} in the checkout)", file=sys.stderr)
        return 2
    doc = PACKAGE_DIR.parent / DOC_PATH
    doc.write_text(updated(doc.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
