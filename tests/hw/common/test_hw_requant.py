"""The requantiser in simulation, bit-exact against fpdeep.numerics.requantise; on every
simulator found (Verilator always, Icarus where it is installed)."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import available_simulators, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


@pytest.mark.parametrize("simulator", available_simulators())
def test_requant_bit_exact(run_testbench, simulator):
    run_testbench(toplevel="fpdeep_requant", parameters={"IW": 48, "OW": 16, "SW": 7},
                  test_module="tb_requant", simulator=simulator)
