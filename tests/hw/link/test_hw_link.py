"""Link framing (tx/rx) and the simulation-only link model, through the harness beside this
file: two channels over one link; the gearboxes between link words and link port beats; and
the keep flags rebuilt from a beat's link words."""

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


@pytest.mark.parametrize(("toplevel", "tb"), [("fpdeep_link_pack", "tb_pack"),
                                              ("fpdeep_link_unpack", "tb_unpack")])
@pytest.mark.parametrize("tw", [64, 128, 448])
def test_gearbox(run_testbench, toplevel, tb, tw):
    # 64 bits: 3 words a beat (the narrowest port); 128: the demo's; 448: 100 Gb/s at 250 MHz
    run_testbench(toplevel=toplevel, parameters={"WW": 18, "TW": tw}, test_module=tb,
                  tb_args={"seed": tw})


@pytest.mark.parametrize("tw", [64, 128, 448])
def test_keep_is_rebuilt_from_the_last_flags(run_testbench, tw):
    run_testbench(toplevel="fpdeep_link_keep", parameters={"WW": 18, "TW": tw, "LAST": 16},
                  test_module="tb_keep")
