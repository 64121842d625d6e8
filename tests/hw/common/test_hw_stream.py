"""Stream FIFO, skid buffer and dual-port RAM in simulation (random stalls, random traffic)."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


@pytest.mark.parametrize("depth", [2, 5])
def test_stream_fifo(run_testbench, depth):
    run_testbench(toplevel="fpdeep_stream_fifo", parameters={"WIDTH": 16, "DEPTH": depth},
                  test_module="tb_stream", tb_args={"seed": depth, "beats": 150})


def test_skid_buffer(run_testbench):
    run_testbench(toplevel="fpdeep_skid_buffer", parameters={"WIDTH": 16},
                  test_module="tb_stream", tb_args={"seed": 3, "beats": 150})


@pytest.mark.parametrize(("style", "out_reg"), [("block", 0), ("ultra", 1)])
def test_sdp_ram(run_testbench, style, out_reg):
    run_testbench(toplevel="fpdeep_sdp_ram",
                  parameters={"WIDTH": 16, "DEPTH": 24, "RAM_STYLE": f'"{style}"',
                              "OUT_REG": out_reg},
                  test_module="tb_sdp_ram", tb_args={"seed": 5})
