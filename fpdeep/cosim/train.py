"""`fpdeep train`: train a built design on a data set on the simulated boards, every step
checked bit for bit against the golden fixed-point model, and the trained network's test
accuracy measured with the boards' own forward-only pass.

One host session (`fpdeep.cosim.session.build_training_session`) runs many steps, up to
`SESSION_STEPS` (a whole run on the digits set): the boards keep their weights from step to
step, and after each step the host reads back every weight and the logits. The host writes
its answers as it goes, so while it runs Python follows them (`OutputsReader`), runs the
golden step and the float step on the same images and shows the hardware's loss. The last
session ends with forward-only passes over the test images (`fpdeep infer`'s passes).

A run stopped by Ctrl-C (or SIGTERM, or a failed simulation) leaves a checkpoint of its last
checked step: the weights (the golden model's, equal to the boards'), the float run's weights,
the optimiser's state and the step, with the design's hash, so `--resume` continues it and a
checkpoint of another design is refused. Writes ``DIR/train/result.json``, the trained
weights ``DIR/train/weights.npz`` and the checkpoint ``DIR/train/checkpoint.npz``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.codegen.board import design_hash
from fpdeep.datasets import DATASETS, TEST_SHARE, is_dataset, load_dataset, split
from fpdeep.errors import FpdeepError
from fpdeep.files import check_writable_file, write_file
from fpdeep.golden import infer, train_step
from fpdeep.golden.loss import loss_value
from fpdeep.golden.step import StepContext, logits_tensor
from fpdeep.ir import Network
from fpdeep.ops import stored_transposed, trainable_refs
from fpdeep.progress import Bar, Progress

from .hosts import OUTPUTS_FILE, run_session
from .infer import score, whole_passes
from .run import (
    Build,
    check_data,
    cycle_limit,
    first_difference,
    initial_weights,
    load_build,
    make_batch,
    read_back_weights,
    save_weights,
)
from .script import OutputsReader
from .session import Session, build_training_session, tensors

if TYPE_CHECKING:
    from fpdeep.flow import TrainConfig

TRAIN_DIR = "train"
RESULT_FILE = "result.json"
WEIGHTS_FILE = "weights.npz"
CHECKPOINT_FILE = "checkpoint.npz"
CHECKPOINT_FORMAT = "fpdeep training checkpoint"
CHECKPOINT_VERSION = 1
#: Steps one host session runs at most, and words it moves at most (what Python holds of its
#: answers); a longer run takes several, each loading the weights the last one left on the
#: boards (checked equal to the golden model's).
SESSION_STEPS = 4096
SESSION_WORDS = 4_000_000
#: Steps whose mean hardware loss the progress bar shows.
LOSS_WINDOW = 20


@dataclass(frozen=True)
class TrainData:
    """Training and test images and labels, and what names the data for a checkpoint."""

    x: np.ndarray
    y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    identity: str


def training_data(data: str | Path, network: Network) -> TrainData:
    """The data set's parts (``digits``: its fixed split) or an npz's: ``x``, ``y`` checked as
    `fpdeep sim --data` checks them, and ``x_test``, ``y_test`` likewise; without those a
    fixed `TEST_SHARE` of its images is held out for testing."""
    name = str(data)
    if is_dataset(name):
        x, y = load_dataset(name, network, part="train")
        tx, ty = load_dataset(name, network, part="test")
        return TrainData(x, y, tx, ty, name)
    path = Path(name)
    if not path.is_file():
        raise FpdeepError(f"--data {name!r} is neither a file nor a known data set; give an "
                          f".npz with x (N, {', '.join(map(str, network.input_shape))}) and "
                          f"y (N,), or a data set: {', '.join(DATASETS)}")
    x, y = make_batch(network, batch=1, seed=0, data=path)
    with np.load(path) as f:
        parts = {k: np.asarray(f[k]) for k in ("x_test", "y_test") if k in f.files}
    if len(parts) == 1:
        raise FpdeepError(f"--data {name!r} holds {next(iter(parts))} without its partner; "
                          "give both x_test and y_test, or neither (then a fifth of x is "
                          "held out for testing)")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    if parts:
        tx, ty = check_data(network, parts["x_test"], parts["y_test"],
                            f"--data {name!r} (x_test, y_test)")
        return TrainData(x, y, tx, ty, f"{path.name} sha256:{digest}")
    test, train = split(len(y), max(1, round(len(y) * TEST_SHARE)))
    if len(train) == 0:
        raise FpdeepError(f"--data {name!r} has {len(y)} image(s): too few to hold a fifth out "
                          "for testing; give more, or x_test and y_test")
    return TrainData(x[train], y[train], x[test], y[test], f"{path.name} sha256:{digest}")


class DataOrder:
    """Which images each step trains on: epoch ``e`` visits the training images in a
    permutation seeded with (``seed``, ``e``), ``batch`` at a time; the last images that do
    not fill a batch wait for another epoch's order."""

    def __init__(self, count: int, batch: int, seed: int) -> None:
        self.count, self.batch, self.seed = count, batch, seed
        self.per_epoch = count // batch
        self._epoch, self._order = -1, np.arange(0)

    def pick(self, step: int) -> np.ndarray:
        epoch, k = divmod(step, self.per_epoch)
        if epoch != self._epoch:
            self._epoch = epoch
            self._order = np.random.default_rng([self.seed, epoch]).permutation(self.count)
        return self._order[k * self.batch:(k + 1) * self.batch]


