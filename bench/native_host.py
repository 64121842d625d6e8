"""Simulated cycles per second of the two hosts on `fpdeep demo`'s design (the digits CNN on
2 ZCU102 boards): the cocotb testbench and the native host (C++, compiled with the Verilated
cluster), each running the same training steps, both checked bit for bit against the golden
model; the native host also with Verilator threads.

Run from the repository root: `python bench/native_host.py [--steps 4] [--threads 1 2]
[--dir DIR]`. The first run builds each simulator (minutes each); with --dir the builds are
kept and a second run reuses them.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from fpdeep import flow
from fpdeep.cosim.run import simulate
from fpdeep.tables import format_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--dir", type=Path, help="build folder to keep (default: temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.dir or Path(tmp) / "demo"
        build, run = flow.demo_configs()
        if not (out / "design.json").is_file():
            flow.build(replace(build, output=out))
        runs = [("cocotb", 1), *(("native", n) for n in args.threads)]
        rows = []
        for host, threads in runs:
            began = time.monotonic()
            result = simulate(out, replace(run, steps=args.steps, host=host, threads=threads))
            rows.append([host, str(threads), "yes" if result["match"] else "NO",
                         f"{result['cycles'][-1]:,}", f"{result['simulated_cycles']:,}",
                         f"{result['cycles_per_s']:,}", f"{result['step_cycles_per_s']:,}",
                         f"{time.monotonic() - began:.1f}"])
    print(f"fpdeep demo design (digits CNN, 2 x ZCU102), {args.steps} steps of batch "
          f"{run.random_batch}; cycles/s: whole session, and while the boards train")
    print(format_table(["host", "threads", "bit-exact", "cycles/step", "cycles simulated",
                        "cycles/s", "step cycles/s", "wall s (incl. build)"], rows))


if __name__ == "__main__":
    main()
