"""Element-wise units in simulation, bit-exact against the golden model: requantiser, ReLU,
residual add and error fan-in, error fan-out, SGD update."""

from __future__ import annotations

import pytest

from fpdeep.simulate import default_build_root, hw_sources, run_cocotb, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


def test_requant(tmp_path):
    run_cocotb(
        toplevel="fpdeep_requant",
        sources=hw_sources("fpdeep_requant"),
        parameters={"IW": 48, "OW": 16, "SW": 7},
        test_module="tb_requant",
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args={"iw": 48, "ow": 16, "sw": 7},
    )


def test_relu(tmp_path):
    run_cocotb(
        toplevel="fpdeep_relu",
        sources=hw_sources("fpdeep_requant", "fpdeep_relu"),
        test_module="tb_relu",
        build_root=default_build_root(),
        test_dir=tmp_path,
        # equal formats, fewer fractional bits out (rounding), more out (left shift + clamp)
        tb_args={"formats": [[10, 10], [14, 10], [8, 12]]},
    )


def test_residual_add(tmp_path):
    run_cocotb(
        toplevel="fpdeep_add",
        sources=hw_sources("fpdeep_requant", "fpdeep_add"),
        test_module="tb_add",
        build_root=default_build_root(),
        test_dir=tmp_path,
        # (frac a, frac b, frac out); out None = error fan-in (exact sum, saturated once)
        tb_args={"formats": [[10, 10, 10], [10, 12, 10], [14, 8, 12], [14, 14, None]]},
    )


def test_error_fanout(tmp_path):
    run_cocotb(
        toplevel="fpdeep_fanout",
        sources=hw_sources("fpdeep_requant", "fpdeep_fanout"),
        test_module="tb_fanout",
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args={"formats": [14, 12, 15]},  # error in; one output rounds, one shifts left
    )


def test_sgd_update(tmp_path):
    run_cocotb(
        toplevel="fpdeep_sgd",
        sources=hw_sources("fpdeep_requant", "fpdeep_sgd"),
        test_module="tb_sgd",
        build_root=default_build_root(),
        test_dir=tmp_path,
        # (batch, learning rate, accumulator magnitude bits): small, typical and saturating
        tb_args={"settings": [[1, 0.1, 20], [3, 0.01, 30], [8, 1.0, 44], [64, 0.5, 47]]},
    )
