"""ONNX frontend: the only part of fpdeep that sees ONNX objects."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fpdeep.frontend.convert import load_graph
from fpdeep.frontend.ops import HANDLERS
from fpdeep.frontend.reader import read_model
from fpdeep.ir import Network

SUPPORTED_OPS = tuple(sorted(HANDLERS))


def load_onnx(path: str | Path, input_shape: Sequence[int] | None = None) -> Network:
    """Read an ONNX model into a Network; ``input_shape`` (C, H, W) fixes dynamic sizes."""
    path = Path(path)
    model = read_model(path)
    shape = None if input_shape is None else tuple(int(d) for d in input_shape)
    return load_graph(model, path, shape, HANDLERS)


__all__ = ["SUPPORTED_OPS", "load_onnx"]
