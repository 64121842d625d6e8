"""`fpdeep sim`: run training steps on a build folder's cluster top and check them bit for bit.

The host session (`fpdeep.cosim.session`) is compiled into a script that a host runs on the
cluster top: the cocotb testbench (`sim/tb_cluster.py`, its build cached under
``DIR/sim/build``) or the native host (`fpdeep.cosim.native`, cached under ``DIR/sim/native``).
What the host recorded is decoded into every tensor the boards produced; this module runs the
golden model step by step on the same batch and weights, compares, and writes
``DIR/sim/result.json``.
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.codegen.layout import board_layouts
from fpdeep.codegen.ports import frame_beats_for
from fpdeep.codegen.program import design_figures, instruction_cycles, memory_cycles
from fpdeep.cosim import DEFAULT_MAX_CYCLES
from fpdeep.cosim.hosts import run_session
from fpdeep.cosim.script import LinkFaults
from fpdeep.cosim.session import build_session
from fpdeep.design.lower import BuildInfo, Design, read_design_document
from fpdeep.errors import FpdeepError
from fpdeep.files import check_writable_file, read_json, write_file
from fpdeep.golden import train_step, weight_formats
from fpdeep.golden.step import StepContext, infer, logits_tensor
from fpdeep.ir import Network, Op
from fpdeep.numerics import Numerics, quantise
from fpdeep.ops import spec, stored_transposed, trainable_refs
from fpdeep.ops.batchnorm import running_fixed, trains, with_batchnorm
from fpdeep.planning.planner import Plan
from fpdeep.progress import Progress
from fpdeep.schedule.tasks import RUN, Task, schedule, task_cycles

if TYPE_CHECKING:
    from fpdeep.flow import RunConfig

RESULT_FILE = "result.json"
# What runs as RTL and what the testbench supplies in this generation (reported in result.json).
RTL_PARTS = ("Conv/FC FP, BP and WG engines (fpdeep_engine): every MAC, accumulation, bias, "
             "requantisation and the WG batch sums; ReLU (fpdeep_relu), pooling (fpdeep_pool), "
             "residual Add (fpdeep_add), its error fan-out (fpdeep_fanout) and error fan-in "
             "(fpdeep_add of two readers, fpdeep_psum of more), forward and backward; the softmax "
             "cross-entropy error (fpdeep_loss); the partial input errors of split layers "
             "(fpdeep_psum); the SGD update (fpdeep_sgd); link framing (fpdeep_link_tx/rx), "
             "reliable link ends (fpdeep_link_end) and link channels (fpdeep_link_channel) between "
             "boards, which carry every tensor that crosses a board boundary (activations, errors, "
             "raw partial sums as three 16-bit words); per board the sequencers that run each "
             "engine's, unit's and link's instruction stream, the movers, the tensor store, the "
             "host interface, the step control and the CSR block")
TESTBENCH_PARTS = ("host only: loads programs, weights and tables, streams images and labels "
                   "in, starts steps through the CSR and reads tensors back through the host "
                   "stream; the board controller, the tensor store and every data move are RTL")


@dataclass(frozen=True)
class Build:
    """A build folder as the simulation reads it."""

    root: Path
    design: Design
    plan: Plan
    info: BuildInfo
    network: Network


def load_build(folder: str | Path) -> Build:
    """The design, plan, build information and network of a build folder, or a clear error."""
    root = Path(folder)
    if not (root / "design.json").is_file():
        raise FpdeepError(f"{str(root)!r} is not an fpdeep build folder (no design.json); "
                          "create one with `fpdeep build MODEL ... -o DIR`")
    from fpdeep.frontend import load_onnx

    where = repr(str(root / "design.json"))
    data = read_json(root / "design.json",
                     f"rebuild the folder with `fpdeep build MODEL ... -o {root} --force`")
    design, plan, info = read_design_document(data, where)
    network = with_batchnorm(load_onnx(root / info.model_file, input_shape=info.input_shape),
                             info.bn)
    return Build(root, design, plan, info, network)


def cycle_limit(build: Build, asked: int | None) -> int:
    """The cycle limit of a step or pass: ``asked`` (--max-cycles), or by default four times
    the step the build models for its planned batch (plan.json), at least DEFAULT_MAX_CYCLES:
    a long design's step is not cut short, a stuck one stops in a few steps' time."""
    if asked is not None:
        return asked
    modelled = build.plan.totals.batch_cycles
    try:
        generated = json.loads((build.root / "plan.json").read_text())["generated"]
        modelled = max(modelled, int(generated["batch_cycles"]))
    except (OSError, ValueError, KeyError, TypeError):  # an older or edited plan.json
        pass
    return max(DEFAULT_MAX_CYCLES, 4 * modelled)


def make_batch(network: Network, *, batch: int, seed: int,
               data: str | Path | None) -> tuple[np.ndarray, np.ndarray]:
    """The batch from ``data`` (npz with x float32 (B,C,H,W), y int64 (B,)) or seeded random."""
    if data is None:
        rng = np.random.default_rng(seed)
        x = rng.uniform(0.0, 1.0, size=(batch, *network.input_shape)).astype(np.float32)
        return x, rng.integers(0, _classes(network), size=batch).astype(np.int64)
    try:
        with np.load(data) as f:
            x, y = np.asarray(f["x"]), np.asarray(f["y"])
    except (OSError, KeyError, ValueError) as exc:
        raise FpdeepError(
            f"--data {str(data)!r}: cannot read arrays x and y from it ({exc})") from exc
    return check_data(network, x, y, f"--data {str(data)!r}")


def check_data(network: Network, x: np.ndarray, y: np.ndarray,
               where: str) -> tuple[np.ndarray, np.ndarray]:
    """``x`` as float32 and ``y`` as int64 once they are images and labels the network takes:
    x (B, C, H, W) of finite numbers, y (B,) integer classes of the model; else an
    FpdeepError that starts with ``where`` (e.g. the option and file)."""
    if tuple(x.shape[1:]) != tuple(network.input_shape) or y.shape != (x.shape[0],):
        raise FpdeepError(
            f"{where}: x must be (B, {', '.join(map(str, network.input_shape))}) "
            f"and y (B,); got x {x.shape} and y {y.shape}")
    if len(y) == 0:
        raise FpdeepError(f"{where}: the batch is empty; give at least one image")
    if not np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer):
        raise FpdeepError(f"{where}: x must hold numbers (float32), got dtype {x.dtype}")
    if not np.all(np.isfinite(x)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(x))[0])
        raise FpdeepError(f"{where}: x holds NaN or infinite values (first at index {bad}); "
                          "every input must be a finite number")
    if not np.issubdtype(y.dtype, np.integer):
        raise FpdeepError(f"{where}: y must hold integer class labels, got dtype {y.dtype}; "
                          "convert it with y.astype(np.int64) if the values are whole")
    classes = _classes(network)
    if y.min() < 0 or y.max() >= classes:
        bad = int(np.argwhere((y < 0) | (y >= classes))[0][0])
        raise FpdeepError(f"{where}: label y[{bad}] = {int(y[bad])} is not a class of the "
                          f"model; labels must lie in 0..{classes - 1}")
    return x.astype(np.float32), y.astype(np.int64)


def _classes(network: Network) -> int:
    """Classes at the model's output: the size of its last tensor."""
    return math.prod(network.layers[-1].out_shape)


