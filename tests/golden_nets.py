"""Small ONNX models for the golden-model tests, written with onnx.helper and loaded back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from fpdeep import load_onnx
from fpdeep.ir import Network


class OnnxNet:
    """Append layers to a chain (or name a tensor for residual branches), then ``load``."""

    def __init__(self, input_shape: tuple[int, int, int], *, seed: int = 0):
        self.shape = {"x": tuple(input_shape)}
        self.nodes: list = []
        self.inits: dict[str, np.ndarray] = {}
        self.rng = np.random.default_rng(seed)
        self.last = "x"
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def _node(self, op: str, inputs: list[str], shape: tuple, **attrs) -> str:
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.shape[out] = shape
        self.last = out
        return out

    def conv(self, co: int, k: int, *, stride: int = 1, pads=(0, 0, 0, 0), bias: bool = True,
             src: str | None = None, groups: int = 1) -> str:
        src = src or self.last
        ci, h, w = self.shape[src]
        name = self._name("w")
        fan_in = ci // groups * k * k
        self.inits[name] = self.rng.normal(0, np.sqrt(2 / fan_in), (co, ci // groups, k, k))
        inputs = [src, name]
        if bias:
            self.inits[name + "_b"] = self.rng.normal(0, 0.05, co)
            inputs.append(name + "_b")
        ho = (h + pads[0] + pads[2] - k) // stride + 1
        wo = (w + pads[1] + pads[3] - k) // stride + 1
        return self._node("Conv", inputs, (co, ho, wo), kernel_shape=[k, k],
                          strides=[stride, stride], pads=[pads[0], pads[1], pads[2], pads[3]],
                          group=groups)

    def batchnorm(self, *, epsilon: float = 1e-5) -> str:
        """BatchNormalization over the last tensor, random gamma, beta and running
        statistics."""
        c = self.shape[self.last][0]
        name = self._name("bn")
        values = {"scale": self.rng.uniform(0.5, 1.5, c), "bias": self.rng.normal(0, 0.3, c),
                  "mean": self.rng.normal(0, 0.2, c), "var": self.rng.uniform(0.5, 1.5, c)}
        for role, value in values.items():
            self.inits[f"{name}_{role}"] = value
        return self._node("BatchNormalization", [self.last, *(f"{name}_{r}" for r in values)],
                          self.shape[self.last], epsilon=epsilon)

    def lrn(self, size: int, *, alpha: float = 1e-4, beta: float = 0.75,
            bias: float = 1.0) -> str:
        """LRN across the channels of the last tensor."""
        return self._node("LRN", [self.last], self.shape[self.last], size=size, alpha=alpha,
                          beta=beta, bias=bias)
    def channel_constant(self, op: str, *, per_channel: bool = True) -> str:
        """A trained per-channel Scale (``Mul``) or Bias (``Add``) of the last tensor by a
        (C, 1, 1) initializer (or a single value), random around 1 (Scale) or 0 (Bias)."""
        c = self.shape[self.last][0]
        name = self._name(op.lower() + "_k")
        shape = (c, 1, 1) if per_channel else ()
        centre = 1.0 if op == "Mul" else 0.0
        self.inits[name] = centre + self.rng.normal(0, 0.25, shape)
        return self._node(op, [self.last, name], self.shape[self.last])

    def relu(self, src: str | None = None) -> str:
        src = src or self.last
        return self._node("Relu", [src], self.shape[src])

    def maxpool(self, k: int, stride: int, pads=(0, 0, 0, 0), src: str | None = None) -> str:
        src = src or self.last
        c, h, w = self.shape[src]
        ho = (h + pads[0] + pads[2] - k) // stride + 1
        wo = (w + pads[1] + pads[3] - k) // stride + 1
        return self._node("MaxPool", [src], (c, ho, wo), kernel_shape=[k, k],
                          strides=[stride, stride], pads=list(pads))

    def avgpool(self, k: int, stride: int, pads=(0, 0, 0, 0), include_pad: int = 0) -> str:
        c, h, w = self.shape[self.last]
        ho = (h + pads[0] + pads[2] - k) // stride + 1
        wo = (w + pads[1] + pads[3] - k) // stride + 1
        return self._node("AveragePool", [self.last], (c, ho, wo), kernel_shape=[k, k],
                          strides=[stride, stride], pads=list(pads),
                          count_include_pad=include_pad)

    def gap(self) -> str:
        c = self.shape[self.last][0]
        return self._node("GlobalAveragePool", [self.last], (c, 1, 1))

    def add(self, a: str, b: str) -> str:
        return self._node("Add", [a, b], self.shape[a])

    def flatten(self) -> str:
        n = int(np.prod(self.shape[self.last]))
        return self._node("Flatten", [self.last], (n,), axis=1)

    def fc(self, out: int, *, bias: bool = True) -> str:
        n = self.shape[self.last][0]
        name = self._name("fc")
        self.inits[name] = self.rng.normal(0, np.sqrt(1 / n), (out, n))
        inputs = [self.last, name]
        if bias:
            self.inits[name + "_b"] = self.rng.normal(0, 0.05, out)
            inputs.append(name + "_b")
        return self._node("Gemm", inputs, (out,), transB=1)

    def softmax(self) -> str:
        return self._node("Softmax", [self.last], self.shape[self.last], axis=1)

    def node(self, op: str, inputs: list[str], shape: tuple, **attrs) -> str:
        """Any other ONNX node (for unsupported-layer tests)."""
        return self._node(op, inputs, shape, **attrs)

    def load(self, path: Path) -> tuple[Network, dict[str, np.ndarray]]:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *self.shape["x"]])
        y = helper.make_tensor_value_info(self.last, TensorProto.FLOAT,
                                          ["N", *self.shape[self.last]])
        inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in self.inits.items()]
        graph = helper.make_graph(self.nodes, "golden_test", [x], [y], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(model, path)
        weights = {k: v.astype(np.float32).astype(np.float64) for k, v in self.inits.items()}
        return load_onnx(path), weights


def digits_cnn(path: Path, *, seed: int = 0, softmax: bool = False):
    """conv-relu-pool-conv-relu-fc on 1x8x8 digits (10 classes)."""
    net = OnnxNet((1, 8, 8), seed=seed)
    net.conv(8, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.maxpool(2, 2)
    net.conv(16, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(10)
    if softmax:
        net.softmax()
    return net.load(path)


def residual_cnn(path: Path):
    """conv-relu-conv-relu-conv + skip from the first relu, relu, fc on 1x6x6 (5 classes)."""
    net = OnnxNet((1, 6, 6), seed=3)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    skip = net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.add(net.last, skip)
    net.relu()
    net.flatten()
    net.fc(5)
    return net.load(path)


def small_cifar_resnet(*, seed: int = 21) -> OnnxNet:
    """A CIFAR-style ResNet at reduced size: a 16x16x3 image, a 3x3 convolution to 8
    channels, then one basic block per stage of 8, 16 and 32 channels (conv-BN-ReLU-conv-BN,
    the shortcut a 1x1 convolution and BN where the shape changes, Add, ReLU), global
    average pooling and a 10-class FC layer; every BatchNormalization as ONNX writes it."""
    net = OnnxNet((3, 16, 16), seed=seed)
    net.conv(8, 3, pads=(1, 1, 1, 1), bias=False)
    net.batchnorm()
    x = net.relu()
    cin = 8
    for cout, stride in ((8, 1), (16, 2), (32, 2)):
        net.conv(cout, 3, stride=stride, pads=(1, 1, 1, 1), bias=False, src=x)
        net.batchnorm()
        net.relu()
        net.conv(cout, 3, pads=(1, 1, 1, 1), bias=False)
        main = net.batchnorm()
        shortcut = x
        if stride != 1 or cin != cout:
            net.conv(cout, 1, stride=stride, bias=False, src=x)
            shortcut = net.batchnorm()
        net.add(main, shortcut)
        x = net.relu()
        cin = cout
    net.gap()
    net.flatten()
    net.fc(10)
    return net
