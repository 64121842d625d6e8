"""The `fpdeep` command: a thin layer over the library's public functions."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import fpdeep
from fpdeep.errors import FpdeepError


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
    target = Path(path)
    if target.is_dir():
        raise FpdeepError(f"output {path!r} is a directory; give a file name.")
    if not target.parent.exists():
        raise FpdeepError(f"cannot write {path!r}: folder {str(target.parent)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    from fpdeep.summary import workload_json, workload_table

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


# ----- plan --------------------------------------------------------------------------------------
def parse_counts(text: str) -> tuple[int, ...]:
    """`--sweep 1..128` or `--sweep 1,2,4,8` -> board counts."""
    try:
        if ".." in text:
            first, last = (int(part) for part in text.split(".."))
            counts = tuple(range(first, last + 1))
        else:
            counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        counts = ()
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of board counts; give FIRST..LAST or N,N,... (all >= 1)"
        )
    return counts


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    from fpdeep.cluster import DEFAULT_UTIL_CAP, PIPELINING
    from fpdeep.partition import STRATEGIES
    from fpdeep.planner import DEFAULT_BATCH

    add_model_arguments(parser)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--board", metavar="NAME", help="a bundled board (e.g. vcu118)")
    where.add_argument("--board-file", metavar="FILE", help="your own board description (TOML)")
    parser.add_argument("--boards", type=int, metavar="N", help="boards in the chain")
    parser.add_argument("--sweep", type=parse_counts, metavar="A..B",
                        help="plan every board count in A..B (or a list N,N,...) and tabulate")
    parser.add_argument("--partition", choices=STRATEGIES, default="fpdeep",
                        help="fpdeep: the paper's equal-work split; optimal: least II")
    parser.add_argument("--precision", type=int, default=16, help="bits: 8, 16 (default) or 32")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="images per mini-batch")
    parser.add_argument("--clock", type=float, metavar="MHZ", help="default: the board's")
    parser.add_argument("--link-gbps", type=float, metavar="G",
                        help="line rate per direction to each neighbour (default: the board's)")
    parser.add_argument("--util-cap", type=float, default=DEFAULT_UTIL_CAP,
                        help="fraction of DSP and RAM a plan may use (routing headroom)")
    parser.add_argument("--pipelining", choices=PIPELINING, default="image",
                        help="image: ping-pong per image (generated today); row: FPDeep's rows")
    parser.add_argument("--json", metavar="FILE", help="also write the plan as JSON ('-' = stdout)")
    parser.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")


def _plan(args: argparse.Namespace) -> int:
    from fpdeep.report import plan_html, plan_json, plan_text, sweep_rows, sweep_text

    if args.boards is None and args.sweep is None:
        raise FpdeepError("give --boards N (or --sweep A..B)")
    network = fpdeep.load_onnx(args.model, input_shape=args.input_shape)
    board = Path(args.board_file) if args.board_file else args.board

    def cluster(count: int) -> fpdeep.Cluster:
        return fpdeep.make_cluster(
            board=board, boards=count, link_gbps=args.link_gbps, precision=args.precision,
            clock_mhz=args.clock, util_cap=args.util_cap, pipelining=args.pipelining,
        )

    rows = None
    if args.sweep:
        results = fpdeep.sweep(network, [cluster(n) for n in args.sweep],
                               strategy=args.partition, batch=args.batch)
        rows = sweep_rows(list(zip(args.sweep, results, strict=True)))
        if args.json != "-":
            print(sweep_text(rows))
    count = args.boards if args.boards is not None else max(args.sweep)
    result = fpdeep.plan(network, cluster(count), strategy=args.partition, batch=args.batch)
    if args.json != "-":
        print(plan_text(result))
    if args.json:
        data = plan_json(result)
        if rows is not None:
            data = {**data, "sweep": rows}
        write_output(args.json, json.dumps(data, indent=2) + "\n")
        if args.json != "-":
            print(f"wrote {args.json}")
    if args.html:
        write_output(args.html, plan_html(result, rows))
        if args.json != "-":
            print(f"wrote {args.html}")
    return 0


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
    try:
        return args.run(args)
    except FpdeepError as exc:
        print(f"fpdeep: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fpdeep: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
