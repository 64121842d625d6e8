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


@pytest.mark.parametrize("simulator", available_simulators())
def test_momentum_sgd_update_bit_exact(run_testbench, simulator):
    # (batch, lr, momentum, weight decay, accumulator bits, velocity bits): plain momentum,
    # decay alone, both, saturating velocities and weights, a large learning rate
    run_testbench(toplevel="fpdeep_sgd_momentum", test_module="tb_sgd_momentum",
                  simulator=simulator,
                  tb_args={"settings": [[4, 0.1, 0.9, 0.0, 30, 16], [3, 0.01, 0.0, 0.01, 30, 0],
                                        [8, 0.05, 0.9, 5e-4, 36, 20],
                                        [1, 0.5, 0.99, 0.1, 46, 23], [64, 4.0, 0.5, 1e-5, 40, 22]]})
