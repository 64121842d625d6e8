"""The CSR block's RTL, rendered from the compiled register map (fpdeep.hwlib.csr).

`csr_values` turns the map into what templates/csr.sv.j2 writes: a case item per register and,
per field, the expression it reads and the port it drives. The counter arrays become loops
over the module's parameter N, so one hw/csr/fpdeep_csr.sv serves every board.
``python -m fpdeep.codegen.csr`` rewrites that file and the table in docs/csr.md; tests fail
when either differs from the register map.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fpdeep.errors import FpdeepError
from fpdeep.hwlib.csr import (
    ADDRESS_BITS,
    CONSTANT,
    CONTROL,
    PARAMETER,
    PULSE,
    RDL_PATH,
    STATUS,
    TOP,
    WORD_BYTES,
    CsrField,
    CsrRegister,
    RegisterMap,
    register_map,
    updated_doc,
)
from fpdeep.resources import PACKAGE_DIR, data_dir

#: Where the generated RTL lives, relative to hw/, and the docs page with the register table.
RTL_PATH = f"csr/{TOP}.sv"
DOC_PATH = "docs/csr.md"


def _port_slice(reg: CsrRegister, f: CsrField, width: int) -> str:
    """The port bits field ``f`` is wired to (``width``: the port's width); array entry ``i``
    is the template's loop variable."""
    if reg.array:
        return f"{f.port}[i*{f.width} +: {f.width}]"
    if f.port_lsb == 0 and f.width == width:
        return str(f.port)
    return f"{f.port}[{f.port_lsb + f.width - 1}:{f.port_lsb}]"


def _field_values(reg: CsrRegister, f: CsrField, widths: dict[str, int]) -> dict[str, Any]:
    port = None if f.port is None else _port_slice(reg, f, widths[f.port])
    read = {PARAMETER: f"{f.param}[{f.width - 1}:0]", CONSTANT: f"{f.width}'h{f.reset:x}",
            STATUS: port, CONTROL: port, PULSE: None}[f.kind]  # a pulse field reads 0
    return {"name": f.name, "kind": f.kind, "bits": f"[{f.msb}:{f.lsb}]", "lsb": f.lsb,
            "read": read, "port": port, "reset": f"{f.width}'h{f.reset:x}"}


def csr_values(rmap: RegisterMap) -> dict[str, Any]:
    """What templates/csr.sv.j2 needs, from ``rmap``; the same for every number of counters,
    since array ports are N entries wide and arrays are read in loops up to N."""
    arrays = {f.port for r in rmap.registers if r.array for f in r.fields}
    ports, widths = [], {}
    for name, direction, width in rmap.ports():
        entry = width // rmap.counters if name in arrays else width
        widths[name] = entry
        size = f"[N*{entry}-1:0]" if name in arrays else f"[{entry - 1}:0]"
        ports.append({"name": name, "direction": direction,
                      "range": "" if size == "[0:0]" else size})
    registers, loops = [], []
    for reg in rmap.registers:
        if reg.offset % WORD_BYTES or (reg.array and reg.stride != WORD_BYTES):
            raise FpdeepError(f"{RDL_PATH}: register {reg.name} must sit on a word boundary "
                              f"and an array must have a stride of {WORD_BYTES} bytes")
        if reg.array and any(f.port_lsb or f.kind != STATUS for f in reg.fields):
            raise FpdeepError(f"{RDL_PATH}: array {reg.name} must hold status fields wired "
                              f"from bit 0 of their port")
        values = {"name": reg.name, "word": reg.offset // WORD_BYTES,
                  "fields": [_field_values(reg, f, widths) for f in reg.fields]}
        (loops if reg.array else registers).append(values)
    # the registers software writes, and their fields that keep or pulse what was written
    writable = [r for r in registers if any(f["kind"] in (CONTROL, PULSE) for f in r["fields"])]
    stored = [f for r in writable for f in r["fields"] if f["kind"] in (CONTROL, PULSE)]
    return {"module": TOP, "rdl": f"hw/{RDL_PATH}", "version": rmap.version,
            "addr_w": ADDRESS_BITS, "ports": ports, "registers": registers, "arrays": loops,
            "stored": stored, "writable": writable}


def render_csr() -> str:
    """hw/csr/fpdeep_csr.sv as the register map makes it."""
    from fpdeep.codegen.render import render

    return render("csr.sv.j2", csr_values(register_map(counters=1)))


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m fpdeep.codegen.csr  (rewrites hw/csr/fpdeep_csr.sv and "
              "docs/csr.md in the checkout)", file=sys.stderr)
        return 2
    (data_dir("hw") / RTL_PATH).write_text(render_csr())
    doc = Path(PACKAGE_DIR.parent / DOC_PATH)
    doc.write_text(updated_doc(doc.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
