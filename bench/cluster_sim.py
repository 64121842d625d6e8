"""Cycles per training step of generated clusters: simulated (the boards' CSR cycle counters),
the model of the generated design (the task timeline at this batch) and its closed form
(B - 1) II + first image, the ideal pipeline, the busiest resource's share of the step and the
simulator's speed, and the bottleneck engine's (most cycles of runs) share of its active
window.

Run from the repository root: `python bench/cluster_sim.py [--steps 2] [--batch 4]`. Builds
and simulates the bundled digits CNN on 1, 2 and 3 ZCU102 boards (3 boards with a cut between
layers and one inside a layer), a small residual CNN on 3 boards, and the digits CNN on 1 and
2 boards with weights, gradients and stash off chip (`--off-chip weights,grads,stash`),
checks each against the golden model and prints a table. Each case builds its own Verilator
model (about a minute).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import fpdeep
from fpdeep.cosim.run import simulate
from fpdeep.flow import RunConfig, write_build
from fpdeep.planning.partition import chain_model
from fpdeep.planning.planner import evaluate
from fpdeep.resources import PACKAGE_DIR
from fpdeep.tables import format_table

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"


def residual_onnx(path: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from golden_nets import residual_cnn

    residual_cnn(path)
    return path


OFF_CHIP = ("weights", "grads", "stash")


def cases(tmp: Path, batch: int):
    """(name, model file, network, plan, kinds of data kept off chip) of every case."""
    zcu = "zcu102"
    for n in (1, 2, 3):
        net = fpdeep.load_onnx(DIGITS)
        yield f"digits, {n} board(s), fpdeep split", DIGITS, net, fpdeep.plan(
            net, fpdeep.make_cluster(board=zcu, boards=n), batch=batch), ()
    net = fpdeep.load_onnx(DIGITS)
    cluster = fpdeep.make_cluster(board=zcu, boards=3)
    model = chain_model(net, precision=16, pipelining="image")
    yield "digits, 3 boards, cuts conv1 | conv2[:4] | conv2[4:] fc", DIGITS, net, evaluate(
        model, cluster, (0, 4, 8, 22), strategy="fpdeep", batch=batch), ()
    path = residual_onnx(tmp / "residual.onnx")
    net = fpdeep.load_onnx(path)
    yield "residual CNN, 3 boards", path, net, fpdeep.plan(
        net, fpdeep.make_cluster(board=zcu, boards=3), batch=batch), ()
    for n in (1, 2):
        net = fpdeep.load_onnx(DIGITS)
        yield f"digits, {n} board(s), all off chip", DIGITS, net, fpdeep.plan(
            net, fpdeep.make_cluster(board=zcu, boards=n), batch=batch), OFF_CHIP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, model, net, plan, off_chip) in enumerate(cases(Path(tmp), args.batch)):
            out = Path(tmp) / f"case{k}"
            write_build(net, plan, out, model_files={"model.onnx": Path(model).read_bytes()},
                        off_chip=off_chip)
            t0 = time.monotonic()
            r = simulate(out, RunConfig(batch=args.batch, steps=args.steps))
            wall = time.monotonic() - t0
            measured = r["cycles"][-1]
            busiest = max((x for x in r["resources"] if x["modelled"] is not None),
                          key=lambda x: x["busy"])
            # the bottleneck engine: the most cycles of runs; its share of its active window
            bottleneck = max((x for x in r["resources"] if x["engine"]), key=lambda x: x["busy"])
            rows.append([name, "yes" if r["match"] else "NO", f"{measured:,}",
                         f"{r['modelled_cycles']:,}", f"{r['cycle_error']:+.2%}",
                         f"{r['planner_formula_cycles']:,}", f"{r['ideal_pipeline_cycles']:,}",
                         f"{busiest['resource']} {busiest['busy_share']:.0%}",
                         f"{bottleneck['resource']} {bottleneck['window_share']:.1%}",
                         f"{r['cycles_per_s']:,}", f"{wall:.0f}"])
            print(rows[-1], flush=True)
    print(format_table(["case", "bit-exact", "cycles/step", "model", "error", "(B-1) II + first",
                        "ideal pipeline", "busiest (share of step)",
                        "bottleneck engine (busy in its window)", "cycles/s", "wall s"], rows))


if __name__ == "__main__":
    main()
