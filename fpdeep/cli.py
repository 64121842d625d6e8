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
