"""Loss-gradient unit in simulation, bit-exact against fpdeep.golden.loss."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import simulator_available


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_loss_gradient(run_testbench):
    run_testbench(
        toplevel="fpdeep_loss",
        parameters={"NMAX": 16},
        test_module="tb_loss",
        # (classes, logit spread in LSBs): close logits, wide ones (exp underflows to 0)
        tb_args={"fz": 10, "fe": 14, "shapes": [[3, 3000], [10, 12000], [16, 32767]]},
    )
