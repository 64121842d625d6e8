"""`fpdeep infer`: the boards' forward-only program (CSR mode 1) over a data set, checked bit
for bit against the golden forward pass; accuracy from the hardware's own logits.

The images go through in passes of the planned batch (the store's image slots); the last pass
is filled up with zero images, whose logits are dropped. Writes ``DIR/infer/result.json`` and
the predictions (``DIR/infer/predictions.npz``: ``pred``, ``logits``, ``y``).
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.datasets import DATASETS, is_dataset, load_dataset
from fpdeep.errors import FpdeepError
from fpdeep.files import check_writable_file, write_file
from fpdeep.golden import infer
from fpdeep.golden.step import StepContext, logits_tensor
from fpdeep.ir import Network
from fpdeep.numerics import Numerics
from fpdeep.ops import trainable_refs
from fpdeep.progress import Progress

from .hosts import run_session
from .run import Build, cycle_limit, initial_weights, load_build, make_batch
from .session import build_inference_session

if TYPE_CHECKING:
    from fpdeep.flow import InferConfig

RESULT_FILE = "result.json"
PREDICTIONS_FILE = "predictions.npz"


def load_weights(path: str | Path, network: Network) -> dict[str, np.ndarray]:
    """Float weights by initializer name from ``path`` (as `fpdeep sim --dump-weights` writes
    them), every trainable parameter of the model present with its shape."""
    where = f"--weights {str(path)!r}"
    try:
        with np.load(path) as f:
            given = {k: np.asarray(f[k]) for k in f.files}
    except (OSError, ValueError) as exc:
        raise FpdeepError(f"{where}: cannot read it as .npz ({exc})") from exc
    out = {}
    for layer in network.layers:
        for ref in trainable_refs(layer):
            if ref.name not in given:
                raise FpdeepError(f"{where}: no array {ref.name!r}; it must hold every "
                                  f"trainable parameter of the model by initializer name")
            value = given[ref.name]
            if tuple(value.shape) != tuple(ref.shape):
                raise FpdeepError(f"{where}: {ref.name} is {tuple(value.shape)}, the model's "
                                  f"is {tuple(ref.shape)}")
            if not np.issubdtype(value.dtype, np.number) or not np.all(np.isfinite(value)):
                raise FpdeepError(f"{where}: {ref.name} must hold finite numbers")
            out[ref.name] = value.astype(np.float64)
    return out


def load_data(data: str | Path, network: Network) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of ``--data``: a data set's test part or an npz file."""
    name = str(data)
    if not is_dataset(name) and not Path(name).is_file():
        raise FpdeepError(f"--data {name!r} is neither a file nor a known data set; data "
                          f"sets: {', '.join(DATASETS)}")
    return (load_dataset(name, network, part="test") if is_dataset(name)
            else make_batch(network, batch=1, seed=0, data=data))


def write_predictions(path: Path, pred: np.ndarray, logits: np.ndarray, y: np.ndarray) -> None:
    """The predictions file: ``pred``, ``logits`` (float32) and the labels ``y``."""
    buffer = io.BytesIO()
    np.savez(buffer, pred=pred, logits=logits.astype(np.float32), y=y)
    write_file(path, buffer.getvalue())