def initial_weights(network: Network, *, seed: int) -> dict[str, np.ndarray]:
    """The model's initializers, or seeded random ones (He-like scale) where it has none."""
    rng = np.random.default_rng(seed + 1)
    out = {}
    for layer in network.compute_layers:
        for ref in trainable_refs(layer):
            if ref.name in network.params:
                out[ref.name] = np.asarray(network.params[ref.name], dtype=np.float64)
            else:
                fan_in = int(np.prod(ref.shape[1:])) if len(ref.shape) > 1 else 1
                scale = 0.0 if ref.role == "bias" else float(np.sqrt(2.0 / fan_in))
                out[ref.name] = rng.normal(0.0, 1.0, size=ref.shape) * scale
    # the other layers' parameters (a frozen BatchNormalization's statistics) are the model's
    for layer in network.layers:
        for ref in layer.weights:
            if ref.name not in out and ref.name in network.params:
                out[ref.name] = np.asarray(network.params[ref.name], dtype=np.float64)
    return out


def first_difference(got: np.ndarray, want: np.ndarray) -> str:
    if got.shape != want.shape:
        return f"shape {got.shape} instead of {want.shape}"
    bad = np.argwhere(got != want)
    first = tuple(int(v) for v in bad[0])
    return (f"{len(bad)} of {want.size} values differ; first at index {first}: "
            f"got {int(got[first])}, expected {int(want[first])}")


