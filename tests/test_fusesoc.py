"""The FuseSoC cores `fpdeep build` writes: fusesoc finds them, and each board's lint target
runs Verilator -Wall on the board top with the library core's sources."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fpdeep import flow
from fpdeep.flow import BuildConfig
from fpdeep.resources import PACKAGE_DIR

FUSESOC = Path(sys.executable).with_name("fusesoc")


def _fusesoc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    if not FUSESOC.is_file():
        pytest.skip(f"fusesoc is not installed beside {sys.executable}")
    from fpdeep.cosim.simulator import find_simulator, simulator_available

    env = dict(os.environ)
    if simulator_available("verilator"):  # fusesoc's Verilator backend finds it on PATH
        env.update(find_simulator("verilator").environ(env))
    return subprocess.run([str(FUSESOC), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fusesoc") / "zcu102_2"
    flow.build(BuildConfig(model=PACKAGE_DIR / "examples" / "digits_cnn.onnx", board="zcu102",
                           boards=2, batch=4, output=out))
    return out


def test_core_list_finds_the_library_and_every_board(build):
    proc = _fusesoc("--cores-root", str(build), "core", "list", cwd=build.parent)
    assert proc.returncode == 0, proc.stderr
    for name in ("fpdeep:hw:library:0.1.0", "fpdeep:board:board_0:0.1.0",
                 "fpdeep:board:board_1:0.1.0"):
        assert name in proc.stdout


@pytest.mark.sim
def test_board_lint_target_runs_verilator_and_fails_on_a_broken_top(build, tmp_path):
    from fpdeep.cosim.simulator import simulator_available

    if not simulator_available("verilator") or shutil.which("make") is None:
        pytest.skip("Verilator or make not found")
    args = ("run", "--build-root", str(tmp_path / "ok"), "--target=lint", "fpdeep:board:board_0")
    proc = _fusesoc("--cores-root", str(build), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lint-verilator" in proc.stdout + proc.stderr
    # the same core with an undeclared signal in the top must fail the lint
    broken = tmp_path / "broken"
    shutil.copytree(build / "rtl", broken / "rtl")
    top = broken / "rtl" / "board_0" / "fpdeep_board_0.sv"
    text = top.read_text().replace("endmodule", "assign no_such_wire = 1'b0;\nendmodule", 1)
    top.write_text(text)
    proc = _fusesoc("--cores-root", str(broken), "run", "--build-root", str(tmp_path / "bad"),
                    "--target=lint", "fpdeep:board:board_0", cwd=tmp_path)
    assert proc.returncode != 0
    assert "no_such_wire" in proc.stdout + proc.stderr
