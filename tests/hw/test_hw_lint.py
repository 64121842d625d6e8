"""Every hand-written module in hw/ is `verilator --lint-only -Wall` clean."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import lint, simulator_available
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import MODULES

pytestmark = pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")


@pytest.mark.parametrize("module", MODULES)
def test_lint_clean(module):
    lint(module)


def test_lint_reports_warnings(tmp_path):
    # A deliberately sloppy module must fail, or the check above proves nothing.
    bad = tmp_path / "sloppy.sv"
    bad.write_text(
        "module sloppy(input logic [7:0] a, output logic [3:0] y); assign y = a; endmodule\n"
    )
    with pytest.raises(FpdeepError, match="WIDTH"):
        lint("sloppy", sources=[bad])


def test_an_engine_whose_lanes_banks_are_deeper_than_its_counters_lints_clean():
    """A full-size plane over few lanes makes a lane's bank deeper than the CW-bit counters
    reach (ShuffleNet's first layers: 2^19 words): the walkers address it in AW bits."""
    deep = 1 << 19
    lint("fpdeep_engine", parameters={"XD": deep, "WD": deep, "YD": deep, "RD": deep})
