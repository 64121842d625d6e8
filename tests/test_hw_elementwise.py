"""Element-wise units in simulation, bit-exact against the golden model: requantiser, ReLU."""

from __future__ import annotations

import pytest

from fpdeep.simulate import default_build_root, hw_sources, run_cocotb, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


def test_requant(tmp_path):
    run_cocotb(
        toplevel="fpdeep_requant",
        sources=hw_sources("fpdeep_requant"),
        parameters={"IW": 48, "OW": 16, "SW": 7},
        test_module="tb_requant",
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args={"iw": 48, "ow": 16, "sw": 7},
    )


def test_relu(tmp_path):
    run_cocotb(
        toplevel="fpdeep_relu",
        sources=hw_sources("fpdeep_requant", "fpdeep_relu"),
        test_module="tb_relu",
        build_root=default_build_root(),
        test_dir=tmp_path,
        # equal formats, fewer fractional bits out (rounding), more out (left shift + clamp)
        tb_args={"formats": [[10, 10], [14, 10], [8, 12]]},
    )
