"""The board infrastructure's hand-written blocks in simulation: the host interface on the
tensor store, a read mover streaming a tensor kept in two banks, and the off-chip memory
movers on one AXI4 master."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpdeep.cosim.simulator import hw_sources

pytestmark = pytest.mark.sim

HERE = Path(__file__).parent


def test_host_interface_on_the_store(run_testbench):
    sources = [*hw_sources("fpdeep_host"), *hw_sources("fpdeep_store"),
               *hw_sources("fpdeep_dram_rd"), *hw_sources("fpdeep_dram_wr"),
               *hw_sources("fpdeep_dram_port"), *hw_sources("fpdeep_mem_model"),
               HERE / "host_store_top.sv"]
    result = run_testbench(toplevel="host_store_top", test_module="tb_host",
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 6 and result.failed == 0, result


def test_a_chained_read_streams_two_banks_as_one(run_testbench):
    sources = [*hw_sources("fpdeep_mover_rd"), *hw_sources("fpdeep_store"),
               HERE / "mover_store_top.sv"]
    result = run_testbench(toplevel="mover_store_top", test_module="tb_mover",
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 3 and result.failed == 0, result


@pytest.mark.parametrize("params", [{"DW": 64, "BURST": 16}, {"DW": 128, "BURST": 4}],
                         ids=["64-bit", "128-bit"])
def test_off_chip_readers_and_writers_share_one_axi_master(run_testbench, params):
    sources = [*hw_sources("fpdeep_dram_rd", "fpdeep_dram_wr", "fpdeep_dram_port"),
               HERE / "dram_top.sv"]
    result = run_testbench(toplevel="dram_top", test_module="tb_dram", parameters=params,
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 8 and result.failed == 0, result


def test_store_arbitration_and_data_follow_its_model(run_testbench):
    sources = [*hw_sources("fpdeep_store"), HERE / "store_top.sv"]
    result = run_testbench(toplevel="store_top", test_module="tb_store",
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 1 and result.failed == 0, result
