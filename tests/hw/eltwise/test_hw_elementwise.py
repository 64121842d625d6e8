"""Element-wise units in simulation, bit-exact against the golden model: ReLU, Dropout, residual add
and error fan-in, error fan-out, frozen and training BatchNormalization, trained per-channel Scale
and Bias, LRN; on every simulator found (Verilator always, Icarus where it is installed)."""

from __future__ import annotations

import re

import pytest

from fpdeep.cosim.simulator import available_simulators, simulator_available
from fpdeep.golden.batchnorm import RSQRT_SEED
from fpdeep.resources import data_dir

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]

# unit -> (top module, testbench, its arguments)
UNITS = {
    # equal formats, fewer fractional bits out (rounding), more out (left shift + clamp)
    "relu": ("fpdeep_relu", "tb_relu", {"formats": [[10, 10], [14, 10], [8, 12]]}),
    # (frac a, frac b, frac out); out None = error fan-in (exact sum, saturated once)
    "residual_add": ("fpdeep_add", "tb_add",
                     {"formats": [[10, 10, 10], [10, 12, 10], [14, 8, 12], [14, 14, None]]}),
    # equal formats, rounding, left shift with saturation
    "convert": ("fpdeep_convert", "tb_convert", {"formats": [[12, 12], [14, 9], [8, 13]]}),
    # (ratio, step, (frac in, frac out)): an exact doubling, a ratio that is no power of two
    # with rounding, a left shift; three images of one layer
    "dropout": ("fpdeep_dropout", "tb_dropout",
                {"elements": 70, "images": 3, "layer": 2,
                 "cases": [[0.5, 0, [12, 12]], [0.3, 5, [14, 10]], [0.1, 1, [8, 12]]]}),
    # error in; one output rounds, one shifts left
    "error_fanout": ("fpdeep_fanout", "tb_fanout", {"formats": [14, 12, 15]}),
    # (frac x, y, e, dx, variance bits): the default formats over small and large variances
    # (xhat and the error scaling shift right and left), other formats
    "bn_frozen": ("fpdeep_bn_frozen", "tb_bn_frozen",
                  {"shape": [3, 3, 4], "cases": [[10, 10, 14, 14, 12], [10, 10, 14, 14, 30],
                                                 [8, 12, 12, 10, 20], [12, 9, 15, 13, 4]]}),
    # ((B, C, H, W), (frac x, y, e, dx, w), (bits of x, e, gamma and beta), momentum, epsilon),
    # the running statistics random, the first and last at the ends of 32 bits: the default
    # formats; one value
    # a channel per image, momentum 1 (the running statistics kept); one image, small spreads
    # (epsilon counts), other formats; x at the ends of its range (the largest variances) and y
    # shifted left; epsilon above what epsilon_fixed gives (an int: eps_q itself; rsqrt's
    # argument shifted right, k = 16) and momentum -3 (the update overshoots and saturates);
    # eight channels of spreads from 1 to 15 bits (k from 0 up); dx shifted by k only, small
    # e and gamma (the error's rounding visible in dx)
    "bn_train": ("fpdeep_bn_train", "tb_bn_train",
                 {"cases": [[[2, 3, 2, 3], [10, 10, 14, 14, 14], [12, 16, 16], 0.9, 1e-5],
                            [[4, 3, 1, 1], [8, 12, 12, 10, 12], [8, 12, 14], 1.0, 1e-3],
                            [[1, 2, 3, 2], [12, 9, 15, 13, 14], [5, 10, 12], 0.99, 0.01],
                            [[2, 3, 2, 2], [10, 15, 14, 12, 2], [16, 14, 4], 0.5, 1e-5],
                            [[2, 2, 2, 2], [10, 10, 14, 14, 14], [16, 16, 16], -3.0,
                             (1 << 32) - 7],
                            [[2, 8, 1, 3], [4, 10, 14, 14, 14], [15, 16, 16], 0.9, 1e-5],
                            [[2, 3, 2, 2], [14, 10, 4, 10, 4], [12, 2, 3], 0.9, 1e-5]]}),
    # ((C, H, W), (size, alpha, beta, bias), (frac x, y, e, dx), x and e below 2^bits):
    # AlexNet's constants at the default formats over small and full-scale inputs, an even
    # size, size 1, a window wider than the channels and a large alpha (d far above 1), other
    # formats, a small bias (d far below 1: the powers shift left and saturate)
    "lrn": ("fpdeep_lrn", "tb_lrn",
            {"cases": [[[6, 2, 3], [5, 1e-4, 0.75, 2.0], [10, 10, 14, 14], 15, 15],
                       [[6, 2, 3], [5, 1e-4, 0.75, 2.0], [10, 10, 14, 14], 11, 15],
                       [[5, 1, 4], [4, 0.5, 0.75, 1.0], [10, 10, 14, 14], 13, 15],
                       [[3, 3, 1], [1, 2.0, 1.5, 0.5], [8, 12, 12, 10], 9, 15],
                       [[2, 2, 2], [5, 3.0, 0.6, 1.25], [12, 9, 15, 13], 12, 15],
                       [[7, 1, 1], [3, 1e-2, 0.5, 1.0], [10, 11, 14, 15], 14, 15],
                       [[4, 2, 2], [3, 1e-3, 0.75, 0.01], [10, 10, 14, 14], 8, 10]]}),
    # (bias, per channel, frac x, parameter, y, e, dx): Scale rounding and shifting left,
    # Bias with x or the parameter aligned left, both with a single value
    "affine": ("fpdeep_affine", "tb_affine",
               {"shape": [3, 2, 3], "cases": [[0, 1, 10, 14, 10, 14, 14], [0, 1, 12, 8, 16, 10, 15],
                                              [0, 0, 10, 12, 9, 13, 12],
                                              [1, 1, 10, 14, 10, 14, 14], [1, 1, 14, 8, 12, 12, 15],
                                              [1, 0, 9, 9, 11, 14, 11]]}),
}


@pytest.mark.parametrize("simulator", available_simulators())
@pytest.mark.parametrize("unit", UNITS)
def test_unit_bit_exact(run_testbench, unit, simulator):
    toplevel, testbench, args = UNITS[unit]
    run_testbench(toplevel=toplevel, test_module=testbench, tb_args=args, simulator=simulator)


def test_bn_train_seeds_are_the_golden_models():
    # the random data reaches a few of rsqrt's 48 seeds; the table is checked entry by entry
    text = (data_dir("hw") / "eltwise" / "fpdeep_bn_train.sv").read_text()
    table = {int(i): int(v) for i, v in re.findall(r"6'd(\d+): seed = 16'd(\d+);", text)}
    assert table == {i + 16: int(v) for i, v in enumerate(RSQRT_SEED)}