def compare(network: Network, record: Mapping[str, np.ndarray], weights: dict[str, np.ndarray],
            x: np.ndarray, y: np.ndarray, *, steps: int, lr: float,
            loss: str = "softmax_ce", numerics: Numerics | None = None, momentum: float = 0.0,
            weight_decay: float = 0.0) -> tuple[list[str], list]:
    """Golden steps from ``weights`` (SGD with ``momentum`` and ``weight_decay``, from zero
    velocities); every recorded tensor checked. (mismatches, losses)."""
    mismatches: list[str] = []
    losses = []
    nm = numerics or Numerics()
    state: dict[str, np.ndarray] = {}
    for step in range(steps):
        res = train_step(network, weights, x, y, lr=lr, loss=loss, numerics=nm, step=step,
                         momentum=momentum, weight_decay=weight_decay, state=state)
        losses.append(res.loss)
        for layer in network.layers:
            if spec(layer.op).in_loss:
                continue
            t = res.trace[layer.name]
            expected = {"output": t.output}
            if layer.is_compute and t.input_errors and t.input_errors[0] is not None:
                expected["input_error"] = t.input_errors[0]
            # every trained parameter: a compute layer's, a per-channel Scale's or Bias's
            for ref in trainable_refs(layer):
                acc = np.asarray(t.accumulators[ref.name])
                new = np.asarray(t.new_weights[ref.name])
                if stored_transposed(layer, ref.role):
                    acc, new = acc.T, new.T  # records are in (out, in) compute layout
                expected[f"acc_{ref.role}"] = acc
                expected[f"new_{ref.role}"] = new
                if ref.name in res.state:  # the velocity the boards keep, as integers
                    vel = quantise(res.state[ref.name], nm.fmt("vel", layer.name))
                    expected[f"new_velocity_{ref.role}"] = \
                        vel.T if stored_transposed(layer, ref.role) else vel
            if layer.op is Op.BATCHNORM and trains(layer):  # the running statistics
                ctx = StepContext.make(network, nm, loss)
                stats = {ref.role: res.weights[ref.name] for ref in layer.weights
                         if ref.role in ("mean", "var")}
                mean, var = running_fixed(ctx, layer, stats)
                expected |= {"new_mean": mean, "new_var": var}
            for tensor, want in expected.items():
                key = f"{step}/{layer.name}/{tensor}"
                if key not in record:
                    mismatches.append(f"step {step + 1}, layer {layer.name}, {tensor}: "
                                      "not produced by the simulation")
                    continue
                got = np.asarray(record[key], dtype=np.int64)
                want = np.asarray(want, dtype=np.int64).reshape(got.shape) \
                    if np.asarray(want).size == got.size else np.asarray(want)
                if got.shape != want.shape or np.any(got != want):
                    mismatches.append(f"step {step + 1}, layer {layer.name}, {tensor}: "
                                      + first_difference(got, want))
        weights, state = res.weights, res.state
    key = "infer/logits"
    if key in record:  # a forward-only pass after the steps, with the trained weights
        want = infer(network, weights, x, numerics=nm)
        ctx = StepContext.make(network, nm, "softmax_ce")
        fmt = ctx.act(logits_tensor(network, "softmax_ce"))
        got = np.asarray(record[key], np.float64).reshape(want.shape) * 2.0 ** -fmt.frac
        if not np.array_equal(got, want):
            mismatches.append("forward-only pass, logits: " + first_difference(got, want))
    return mismatches, losses