def infer_on_boards(folder: str | Path, config: InferConfig, *,
                    progress: Progress) -> dict[str, Any]:
    """Run the forward-only program over ``config.data``; write and return the result."""
    root = Path(folder).resolve()
    build = load_build(root)
    max_cycles = cycle_limit(build, config.max_cycles)
    design, network = build.design, build.network
    data = str(config.data)
    inputs = inference_inputs(build, config, root / "infer")
    x, y, weights, out_file = inputs.x, inputs.y, inputs.weights, inputs.predictions
    batch = build.plan.totals.batch
    images = whole_passes(x, batch)
    passes = len(images) // batch
    session = build_inference_session(build, x=images, weights=weights, batch=batch,
                                      max_cycles=max_cycles)
    (root / "infer" / RESULT_FILE).unlink(missing_ok=True)
    host = config.host_for(passes)
    started = time.monotonic()
    figures, record = run_session(build, session, root / "infer" / "run", host=host,
                                  simulator=config.simulator, threads=config.threads,
                                  max_cycles=max_cycles, progress=progress,
                                  bar=("inferring", passes), unit="pass")
    progress.step("comparing with the golden forward pass")
    scored = score(network, design.numerics, record, x, y, weights)
    logits, pred = scored.pop("logits"), scored.pop("pred")
    cycles = [s["cycles"] for s in figures["passes"]]
    result = {
        **scored,
        "images": len(x),
        "passes": passes,
        "batch": batch,
        "cycles_per_pass": cycles,
        "cycles_per_s": figures["cycles_per_s"],
        "simulated_cycles": figures["cycles_total"],
        "data": data,
        "weights": None if config.weights is None else str(config.weights),
        "predictions": str(out_file),
        "host": host,
        "simulator": config.simulator,
        "wall_s": round(time.monotonic() - started, 1),
    }
    write_predictions(out_file, pred, logits, y)
    write_file(root / "infer" / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result


@dataclass(frozen=True)
class InferenceInputs:
    """What a forward-only run over ``--data`` takes: the images and labels, the float
    weights, and where the predictions go (checked writable)."""

    x: np.ndarray
    y: np.ndarray
    weights: dict[str, np.ndarray]
    predictions: Path


def inference_inputs(build: Build, config: InferConfig, folder: Path) -> InferenceInputs:
    """``config``'s data, weights (the model's by default) and predictions file (default
    ``folder/predictions.npz``) for ``build``; bad ones refused before anything runs."""
    network = build.network
    out_file = (Path(config.predictions) if config.predictions is not None
                else folder / PREDICTIONS_FILE)
    if config.predictions is not None:
        check_writable_file(out_file, "--predictions")
    x, y = load_data(config.data, network)
    weights = (load_weights(config.weights, network) if config.weights is not None
               else initial_weights(network, seed=0))
    return InferenceInputs(x, y, weights, out_file)


def whole_passes(x: np.ndarray, batch: int) -> np.ndarray:
    """``x`` filled up with zero images to a whole number of passes of ``batch``."""
    passes = math.ceil(len(x) / batch)
    padded = np.zeros((passes * batch, *x.shape[1:]), dtype=np.float32)
    padded[:len(x)] = x
    return padded


def score(network: Network, numerics: Numerics, record: Mapping[str, np.ndarray],
          x: np.ndarray, y: np.ndarray, weights: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The boards' logits of ``x`` (traced ``infer/k`` per pass, as a session's ``passes``
    read them) against the golden forward pass with ``weights``: match, mismatches, the
    hardware's accuracy and the golden model's, the logits and the predictions."""
    ctx = StepContext.make(network, numerics, "softmax_ce")
    frac = ctx.act(logits_tensor(network, "softmax_ce")).frac
    passes = sum(1 for key in record if key.startswith("infer/"))
    words = np.concatenate([record[f"infer/{k}"] for k in range(passes)])[:len(x)]
    want = infer(network, weights, x, numerics=numerics)
    logits = (words.astype(np.float64) * 2.0 ** -frac).reshape(want.shape)
    differ = np.argwhere(logits != want)
    pred = logits.argmax(axis=1)
    return {
        "match": len(differ) == 0,
        "mismatches": [] if len(differ) == 0 else [
            f"{len(differ)} of {want.size} logits differ; first at image {int(differ[0][0])}, "
            f"class {int(differ[0][1])}: got {logits[tuple(differ[0])]}, expected "
            f"{want[tuple(differ[0])]}"],
        "accuracy": float(np.mean(pred == y)),
        "golden_accuracy": float(np.mean(want.argmax(axis=1) == y)),
        "logits": logits,
        "pred": pred,
    }
