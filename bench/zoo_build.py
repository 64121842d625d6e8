"""Whether `fpdeep build` takes each light model-zoo graph shipped with onnx: at full size and at
a reduced input where the graph allows one, on 8 and 16 VCU118s (or --board, --boards), with the
`optimal` partition and what may go off chip kept there (`--off-chip weights,grads,stash`).
Prints the generated design's figures or the reason build gives, as `fpdeep plan` reports them
(plan lowers the design as build does), then a Markdown table of the same results in a few words
each. With --check, every case that builds is built into a temporary folder and each board's RTL
linted (`verilator --lint-only -Wall`) and elaborated by Yosys.

    python bench/zoo_build.py [--board vcu118] [--boards 8,16] [--models bvlc_alexnet,...]
        [--full-only] [--reduced 3,32,32] [--off-chip KINDS] [--partition fpdeep|optimal]
        [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import onnx

from fpdeep.codegen.build import source_list
from fpdeep.cosim.simulator import lint
from fpdeep.cosim.yosys import check_hierarchy
from fpdeep.errors import FpdeepError

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def generated(model: Path, board: str, boards: int, *extra: str) -> str:
    """The generated design's images/s, or why it cannot be built."""
    command = [sys.executable, "-m", "fpdeep.cli", "plan", str(model), "--board", board,
               "--boards", str(boards), "--json", "-", *extra]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode:
        return "plan refused: " + run.stderr.strip().splitlines()[-1].removeprefix(
            "fpdeep: error: ")
    g = json.loads(run.stdout)["generated"]
    if "error" in g:
        return "build refuses: " + g["error"]
    return (f"builds: {g['images_per_s_batch']:,.1f} images/s at batch {g['batch']} "
            f"({g['bottleneck']})")


def short(result: str) -> str:
    """A few words of ``result`` for the table: the images/s where it builds, else what
    stops it (block RAM: the boards over and the most any takes)."""
    if result.startswith("builds"):
        return "**" + result.split(" (")[0].replace(" images/s at batch", " img/s, batch") + "**"
    if "alone take" in result:
        taken = [int(n.replace(",", "")) for n in re.findall(r"board \d+ ([\d,]+)", result)]
        first = int(re.search(r"alone take ([\d,]+) BRAM36", result)[1].replace(",", ""))
        listed = re.search(r"; (\d+) of the (\d+) boards take too much", result)
        over = f"{listed[1]} of {listed[2]} boards" if listed else "1 board"
        return f"BRAM: {over} over, up to {max(taken or [first]):,} BRAM36"
    if "graph" in result or "plan refused" in result:
        return "the graph fixes its input" if "is empty" in result or "reshape" in result \
            else result.removeprefix("plan refused: ")[:60]
    many = re.search(r"(\d+) (engines, units and links|off-chip memory movers)", result)
    if many:
        return (f"{many[1]} resources a board (255 addressable)" if many[2].startswith("engines")
                else f"{many[1]} off-chip movers (8-bit AXI IDs)")
    return result[:60]


def _check_board(file_list: Path) -> str:
    """'' when the board's RTL lints clean and Yosys elaborates it, else the first error."""
    top = f"fpdeep_{file_list.parent.name}"
    sources = source_list(file_list)
    try:
        lint(top, sources=sources)
        check_hierarchy(top, sources)
    except FpdeepError as error:
        return f"{file_list.parent.name}: {str(error).splitlines()[0]}"
    return ""


def checked(model: Path, board: str, boards: int, *extra: str) -> str:
    """Build the design and lint and elaborate every board (two at a time)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "fpdeep.cli", "build", str(model), "--board", board,
                   "--boards", str(boards), "-o", f"{tmp}/build", *extra]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:
            return "build failed: " + run.stderr.strip().splitlines()[-1]
        file_lists = sorted(Path(tmp, "build", "rtl").glob("board_*/files.f"))
        with ThreadPoolExecutor(2) as pool:
            errors = [e for e in pool.map(_check_board, file_lists) if e]
    if errors:
        return f"{len(errors)} of {len(file_lists)} boards fail: " + "; ".join(errors)
    return (f"all {len(file_lists)} boards lint-clean (Verilator -Wall) and elaborated by Yosys "
            f"({time.monotonic() - started:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="vcu118", help="the board (default vcu118)")
    parser.add_argument("--boards", default="8,16", help="board counts to try (default 8,16)")
    parser.add_argument("--models", help="comma-separated graph names (default: all nine)")
    parser.add_argument("--full-only", action="store_true", help="full size only")
    parser.add_argument("--reduced", default="3,32,32", help="the reduced input C,H,W")
    parser.add_argument("--off-chip", default="weights,grads,stash",
                        help="what build may keep off chip (default: all it can)")
    parser.add_argument("--partition", default="optimal", choices=("fpdeep", "optimal"))
    parser.add_argument("--check", action="store_true",
                        help="build each case that builds, lint and elaborate every board")
    args = parser.parse_args()
    options = ("--off-chip", args.off_chip, "--partition", args.partition)
    counts = [int(n) for n in args.boards.split(",")]
    sizes = [("full size", options)]
    if not args.full_only:
        sizes.append((f"input {args.reduced}, batch 4",
                      (*options, "--input-shape", args.reduced, "--batch", "4")))
    cases = [(f"{size}, {boards} x {args.board}", boards, extra) for boards in counts
             for size, extra in sizes]
    models = sorted(LIGHT.glob("light_*.onnx"))
    if args.models:
        models = [LIGHT / f"light_{name}.onnx" for name in args.models.split(",")]
    table = []
    for model in models:
        print(model.stem)
        row = [model.stem.removeprefix("light_")]
        for what, boards, extra in cases:
            result = generated(model, args.board, boards, *extra)
            if args.check and result.startswith("builds"):
                result += "; " + checked(model, args.board, boards, *extra)
            row.append(short(result) + ("" if "all " in result or not args.check
                                          or not result.startswith("builds")
                                          else " (fails the check)"))
            print(textwrap.indent(textwrap.fill(f"{what}: {result}", 100), "  "), flush=True)
        table.append(row)
    print("\n| graph | " + " | ".join(what for what, _, _ in cases) + " |")
    print("|---" * (len(cases) + 1) + "|")
    for row in table:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
