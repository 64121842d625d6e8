"""One training step of each light model-zoo graph shipped with onnx, simulated at a reduced input.

Each graph is resized (`fpdeep resize`) to the smallest of 32, 64, 96 its pools leave non-empty,
built on VCU118-sized boards cut to 256 DSPs (`tests/boards/vcu118_sim.toml`: few MAC lanes, so
that Verilator builds the cluster in minutes; BatchNormalization on batch statistics, what may go
off chip kept there) and simulated for one step of batch 2 with `fpdeep sim --host native`,
which checks every tensor bit for bit against the golden model. Prints a row a graph as it
finishes, then a Markdown table.

    python bench/zoo_sim.py [--models squeezenet,vgg19] [--boards 4] [--batch 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

from fpdeep.frontend import load_onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
BOARD = Path(__file__).resolve().parent.parent / "tests" / "boards" / "vcu118_sim.toml"
#: The smallest input each graph's pools leave non-empty (others: 32).
SIZES = {"bvlc_alexnet": 96, "zfnet512": 64, "inception_v1": 64}


def fpdeep(*args: str) -> tuple[float, str]:
    """Run one fpdeep command; its wall time, and '' or the error it ended with."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "fpdeep.cli", *args], capture_output=True,
                         text=True)
    error = "" if run.returncode == 0 else (run.stderr.strip().splitlines() or ["?"])[-1]
    return time.monotonic() - started, error


def one(name: str, folder: Path, boards: int, batch: int) -> dict:
    size = SIZES.get(name, 32)
    row = {"graph": name, "input": f"3x{size}x{size}", "boards": boards}
    model = folder / f"{name}_{size}.onnx"
    steps = [
        ("resize", ("resize", str(LIGHT / f"light_{name}.onnx"), str(size), "-o", str(model))),
        ("build", ("build", str(model), "--board-file", str(BOARD), "--boards", str(boards),
                   "--partition", "optimal", "--off-chip", "weights,grads,stash",
                   "--batch", str(batch), "-o", str(folder / name))),
        ("sim", ("sim", str(folder / name), "--steps", "1", "--batch", str(batch),
                 "--host", "native")),
    ]
    for what, args in steps:
        row[f"{what}_s"], error = fpdeep(*args)
        if error:
            row["error"] = f"{what}: {error}"
            return row
    result = json.loads((folder / name / "sim" / "result.json").read_text())
    row.update(match=result["match"], cycles=result["cycles"][0],
               modelled=result["modelled_cycles"], cycles_per_s=result["cycles_per_s"],
               layers=len(load_onnx(model).layers))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated graph names (default: all)")
    parser.add_argument("--boards", type=int, default=4, help="boards in the chain (default 4)")
    parser.add_argument("--batch", type=int, default=2, help="images in the step (default 2)")
    parser.add_argument("--keep", type=Path, help="build here and keep the folders")
    args = parser.parse_args()
    names = (args.models.split(",") if args.models else
             sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            row = one(name, folder, args.boards, args.batch)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("\n| graph | input | boards | layers | build s | sim s (Verilator build incl.) "
          "| cycles (model) | cycles/s | bit-exact |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['graph']} | {r['input']} | {r['boards']} | | | | | | {r['error']} |")
            continue
        print(f"| {r['graph']} | {r['input']} | {r['boards']} | {r['layers']} "
              f"| {r['build_s']:.0f} | {r['sim_s']:.0f} | {r['cycles']:,} ({r['modelled']:,}) "
              f"| {r['cycles_per_s']:,.0f} | {'yes' if r['match'] else 'NO'} |")


if __name__ == "__main__":
    main()
