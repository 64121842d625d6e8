"""Every hand-written module in hw/ is `verilator --lint-only -Wall` clean."""

from __future__ import annotations

import pytest

from fpdeep.cosim.simulator import lint, simulator_available
from fpdeep.errors import FpdeepError
from fpdeep.resources import data_dir

MODULES = sorted(p.stem for p in data_dir("hw").glob("*.sv"))

pytestmark = pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")


def test_hw_folder_has_the_library():
    for required in ("fpdeep_stream_fifo", "fpdeep_skid_buffer", "fpdeep_sdp_ram",
                     "fpdeep_mac_array"):
        assert required in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_lint_clean(module):
    lint(module)


def test_lint_reports_warnings(tmp_path, monkeypatch):
    # A deliberately sloppy module must fail, or the check above proves nothing.
    import fpdeep.cosim.simulator as simulate

    bad = tmp_path / "hw"
    bad.mkdir()
    (bad / "sloppy.sv").write_text(
        "module sloppy(input logic [7:0] a, output logic [3:0] y); assign y = a; endmodule\n"
    )
    monkeypatch.setattr(simulate, "data_dir", lambda name: bad)
    with pytest.raises(FpdeepError, match="WIDTH"):
        lint("sloppy")
