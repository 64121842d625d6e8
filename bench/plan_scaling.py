"""Scaling of `fpdeep plan` on VGG-16 and ResNet-50 over chains of VCU118 boards.

Run from the repository root: `python bench/plan_scaling.py [--max 64] [--link-gbps 250]`.
Prints load imbalance and DSP efficiency for both partition strategies, the VGG-16 knee at the
given link rate, and how long planning takes. `--pixel-lanes P --counts 16,32,64 --what-if`
shows how the chain would scale with engines that also compute P output rows in parallel (the
generated engine computes one). VGG-16 is built with onnx.helper (weights as graph
inputs, so the file is a few kB); ResNet-50 is the onnx package's light test model.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import onnx

import fpdeep
from fpdeep.examples import build_vgg16
from fpdeep.planning.allocate import _cheapest
from fpdeep.report.plan import knees, sweep_rows, sweep_text


def vgg16_onnx(path: Path) -> Path:
    onnx.save(build_vgg16(), path)
    return path


def light_resnet50() -> Path:
    return Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


def table(name: str, network: fpdeep.ir.Network, counts: list[int], link: float | None,
          strategies: tuple[str, ...] = ("fpdeep", "optimal"), **options: object) -> None:
    clusters = [fpdeep.make_cluster(board="vcu118", boards=n, link_gbps=link, **options)
                for n in counts]
    print(f"\n== {name} on VCU118, link {link or 'board default'} Gb/s per direction {options} ==")
    results = {}
    if strategies == ("optimal",):
        start = time.perf_counter()
        found = fpdeep.sweep(network, clusters, strategy="optimal")
        print(f"optimal: sweep of {len(counts)} counts in {time.perf_counter() - start:.1f} s")
        print(sweep_text(sweep_rows(list(zip(counts, found, strict=True)))))
        return
    for strategy in strategies:
        start = time.perf_counter()
        results[strategy] = fpdeep.sweep(network, clusters, strategy=strategy)
        print(f"{strategy}: sweep of {len(counts)} counts in {time.perf_counter() - start:.1f} s")
    print("boards  imbalance fpdeep/optimal   DSP eff fpdeep/optimal   II fpdeep/optimal")
    for n, a, b in zip(counts, results["fpdeep"], results["optimal"], strict=True):
        if isinstance(a, fpdeep.FpdeepError) or isinstance(b, fpdeep.FpdeepError):
            errors = [str(r) for r in (a, b) if isinstance(r, fpdeep.FpdeepError)]
            print(f"{n:6d}  {' / '.join(errors)}")
            continue
        ta, tb = a.totals, b.totals
        assert tb.ii_cycles <= ta.ii_cycles, (n, ta.ii_cycles, tb.ii_cycles)
        print(f"{n:6d}  {ta.load_imbalance:9.3f} / {tb.load_imbalance:<9.3f}   "
              f"{ta.dsp_efficiency:7.1%} / {tb.dsp_efficiency:<7.1%}   "
              f"{ta.ii_cycles:>10,} / {tb.ii_cycles:<10,} {tb.bottleneck}")
    for strategy in ("fpdeep", "optimal"):
        rows = sweep_rows(list(zip(counts, results[strategy], strict=True)))
        print(f"\n{strategy}: {knees(rows)}")
        if name == "VGG-16":
            print(sweep_text(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max", type=int, default=64)
    parser.add_argument("--link-gbps", type=float, default=250.0)
    parser.add_argument("--pipelining", default="image")
    parser.add_argument("--pixel-lanes", type=int, default=1)
    parser.add_argument("--counts", help="comma-separated board counts for --what-if")
    parser.add_argument("--what-if", action="store_true",
                        help="only the VGG-16 optimal sweep with the given options")
    args = parser.parse_args()
    options = {"pipelining": args.pipelining, "pixel_lanes": args.pixel_lanes}
    if args.what_if:
        with tempfile.TemporaryDirectory() as tmp:
            vgg = fpdeep.load_onnx(vgg16_onnx(Path(tmp) / "vgg16.onnx"))
        counts = [int(c) for c in args.counts.split(",")] if args.counts else [1, 8, 16, 32, 64]
        table("VGG-16", vgg, counts, args.link_gbps, ("optimal",), **options)
        return
    with tempfile.TemporaryDirectory() as tmp:
        vgg = fpdeep.load_onnx(vgg16_onnx(Path(tmp) / "vgg16.onnx"))
    resnet = fpdeep.load_onnx(light_resnet50())
    counts = list(range(1, args.max + 1))
    table("VGG-16", vgg, counts, args.link_gbps, **options)
    table("ResNet-50", resnet, counts, args.link_gbps, **options)

    for strategy in ("fpdeep", "optimal"):
        _cheapest.cache_clear()  # time it cold, as a fresh `fpdeep plan` would run
        start = time.perf_counter()
        fpdeep.plan(resnet, fpdeep.make_cluster(board="vcu118", boards=64), strategy=strategy)
        print(f"plan light ResNet-50 on 64 VCU118 ({strategy}): "
              f"{time.perf_counter() - start:.2f} s")
    for strategy in ("fpdeep", "optimal"):
        _cheapest.cache_clear()
        start = time.perf_counter()
        fpdeep.sweep(vgg, [fpdeep.make_cluster(board="vcu118", boards=n, link_gbps=args.link_gbps)
                           for n in range(1, 129)], strategy=strategy)
        print(f"VGG-16 sweep 1..128 ({strategy}): {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
