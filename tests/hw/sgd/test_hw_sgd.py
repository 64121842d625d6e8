"""The SGD update unit in simulation, bit-exact against fpdeep.golden.sgd; on every simulator
found (Verilator always, Icarus where it is installed)."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import available_simulators, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


@pytest.mark.parametrize("simulator", available_simulators())
def test_sgd_update_bit_exact(run_testbench, simulator):
    # (batch, learning rate, accumulator magnitude bits): small, typical and saturating
    run_testbench(toplevel="fpdeep_sgd", test_module="tb_sgd", simulator=simulator,
                  tb_args={"settings": [[1, 0.1, 20], [3, 0.01, 30], [8, 1.0, 44],
                                        [64, 0.5, 47]]})
