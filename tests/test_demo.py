"""The README's main job, run exactly as the README prints it, in a fresh folder."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fpdeep.cosim.simulator import MODEL_CACHE_ENV, simulator_available

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def readme_command(marker: str) -> str:
    """The command of the README's first shell block whose line mentions ``marker``."""
    block = re.search(r"```sh\n(.*?)```", README.read_text(), re.S)
    assert block, "the README has no ```sh block near the top"
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].strip()
        if marker in command:
            return command
    raise AssertionError(f"the README's first ```sh block has no command with {marker!r}")


def _argv(command: str) -> list[str]:
    """The command's words, its program resolved as a shell in the checkout would."""
    argv = shlex.split(command)
    program = Path(argv[0])
    if not program.is_absolute() and len(program.parts) > 1:
        local = ROOT / program
        # the README's .venv/bin/fpdeep; where tests run from another environment, its own
        argv[0] = str(local if local.is_file() else Path(sys.executable).parent / program.name)
    return argv


def test_make_demo_runs_the_readme_command():
    recipe = subprocess.run(["make", "-s", "-n", "demo"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert recipe == readme_command("demo")


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.skipif(not simulator_available("verilator"), reason="Verilator not found")
def test_demo_as_the_readme_prints_it(tmp_path):
    command = readme_command("demo")
    # as a user runs it: no build folders or model caches of the test session's
    env = {k: v for k, v in os.environ.items() if k not in ("FPDEEP_SIM_BUILD", MODEL_CACHE_ENV)}
    proc = subprocess.run(_argv(command), cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    # progress on a pipe: a few whole lines, no carriage-return bar fragments
    assert "\r" not in proc.stderr and len(proc.stderr.splitlines()) < 20, proc.stderr
    out = tmp_path / "fpdeep-demo"
    result = json.loads((out / "sim" / "result.json").read_text())
    assert result["match"] is True and result["mismatches"] == []
    assert result["steps"] == 2 and result["batch"] == 4
    report = (out / "report.txt").read_text()
    assert "bit-exact with the golden model" in report
    assert report in proc.stdout  # the report printed is the report written
    assert f"{result['cycles'][-1]:,}" in report
