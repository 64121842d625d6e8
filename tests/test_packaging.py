"""The wheel carries templates/, hw/, sim/ and the example models as package data, and no
unit tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fpdeep.resources import DATA_FOLDERS, data_dir

ROOT = Path(__file__).resolve().parent.parent


def test_data_folders_found_in_checkout():
    for name in DATA_FOLDERS:
        assert data_dir(name) == ROOT / name
    with pytest.raises(ValueError, match="known: templates, hw, sim"):
        data_dir("docs")


@pytest.mark.slow
def test_wheel_contents(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to copy the tracked files")
    # Build from the tracked files only, as a release would.
    src = tmp_path / "src"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
         str(src)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("fpdeep-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "fpdeep/examples/digits_cnn.onnx" in names
    boards = [f for f in files if f.startswith("fpdeep/planning/boards/") and f.endswith(".toml")]
    assert boards and all(f in names for f in boards)
    assert "fpdeep/cli.py" in names
    for folder in DATA_FOLDERS:
        tracked = [f for f in files if f.startswith(f"{folder}/")]
        assert tracked, folder
        for name in tracked:
            assert f"fpdeep/_data/{name}" in names
    # hw/ keeps its component folders; sim/ is the product's testbench only: the unit tests
    # of the hardware blocks stay in tests/hw/, beside their runners
    assert "fpdeep/_data/hw/engine/fpdeep_engine.sv" in names
    shipped_sim = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("fpdeep/_data/sim/"))
    assert "tb_cluster.py" in shipped_sim and "native_host.cpp" in shipped_sim
    assert [n for n in shipped_sim if n.startswith("tb_") and n != "tb_cluster.py"] == []
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n]
