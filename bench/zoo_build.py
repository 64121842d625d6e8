"""Whether `fpdeep build` takes each light model-zoo graph shipped with onnx: at full size and at
a reduced input where the graph allows one, on 8 and 16 VCU118s, with the `optimal` partition
and what may go off chip kept there (`--off-chip weights,grads,stash`). Prints the generated
design's figures or the reason build gives, as `fpdeep plan` reports them (plan lowers the
design as build does).

    python bench/zoo_build.py [--boards 8,16] [--reduced 3,32,32] [--off-chip KINDS]
        [--partition fpdeep|optimal]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def generated(model: Path, boards: int, *extra: str) -> str:
    """The generated design's images/s, or why it cannot be built."""
    command = [sys.executable, "-m", "fpdeep.cli", "plan", str(model), "--board", "vcu118",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="8,16", help="board counts to try (default 8,16)")
    parser.add_argument("--reduced", default="3,32,32", help="the reduced input C,H,W")
    parser.add_argument("--off-chip", default="weights,grads,stash",
                        help="what build may keep off chip (default: all it can)")
    parser.add_argument("--partition", default="optimal", choices=("fpdeep", "optimal"))
    args = parser.parse_args()
    options = ("--off-chip", args.off_chip, "--partition", args.partition)
    for model in sorted(LIGHT.glob("light_*.onnx")):
        print(model.stem)
        for boards in (int(n) for n in args.boards.split(",")):
            line = f"full size, {boards} x VCU118: {generated(model, boards, *options)}"
            print(textwrap.indent(textwrap.fill(line, 100), "  "), flush=True)
            reduced = generated(model, boards, *options, "--input-shape", args.reduced,
                                "--batch", "4")
            line = f"input {args.reduced}, {boards} x VCU118, batch 4: {reduced}"
            print(textwrap.indent(textwrap.fill(line, 100), "  "), flush=True)


if __name__ == "__main__":
    main()
