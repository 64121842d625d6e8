"""Loss-gradient unit in simulation, bit-exact against fpdeep.golden.loss."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import simulator_available
from fpdeep.design.units import loss_label_bits


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


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
@pytest.mark.parametrize("classes", [1000, 4096])
def test_loss_gradient_over_many_classes(run_testbench, classes):
    """ImageNet-sized heads (1000 classes) and larger: the label sideband and class count widen
    with the classes; close logits, so that most classes get a probability above 0; one sample
    per loss kind keeps the run short (about 52 cycles a class)."""
    run_testbench(
        toplevel="fpdeep_loss",
        parameters={"NMAX": 1 << (classes - 1).bit_length(), "LW": loss_label_bits(classes)},
        test_module="tb_loss",
        tb_args={"fz": 10, "fe": 14, "samples": 1, "shapes": [[classes, 4000]]},
    )
