"""The board infrastructure's hand-written blocks in simulation: the host interface on the
tensor store, and a read mover streaming a tensor kept in two banks."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpdeep.cosim.simulator import hw_sources

pytestmark = pytest.mark.sim

HERE = Path(__file__).parent


def test_host_interface_on_the_store(run_testbench):
    sources = [*hw_sources("fpdeep_host"), *hw_sources("fpdeep_store"),
               HERE / "host_store_top.sv"]
    result = run_testbench(toplevel="host_store_top", test_module="tb_host",
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 4 and result.failed == 0, result


def test_a_chained_read_streams_two_banks_as_one(run_testbench):
    sources = [*hw_sources("fpdeep_mover_rd"), *hw_sources("fpdeep_store"),
               HERE / "mover_store_top.sv"]
    result = run_testbench(toplevel="mover_store_top", test_module="tb_mover",
                           sources=list(dict.fromkeys(sources)))
    assert result.tests == 3 and result.failed == 0, result
