"""The flow every front end goes through: one configuration per kind of job, each default once.

``BuildConfig`` says what to plan and generate (``fpdeep plan`` and ``fpdeep build``);
``RunConfig`` says how to run a built design (``fpdeep sim``). The CLI, ``fpdeep demo`` and the
Python API construct them and call the steps below; none of them restates a default.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpdeep.errors import FpdeepError, require_non_negative_int, require_positive_int
from fpdeep.frontend import load_onnx
from fpdeep.golden.loss import LOSSES
from fpdeep.ir import Network
from fpdeep.planning.cluster import DEFAULT_UTIL_CAP, PIPELINING, Cluster, make_cluster
from fpdeep.planning.partition import STRATEGIES
from fpdeep.planning.planner import DEFAULT_BATCH, Plan
from fpdeep.planning.planner import plan as plan_network
from fpdeep.progress import Progress
from fpdeep.resources import PACKAGE_DIR

if TYPE_CHECKING:
    from fpdeep.schedule.tasks import PipelineFigures

SIMULATORS = ("verilator", "icarus")
DEFAULT_MAX_CYCLES = 2_000_000
#: Images per simulated step when the batch is random (no --data).
DEFAULT_RUN_BATCH = 4


@dataclass(frozen=True)
class BuildConfig:
    """What to plan and generate: the model, the chain of boards and the planner's options."""

    model: str | Path
    board: str | Path | tuple[str, ...]  # a bundled name, a TOML file, or a mixed chain
    boards: int | None = None
    input_shape: tuple[int, ...] | None = None
    partition: str = "fpdeep"
    precision: int = 16
    batch: int = DEFAULT_BATCH  # images per planned mini-batch
    clock_mhz: float | None = None  # None: the boards' default clock
    link_gbps: float | None = None  # None: the boards' lanes x lane rate
    util_cap: float = DEFAULT_UTIL_CAP
    pipelining: str = "image"
    pixel_lanes: int = 1
    loss: str = "softmax_ce"

    def __post_init__(self) -> None:
        if self.partition not in STRATEGIES:
            raise FpdeepError(f"--partition {self.partition!r} is not known; "
                              f"valid: {', '.join(STRATEGIES)}")
        if self.pipelining not in PIPELINING:
            raise FpdeepError(f"--pipelining {self.pipelining!r} is not known; "
                              f"valid: {', '.join(PIPELINING)}")
        if self.loss not in LOSSES:
            raise FpdeepError(f"--loss {self.loss!r} is not known; valid: {', '.join(LOSSES)}")
        require_positive_int("--batch", self.batch)
        if self.boards is not None:
            require_positive_int("--boards", self.boards)

    def cluster(self, count: int | None = None) -> Cluster:
        """The chain of ``count`` boards (default ``boards``) this configuration describes."""
        return make_cluster(
            board=self.board, boards=self.boards if count is None else count,
            link_gbps=self.link_gbps, precision=self.precision, clock_mhz=self.clock_mhz,
            util_cap=self.util_cap, pipelining=self.pipelining, pixel_lanes=self.pixel_lanes)


@dataclass(frozen=True)
class RunConfig:
    """How to run a built design: the batch, the steps, the optimiser and the simulator."""

    batch: int | None = None  # images per simulated step; None: DEFAULT_RUN_BATCH or the data's
    steps: int = 1
    lr: float = 0.05
    seed: int = 0
    simulator: str = "verilator"
    max_cycles: int = DEFAULT_MAX_CYCLES
    data: str | Path | None = None  # npz with x (B, C, H, W) float32 and y (B,) int
    dump_weights: str | Path | None = None

    def __post_init__(self) -> None:
        if self.batch is not None:
            require_positive_int("--batch", self.batch)
            if self.data is not None:
                raise FpdeepError("--batch and --data exclude each other: the batch is the "
                                  "images of the --data file; drop --batch")
        require_positive_int("--steps", self.steps)
        require_positive_int("--max-cycles", self.max_cycles)
        require_non_negative_int("--seed", self.seed)
        bad = isinstance(self.lr, bool) or not isinstance(self.lr, (int, float))
        if bad or not self.lr > 0 or math.isinf(self.lr):
            raise FpdeepError(f"--lr must be a positive number, got {self.lr!r}")
        if self.simulator not in SIMULATORS:
            raise FpdeepError(f"--simulator {self.simulator!r} is not known; "
                              f"valid: {', '.join(SIMULATORS)}")

    @property
    def random_batch(self) -> int:
        """Images per step when the batch is drawn at random."""
        return DEFAULT_RUN_BATCH if self.batch is None else self.batch


def defaults(config: type) -> dict[str, Any]:
    """Every field of a config class that has a default, with that default (for --help)."""
    return {f.name: f.default for f in fields(config) if f.default is not MISSING}


# ----- the steps ---------------------------------------------------------------------------------
def load(config: BuildConfig) -> Network:
    """The configuration's model as fpdeep's IR."""
    return load_onnx(config.model, input_shape=config.input_shape)


def plan(config: BuildConfig, network: Network | None = None) -> Plan:
    """Partition, allocate and model ``network`` (default: the loaded model) on the chain."""
    if config.boards is None:
        raise FpdeepError("give --boards N: the number of boards in the chain")
    network = load(config) if network is None else network
    return plan_network(network, config.cluster(), strategy=config.partition,
                        batch=config.batch)


def generated_design(network: Network, result: Plan) -> PipelineFigures | str:
    """The figures of the design `fpdeep build` would generate from ``result``, or the reason
    it cannot be built (the same check build makes)."""
    from fpdeep.schedule.tasks import generated_figures

    try:
        return generated_figures(network, result)
    except FpdeepError as exc:
        return str(exc)


def build(config: BuildConfig, out: str | Path, *, force: bool = False,
          progress: Progress | None = None) -> Path:
    """Plan the model and write the build folder ``out`` (whole or not at all)."""
    from fpdeep.codegen.build import build as write_build
    from fpdeep.frontend.reader import model_files

    say = progress or Progress.quiet()
    if config.boards is None:
        raise FpdeepError("give --boards N: the number of boards to generate")
    say.step("loading", str(config.model))
    network = load(config)
    say.step("planning", f"{config.boards} board(s)")
    result = plan(config, network)
    say.step("generating", str(out))
    inputs = (config.model, *([config.board] if isinstance(config.board, Path) else []))
    return write_build(network, result, out, model_files=model_files(config.model),
                       input_shape=config.input_shape, force=force, loss=config.loss,
                       keep=inputs)


def simulate(folder: str | Path, config: RunConfig, *,
             progress: Progress | None = None) -> dict[str, Any]:
    """Run ``config.steps`` training steps on the build in ``folder``; the result.json data."""
    from fpdeep.cosim.run import simulate as run

    return run(folder, config, progress=progress or Progress.quiet())


def demo_configs() -> tuple[BuildConfig, RunConfig]:
    """What `fpdeep demo` runs: the bundled digits CNN on 2 ZCU102 boards, two steps of 4."""
    model = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
    return (BuildConfig(model=model, board="zcu102", boards=2, batch=4),
            RunConfig(batch=4, steps=2))
