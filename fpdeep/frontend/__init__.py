"""ONNX frontend: the only part of fpdeep that sees ONNX objects."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnx

from fpdeep.frontend.convert import load_graph
from fpdeep.frontend.ops import HANDLERS
from fpdeep.frontend.reader import read_model
from fpdeep.ir import Network

SUPPORTED_OPS = tuple(sorted(HANDLERS))


def load_onnx(path: str | Path, input_shape: Sequence[int] | None = None) -> Network:
    """Read an ONNX model into a Network; ``input_shape`` (C, H, W) fixes dynamic sizes."""
    path = Path(path)
    return load_onnx_model(read_model(path), path, input_shape)


def load_onnx_model(model: onnx.ModelProto, path: str | Path,
                    input_shape: Sequence[int] | None = None) -> Network:
    """A Network of a model already read (``path`` names it in errors)."""
    shape = None if input_shape is None else tuple(int(d) for d in input_shape)
    return load_graph(model, Path(path), shape, HANDLERS)


__all__ = ["SUPPORTED_OPS", "load_onnx", "load_onnx_model"]
