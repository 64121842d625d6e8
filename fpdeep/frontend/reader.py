"""Reading an ONNX file safely: existence, parsing, version checks, external data."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import external_data_helper

from fpdeep.errors import ModelError

MIN_OPSET, MAX_OPSET = 7, 21
MIN_IR_VERSION = 3


def read_model(path: str | Path) -> onnx.ModelProto:
    """Parse ``path`` and load its external data, refusing anything fpdeep cannot trust."""
    path = Path(path)
    if not path.exists():
        raise ModelError(f"model file {str(path)!r} does not exist.")
    if not path.is_file():
        raise ModelError(f"model path {str(path)!r} is not a file.")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf raises several unrelated types on bad bytes
        raise ModelError(
            f"{str(path)!r} is not a readable ONNX model (the file is truncated, corrupt or of "
            f"another format): {type(exc).__name__}: {exc}".rstrip(": ")
        ) from None
    check_versions(model, path)
    load_external_data(model, path)
    return model


def check_versions(model: onnx.ModelProto, path: Path) -> None:
    if not model.HasField("graph") or not model.graph.node:
        raise ModelError(f"{str(path)!r} holds no ONNX graph with nodes; is it an ONNX model?")
    if model.ir_version < MIN_IR_VERSION:
        raise ModelError(
            f"{str(path)!r} has ONNX IR version {model.ir_version}; fpdeep reads IR version "
            f"{MIN_IR_VERSION} or newer."
        )
    default = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    opset = default[0] if default else (1 if model.ir_version < 3 else None)
    if opset is None or not MIN_OPSET <= opset <= MAX_OPSET:
        raise ModelError(
            f"{str(path)!r} uses ONNX opset {opset}; fpdeep supports opsets {MIN_OPSET} to "
            f"{MAX_OPSET} (re-export the model, or convert it with onnx.version_converter)."
        )
    foreign = sorted({n.domain for n in model.graph.node if n.domain not in ("", "ai.onnx")})
    if foreign:
        raise ModelError(
            f"{str(path)!r} uses operators from custom domain(s) {', '.join(foreign)}; fpdeep "
            "supports only the standard ONNX domain."
        )


def load_external_data(model: onnx.ModelProto, path: Path) -> None:
    """Load tensors stored beside the model, refusing locations outside the model's folder."""
    base = path.resolve().parent
    for tensor in _graph_tensors(model.graph):
        if not external_data_helper.uses_external_data(tensor):
            continue
        info = external_data_helper.ExternalDataInfo(tensor)
        location = info.location
        target = (base / location).resolve()
        if Path(location).is_absolute() or not target.is_relative_to(base):
            raise ModelError(
                f"{str(path)!r}: tensor {tensor.name!r} points at external data {location!r}, "
                f"which lies outside the model's folder {str(base)!r}; fpdeep refuses such paths. "
                "Keep external data files beside the model."
            )
        if not target.is_file():
            raise ModelError(
                f"{str(path)!r}: external data file {location!r} for tensor {tensor.name!r} is "
                f"missing (looked for {str(target)!r})."
            )
        try:
            external_data_helper.load_external_data_for_tensor(tensor, str(base))
        except Exception as exc:
            raise ModelError(
                f"{str(path)!r}: cannot read external data {location!r} for tensor "
                f"{tensor.name!r}: {exc}"
            ) from None
        # The data now lives in the proto; forget where it came from.
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def _graph_tensors(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    tensors = list(graph.initializer)
    for node in graph.node:
        tensors.extend(a.t for a in node.attribute if a.type == onnx.AttributeProto.TENSOR)
    return tensors
