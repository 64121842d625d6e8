"""A VGG-style CNN at reduced size, written as ONNX, for the synthesis tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

#: Output channels of the 3x3 convolutions, "M" a 2x2 max-pool (VGG's pattern at 8x8 input).
SMALL_VGG = (4, 4, "M", 8, 8, "M")


def small_vgg_onnx(path: str | Path, *, classes: int = 10, size: int = 8) -> Path:
    """conv-relu blocks and max-pools as `SMALL_VGG`, then one fully connected layer; 3 x
    size x size input, random weights."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x, channels, side = "input", 3, size
    for k, item in enumerate(SMALL_VGG):
        if item == "M":
            nodes.append(helper.make_node("MaxPool", [x], [f"pool{k}"], kernel_shape=[2, 2],
                                          strides=[2, 2]))
            x, side = f"pool{k}", side // 2
            continue
        w = rng.normal(0, 0.3, (item, channels, 3, 3)).astype(np.float32)
        b = np.zeros(item, np.float32)
        inits += [numpy_helper.from_array(w, f"conv{k}.w"),
                  numpy_helper.from_array(b, f"conv{k}.b")]
        nodes += [helper.make_node("Conv", [x, f"conv{k}.w", f"conv{k}.b"], [f"conv{k}"],
                                   kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"conv{k}"], [f"relu{k}"])]
        x, channels = f"relu{k}", item
    features = channels * side * side
    nodes.append(helper.make_node("Flatten", [x], ["flat"]))
    w = rng.normal(0, 0.3, (classes, features)).astype(np.float32)
    inits += [numpy_helper.from_array(w, "fc.w"),
              numpy_helper.from_array(np.zeros(classes, np.float32), "fc.b")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1))
    graph = helper.make_graph(
        nodes, "small_vgg", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                           [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save(model, str(path))
    return Path(path)
