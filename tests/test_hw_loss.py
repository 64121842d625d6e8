"""Loss-gradient unit in simulation, bit-exact against fpdeep.golden.loss."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import default_build_root, hw_sources, run_cocotb, simulator_available


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_loss_gradient(tmp_path):
    run_cocotb(
        toplevel="fpdeep_loss",
        sources=hw_sources("fpdeep_requant", "fpdeep_loss"),
        parameters={"NMAX": 16},
        test_module="tb_loss",
        build_root=default_build_root(),
        test_dir=tmp_path,
        # (classes, logit spread in LSBs): close logits, wide ones (exp underflows to 0)
        tb_args={"fz": 10, "fe": 14, "shapes": [[3, 3000], [10, 12000], [16, 32767]]},
    )
