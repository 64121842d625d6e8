"""The CSR register map compiled from hw/csr/fpdeep_csr.rdl (fpdeep.hwlib.csr), and the files
generated from it (fpdeep.codegen.csr): the RTL block and the docs' register table are current,
and the RTL is one module for every number of counters. The RTL's behaviour is tested in
tests/hw/csr/."""

from __future__ import annotations

import pytest

from fpdeep.codegen.csr import DOC_PATH, RTL_PATH, csr_values, render_csr
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import CSR
from fpdeep.hwlib.csr import (
    ADDRESS_BITS,
    CONSTANT,
    CONTROL,
    MAX_COUNTERS,
    PARAMETER,
    PULSE,
    STATUS,
    compile_map,
    markdown_table,
    register_map,
    updated_doc,
)
from fpdeep.resources import PACKAGE_DIR, data_dir

# The map as issues 13 and 14 and docs/csr.md specify it: (register, byte offset, field, bits,
# kind).
# A change here changes the map's format: raise VERSION in the RDL with it.
SPEC = [
    ("ID", 0x00, "hash", (31, 0), PARAMETER),
    ("VERSION", 0x04, "version", (15, 0), CONSTANT),
    ("CONTROL", 0x08, "start", (0, 0), PULSE),
    ("CONTROL", 0x08, "soft_reset", (1, 1), PULSE),
    ("CONTROL", 0x08, "mode", (4, 4), CONTROL),
    ("BATCH", 0x0C, "size", (15, 0), CONTROL),
    ("STATUS", 0x10, "state", (1, 0), STATUS),
    ("STATUS", 0x10, "error_code", (15, 8), STATUS),
    ("STEP_COUNT", 0x14, "count", (31, 0), STATUS),
    ("CYCLE_COUNT_LO", 0x18, "count", (31, 0), STATUS),
    ("CYCLE_COUNT_HI", 0x1C, "count", (31, 0), STATUS),
    ("STALLED_UNIT", 0x20, "unit", (15, 0), STATUS),
    ("DRAW_STEP", 0x24, "step", (31, 0), CONTROL),
    ("LINK_FRAME", 0x28, "beats", (15, 0), CONTROL),
    # the reliable links' counters and flags (issue 14), per side
    ("LINK_EAST_TX_FRAMES", 0x040, "count", (31, 0), STATUS),
    ("LINK_EAST_TX_REPLAYS", 0x044, "count", (31, 0), STATUS),
    ("LINK_EAST_TX_TIMEOUTS", 0x048, "count", (31, 0), STATUS),
    ("LINK_EAST_TX_CREDIT_STALLS", 0x04C, "count", (31, 0), STATUS),
    ("LINK_EAST_RX_FRAMES", 0x050, "count", (31, 0), STATUS),
    ("LINK_EAST_RX_CRC_ERRORS", 0x054, "count", (31, 0), STATUS),
    ("LINK_WEST_TX_FRAMES", 0x060, "count", (31, 0), STATUS),
    ("LINK_WEST_TX_REPLAYS", 0x064, "count", (31, 0), STATUS),
    ("LINK_WEST_TX_TIMEOUTS", 0x068, "count", (31, 0), STATUS),
    ("LINK_WEST_TX_CREDIT_STALLS", 0x06C, "count", (31, 0), STATUS),
    ("LINK_WEST_RX_FRAMES", 0x070, "count", (31, 0), STATUS),
    ("LINK_WEST_RX_CRC_ERRORS", 0x074, "count", (31, 0), STATUS),
    ("LINK_FLAGS", 0x080, "east_stuck", (0, 0), STATUS),
    ("LINK_FLAGS", 0x080, "east_overflow", (1, 1), STATUS),
    ("LINK_FLAGS", 0x080, "west_stuck", (8, 8), STATUS),
    ("LINK_FLAGS", 0x080, "west_overflow", (9, 9), STATUS),
    ("BUSY", 0x400, "count", (31, 0), STATUS),
    ("STALL", 0x800, "count", (31, 0), STATUS),
    ("WINDOW", 0xC00, "count", (31, 0), STATUS),
]


def test_the_map_is_the_specified_one():
    rmap = register_map(counters=3, design_hash=0xCAFE)
    got = [(r.name, r.offset, f.name, (f.msb, f.lsb), f.kind)
           for r in rmap.registers for f in r.fields]
    assert got == SPEC
    assert rmap.field("STATUS", "state").encoding == {"idle": 0, "busy": 1, "done": 2, "error": 3}
    assert rmap.field("CONTROL", "mode").encoding == {"train": 0, "forward": 1}
    assert rmap.version == 4
    assert rmap.register("ID").reset == 0xCAFE
    assert rmap.register("BATCH").reset == 1


