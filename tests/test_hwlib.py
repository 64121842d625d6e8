"""The interface declarations of fpdeep.hwlib (pure; tests/hw/test_hw_interfaces.py checks them
against the RTL with Verilator)."""

from __future__ import annotations

import pytest

from fpdeep.errors import FpdeepError
from fpdeep.hwlib import FOLDERS, LINK_TX, LOSS, MODULES, POOL, RELU, compile_order, module
from fpdeep.hwlib.signature import IN, OUT, Module, Signal, clog2, evaluate, sink
from fpdeep.resources import data_dir


def test_widths_are_evaluated_as_the_rtl_writes_them():
    params = {"CW": 16, "AW": 32, "NCH": 3, "DW": 16}
    assert evaluate(7, params) == 7
    assert evaluate("7*6*AW", params) == 1344
    assert evaluate("max(clog2(NCH), 1)+DW+1", params) == 19
    assert [clog2(n) for n in (1, 2, 3, 4, 5, 256, 257)] == [0, 1, 2, 2, 3, 8, 9]
    with pytest.raises(FpdeepError, match="'XW', which is not a parameter; parameters: CW, AW"):
        evaluate("XW+1", {"CW": 16, "AW": 32})
    with pytest.raises(FpdeepError, match="__import__.*is not allowed in a width"):
        evaluate("__import__('os')", params)
    with pytest.raises(FpdeepError, match="'2 \\*\\* CW' is not allowed"):
        evaluate("2 ** CW", params)


def test_a_stream_is_data_side_last_valid_ready():
    ports = POOL.ports(DW=16, KB=8)
    names = [p.name for p in ports if p.name.startswith("m_")]
    assert names == ["m_data", "m_arg", "m_last", "m_valid", "m_ready"]
    m = {p.name: p for p in ports}
    assert (m["m_data"].direction, m["m_ready"].direction) == (OUT, IN)
    assert (m["s_x_data"].direction, m["s_x_ready"].direction) == (IN, OUT)
    assert "s_m_last" not in m  # the reciprocal table has no last flag
    # one data bus, one valid and ready per channel
    assert [(p.name, p.width) for p in LINK_TX.ports(DW=16, NCH=2) if p.name.startswith("s_")] \
        == [("s_data", 32), ("s_last", 2), ("s_valid", 2), ("s_ready", 2)]


def test_widths_masks_and_encodings_follow_the_parameters():
    assert LINK_TX.width("m_data", DW=16, NCH=1) == 18  # {channel, last, data}
    assert LINK_TX.width("m_data", DW=16, NCH=4) == 19
    assert RELU.mask("cfg_shift") == 0x7F
    assert RELU.encode("cfg_shift", -1) == 0x7F and RELU.encode("cfg_shift", 5) == 5
    assert RELU.signed_range("cfg_shift") == (-64, 63)
    assert LOSS.width("s_z_label", LW=4) == 4
    assert POOL.config[:2] == ("cfg_mode", "cfg_bound")


def test_unknown_names_are_refused_with_the_valid_ones():
    with pytest.raises(FpdeepError, match="fpdeep_relu has no parameter XD; its parameters: "
                                          "DW, SW"):
        RELU.ports(XD=4)
    with pytest.raises(FpdeepError, match="fpdeep_relu has no port 'x'; its ports: clk, rst, "
                                          "cfg_bwd"):
        RELU.width("x")
    with pytest.raises(FpdeepError, match="has no stream 's_q'; its streams: s_x, s_e, m"):
        RELU.stream("s_q")
    with pytest.raises(FpdeepError, match="hw module 'fpdeep_x' does not exist; known modules: "
                                          "fpdeep_add, "):
        module("fpdeep_x")
    with pytest.raises(FpdeepError, match="a port is declared twice"):
        Module("m", "common", "", members=(Signal("a_valid", IN), sink("a", 8)))


def test_compile_order_puts_every_module_after_what_it_uses():
    order = [m.name for m in compile_order(["fpdeep_relu", "fpdeep_engine", "fpdeep_requant"])]
    assert order == ["fpdeep_requant", "fpdeep_relu", "fpdeep_sdp_ram", "fpdeep_tensor_walker",
                     "fpdeep_loop_nest", "fpdeep_mac_array", "fpdeep_result_lane",
                     "fpdeep_engine"]
    for m in MODULES.values():
        assert all(u in MODULES for u in m.uses), m.name


def test_every_file_in_hw_is_declared_in_its_folder():
    hw = data_dir("hw")
    files = {p.relative_to(hw).as_posix() for p in hw.rglob("*.sv")}
    assert files == {m.path for m in MODULES.values()}
    assert {m.folder for m in MODULES.values()} == set(FOLDERS)
    assert [m.name for m in MODULES.values() if m.sim_only] == [
        "fpdeep_link_model", "fpdeep_link_channel", "fpdeep_mem_model"]


def test_hw_readme_lists_the_declarations():
    from fpdeep.hwlib.docs import BEGIN, END, tables, updated

    text = (data_dir("hw") / "README.md").read_text()
    assert tables() in text, "hw/README.md is stale: run `python -m fpdeep.hwlib hw/README.md`"
    assert updated(text) == text
    assert "| `fpdeep_engine` | `s_x`[DW], `s_w`[DW], `s_dy`[DW], `s_b`[DW] | `m`[ACCW] |" in text
    stale = text.replace(tables(), f"{BEGIN}\nold\n{END}")
    assert updated(stale) == text
    with pytest.raises(FpdeepError, match="must hold the markers"):
        updated("no markers")