def simulate(folder: str | Path, config: RunConfig, *, progress: Progress | None = None,
             host_checks: Mapping[str, bool] | None = None,
             host_pause: bool = False) -> dict[str, Any]:
    """Run ``config.steps`` training steps on the build in ``folder``; write and return
    ``DIR/sim/result.json``. Raises FpdeepError when the simulation stalls or cannot run.
    ``host_checks`` switch on the host's own checks before training: ``faults`` (bad packets
    and a step before loading, each answered with its error code) and ``deadlock`` (a program
    that can never finish, reported by the stalled resource) and ``infer`` (a forward-only
    pass after the steps). ``host_pause``: the cocotb host's streams pause at times."""
    say = progress or Progress.quiet()
    root = Path(folder).resolve()
    build = load_build(root)
    design, network = build.design, build.network
    max_cycles = cycle_limit(build, config.max_cycles)
    if config.dump_weights is not None:
        check_writable_file(config.dump_weights, "--dump-weights")
    x, y = make_batch(network, batch=config.random_batch, seed=config.seed, data=config.data)
    batch = len(y)
    weights = initial_weights(network, seed=config.seed)
    # on a noisy line the host shortens the links' frames, so that more get through whole
    frame = frame_beats_for(config.link_ber, design.link_bits) if config.link_ber else None
    links = [replace(lk, frame_beats=frame) if frame else lk for lk in design.links]
    session = build_session(build, x=x, y=y, weights=weights, steps=config.steps,
                            lr=config.lr, max_cycles=max_cycles, checks=host_checks,
                            link_faults=LinkFaults.rates(seed=config.seed, ber=config.link_ber,
                                                         drop=config.link_drop),
                            frame_beats=frame)
    # The old result describes another run: it goes before anything can fail or be stopped.
    (root / "sim" / RESULT_FILE).unlink(missing_ok=True)
    started = time.monotonic()
    tb, record = run_session(build, session, root / "sim" / "run", host=config.host_name,
                             simulator=config.simulator, threads=config.threads,
                             max_cycles=max_cycles, progress=say,
                             bar=("simulating", config.steps), pause=host_pause)
    say.step("comparing with the golden model")
    mismatches, losses = compare(network, record, weights, x, y, steps=config.steps,
                                 lr=config.lr, loss=design.loss, numerics=design.numerics,
                                 momentum=design.momentum, weight_decay=design.weight_decay)
    clock = design.clock_mhz
    figures = design_figures(design, network)  # the planner's figures, as in plan.json
    # the model of this step: the task graph's timeline at this batch, every task costed as
    # its sequencer runs it (the planner's (B - 1) II + first image is its closed form)
    step = schedule(design, network, batch=batch)
    layouts = board_layouts(design, network, batch=1)
    modelled = step.cycles(links, setup=instruction_cycles(design, network, layouts),
                           memory=memory_cycles(design, network, layouts))
    cycles = [s["cycles"] for s in tb["steps"]]
    mean = sum(cycles) / len(cycles)
    result = {
        "match": not mismatches,
        "mismatches": mismatches,
        "steps": config.steps,
        "batch": batch,
        "cycles": cycles,
        "modelled_cycles": modelled,
        "cycle_error": (mean - modelled) / modelled,
        "images_per_s_at_clock": batch * clock * 1e6 / mean,
        "loss": losses,
        "clock_mhz": clock,
        "planner_ii_cycles": figures.ii_cycles,
        "planner_bottleneck": figures.bottleneck,
        "planner_formula_cycles": figures.batch_cycles(batch),
        "ideal_pipeline_cycles": build.plan.ideal_batch_cycles(batch),
        "resources": _resource_figures(design, step.tasks, tb["steps"][0]["boards"]),
        "cycles_per_s": tb.get("cycles_per_s"),
        # while the boards train (the host polls STATUS): configuration and read-back apart
        "step_cycles_per_s": round(sum(cycles) / max(sum(s["wall_s"] for s in tb["steps"]),
                                                     1e-9)),
        "host_checks": tb.get("faults"),
        # the reliable links' CSR counters since reset: per direction "a>b", and totals
        "link_replays": tb["link_replays"],
        "link_crc_errors": tb["link_crc_errors"],
        "links": tb["links"],
        "link_ber": config.link_ber,
        "link_drop": config.link_drop,
        # payload beats of a data frame, at most: shorter on a noisy line
        "link_frame_beats": (frame or design.links[0].frame_beats) if design.links else None,
        "inference_cycles": (tb.get("infer") or {}).get("cycles"),
        "rtl": RTL_PARTS,
        "testbench": TESTBENCH_PARTS,
        "simulator": config.simulator,
        "host": config.host_name,
        "threads": config.threads,
        "simulated_cycles": tb["cycles_total"],
        "wall_s": round(time.monotonic() - started, 1),
    }
    if config.dump_weights is not None:
        _dump_weights(config.dump_weights, network, record, step=config.steps - 1,
                      numerics=design.numerics)
    write_file(root / "sim" / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result


def _dump_weights(path: str | Path, network: Network, record: Mapping[str, np.ndarray], *,
                  step: int, numerics: Numerics) -> None:
    """The simulated weights after ``step`` as float32 arrays in the model's layouts."""
    prefix = f"{step}/"
    weights = read_back_weights(network, {k.removeprefix(prefix): v for k, v in record.items()
                                          if k.startswith(prefix)}, numerics)
    save_weights(path, weights)


def read_back_weights(network: Network, record: Mapping[str, np.ndarray],
                      numerics: Numerics) -> dict[str, np.ndarray]:
    """The weights the boards hold, from the words read back as ``LAYER/new_weight`` and
    ``LAYER/new_bias`` (compute layout), as float64 by initializer name in its layout."""
    out = {}
    fmts = weight_formats(network, numerics)
    for layer in network.layers:
        for ref in trainable_refs(layer):
            q = record[f"{layer.name}/new_{ref.role}"]
            if stored_transposed(layer, ref.role):
                q = q.T
            out[ref.name] = (q * 2.0 ** -fmts[ref.name].frac).reshape(ref.shape)
    return out


def save_weights(path: str | Path, weights: Mapping[str, np.ndarray]) -> None:
    """Float weights by initializer name as float32 arrays of an .npz (as `fpdeep infer
    --weights` reads them), written whole or not at all."""
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.asarray(v, np.float32) for name, v in weights.items()})
    write_file(path, buffer.getvalue())


def _resource_figures(design: Design, tasks: Sequence[Task],
                      boards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per engine, unit and link direction of every board, from its CSR counters in the
    first step: the cycles it was active (an engine: its runs), waited, and its active
    window (first to last active cycle), beside what the model gives it to run."""
    modelled: dict[str, int] = {}
    engines = {task.resource.removesuffix(RUN) for task in tasks if task.kind == "run"}
    for task in tasks:
        # an engine's row counts its runs; its operand passes only wait for free halves
        # (a link's cycles include its words in flight: no figure for its two sides)
        key = task.resource.removesuffix(RUN) if task.kind not in ("engine", "link") else ""
        if key:
            modelled[key] = modelled.get(key, 0) + task_cycles(task, links=design.links)
    out = []
    for b in boards:
        for name, busy in b["busy"].items():
            key = b["keys"][name]
            window = b["window"][name]
            out.append({"board": b["board"], "resource": name, "busy": busy,
                        "stall": b["stall"][name], "window": window, "engine": key in engines,
                        "modelled": modelled.get(key),
                        "busy_share": busy / b["cycles"] if b["cycles"] else 0.0,
                        "window_share": busy / window if window else 0.0})
    return out