@dataclass
class TrainState:
    """Where training stands after ``step`` checked steps."""

    step: int
    weights: dict[str, np.ndarray]  # the golden model's, equal to the boards'
    float_weights: dict[str, np.ndarray]  # float training's from the same start
    optimiser: dict[str, np.ndarray] = field(default_factory=dict)  # SGD momentum buffers
    float_optimiser: dict[str, np.ndarray] = field(default_factory=dict)  # float training's
    losses: list[float] = field(default_factory=list)  # the hardware's loss of every step
    hardware: dict[str, np.ndarray] | None = None  # the weights the boards read back last


# ----- following a session -------------------------------------------------------------------
class _Follower:
    """Checks a training session's steps as the host answers them: each one's weights and
    logits against the golden step from the last checked weights, and the float step beside
    it. Called from the host's progress thread while the host runs, and once more after."""

    def __init__(self, build: Build, session: Session, picks: Sequence[np.ndarray],
                 data: TrainData, state: TrainState, *, lr: float, work: Path,
                 order: DataOrder, epochs: int) -> None:
        self.build, self.session, self.picks, self.data = build, session, picks, data
        self.state, self.lr, self.order, self.epochs = state, lr, order, epochs
        self.reader = OutputsReader(work / OUTPUTS_FILE)
        self.checked = 0
        self._kept = 0  # answers to operations before this one are dropped once checked
        self.cycles: list[int] = []
        self.mismatches: list[str] = []
        self.error: BaseException | None = None
        design, network = build.design, build.network
        ctx = StepContext.make(network, design.numerics, design.loss)
        self.logits_frac = ctx.act(logits_tensor(network, design.loss)).frac

    def __call__(self, bar: Bar) -> None:
        if self.error is not None:
            return
        try:
            self.advance()
        except BaseException as exc:  # noqa: BLE001 - raised again by the main thread
            self.error = exc
            return
        self.show(bar)

    def show(self, bar: Bar) -> None:
        st, per = self.state, self.order.per_epoch
        epoch = min(st.step // per, self.epochs - 1)
        note = f"epoch {epoch + 1} of {self.epochs}"
        if epoch > 0 and len(st.losses) >= epoch * per:
            last = st.losses[(epoch - 1) * per:epoch * per]
            note += f" (epoch {epoch}: loss {np.mean(last):.3f})"
        if self.checked == len(self.picks) and self.session.passes:
            note = "measuring test accuracy on the boards"
        recent = st.losses[-LOSS_WINDOW:]
        bar.update(st.step, note, detail=f"loss {np.mean(recent):.3f}" if recent else "")

    def advance(self) -> None:
        """Check every step the host has answered whole."""
        if self.mismatches:
            return
        self.reader.read()
        answers = self.reader.answers
        while self.checked < len(self.picks) and \
                self.session.train[self.checked].last in answers:
            self._check(self.checked)
            if self.mismatches:
                return

    def _check(self, k: int) -> None:
        """Step ``k`` of the session checked; the state moves on by it, all at once, unless
        it differs from the golden step."""
        design, network = self.build.design, self.build.network
        st = self.state
        answers = self.reader.answers
        got = tensors(answers, self.session.train[k].traced)
        pick = self.picks[k]
        x, y = self.data.x[pick], self.data.y[pick]
        res = train_step(network, st.weights, x, y, lr=self.lr, loss=design.loss,
                         numerics=design.numerics, momentum=design.momentum,
                         weight_decay=design.weight_decay, state=st.optimiser or None,
                         step=st.step)
        where = f"step {st.step + 1}"
        # every trained parameter: the compute layers', a per-channel Scale's or Bias's
        for layer in (lay for lay in network.layers if trainable_refs(lay)):
            new = res.trace[layer.name].new_weights
            for ref in trainable_refs(layer):
                want = np.asarray(new[ref.name], dtype=np.int64)
                if stored_transposed(layer, ref.role):
                    want = want.T  # the boards hold (out, in)
                have = got[f"{layer.name}/new_{ref.role}"]
                if want.size == have.size:
                    want = want.reshape(have.shape)
                if have.shape != want.shape or np.any(have != want):
                    self.mismatches.append(f"{where}, layer {layer.name}, new_{ref.role}: "
                                           + first_difference(have, want))
        logits = got["logits"].reshape(len(y), -1)
        want_logits = np.asarray(res.trace.logits, dtype=np.int64)
        if logits.shape != want_logits.shape or np.any(logits != want_logits):
            self.mismatches.append(f"{where}, logits: "
                                   + first_difference(logits, want_logits))
        if self.mismatches:
            return
        flt = train_step(network, st.float_weights, x, y, lr=self.lr, loss=design.loss,
                         numerics="float", momentum=design.momentum,
                         weight_decay=design.weight_decay, state=st.float_optimiser or None,
                         step=st.step)
        cycles = max(answers[f.cycles[0]][0] | answers[f.cycles[1]][0] << 32
                     for f in self.session.steps[k][2])
        loss = loss_value(logits * 2.0 ** -self.logits_frac, y, design.loss)
        hardware = read_back_weights(network, got, design.numerics)
        self.cycles.append(cycles)
        st.losses.append(loss)
        st.weights, st.optimiser, st.float_weights = res.weights, res.state, flt.weights
        st.float_optimiser = flt.state
        st.hardware = hardware
        st.step += 1
        self.checked += 1
        last = self.session.train[k].last
        for index in range(self._kept, last + 1):
            answers.pop(index, None)
        self._kept = last + 1


def session_steps(network: Network, batch: int) -> int:
    """Steps in one host session: `SESSION_STEPS`, fewer where the words each step writes
    and reads back (images, labels, every weight, the logits) would pass `SESSION_WORDS`."""
    params = sum(int(np.prod(ref.shape)) for layer in network.layers
                 for ref in trainable_refs(layer))
    images = int(np.prod(network.input_shape)) + 1 + int(np.prod(network.layers[-1].out_shape))
    return max(1, min(SESSION_STEPS, SESSION_WORDS // (params + batch * images)))


# ----- checkpoints ---------------------------------------------------------------------------
def save_checkpoint(path: Path, state: TrainState, identity: Mapping[str, Any], *,
                    per_epoch: int) -> None:
    """The state after its last checked step, written whole or not at all."""
    meta = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, **identity,
            "step": state.step, "steps_per_epoch": per_epoch,
            "epochs_done": state.step / per_epoch,
            "optimizer": {"kind": "sgd", "lr": identity["lr"],
                          "momentum": identity.get("momentum", 0.0),
                          "weight_decay": identity.get("weight_decay", 0.0)},
            "losses": state.losses}
    arrays = {"meta": np.array(json.dumps(meta))}
    for prefix, values in (("weights", state.weights), ("float", state.float_weights),
                           ("velocity", state.optimiser),
                           ("float_velocity", state.float_optimiser)):
        arrays |= {f"{prefix}/{name}": np.asarray(v, np.float64) for name, v in values.items()}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_file(path, buffer.getvalue())


def load_checkpoint(path: Path, identity: Mapping[str, Any], network: Network, *,
                    total: int, epochs: int, per_epoch: int) -> TrainState:
    """The state a checkpoint saved, once it is one of this design, data and options with
    steps left to train; else an FpdeepError saying what differs."""
    where = f"--resume: checkpoint {str(path)!r}"
    if not path.is_file():
        raise FpdeepError(f"--resume: there is no checkpoint {str(path)!r} (training saves one "
                          "when it is interrupted or ends); train without --resume to start "
                          "from the model's weights")
    try:
        with np.load(path) as f:
            arrays = {k: np.asarray(f[k]) for k in f.files}
        meta = json.loads(str(arrays.pop("meta")))
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise ValueError("no checkpoint header")
    except (OSError, ValueError, KeyError) as exc:
        raise FpdeepError(f"{where} is not an fpdeep training checkpoint ({exc}); give the "
                          "checkpoint.npz that `fpdeep train` saved") from exc
    if meta.get("version") != CHECKPOINT_VERSION:
        raise FpdeepError(f"{where} is of version {meta.get('version')}; this fpdeep reads "
                          f"version {CHECKPOINT_VERSION}: train without --resume")
    if meta.get("design") != identity["design"]:
        raise FpdeepError(f"{where} was saved by another design ({meta.get('design')}; this "
                          f"build is {identity['design']}), whose weights do not fit these "
                          "boards; resume in the build folder it came from, or train without "
                          "--resume")
    options = {"data": "--data", "batch": "--batch", "lr": "--lr", "seed": "--seed"}
    differ = [k for k in options if meta.get(k) != identity[k]]
    if differ:
        def said(values: Mapping[str, Any]) -> str:
            return " ".join(f"{options[k]} {values.get(k)}" for k in differ)
        raise FpdeepError(f"{where} was trained with {said(meta)}, this run gives "
                          f"{said(identity)}; give the checkpoint's options to continue it")
    step = int(meta["step"])
    if step >= total:
        raise FpdeepError(f"{where} has trained {step} steps ({step // per_epoch} epoch(s)); "
                          f"--epochs {epochs} is {total} steps in all: give --epochs above "
                          f"{step // per_epoch} to train on")
    parts: dict[str, dict[str, np.ndarray]] = {"weights": {}, "float": {}, "velocity": {},
                                               "float_velocity": {}}
    for key, value in arrays.items():
        prefix, _, name = key.partition("/")
        if prefix in parts:
            parts[prefix][name] = value
    want = {ref.name for layer in network.layers for ref in trainable_refs(layer)}
    for prefix in ("weights", "float"):
        if not want <= parts[prefix].keys():
            raise FpdeepError(f"{where} lacks {prefix} of "
                              f"{', '.join(sorted(want - parts[prefix].keys()))}")
    return TrainState(step, parts["weights"], parts["float"], parts["velocity"],
                      parts["float_velocity"], [float(v) for v in meta.get("losses", [])])


# ----- the run -------------------------------------------------------------------------------
def train_on_boards(folder: str | Path, config: TrainConfig, *,
                    progress: Progress) -> dict[str, Any]:
    """Train the build in ``folder`` for ``config.epochs`` epochs on ``config.data``; write
    and return ``DIR/train/result.json``. Bad input is refused before any simulator runs."""
    started = time.monotonic()
    root = Path(folder).resolve()
    build = load_build(root)
    max_cycles = cycle_limit(build, config.max_cycles)
    design, network = build.design, build.network
    out = root / TRAIN_DIR
    planned = build.plan.totals.batch
    batch = planned if config.batch is None else config.batch
    if batch > planned:
        raise FpdeepError(f"--batch {batch} is above the planned batch of {planned} (the "
                          f"boards' stores hold {planned} images); give --batch 1 to "
                          f"{planned}, or rebuild with `fpdeep build ... --batch {batch}`")
    if config.export_onnx is not None:
        check_writable_file(config.export_onnx, "--export-onnx")
    checkpoint = out / CHECKPOINT_FILE if config.checkpoint is None else Path(config.checkpoint)
    if config.checkpoint is not None and not config.resume:
        check_writable_file(checkpoint, "--checkpoint")
    data = training_data(config.data, network)
    order = DataOrder(len(data.y), batch, config.seed)
    if order.per_epoch == 0:
        raise FpdeepError(f"--data {str(config.data)!r} has {len(data.y)} training image(s), "
                          f"fewer than one batch of {batch}; give --batch {len(data.y)} or "
                          "less, or more images")
    total = order.per_epoch * config.epochs
    host = config.host_for(total)
    if host == "native":
        from fpdeep.cosim.native import compiler

        compiler()  # a missing C++ compiler is named before any work
    identity = {"design": f"{design_hash(design):#010x}", "data": data.identity,
                "batch": batch, "lr": config.lr, "seed": config.seed,
                "momentum": design.momentum, "weight_decay": design.weight_decay}
    if config.resume:
        state = load_checkpoint(checkpoint, identity, network, total=total,
                                epochs=config.epochs, per_epoch=order.per_epoch)
    else:
        start = initial_weights(network, seed=config.seed)
        state = TrainState(0, dict(start), dict(start))
    resumed = state.step
    out.mkdir(exist_ok=True)
    (out / RESULT_FILE).unlink(missing_ok=True)  # describes another run
    test_images = whole_passes(data.test_x, batch)
    figures: list[dict[str, Any]] = []
    cycles: list[int] = []
    mismatches: list[str] = []
    record: dict[str, np.ndarray] = {}
    follower: _Follower | None = None
    progress.step("training", f"{total - state.step} step(s) of {batch} image(s) "
                  f"({config.epochs} epoch(s) of {order.per_epoch}) with lr {config.lr}"
                  + (f", from step {state.step}" if state.step else ""))
    try:
        while state.step < total and not mismatches:
            follower = None
            first, last = state.step, min(total, state.step + session_steps(network, batch))
            picks = [order.pick(k) for k in range(first, last)]
            session = build_training_session(
                build, x=data.x, y=data.y, order=picks, weights=state.weights, lr=config.lr,
                batch=batch, max_cycles=max_cycles, first=first, total=total,
                test_x=test_images if last == total else None, velocities=state.optimiser)
            follower = _Follower(build, session, picks, data, state, lr=config.lr,
                                 work=out / "run", order=order, epochs=config.epochs)
            got, record = run_session(build, session, out / "run", host=host,
                                      simulator=config.simulator, threads=config.threads,
                                      max_cycles=max_cycles, progress=progress,
                                      bar=("training", total), watch=follower)
            follower.advance()
            if follower.error is not None:
                raise follower.error
            mismatches += follower.mismatches
            if not mismatches and follower.checked != len(picks):
                raise FpdeepError(f"the host answered {follower.checked} of {len(picks)} "
                                  "steps of the session")
            figures.append(got)
            cycles += follower.cycles
        if not mismatches:
            save_checkpoint(checkpoint, state, identity, per_epoch=order.per_epoch)
    except BaseException:
        if follower is not None and follower.error is None:
            with contextlib.suppress(Exception):  # the first error is the one to report
                follower.advance()  # what the host answered before it stopped
        if state.step > resumed and not mismatches and not (follower and follower.mismatches):
            save_checkpoint(checkpoint, state, identity, per_epoch=order.per_epoch)
            progress.line(f"checkpoint of step {state.step} of {total} saved to {checkpoint}; "
                          "continue with the same options and --resume")
        raise
    progress.step("measuring accuracy", f"on {len(data.test_y)} test image(s)")
    result = _result(build, config, data, state, record, figures=figures, cycles=cycles,
                     mismatches=mismatches, batch=batch, resumed=resumed, host=host,
                     order=order)
    if state.hardware is not None:
        save_weights(out / WEIGHTS_FILE, state.hardware)
        if config.export_onnx is not None:
            from fpdeep.frontend.export import with_weights

            trained = {k: np.asarray(v, np.float32) for k, v in state.hardware.items()}
            write_file(config.export_onnx, with_weights(root / build.info.model_file, trained))
    result["wall_s"] = round(time.monotonic() - started, 1)
    write_file(out / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result


def _result(build: Build, config: TrainConfig, data: TrainData, state: TrainState,
            record: Mapping[str, np.ndarray], *, figures: list[dict[str, Any]],
            cycles: list[int], mismatches: list[str], batch: int, resumed: int, host: str,
            order: DataOrder) -> dict[str, Any]:
    """result.json's figures: the three accuracies on the test images, the boards' speed."""
    design, network = build.design, build.network
    hw = golden = None
    if not mismatches:
        scored = score(network, design.numerics, record, data.test_x, data.test_y,
                       state.weights)
        mismatches += [f"test pass: {m}" for m in scored["mismatches"]]
        hw, golden = scored["accuracy"], scored["golden_accuracy"]
    logits = infer(network, state.float_weights, data.test_x, numerics="float")
    simulated = sum(f["cycles_total"] for f in figures)
    wall = sum(f["cycles_total"] / max(f["cycles_per_s"], 1) for f in figures)
    per = order.per_epoch
    losses = state.losses
    return {
        "match": not mismatches,
        "mismatches": mismatches[:20],
        "steps": state.step,
        "steps_this_run": state.step - resumed,
        "resumed_from_step": resumed,
        "epochs": config.epochs,
        "steps_per_epoch": per,
        "batch": batch,
        "lr": config.lr,
        "seed": config.seed,
        "data": data.identity,
        "train_images": len(data.y),
        "test_images": len(data.test_y),
        "hw_accuracy": hw,
        "golden_accuracy": golden,
        "float_accuracy": float(np.mean(logits.argmax(axis=1) == data.test_y)),
        "epoch_loss": [float(np.mean(losses[e * per:(e + 1) * per]))
                       for e in range(len(losses) // per)],
        "cycles_per_step": round(float(np.mean(cycles))) if cycles else None,
        "cycles_per_s": round(simulated / wall) if wall else None,
        "simulated_cycles": simulated,
        "host": host,
        "threads": config.threads,
        "simulator": config.simulator,
    }
