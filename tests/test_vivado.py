"""The Vivado projects `fpdeep build` writes, run in a real Tcl interpreter with recording
stand-ins for Vivado's commands: what each script asks Vivado to do is checked against the
board files (UG1224 VCU118, UG1182 ZCU102) and the build's own file lists."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fpdeep import flow
from fpdeep.codegen.build import source_list
from fpdeep.flow import BuildConfig
from fpdeep.resources import PACKAGE_DIR

try:
    import tkinter
except ImportError:  # pragma: no cover - Python built without Tk
    tkinter = None

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"

#: Vivado commands the scripts use; each stand-in records its arguments.
VIVADO_COMMANDS = (
    "create_project", "set_property", "current_project", "read_verilog", "read_xdc",
    "get_filesets", "current_fileset", "create_ip", "get_ips", "generate_target",
    "reset_runs", "wait_on_run", "list_property", "current_run", "get_ports",
    "get_pins", "get_clocks", "get_nets", "create_clock", "create_generated_clock",
    "set_false_path", "set_clock_groups", "open_run", "write_edif", "write_verilog")


class Recorder:
    """A Tcl interpreter whose Vivado commands only record their calls."""

    def __init__(self) -> None:
        if tkinter is not None:
            self.tcl = tkinter.Tcl()
        elif shutil.which("tclsh"):  # pragma: no cover
            pytest.skip("tkinter is not importable; this check runs through it")
        else:  # pragma: no cover
            pytest.skip("no Tcl interpreter: neither Python's tkinter nor tclsh")
        self.tcl.eval("set ::calls {}")
        for name in VIVADO_COMMANDS:
            self.tcl.eval(f"proc {name} args {{ lappend ::calls [list {name} {{*}}$args]; "
                          f"return {name}_result }}")
        # a run is complete once launched; nothing is found on disk
        self.tcl.eval("set ::launched {}")
        self.tcl.eval("proc get_runs {name} { lappend ::calls [list get_runs $name]; "
                      "return $name }")
        self.tcl.eval("proc launch_runs {name args} { lappend ::calls [list launch_runs $name "
                      "{*}$args]; lappend ::launched $name }")
        self.tcl.eval("proc get_property {name args} { lappend ::calls [list get_property "
                      "$name {*}$args]; if {$name eq {PROGRESS}} { return [expr {[lindex $args "
                      "0] in $::launched ? {100%} : {0%}}] }; return 0 }")
        self.tcl.eval("proc glob args { return {} }")
        self.tcl.eval("proc exit args { lappend ::calls [list exit {*}$args] }")
        # `source` stays real (the project sources ip.tcl) and is recorded too
        self.tcl.eval("rename source tcl_source; proc source {path} { lappend ::calls "
                      "[list source $path]; uplevel 1 [list tcl_source $path] }")

    def run(self, script: Path) -> list[list[str]]:
        self.tcl.eval(f"cd {{{script.parent}}}")
        self.tcl.eval("set ::calls {}")
        self.tcl.eval(f"tcl_source {{{script.name}}}")
        calls = self.tcl.eval("set ::calls")
        return [list(self.tcl.splitlist(c)) for c in self.tcl.splitlist(calls)]


def _build(tmp: Path, board: str, boards: int, model: Path = DIGITS) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / f"{board}_{boards}"
    flow.build(BuildConfig(model=model, board=board, boards=boards, batch=4, output=out))
    return out


@pytest.fixture(scope="module")
def vcu118(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("vivado"), "vcu118", 3)


def _config(calls: list[list[str]], module: str) -> dict[str, str]:
    """The CONFIG.* values set on IP ``module``."""
    found: dict[str, str] = {}
    for i, call in enumerate(calls):
        if call[:2] == ["get_ips", module] and i + 1 < len(calls):
            nxt = calls[i + 1]
            assert nxt[0] == "set_property" and nxt[1] == "-dict"
            found.update(_pairs(nxt[2]))
    return found


def _pairs(text: str) -> dict[str, str]:
    import tkinter as tk

    items = tk.Tcl().splitlist(text)
    return dict(zip(items[::2], items[1::2], strict=True))


def test_project_adds_every_board_source_and_the_ip_and_runs_in_order(vcu118):
    rec = Recorder()
    folder = vcu118 / "vivado" / "board_1"
    calls = rec.run(folder / "board_1.tcl")
    assert calls[0] == ["create_project", "board_1", "-force"]
    assert ["set_property", "part", "xcvu9p-flga2104-2L-e", "current_project_result"] in calls
    read = [c[2] for c in calls if c[:2] == ["read_verilog", "-sv"]]
    sources = source_list(vcu118 / "rtl" / "board_1" / "files.f")
    for src in sources:  # every file of the board's files.f, in its order, and it exists
        assert src.exists()
    resolved = [(folder / p).resolve() for p in read]
    assert all(p.exists() for p in resolved)
    board_part = [p for p in resolved if p.parent.name != "shell" and "fpdeep_shell" not in p.name]
    assert board_part == [s.resolve() for s in sources]
    assert resolved[-1].name == "fpdeep_shell_1.sv"
    assert ["source", "ip.tcl"] in calls and ["read_xdc", "fpdeep_shell_1.xdc"] in calls
    assert ["set_property", "top", "fpdeep_shell_1", "current_fileset_result"] in calls
    # the RAMs' zero contents come from configuration, not from an unrolled initial loop
    assert ["set_property", "verilog_define", "SYNTHESIS=1 ", "get_filesets_result"] in calls
    # the IP script ran inside the project: every core created before the XDC is read
    created = [c for c in calls if c[0] == "create_ip"]
    assert calls.index(created[-1]) < calls.index(["read_xdc", "fpdeep_shell_1.xdc"])
    names = {c[c.index("-name") + 1]: c[c.index("-module_name") + 1] for c in created}
    assert set(names) >= {"clk_wiz", "aurora_64b66b", "xdma", "axis_data_fifo",
                          "axi_clock_converter"}
    # synthesis, then implementation to the bitstream
    synth = rec.run(folder / "board_1_synth.tcl")
    run = rec.run(folder / "board_1_run.tcl")
    launches = [c for c in synth + run if c[0] == "launch_runs"]
    assert [c[1] for c in launches] == ["synth_1", "impl_1"]
    assert launches[1][2:4] == ["-to_step", "write_bitstream"]
    assert ["exit", "1"] not in run


def test_each_ip_has_the_configuration_of_the_board_file_and_plan(vcu118):
    rec = Recorder()
    calls = rec.run(vcu118 / "vivado" / "board_1" / "board_1.tcl")
    clocking = _config(calls, "fpdeep_clocking")
    # UG1224: 125 MHz reference on a clock-capable pair; the plan's clock of vcu118: 250 MHz
    assert clocking["CONFIG.PRIM_IN_FREQ"] == "125"
    assert clocking["CONFIG.CLKOUT1_REQUESTED_OUT_FREQ"] == "250"
    assert clocking["CONFIG.PRIM_SOURCE"] == "Differential_clock_capable_pin"
    for side, quad, lane in (("east", "X1Y12", "X1Y48"), ("west", "X1Y13", "X1Y52")):
        aurora = _config(calls, f"fpdeep_aurora_{side}")
        # UG1224: QSFP28 cages on GTY quads 231/232, 4 lanes at 25.78125 Gb/s, 156.25 MHz
        assert aurora["CONFIG.C_AURORA_LANES"] == "4"
        assert aurora["CONFIG.C_LINE_RATE"] == "25.78125"
        assert aurora["CONFIG.C_REFCLK_FREQUENCY"] == "156.25"
        assert aurora["CONFIG.C_START_QUAD"] == f"Quad_{quad}"
        assert aurora["CONFIG.C_START_LANE"] == lane
        assert aurora["CONFIG.interface_mode"] == "Framing"
    xdma = _config(calls, "fpdeep_xdma")
    assert xdma["CONFIG.pl_link_cap_max_link_width"] == "X2"
    assert xdma["CONFIG.axi_data_width"] == "64_bit"  # the board's 64-bit host stream
    assert xdma["CONFIG.xdma_axi_intf_mm"] == "AXI_Stream"
    assert xdma["CONFIG.select_quad"] == "GTY_Quad_227"


def test_xdc_puts_the_board_files_pins_and_clocks(vcu118):
    rec = Recorder()
    calls = rec.run(vcu118 / "vivado" / "board_1" / "fpdeep_shell_1.xdc")
    props = {c[-1]: c[2] for c in calls if c[:2] == ["set_property", "-dict"]}
    pins = {}
    for c in calls:
        if c[0] == "get_ports":
            port = c[1]
        if c[0] == "set_property" and c[1] == "-dict":
            pins[port] = _pairs(c[2])
        elif c[:2] == ["set_property", "PACKAGE_PIN"]:
            pins[port] = {"PACKAGE_PIN": c[2]}
    assert props  # pins were placed
    assert pins["clk_ref_p"] == {"PACKAGE_PIN": "AY24", "IOSTANDARD": "LVDS"}
    assert pins["reset_button"] == {"PACKAGE_PIN": "L19", "IOSTANDARD": "LVCMOS12"}
    assert pins["east_gt_refclk_p"] == {"PACKAGE_PIN": "W9"}
    assert pins["west_gt_refclk_p"] == {"PACKAGE_PIN": "R9"}
    assert pins["pcie_perst_n"] == {"PACKAGE_PIN": "AM17", "IOSTANDARD": "LVCMOS18"}
    clocks = {c[c.index("-name") + 1]: float(c[c.index("-period") + 1])
              for c in calls if c[0] == "create_clock"}
    assert clocks == {"clk_ref_p": 8.0, "east_gt_refclk_p": 6.4, "west_gt_refclk_p": 6.4,
                      "pcie_refclk_p": 10.0}
    assert any(c[0] == "create_generated_clock" and "plan_clk" in c for c in calls)


def test_make_bitstreams_runs_every_board_with_limited_jobs(vcu118):
    text = (vcu118 / "Makefile").read_text()
    assert "JOBS ?= 2" in text and "BOARDS := board_0 board_1 board_2" in text
    if shutil.which("make"):
        dry = subprocess.run(["make", "-n", "-C", str(vcu118), "bitstreams"],
                             capture_output=True, text=True, check=True).stdout
        assert "-j2 boards" in dry


def test_boards_without_shell_fields_get_a_note_not_a_project(tmp_path, capsys):
    from fpdeep.cli import main

    out = tmp_path / "u250"
    assert main(["build", str(DIGITS), "--board", "u250", "--boards", "2", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    # one line for the two boards of one kind and reason
    assert printed.count("no Vivado project") == 1
    assert ("no Vivado project: boards 0, 1 (u250): not yet supported: the board file has no "
            "[shell] tables") in printed
    assert not (out / "vivado").exists()
    assert "not yet supported" in (out / "README.md").read_text()


def test_a_middle_zcu102_board_sharing_one_refclk_is_not_yet_supported(tmp_path):
    out = _build(tmp_path, "zcu102", 3)
    assert sorted(p.name for p in (out / "vivado").iterdir()) == ["board_0", "board_2"]
    assert r"board 1 \(zcu102\): not yet supported: both neighbours' Aurora cores" in (
        out / "README.md").read_text()


def test_zynq_shell_uses_the_ps_and_a_dma(tmp_path):
    out = _build(tmp_path, "zcu102", 2)
    calls = Recorder().run(out / "vivado" / "board_0" / "board_0.tcl")
    created = {c[c.index("-name") + 1] for c in calls if c[0] == "create_ip"}
    assert {"zynq_ultra_ps_e", "axi_dma", "axi_protocol_converter", "aurora_64b66b"} <= created
    assert "xdma" not in created
    aurora = _config(calls, "fpdeep_aurora_east")
    assert aurora["CONFIG.C_AURORA_LANES"] == "2" and aurora["CONFIG.C_LINE_RATE"] == "10.3125"


def test_names_from_the_model_never_reach_tcl_or_xdc(tmp_path):
    from conftest import save, tiny_cnn

    model = tiny_cnn()
    model.graph.name = 'net[exit 3];$x"'
    model.graph.node[0].name = 'conv[puts owned];$env(HOME)"'
    out = _build(tmp_path, "zcu102", 2, model=save(model, tmp_path))
    for path in (out / "vivado").rglob("*"):
        if path.suffix in (".tcl", ".xdc", ".sv") or path.name == "Makefile":
            text = path.read_text()
            assert "owned" not in text and "exit 3" not in text and "HOME" not in text
    calls = Recorder().run(out / "vivado" / "board_0" / "board_0.tcl")
    assert not any("owned" in " ".join(c) for c in calls)


def test_build_output_is_byte_identical(tmp_path):
    a, b = (_build(tmp_path / n, "vcu118", 2) for n in ("a", "b"))
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert any(str(p).startswith("vivado") for p in files)
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


# ---- the shell elaborates: Verilator lints it against stand-ins for the vendor IP --------

VENDOR_STUBS = Path(__file__).parent / "vendor_stubs"


def _stub_macros(ip: str, config: dict[str, str]) -> dict[str, str | None]:
    """The macros the stand-in of ``ip`` takes, read from the CONFIG values ip.tcl sets (so
    a port width the shell wires differently from the IP's configuration fails the lint);
    None defines a flag."""
    c = {k.removeprefix("CONFIG."): v for k, v in config.items()}
    flags = {"1": None, "true": None}
    if ip == "clk_wiz":
        assert c["CLKOUT2_USED"] == c["USE_LOCKED"] == c["USE_RESET"] == "true"
        assert c["PRIM_SOURCE"] == "Differential_clock_capable_pin"
        return {}
    if ip == "aurora_64b66b":
        assert (c["interface_mode"], c["flow_mode"], c["drp_mode"]) == (
            "Framing", "None", "Disabled")
        return {"LANES": c["C_AURORA_LANES"]}
    if ip == "axis_data_fifo":
        assert c["HAS_TLAST"] == "1"
        out = {"BYTES": c["TDATA_NUM_BYTES"]}
        for flag, key in (("KEEP", "HAS_TKEEP"), ("ASYNC", "IS_ACLK_ASYNC")):
            if c[key] in flags:
                out[flag] = None
        return out
    if ip == "axis_dwidth_converter":
        assert c["HAS_TKEEP"] == c["HAS_TLAST"] == "1"
        return {"S_BYTES": c["S_TDATA_NUM_BYTES"], "M_BYTES": c["M_TDATA_NUM_BYTES"]}
    if ip == "axi_clock_converter":
        assert (c["PROTOCOL"], c["DATA_WIDTH"]) == ("AXI4LITE", "32")
        return {"ADDR": c["ADDR_WIDTH"]}
    if ip == "axi_protocol_converter":
        assert (c["SI_PROTOCOL"], c["MI_PROTOCOL"], c["DATA_WIDTH"]) == (
            "AXI4", "AXI4LITE", "32")
        return {"ADDR": c["ADDR_WIDTH"], "ID": c["ID_WIDTH"]}
    if ip == "xdma":
        assert (c["functional_mode"], c["xdma_axi_intf_mm"]) == ("DMA", "AXI_Stream")
        return {"LANES": c["pl_link_cap_max_link_width"].removeprefix("X"),
                "DATA": c["axi_data_width"].removesuffix("_bit")}
    if ip == "zynq_ultra_ps_e":
        for port in ("M_AXI_GP0", "M_AXI_GP2", "S_AXI_GP2", "S_AXI_GP3"):
            assert c[f"PSU__USE__{port}"] == "1"
        return {"GP0": c["PSU__MAXIGP0__DATA_WIDTH"], "GP2": c["PSU__MAXIGP2__DATA_WIDTH"],
                "GP2S": c["PSU__SAXIGP2__DATA_WIDTH"], "GP3S": c["PSU__SAXIGP3__DATA_WIDTH"]}
    if ip == "axi_dma":
        assert c["c_include_sg"] == "0"
        return {"ADDR": c["c_addr_width"], "MM2S": c["c_m_axi_mm2s_data_width"],
                "S2MM": c["c_m_axi_s2mm_data_width"],
                "MM2S_AXIS": c["c_m_axis_mm2s_tdata_width"],
                "S2MM_AXIS": c["c_s_axis_s2mm_tdata_width"]}
    raise AssertionError(f"no stand-in for IP {ip!r}: add tests/vendor_stubs/{ip}.svh")


def _stub_file(ip_script: Path, out: Path) -> Path:
    """One file with a stand-in module for every core ip.tcl creates, under its module name."""
    calls = Recorder().run(ip_script)
    lines = []
    for call in calls:
        if call[0] != "create_ip":
            continue
        ip, module = call[call.index("-name") + 1], call[call.index("-module_name") + 1]
        macros = {"MODULE": module, **_stub_macros(ip, _config(calls, module))}
        lines += [f"`define FPDEEP_STUB_{k}" + ("" if v is None else f" {v}")
                  for k, v in macros.items()]
        lines.append(f'`include "{ip}.svh"')
        lines += [f"`undef FPDEEP_STUB_{k}" for k in macros]
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.sim
@pytest.mark.parametrize("board", ["zcu102", "vcu118"])
def test_every_shell_lints_clean_against_the_vendor_ip_stand_ins(tmp_path, board):
    from fpdeep.cosim.simulator import lint, simulator_available

    if not simulator_available("verilator"):
        pytest.skip("Verilator not found")
    out = _build(tmp_path, board, 2)
    for index in (0, 1):
        folder = out / "vivado" / f"board_{index}"
        stubs = _stub_file(folder / "ip.tcl", tmp_path / f"stubs_{board}_{index}.sv")
        sources = [*source_list(out / "rtl" / f"board_{index}" / "files.f"),
                   out / "rtl" / "hw" / "shell" / "fpdeep_reset_sync.sv",
                   VENDOR_STUBS / "IBUFDS_GTE4.sv", stubs,
                   folder / f"fpdeep_shell_{index}.sv"]
        lint(f"fpdeep_shell_{index}", sources=[*sources, f"-I{VENDOR_STUBS}"])


def test_boards_without_a_project_are_listed_in_runs():
    from fpdeep.codegen.vivado import _board_list

    assert _board_list([0, 1, 2, 3, 5, 7, 8, 9]) == "0-3, 5, 7-9"
    assert _board_list([4]) == "4" and _board_list([2, 3]) == "2, 3"
