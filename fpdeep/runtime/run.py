"""`fpdeep run`: training steps or forward-only passes on a chain of real boards built from a
build folder, through the same host session as `fpdeep sim` and `fpdeep infer`.

The session (`fpdeep.cosim.session`) first checks every board's ID register against the
build's design hash, then loads tables, weights and programs, runs and reads back; here it
goes through a `Transport` (`open_devices`) and is decoded and checked against the golden
model exactly as a simulation's is. Writes ``DIR/run/result.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.cosim.hosts import step_note
from fpdeep.cosim.run import (
    Build,
    _dump_weights,
    compare,
    cycle_limit,
    initial_weights,
    load_build,
    make_batch,
)
from fpdeep.cosim.script import READING_BACK
from fpdeep.cosim.session import Session, build_inference_session, build_session, decode
from fpdeep.errors import FpdeepError
from fpdeep.files import check_writable_file, write_file
from fpdeep.progress import Progress

from .execute import execute
from .transport import Transport, open_chain

if TYPE_CHECKING:
    from fpdeep.flow import InferConfig, RunConfig

RESULT_FILE = "result.json"
#: ``--device sim``: the build's simulated cluster (the native host), in place of boards.
SIMULATED = "sim"


def board_hosts(build: Build) -> list[str | None]:
    """Each board's host bridge, from its board file's shell (None: it has none)."""
    return [b.shell.host if b.shell is not None else None for b in build.plan.cluster.boards]


def open_devices(build: Build, devices: Sequence[str]) -> Transport:
    """The transport to the build's boards: ``devices`` one per board in chain order, or
    ``["sim"]`` for the build's simulated cluster."""
    if list(devices) == [SIMULATED]:
        from fpdeep.cosim import native
        from fpdeep.cosim.hosts import cluster_sources

        from .simulated import SimulatedChain

        exe = native.build_native(build.root, build.design, cluster_sources(build.root))
        (build.root / "run").mkdir(exist_ok=True)
        return SimulatedChain(exe, boards=len(build.design.boards),
                              log=build.root / "run" / "native.log")
    if SIMULATED in devices:
        raise FpdeepError("--device sim stands for the whole simulated chain; give it alone")
    return open_chain(devices, board_hosts(build), clock_mhz=build.design.clock_mhz)


def _carry_out(build: Build, session: Session, transport: Transport, *, max_cycles: int,
               progress: Progress, label: str, unit: str) -> tuple[dict[str, Any],
                                                                    dict[str, np.ndarray]]:
    """Run ``session`` on the boards: (the host's figures, every traced tensor)."""
    with progress.bar(label, 1) as bar:
        def show(step: int, steps: int, task: int, reading: int = 0) -> None:
            bar.total = steps
            bar.update(step + task, step_note(unit, step, steps, reading=reading == READING_BACK))

        outputs = execute(session.script(), transport, progress=show)
    figures, record = decode(session, outputs, max_cycles=max_cycles)
    if figures["error"]:
        raise FpdeepError(f"the run on the boards of {build.root.name} stopped: "
                          f"{figures['error']}")
    return figures, record


def train_on_boards(folder: str | Path, devices: Sequence[str], config: RunConfig, *,
                    progress: Progress | None = None) -> dict[str, Any]:
    """``config.steps`` training steps on the boards, every traced tensor checked against the
    golden model; writes and returns ``DIR/run/result.json``."""
    say = progress or Progress.quiet()
    root = Path(folder).resolve()
    build = load_build(root)
    max_cycles = cycle_limit(build, config.max_cycles)
    if config.dump_weights is not None:
        check_writable_file(config.dump_weights, "--dump-weights")
    network, design = build.network, build.design
    x, y = make_batch(network, batch=config.random_batch, seed=config.seed, data=config.data)
    weights = initial_weights(network, seed=config.seed)
    (root / "run" / RESULT_FILE).unlink(missing_ok=True)
    started = time.monotonic()
    with open_devices(build, devices) as transport:
        session = build_session(build, x=x, y=y, weights=weights, steps=config.steps,
                                lr=config.lr, max_cycles=max_cycles)
        figures, record = _carry_out(build, session, transport, max_cycles=max_cycles,
                                     progress=say, label="training", unit="step")
    say.step("comparing with the golden model")
    mismatches, losses = compare(network, record, weights, x, y, steps=config.steps,
                                 lr=config.lr, loss=design.loss, numerics=design.numerics,
                                 momentum=design.momentum, weight_decay=design.weight_decay)
    cycles = [s["cycles"] for s in figures["steps"]]
    wall = [s["wall_s"] for s in figures["steps"]]
    result = {
        "mode": "train", "devices": list(devices), "match": not mismatches,
        "mismatches": mismatches, "steps": config.steps, "batch": len(y), "cycles": cycles,
        "step_wall_s": wall, "images_per_s": len(y) * len(wall) / max(sum(wall), 1e-9),
        "loss": losses, "clock_mhz": design.clock_mhz,
        "wall_s": round(time.monotonic() - started, 1),
    }
    if config.dump_weights is not None:
        _dump_weights(config.dump_weights, network, record, step=config.steps - 1,
                      numerics=design.numerics)
    (root / "run").mkdir(exist_ok=True)
    write_file(root / "run" / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result


def infer_on_boards(folder: str | Path, devices: Sequence[str], config: InferConfig, *,
                    progress: Progress | None = None) -> dict[str, Any]:
    """The forward-only program on the boards over ``config.data`` in passes of the planned
    batch, every logit checked against the golden forward pass; writes and returns
    ``DIR/run/result.json``."""
    from fpdeep.cosim.infer import inference_inputs, score, whole_passes, write_predictions

    say = progress or Progress.quiet()
    root = Path(folder).resolve()
    build = load_build(root)
    max_cycles = cycle_limit(build, config.max_cycles)
    network = build.network
    inputs = inference_inputs(build, config, root / "run")
    x, y, weights, out_file = inputs.x, inputs.y, inputs.weights, inputs.predictions
    batch = build.plan.totals.batch
    images = whole_passes(x, batch)
    passes = len(images) // batch
    (root / "run" / RESULT_FILE).unlink(missing_ok=True)
    started = time.monotonic()
    with open_devices(build, devices) as transport:
        session = build_inference_session(build, x=images, weights=weights, batch=batch,
                                          max_cycles=max_cycles)
        figures, record = _carry_out(build, session, transport, max_cycles=max_cycles,
                                     progress=say, label="inferring", unit="pass")
    say.step("comparing with the golden forward pass")
    scored = score(network, build.design.numerics, record, x, y, weights)
    logits, pred = scored.pop("logits"), scored.pop("pred")
    wall = sum(s["wall_s"] for s in figures["passes"])
    result = {
        "mode": "infer", "devices": list(devices), **scored, "images": len(x),
        "passes": passes, "batch": batch,
        "cycles_per_pass": [s["cycles"] for s in figures["passes"]],
        "images_per_s": len(x) / max(wall, 1e-9), "data": str(config.data),
        "predictions": str(out_file), "wall_s": round(time.monotonic() - started, 1),
    }
    (root / "run").mkdir(exist_ok=True)
    write_predictions(out_file, pred, logits, y)
    write_file(root / "run" / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result