def test_addresses_fields_and_encodings_for_the_host():
    rmap = register_map(counters=3)
    assert rmap.addr("STATUS") == 0x10
    assert [rmap.addr("STALL", i) for i in range(3)] == [0x800, 0x804, 0x808]
    assert rmap.encode("CONTROL", start=1, mode="forward") == 0b1_0001
    assert rmap.encode("BATCH", size=32) == 32
    assert rmap.decode("STATUS", 0x0000_2A03) == {"state": 3, "error_code": 0x2A}
    assert rmap.field("STATUS", "error_code").mask == 0xFF00


def test_bad_names_indices_and_values_are_refused():
    rmap = register_map(counters=3)
    with pytest.raises(FpdeepError, match="no register 'STATE'; its registers: ID, VERSION, "):
        rmap.addr("STATE")
    with pytest.raises(FpdeepError, match="register BUSY has 3 entries; index 3 is out of range"):
        rmap.addr("BUSY", 3)
    with pytest.raises(FpdeepError, match="register STATUS has 1 entry; index 1"):
        rmap.addr("STATUS", 1)
    with pytest.raises(FpdeepError, match="no field 'go'; its fields: start, soft_reset, mode"):
        rmap.field("CONTROL", "go")
    with pytest.raises(FpdeepError, match="field 'mode' has no value 'infer'; its values: "
                                          "train, forward"):
        rmap.encode("CONTROL", mode="infer")
    with pytest.raises(FpdeepError, match=r"field 'size' holds 0 \.\. 65535, got 65536"):
        rmap.encode("BATCH", size=1 << 16)


@pytest.mark.parametrize("counters", [0, MAX_COUNTERS + 1])
def test_the_number_of_counters_is_bounded(counters):
    with pytest.raises(FpdeepError, match=f"1 .. {MAX_COUNTERS} engines and units, got "
                                          f"counters={counters}"):
        register_map(counters=counters)


def test_the_largest_map_fits_the_address_window():
    rmap = register_map(counters=MAX_COUNTERS)
    assert rmap.addr("STALL", MAX_COUNTERS - 1) + 4 <= 1 << ADDRESS_BITS
    with pytest.raises(FpdeepError, match="32 bits, got 0x100000000"):
        register_map(counters=1, design_hash=1 << 32)


def test_sources_fpdeep_cannot_wire_are_refused_with_the_place(tmp_path):
    head = "addrmap fpdeep_csr #(longint unsigned N = 1, longint unsigned DESIGN_HASH = 0) {\n"
    bad = tmp_path / "both.rdl"
    bad.write_text(head + "  reg { field { sw = rw; hw = rw; } x[7:0] = 0; } R @ 0x0;\n};\n")
    with pytest.raises(FpdeepError, match=r"both\.rdl:2: field fpdeep_csr\.R\.x has sw=rw, "
                                          r"hw=rw; fpdeep wires sw=r hw=na"):
        compile_map(bad, counters=1)
    broken = tmp_path / "broken.rdl"
    broken.write_text(head + "  reg { field { sw = r; } x[7:0] } R @ 0x0;\n};\n")
    with pytest.raises(FpdeepError, match=r"broken\.rdl does not compile: .*broken\.rdl:2: "
                                          r"error"):
        compile_map(broken, counters=1)


def test_the_declared_ports_are_the_ones_the_map_names():
    for counters in (1, 5):
        rmap = register_map(counters=counters)
        declared = [(p.name, p.direction, p.width) for p in CSR.ports(N=counters)
                    if p.role != "clock" and not p.name.startswith("s_axil_")]
        assert declared == list(rmap.ports())


def test_the_rtl_is_one_module_for_every_number_of_counters():
    assert csr_values(register_map(counters=1)) == csr_values(register_map(counters=7))


def test_the_generated_files_are_current():
    # Run `python -m fpdeep.codegen.csr` when this fails.
    assert (data_dir("hw") / RTL_PATH).read_text() == render_csr()
    doc = (PACKAGE_DIR.parent / DOC_PATH).read_text()
    assert updated_doc(doc) == doc
    assert "| `0x400 + 4*i` | `BUSY[i]`" in markdown_table()
