"""Whether `fpdeep build` takes each light model-zoo graph shipped with onnx: at full size on
8 and 16 VCU118s (what does not fit on chip kept off chip, `--off-chip stash`), and at a
reduced input where the graph allows one. Prints the generated design's figures or the
reason build gives, as `fpdeep plan` reports them (plan lowers the design as build does).

    python bench/zoo_build.py [--boards 8,16] [--reduced 3,32,32]
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
    """The generated design's images/s at batch 32, or why it cannot be built."""
    command = [sys.executable, "-m", "fpdeep.cli", "plan", str(model), "--board", "vcu118",
               "--boards", str(boards), "--off-chip", "stash", "--json", "-", *extra]
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
    args = parser.parse_args()
    for model in sorted(LIGHT.glob("light_*.onnx")):
        print(model.stem)
        for boards in (int(n) for n in args.boards.split(",")):
            line = f"full size, {boards} x VCU118: {generated(model, boards)}"
            print(textwrap.indent(textwrap.fill(line, 100), "  "))
        line = (f"input {args.reduced}, 8 x VCU118, batch 4: "
                f"{generated(model, 8, '--input-shape', args.reduced, '--batch', '4')}")
        print(textwrap.indent(textwrap.fill(line, 100), "  "))


if __name__ == "__main__":
    main()
