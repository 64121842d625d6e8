"""Time `fpdeep inspect` of the light ResNet-50 as a user runs it (process start included)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import onnx

MODEL = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


def main(runs: int = 7) -> None:
    command = [sys.executable, "-m", "fpdeep.cli", "inspect", str(MODEL)]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    print(f"fpdeep inspect {MODEL.name}: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s, max {max(times):.3f} s over {runs} runs")

    from fpdeep import analyze, load_onnx

    start = time.perf_counter()
    for _ in range(runs):
        analyze(load_onnx(MODEL))
    print(f"load_onnx + analyze in-process: {(time.perf_counter() - start) / runs * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
