"""The reliable link layer: fpdeep_crc32 against zlib, and two fpdeep_link_end joined by
fpdeep_link_channel models (tests/hw/link/fpdeep_link_pair.sv) carrying random tensors both
ways bit-exact with no errors, with bit errors, with lost frames and with a slow reader;
a reader that never returns credit is reported as a stuck link."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpdeep.cosim.simulator import hw_sources, simulator_available

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]

HARNESS = Path(__file__).resolve().parent / "fpdeep_link_pair.sv"
#: Small frames and buffers, so that a few tensors make many frames and fill the buffers.
SMALL = {"MAXLEN": 8, "RXD": 32, "RD": 64, "FW": 3}


@pytest.mark.parametrize("width", [64, 128])
def test_crc32_is_zlibs(run_testbench, width):
    run_testbench(toplevel="fpdeep_crc32", parameters={"W": width}, test_module="tb_crc32")


@pytest.mark.parametrize(("case", "width", "faults"), [
    ("clean", 64, {}),
    ("clean", 128, {}),   # the demo board's link port
    ("ber-1e-4", 64, {"ber": 1e-4}),
    ("ber-1e-3", 64, {"ber": 1e-3}),
    ("drops", 64, {"drop": 0.1, "tensors": 48}),
    ("slow-reader", 64, {"stall": 0.85, "num": 2, "den": 3}),
    # frames the host shortened (cfg_maxlen), clean and through a noisy 128-bit line
    ("short-frames", 64, {"maxlen": 3}),
    ("short-frames-ber-1e-3", 128, {"maxlen": 2, "ber": 1e-3}),
])
def test_reliable_link(run_testbench, case, width, faults):
    run_testbench(
        toplevel="fpdeep_link_pair",
        sources=[*hw_sources("fpdeep_link_end", "fpdeep_link_channel"), HARNESS],
        parameters={**SMALL, "W": width},
        test_module="tb_reliable",
        tb_args={"seed": 7, **faults},
    )


def test_stuck_link_is_reported(run_testbench):
    run_testbench(
        toplevel="fpdeep_link_pair",
        sources=[*hw_sources("fpdeep_link_end", "fpdeep_link_channel"), HARNESS],
        parameters=SMALL,
        test_module="tb_stuck",
    )


def test_deframer_against_python_frames(run_testbench):
    run_testbench(toplevel="fpdeep_link_deframer",
                  parameters={"MAXLEN": 8, "RXD": 32}, test_module="tb_deframer")


def test_channel_errors_and_drops_at_their_rates(run_testbench):
    run_testbench(toplevel="fpdeep_link_channel", parameters={"W": 64},
                  test_module="tb_channel",
                  tb_args={"seed": 5, "ber": 1e-3, "drop": 0.05, "frames": 1500})
