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
    return _read(Path(path))[0]


def _read(path: Path) -> tuple[onnx.ModelProto, bool]:
    """The model and whether any of its tensors came from an external data file."""
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
    return model, load_external_data(model, path)


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


def load_external_data(model: onnx.ModelProto, path: Path) -> bool:
    """Load tensors stored beside the model, refusing locations outside the model's folder;
    True if there were any."""
    base = path.resolve().parent
    found = False
    for tensor in _graph_tensors(model.graph):
        if not external_data_helper.uses_external_data(tensor):
            continue
        found = True
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
    return found


def _graph_tensors(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    tensors = list(graph.initializer)
    for node in graph.node:
        tensors.extend(a.t for a in node.attribute if a.type == onnx.AttributeProto.TENSOR)
    return tensors


# Protobuf cannot serialise a message of 2 GiB or more; larger models keep their tensors in a
# data file beside the model.
_PROTO_LIMIT = 2**31 - 1
DATA_SUFFIX = ".data"


def model_files(path: str | Path, name: str = "model.onnx") -> dict[str, bytes]:
    """The model at ``path`` as self-contained files for a build folder: ``name`` with every
    external tensor inlined, or, beyond protobuf's 2 GiB, ``name`` plus ``name.data``."""
    model, external = _read(Path(path))  # external data loaded and checked
    if not external:
        return {name: Path(path).read_bytes()}  # the user's file, byte for byte
    if model.ByteSize() < _PROTO_LIMIT:
        return {name: model.SerializeToString()}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        onnx.save_model(model, str(Path(tmp) / name), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=name + DATA_SUFFIX)
        return {f.name: f.read_bytes() for f in Path(tmp).iterdir()}
