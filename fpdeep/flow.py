"""The flow every front end goes through: one configuration per kind of job, each default once.

``BuildConfig`` says what to plan and generate (``fpdeep plan`` and ``fpdeep build``);
``RunConfig`` says how to run a built design (``fpdeep sim``), ``InferConfig`` and
``TrainConfig`` how to run inference on it and train with it (``fpdeep infer``, ``fpdeep
train``). The CLI, ``fpdeep demo`` and the
Python API construct them and call the steps below; none of them restates a default.

The steps are plain functions ``step(state, config) -> state`` run in order
(``load → analyze → plan → lower → schedule → emit``, then ``simulate`` and ``report`` on the
folder written); each adds its typed result to the ``FlowState``, and no stage imports a later
one: the flow composes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpdeep.analysis import NetworkWorkload
from fpdeep.analysis import analyze as analyze_network
from fpdeep.errors import (
    FpdeepError,
    require_non_negative_int,
    require_positive_int,
    require_positive_number,
    require_rate,
)
from fpdeep.frontend import load_onnx
from fpdeep.golden import sgd
from fpdeep.golden.loss import LOSSES
from fpdeep.ir import Network
from fpdeep.numerics import Numerics
from fpdeep.ops.batchnorm import BN_MODES, with_batchnorm
from fpdeep.planning.cluster import DEFAULT_UTIL_CAP, PIPELINING, Cluster, make_cluster
from fpdeep.planning.partition import STRATEGIES
from fpdeep.planning.planner import (
    BANK_SHARES,
    DEFAULT_BATCH,
    Plan,
    UnitsTooLarge,
    engine_banks_in_uram,
    with_banks_spread,
    with_lanes_fitting,
    with_stores,
)
from fpdeep.planning.planner import plan as plan_network
from fpdeep.planning.store import OFF_CHIP
from fpdeep.progress import Progress
from fpdeep.resources import PACKAGE_DIR

if TYPE_CHECKING:
    from fpdeep.design.lower import Design
    from fpdeep.schedule.tasks import PipelineFigures

SIMULATORS = ("verilator", "icarus")
#: Who drives the boards: the cocotb testbench, or the host program compiled with the
#: Verilated cluster (Verilator only).
HOSTS = ("native", "cocotb")
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
    momentum: float = 0.0  # SGD momentum on the boards (0: none)
    weight_decay: float = 0.0  # SGD weight decay on the boards (0: none)
    bn: str = "train"  # BatchNormalization: batch statistics (train) or a fixed affine (frozen)
    off_chip: tuple[str, ...] = ()  # kinds of data every board keeps in its off-chip memory
    numerics: Numerics = field(default_factory=Numerics)  # the fixed-point formats
    output: Path | None = None  # build: the folder to write
    force: bool = False  # build: replace the folder whatever it holds

    def __post_init__(self) -> None:
        if self.partition not in STRATEGIES:
            raise FpdeepError(f"--partition {self.partition!r} is not known; "
                              f"valid: {', '.join(STRATEGIES)}")
        if self.pipelining not in PIPELINING:
            raise FpdeepError(f"--pipelining {self.pipelining!r} is not known; "
                              f"valid: {', '.join(PIPELINING)}")
        if self.loss not in LOSSES:
            raise FpdeepError(f"--loss {self.loss!r} is not known; valid: {', '.join(LOSSES)}")
        for option, pair in (("--momentum", (self.momentum, 0.0)),
                             ("--weight-decay", (0.0, self.weight_decay))):
            try:
                sgd.check_optimiser(*pair)
            except FpdeepError as exc:
                raise FpdeepError(f"{option}: {exc}") from None
        if self.bn not in BN_MODES:
            raise FpdeepError(f"--bn {self.bn!r} is not known; valid: {', '.join(BN_MODES)}")
        unknown = [k for k in self.off_chip if k not in OFF_CHIP]
        if unknown:
            raise FpdeepError(f"--off-chip {','.join(unknown)} is not known; valid: a comma-"
                              f"separated list of {', '.join(OFF_CHIP)}")
        require_positive_int("--batch", self.batch)
        if self.boards is not None:
            require_positive_int("--boards", self.boards)

    def cluster(self, count: int | None = None) -> Cluster:
        """The chain of ``count`` boards (default ``boards``) this configuration describes."""
        return make_cluster(
            board=self.board, boards=self.boards if count is None else count,
            link_gbps=self.link_gbps, precision=self.precision, clock_mhz=self.clock_mhz,
            util_cap=self.util_cap, pipelining=self.pipelining, pixel_lanes=self.pixel_lanes)


def check_host(host: str | None, simulator: str, threads: int) -> None:
    """FpdeepError for a host that is not known, or cannot run on ``simulator`` or with
    ``threads`` Verilator threads."""
    if simulator not in SIMULATORS:
        raise FpdeepError(f"--simulator {simulator!r} is not known; "
                          f"valid: {', '.join(SIMULATORS)}")
    if host is not None and host not in HOSTS:
        raise FpdeepError(f"--host {host!r} is not known; valid: {', '.join(HOSTS)}")
    if host == "native" and simulator != "verilator":
        raise FpdeepError(f"--host native runs only on Verilator, not --simulator "
                          f"{simulator}; use --host cocotb with {simulator}")
    require_positive_int("--threads", threads)
    if threads > 1 and (host == "cocotb" or simulator != "verilator"):
        raise FpdeepError(f"--threads {threads} applies to the native host only (Verilator); "
                          "give --host native or drop --threads")


def pick_host(host: str | None, simulator: str, threads: int, *, runs: int) -> str:
    """``host``, else native where it is faster: for more than one run (step or pass) on
    Verilator, or with Verilator threads; else cocotb."""
    if host is not None:
        return host
    return "native" if simulator == "verilator" and (runs > 1 or threads > 1) else "cocotb"


@dataclass(frozen=True)
class RunConfig:
    """How to run a built design: the batch, the steps, the optimiser and the simulator."""

    batch: int | None = None  # images per simulated step; None: DEFAULT_RUN_BATCH or the data's
    steps: int = 1
    lr: float = 0.05
    seed: int = 0
    simulator: str = "verilator"
    max_cycles: int | None = None  # None: `fpdeep.cosim.run.cycle_limit`'s default
    data: str | Path | None = None  # npz with x (B, C, H, W) float32 and y (B,) int
    dump_weights: str | Path | None = None
    host: str | None = None  # None: native for more than one step on Verilator, else cocotb
    threads: int = 1  # Verilator threads of the native host's model
    link_ber: float = 0.0  # bit error rate of the simulated links (errors per bit)
    link_drop: float = 0.0  # share of frames the simulated links lose

    def __post_init__(self) -> None:
        require_rate("--link-ber", self.link_ber, MAX_LINK_BER)
        require_rate("--link-drop", self.link_drop, MAX_LINK_DROP)
        if self.batch is not None:
            require_positive_int("--batch", self.batch)
            if self.data is not None:
                raise FpdeepError("--batch and --data exclude each other: the batch is the "
                                  "images of the --data file; drop --batch")
        require_positive_int("--steps", self.steps)
        if self.max_cycles is not None:
            require_positive_int("--max-cycles", self.max_cycles)
        require_non_negative_int("--seed", self.seed)
        require_positive_number("--lr", self.lr)
        check_host(self.host, self.simulator, self.threads)

    @property
    def host_name(self) -> str:
        """The host that runs (`pick_host` for this many steps)."""
        return pick_host(self.host, self.simulator, self.threads, runs=self.steps)

    @property
    def random_batch(self) -> int:
        """Images per step when the batch is drawn at random."""
        return DEFAULT_RUN_BATCH if self.batch is None else self.batch


#: The simulated links' fault rates a run may ask for: beyond these the link spends its time
#: replaying (a frame of 66 beats of 64 bits meets an error more often than not at 1e-3).
MAX_LINK_BER = 1e-3
MAX_LINK_DROP = 0.1


@dataclass(frozen=True)
class InferConfig:
    """How to run the forward-only program on a built design (``fpdeep infer``)."""

    data: str | Path  # a data set name (`fpdeep.datasets`: its test part) or an npz as --data
    weights: str | Path | None = None  # npz of float weights by initializer; None: the model's
    predictions: str | Path | None = None  # None: DIR/infer/predictions.npz
    simulator: str = "verilator"
    host: str | None = None  # None: native for more than one pass on Verilator, else cocotb
    threads: int = 1
    max_cycles: int | None = None  # None: `fpdeep.cosim.run.cycle_limit`'s default

    def __post_init__(self) -> None:
        if self.max_cycles is not None:
            require_positive_int("--max-cycles", self.max_cycles)
        check_host(self.host, self.simulator, self.threads)

    def host_for(self, passes: int) -> str:
        return pick_host(self.host, self.simulator, self.threads, runs=passes)


@dataclass(frozen=True)
class TrainConfig:
    """How to train a built design on a data set (``fpdeep train``)."""

    data: str | Path  # a data set name (`fpdeep.datasets`) or an npz with x, y (and x_test, y_test)
    epochs: int = 1
    batch: int | None = None  # images per step, at most the planned batch; None: the planned
    lr: float = 0.1
    seed: int = 0  # the order of the images in each epoch; weights the model lacks
    export_onnx: str | Path | None = None  # also write the model with the trained weights
    resume: bool = False  # continue from the checkpoint
    checkpoint: str | Path | None = None  # None: DIR/train/checkpoint.npz
    simulator: str = "verilator"
    host: str | None = None  # None: native for more than one step on Verilator, else cocotb
    threads: int = 1
    max_cycles: int | None = None  # None: `fpdeep.cosim.run.cycle_limit`'s default

    def __post_init__(self) -> None:
        require_positive_int("--epochs", self.epochs)
        if self.batch is not None:
            require_positive_int("--batch", self.batch)
        require_positive_number("--lr", self.lr)
        require_non_negative_int("--seed", self.seed)
        if self.max_cycles is not None:
            require_positive_int("--max-cycles", self.max_cycles)
        check_host(self.host, self.simulator, self.threads)

    def host_for(self, steps: int) -> str:
        return pick_host(self.host, self.simulator, self.threads, runs=steps)


def defaults(config: type) -> dict[str, Any]:
    """Every field of a config class that has a default, with that default (for --help)."""
    return {f.name: f.default for f in fields(config) if f.default is not MISSING}


# ----- the steps ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlowState:
    """What the steps have made so far; each step adds its typed result."""

    network: Network | None = None
    workload: NetworkWorkload | None = None
    plan: Plan | None = None
    design: Design | None = None
    figures: PipelineFigures | None = None  # the generated design's cycle model
    output: Path | None = None  # the build folder, once written
    result: dict[str, Any] | None = None  # sim/result.json, once simulated
    progress: Progress = field(default_factory=Progress.quiet, compare=False)


Step = Callable[[FlowState, BuildConfig], FlowState]


def _need(state: FlowState, what: str, step: str) -> Any:
    value = getattr(state, what)
    if value is None:
        raise ValueError(f"flow step {step} needs the {what} of an earlier step")
    return value


def load(state: FlowState, config: BuildConfig) -> FlowState:
    """The configuration's model as fpdeep's IR."""
    state.progress.step("loading", str(config.model))
    network = load_onnx(config.model, input_shape=config.input_shape)
    return replace(state, network=with_batchnorm(network, config.bn))


def analyze(state: FlowState, config: BuildConfig) -> FlowState:
    """Per-layer FP/BP/WG work, parameters and activations."""
    return replace(state, workload=analyze_network(_need(state, "network", "analyze")))


def plan(state: FlowState, config: BuildConfig) -> FlowState:
    """Partition, allocate and model the network on the configured chain of boards."""
    if config.boards is None:
        raise FpdeepError("give --boards N: the number of boards in the chain")
    state.progress.step("planning", f"{config.boards} board(s)")
    result = plan_network(_need(state, "network", "plan"), config.cluster(),
                          strategy=config.partition, batch=config.batch)
    return replace(state, plan=result)


def lower(state: FlowState, config: BuildConfig) -> FlowState:
    """The design of every board, and the plan with the memory figures of the tensor stores
    that design has; FpdeepError when the plan cannot be built."""
    network, planned = _need(state, "network", "lower"), _need(state, "plan", "lower")
    built, placed = _lowered(network, planned, numerics=config.numerics, loss=config.loss,
                             momentum=config.momentum, weight_decay=config.weight_decay,
                             off_chip=config.off_chip, progress=state.progress)
    return replace(state, design=built, plan=placed)


#: Rounds of cutting MAC lanes for block RAM (`_lowered`) before build gives up: each
#: lowers the design again, and one or two usually suffice.
LANE_FITTING_ROUNDS = 6


def _lowered(network: Network, planned: Plan, *, progress: Progress | None = None,
             **options: Any) -> tuple[Design, Plan]:
    """The design lowered from ``planned`` (`_lowered_as_planned`). Where some board's engines
    and units take more block RAM than it has even with fewer MAC lanes, and the partition is
    the optimal one, the boards are cut again where their engine banks take less of each
    (`with_banks_spread`), at a higher II, until every board fits or no cut does."""
    try:
        return _lowered_as_planned(network, planned, progress=progress, **options)
    except UnitsTooLarge as exc:
        if planned.strategy != "optimal":
            raise
        first, failed, spread = exc, exc, planned
    for share in BANK_SHARES:
        assert failed.design is not None  # `_lowered_as_planned` raises with its design
        spread = with_banks_spread(network, spread, failed.design, share)
        if spread is None:
            break
        if progress is not None:
            progress.step("spreading engine banks", f"over more boards: at most {share:.0%} of "
                          "a board's RAM each")
        try:
            return _lowered_as_planned(network, spread, progress=progress, **options)
        except UnitsTooLarge as exc:
            failed = exc
    raise UnitsTooLarge(f"{first} (nor did cutting the boards where their engine banks take "
                        f"less)", first.over) from None


def _lowered_as_planned(network: Network, planned: Plan, *, numerics: Numerics | None,
                        loss: str, momentum: float = 0.0, weight_decay: float = 0.0,
                        off_chip: tuple[str, ...] = (),
                        progress: Progress | None = None) -> tuple[Design, Plan]:
    """The design lowered from ``planned``, and ``planned`` with its boards' memory figures
    taken from the design's tensor stores: the store is what the RTL has, known only once the
    plan is lowered (its items come from the step's tasks), so the planner's search estimates
    it and this replaces the estimate and checks the store fits. Where a board's engines and
    units take more block RAM than it has, engine banks move to its UltraRAM
    (`engine_banks_in_uram`), then its MAC lanes are cut (`with_lanes_fitting`) until they
    fit or cannot shrink further."""
    from fpdeep.codegen.build import board_units
    from fpdeep.codegen.layout import board_layouts
    from fpdeep.design.lower import lower as lower_plan
    from fpdeep.design.lower import with_uram_banks

    before: dict[int, tuple[int, int]] = {}  # board -> BRAM36 its units took, DSPs it used
    first: UnitsTooLarge | None = None  # the plan as asked for: what it took
    for rounds in range(LANE_FITTING_ROUNDS + 1):
        built = lower_plan(network, planned, numerics=numerics, loss=loss, momentum=momentum,
                           weight_decay=weight_decay, off_chip=off_chip)
        layouts = board_layouts(built, network, batch=planned.totals.batch)
        units = board_units(built, network, batch=planned.totals.batch, layouts=layouts)
        chosen = engine_banks_in_uram(planned, units, [layout.store for layout in layouts])
        if any(chosen):  # engine banks in UltraRAM where block RAM is short
            built = with_uram_banks(built, [{n.removeprefix("u_"): m for n, m in c.items()}
                                            for c in chosen])
            layouts = board_layouts(built, network, batch=planned.totals.batch)
            units = board_units(built, network, batch=planned.totals.batch, layouts=layouts)
        try:
            return built, with_stores(planned, [layout.store for layout in layouts], units)
        except UnitsTooLarge as exc:
            exc.design = built
            first = first or exc
            # fewer MAC lanes on the boards it names, and lower again, while fewer could fit
            used = {b: planned.boards[b].dsp_used for b in exc.over}
            helps = {b: o for b, o in exc.over.items()
                     if _lanes_may_fit(o, used[b], before.get(b))}
            fitted = (with_lanes_fitting(network, planned, helps)
                      if helps and rounds < LANE_FITTING_ROUNDS else None)
            if fitted is None:
                if exc is first:
                    raise
                # what the plan as asked for takes, which fewer lanes did not help
                raise UnitsTooLarge(f"{first} (fewer MAC lanes did not make it fit either)",
                                    first.over, first.design) from None
            before = {b: (o[0], used[b]) for b, o in exc.over.items()}
            planned = fitted
            if progress is not None:
                caps = planned.cluster.dsp_caps
                progress.step("fewer MAC lanes", "for block RAM: " + ", ".join(
                    f"board {b} at most {caps[b]:,} DSPs" for b in sorted(helps)))
    raise AssertionError("unreachable: the last round raises or returns")


def _lanes_may_fit(over: tuple[int, int], used: int, before: tuple[int, int] | None) -> bool:
    """Whether fewer MAC lanes could make a board's units fit: ``over`` is the BRAM36 blocks
    they take and the board has, ``used`` its DSPs, ``before`` both of the round before (none
    in the first). The last cut's saving per DSP tells what the lanes take; what remains at
    none (deep banks, weights, instruction memories) must fit."""
    if before is None:
        return True
    taken, have = over
    was, had = before
    if taken >= was or used >= had:
        return False
    return taken - (was - taken) / (had - used) * used < have


def schedule(state: FlowState, config: BuildConfig) -> FlowState:
    """The generated design's cycle model from the task graph of its training step."""
    from fpdeep.codegen.program import design_figures

    figures = design_figures(_need(state, "design", "schedule"),
                               _need(state, "network", "schedule"))
    return replace(state, figures=figures)


def emit(state: FlowState, config: BuildConfig) -> FlowState:
    """Write the build folder (whole or not at all): RTL, cluster top, plan and design."""
    from fpdeep.codegen.build import emit as write_folder
    from fpdeep.frontend.reader import model_files
    from fpdeep.report.plan import plan_json

    if config.output is None:
        raise FpdeepError("give -o DIR: the folder to write")
    state.progress.step("generating", str(config.output))
    result = _need(state, "plan", "emit")
    inputs = (config.model, *([config.board] if isinstance(config.board, Path) else []))
    out = write_folder(
        _need(state, "design", "emit"), result, config.output,
        network=_need(state, "network", "emit"),
        plan_report=plan_json(result, _need(state, "figures", "emit")),
        model_files=model_files(config.model), input_shape=config.input_shape,
        force=config.force, keep=inputs)
    return replace(state, output=out)


PLAN_STEPS: tuple[Step, ...] = (load, analyze, plan)
BUILD_STEPS: tuple[Step, ...] = (*PLAN_STEPS, lower, schedule, emit)


def run(steps: Sequence[Step], config: BuildConfig, state: FlowState | None = None, *,
        progress: Progress | None = None) -> FlowState:
    """Apply ``steps`` in order, each to the state the previous one returned."""
    state = state or FlowState(progress=progress or Progress.quiet())
    for step in steps:
        state = step(state, config)
    return state


def generated_design(state: FlowState, config: BuildConfig) -> PipelineFigures | str:
    """The figures of the design `fpdeep build` would generate from the state's plan, or the
    reason it cannot be built (the same check build makes)."""
    return _generated(state, config)[1]


def _generated(state: FlowState,
               config: BuildConfig) -> tuple[FlowState, PipelineFigures | str]:
    """The state lowered and scheduled (its plan's memory that of the generated stores) with
    the design's figures, or the state as it was and why it cannot be built."""
    try:
        built = run((lower, schedule), config, state)
    except FpdeepError as exc:
        return state, str(exc)
    assert built.figures is not None
    return built, built.figures


def build(config: BuildConfig, *, progress: Progress | None = None) -> FlowState:
    """Plan the model and write the build folder ``config.output``."""
    if config.boards is None:
        raise FpdeepError("give --boards N: the number of boards to generate")
    return run(BUILD_STEPS, config, progress=progress)


def simulate(folder: str | Path, config: RunConfig, *,
             progress: Progress | None = None) -> dict[str, Any]:
    """Run ``config.steps`` training steps on the build in ``folder``; the result.json data."""
    from fpdeep.cosim.run import simulate as run_steps

    return run_steps(folder, config, progress=progress or Progress.quiet())


def infer(folder: str | Path, config: InferConfig, *,
          progress: Progress | None = None) -> dict[str, Any]:
    """The forward-only program on the build in ``folder`` over ``config.data``; the
    DIR/infer/result.json data."""
    from fpdeep.cosim.infer import infer_on_boards

    return infer_on_boards(folder, config, progress=progress or Progress.quiet())


def train(folder: str | Path, config: TrainConfig, *,
          progress: Progress | None = None) -> dict[str, Any]:
    """Train the build in ``folder`` on ``config.data`` on the simulated boards, every step
    checked against the golden model; the DIR/train/result.json data."""
    from fpdeep.cosim.train import train_on_boards

    return train_on_boards(folder, config, progress=progress or Progress.quiet())


def run_on_boards(folder: str | Path, devices: Sequence[str], config: RunConfig | InferConfig,
                  *, progress: Progress | None = None) -> dict[str, Any]:
    """Training steps (``config`` a RunConfig) or forward-only passes (an InferConfig) on the
    real boards ``devices`` (one per board in chain order; ``["sim"]``: the simulated chain);
    the DIR/run/result.json data."""
    from fpdeep.runtime.run import infer_on_boards, train_on_boards

    run = train_on_boards if isinstance(config, RunConfig) else infer_on_boards
    return run(folder, devices, config, progress=progress or Progress.quiet())


def report(folder: str | Path) -> str:
    """The planner's figures beside the simulation's for the build in ``folder``."""
    from fpdeep.report.outcome import load_outcome, outcome_text

    return outcome_text(*load_outcome(folder))


@dataclass(frozen=True)
class PlanReport:
    """A plan, the figures of the design build would make of it (or why it cannot be built),
    and the scaling rows of a sweep: what `fpdeep plan` prints and writes."""

    state: FlowState
    generated: PipelineFigures | str
    sweep: list[dict[str, Any]] | None = None

    def text(self) -> str:
        from fpdeep.report.plan import plan_text, sweep_text

        table = "" if self.sweep is None else sweep_text(self.sweep) + "\n"
        return table + plan_text(self.state.plan, self.generated)

    def json(self) -> dict[str, Any]:
        from fpdeep.report.plan import plan_json

        data = plan_json(self.state.plan, self.generated)
        return data if self.sweep is None else {**data, "sweep": self.sweep}

    def html(self) -> str:
        from fpdeep.report.html import plan_html

        return plan_html(self.state.plan, self.sweep, self.generated)


def plan_report(config: BuildConfig, *, sweep: Sequence[int] | None = None,
                progress: Progress | None = None) -> PlanReport:
    """Plan ``config`` (on ``config.boards``, else the largest count of ``sweep``), and plan
    every count of ``sweep`` for the scaling table."""
    from fpdeep.planning.planner import sweep as plan_counts
    from fpdeep.report.plan import sweep_rows

    if config.boards is None and not sweep:
        raise FpdeepError("give --boards N (or --sweep A..B)")
    loaded = run((load, analyze), config, progress=progress)
    rows = None
    if sweep:
        results = plan_counts(loaded.network, [config.cluster(n) for n in sweep],
                              strategy=config.partition, batch=config.batch)
        rows = sweep_rows(list(zip(sweep, results, strict=True)),
                          generated=lambda p: generated_design(replace(loaded, plan=p), config))
    config = replace(config, boards=config.boards if config.boards is not None else max(sweep))
    state, generated = _generated(plan(loaded, config), config)
    return PlanReport(state, generated, rows)


def demo(output: str | Path, *, show: Callable[[str], None],
         progress: Progress | None = None) -> dict[str, Any]:
    """The whole flow on the bundled example (`fpdeep demo`): ``show`` gets each stage's text;
    returns the simulation's result, the report written to ``output/report.txt``."""
    from fpdeep.files import write_file
    from fpdeep.report.plan import plan_text
    from fpdeep.report.workload import workload_table

    build, run_config = demo_configs()
    build = replace(build, output=Path(output))
    show("== inspect")
    state = run(PLAN_STEPS, build, progress=progress)
    show(workload_table(state.network, state.workload, model=Path(build.model).name))
    show("\n== plan")
    state = run((lower, schedule), build, state)
    show(plan_text(state.plan, state.figures))
    show("== build")
    out = run((emit,), build, state).output
    show(f"wrote {out}")
    show("\n== sim (a minute or two: Verilator builds the cluster once)")
    result = simulate(out, run_config, progress=progress)
    show("\n== report")
    text = report(out)
    show(text.rstrip("\n"))
    write_file(out / "report.txt", text)
    show(f"\nthe report is in {out / 'report.txt'}")
    return result


def write_build(network: Network, result: Plan, out: str | Path, *,
                model_files: dict[str, bytes], input_shape: tuple[int, ...] | None = None,
                loss: str = "softmax_ce", numerics: Numerics | None = None,
                momentum: float = 0.0, weight_decay: float = 0.0,
                off_chip: tuple[str, ...] = (), force: bool = False) -> Path:
    """Lower, schedule and emit an existing plan of ``network`` (API and tests: plans made
    with custom cuts); ``model_files`` as ``fpdeep.frontend.reader.model_files`` gives."""
    from fpdeep.codegen.build import emit as write_folder
    from fpdeep.codegen.program import design_figures
    from fpdeep.report.plan import plan_json

    built, result = _lowered(network, result, numerics=numerics, loss=loss, momentum=momentum,
                             weight_decay=weight_decay, off_chip=off_chip)
    figures = design_figures(built, network)
    return write_folder(built, result, out, network=network, plan_report=plan_json(result, figures),
                        model_files=model_files, input_shape=input_shape, force=force)


def demo_configs() -> tuple[BuildConfig, RunConfig]:
    """What `fpdeep demo` runs: the bundled digits CNN on 2 ZCU102 boards, two steps of 4."""
    model = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
    return (BuildConfig(model=model, board="zcu102", boards=2, batch=4),
            RunConfig(batch=4, steps=2))


def vendor_notes(state: FlowState) -> list[str]:
    """One line per board of the built design that got no Vivado project, saying why."""
    from fpdeep.codegen.vivado import board_notes

    return board_notes(_need(state, "design", "vendor_notes"), _need(state, "plan", "vendor_notes"))
