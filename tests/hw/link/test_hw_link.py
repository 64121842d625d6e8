"""Link framing (tx/rx) and the simulation-only link model, through the harness beside this
file: two channels over one link."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpdeep.cosim.simulator import hw_sources, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]

HARNESS = Path(__file__).resolve().parent / "fpdeep_link_loop.sv"


@pytest.mark.parametrize(("latency", "num", "den"), [(5, 1, 1), (20, 2, 5)])
def test_link_chain(run_testbench, latency, num, den):
    run_testbench(
        toplevel="fpdeep_link_loop",
        sources=[*hw_sources("fpdeep_link_tx", "fpdeep_link_model", "fpdeep_link_rx"), HARNESS],
        test_module="tb_link",
        tb_args={"latency": latency, "num": num, "den": den, "seed": latency},
    )
