"""Writing a model back as ONNX with new weights (`fpdeep train --export-onnx`): the same graph,
its initializers replaced by the trained values."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from onnx import helper, numpy_helper

from fpdeep.errors import ModelError

from .reader import read_model


def with_weights(path: str | Path, weights: Mapping[str, np.ndarray]) -> bytes:
    """The ONNX model in ``path`` with ``weights`` (by initializer name) as its initializers,
    each in the initializer's element type and shape, serialised as one self-contained file
    (external data read in). A weight the model gives as a graph input with no initializer
    (IR 3 style, or exported without parameters) becomes an initializer."""
    model = read_model(path)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    inputs = {i.name for i in graph.input}
    for name, value in weights.items():
        array = np.asarray(value)
        if name in inits:
            old = inits[name]
            dtype = helper.tensor_dtype_to_np_dtype(old.data_type)
            if tuple(old.dims) != array.shape:
                raise ModelError(f"weight {name!r} is {array.shape}, the model's initializer "
                                 f"{tuple(old.dims)}")
            old.CopyFrom(numpy_helper.from_array(array.astype(dtype), name))
        elif name in inputs:
            graph.initializer.append(numpy_helper.from_array(array.astype(np.float32), name))
        else:
            raise ModelError(f"the model {str(path)!r} has no initializer or input {name!r}")
    return model.SerializeToString()
