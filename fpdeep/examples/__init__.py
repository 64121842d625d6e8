"""Bundled example models, and the code that makes them (so they can be regenerated)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EXAMPLES_DIR = Path(__file__).parent
DIGITS_CNN = EXAMPLES_DIR / "digits_cnn.onnx"


def build_digits_cnn(seed: int = 0) -> onnx.ModelProto:
    """conv-relu-maxpool-conv-relu-fc for 1x8x8 images (scikit-learn's digits), 10 classes.

    Weights are He-initialised from ``seed`` so the model trains from the file as it is.
    """
    rng = np.random.default_rng(seed)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        scale = np.sqrt(2.0 / fan_in) if len(shape) > 1 else 0.0
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)

    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1"],
                         name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2.weight", "conv2.bias"], ["conv2"],
                         name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("Flatten", ["relu2"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc",
                         transB=1),
    ]
    inits = [init("conv1.weight", 4, 1, 3, 3), init("conv1.bias", 4),
             init("conv2.weight", 8, 4, 3, 3), init("conv2.bias", 8),
             init("fc.weight", 10, 128), init("fc.bias", 10)]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="fpdeep")
    model.ir_version = 8
    return model


VGG16_LAYERS = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
                512, 512, 512, "M")


def build_vgg16(num_classes: int = 1000) -> onnx.ModelProto:
    """VGG-16 (Simonyan & Zisserman, configuration D) at 224x224 with its parameters as graph
    inputs: the full shapes for planning, without 0.5 GB of weights."""
    nodes, weights = [], []
    x, channels = "x", 3

    def weight(name: str, shape: list[int]) -> str:
        weights.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    for i, item in enumerate(VGG16_LAYERS):
        if item == "M":
            nodes.append(helper.make_node("MaxPool", [x], [f"p{i}"], kernel_shape=[2, 2],
                                          strides=[2, 2]))
            x = f"p{i}"
            continue
        w, b = weight(f"conv{i}.w", [int(item), channels, 3, 3]), weight(f"conv{i}.b", [int(item)])
        nodes += [helper.make_node("Conv", [x, w, b], [f"c{i}"], kernel_shape=[3, 3],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        x, channels = f"r{i}", int(item)
    nodes.append(helper.make_node("Flatten", [x], ["flat"]))
    x = "flat"
    for j, (fin, fout) in enumerate(((512 * 7 * 7, 4096), (4096, 4096), (4096, num_classes))):
        w, b = weight(f"fc{j}.w", [fout, fin]), weight(f"fc{j}.b", [fout])
        out = "y" if j == 2 else f"fc{j}"
        nodes.append(helper.make_node("Gemm", [x, w, b], [out], transB=1))
        if j < 2:
            nodes.append(helper.make_node("Relu", [out], [f"fr{j}"]))
            x = f"fr{j}"
    graph = helper.make_graph(
        nodes, "vgg16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224]), *weights],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, num_classes])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def write_examples() -> None:
    onnx.save(build_digits_cnn(), str(DIGITS_CNN))

