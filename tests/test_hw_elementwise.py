"""Element-wise units in simulation, bit-exact against the golden model: requantiser, ReLU,
residual add and error fan-in, error fan-out, SGD update; on every simulator found (Verilator
always, Icarus where it is installed)."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import (
    available_simulators,
    default_build_root,
    hw_sources,
    run_cocotb,
    simulator_available,
)

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]

# unit -> (hw modules, the last one is the top; Verilog parameters; testbench; its arguments)
UNITS = {
    "requant": (("fpdeep_requant",), {"IW": 48, "OW": 16, "SW": 7}, "tb_requant",
                {"iw": 48, "ow": 16, "sw": 7}),
    # equal formats, fewer fractional bits out (rounding), more out (left shift + clamp)
    "relu": (("fpdeep_requant", "fpdeep_relu"), {}, "tb_relu",
             {"formats": [[10, 10], [14, 10], [8, 12]]}),
    # (frac a, frac b, frac out); out None = error fan-in (exact sum, saturated once)
    "residual_add": (("fpdeep_requant", "fpdeep_add"), {}, "tb_add",
                     {"formats": [[10, 10, 10], [10, 12, 10], [14, 8, 12], [14, 14, None]]}),
    # error in; one output rounds, one shifts left
    "error_fanout": (("fpdeep_requant", "fpdeep_fanout"), {}, "tb_fanout",
                     {"formats": [14, 12, 15]}),
    # (batch, learning rate, accumulator magnitude bits): small, typical and saturating
    "sgd_update": (("fpdeep_requant", "fpdeep_sgd"), {}, "tb_sgd",
                   {"settings": [[1, 0.1, 20], [3, 0.01, 30], [8, 1.0, 44], [64, 0.5, 47]]}),
}


@pytest.mark.parametrize("simulator", available_simulators())
@pytest.mark.parametrize("unit", UNITS)
def test_unit_bit_exact(unit, simulator, tmp_path):
    modules, parameters, testbench, args = UNITS[unit]
    run_cocotb(
        simulator=simulator,
        toplevel=modules[-1],
        sources=hw_sources(*modules),
        parameters=parameters,
        test_module=testbench,
        build_root=default_build_root(),
        test_dir=tmp_path,
        tb_args=args,
    )
