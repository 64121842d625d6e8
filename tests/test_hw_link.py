"""Link framing (tx/rx) and the simulation-only link model."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import default_build_root, hw_sources, run_cocotb, simulator_available
from fpdeep.resources import data_dir

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


@pytest.mark.parametrize(("latency", "num", "den"), [(5, 1, 1), (20, 2, 5)])
def test_link_chain(tmp_path, latency, num, den):
    run_cocotb(
        toplevel="fpdeep_link_loop",
        sources=[*hw_sources("fpdeep_link_tx", "fpdeep_link_model", "fpdeep_link_rx"),
                 data_dir("sim") / "hdl" / "fpdeep_link_loop.sv"],
        test_module="tb_link",
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args={"latency": latency, "num": num, "den": den, "seed": latency},
    )
