"""Small IR networks for the planner tests, built directly from the IR dataclasses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fpdeep.ir import ConvAttrs, FCAttrs, Layer, Network, Op, PoolAttrs, Tensor, WeightRef


@dataclass
class NetBuilder:
    """Appends layers in topological order and records producers and consumers of tensors."""

    input_shape: tuple[int, ...]
    name: str = "net"
    layers: list[Layer] = field(default_factory=list)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.shapes["input"] = self.input_shape

    def _add(self, op: Op, inputs: list[str], out_shape: tuple[int, ...], attrs=None,
             weights=()) -> str:
        name = f"{op.value.lower()}{len(self.layers)}"
        kwargs = {} if attrs is None else {"attrs": attrs}
        self.layers.append(Layer(
            name=name, op=op, inputs=tuple(inputs), output=name + "_out",
            in_shapes=tuple(self.shapes[t] for t in inputs), out_shape=out_shape,
            weights=tuple(weights), **kwargs,
        ))
        self.shapes[name + "_out"] = out_shape
        return name + "_out"

    def conv(self, x: str, co: int, k: int = 3, stride: int = 1, bias: bool = False) -> str:
        ci, h, w = self.shapes[x]
        pad = k // 2
        ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        name = f"conv{len(self.layers)}"
        weights = [WeightRef(name + ".w", "weight", (co, ci, k, k))]
        if bias:
            weights.append(WeightRef(name + ".b", "bias", (co,)))
        return self._add(Op.CONV, [x], (co, ho, wo),
                         ConvAttrs(kernel=(k, k), stride=(stride, stride),
                                   pads=(pad, pad, pad, pad), has_bias=bias), weights)

    def relu(self, x: str) -> str:
        return self._add(Op.RELU, [x], self.shapes[x])

    def pool(self, x: str) -> str:
        c, h, w = self.shapes[x]
        return self._add(Op.MAXPOOL, [x], (c, h // 2, w // 2),
                         PoolAttrs(kernel=(2, 2), stride=(2, 2)))

    def add(self, a: str, b: str) -> str:
        return self._add(Op.ADD, [a, b], self.shapes[a])

    def flatten(self, x: str) -> str:
        return self._add(Op.FLATTEN, [x], (math.prod(self.shapes[x]),))

    def fc(self, x: str, out: int, bias: bool = True) -> str:
        (features,) = self.shapes[x]
        name = f"fc{len(self.layers)}"
        weights = [WeightRef(name + ".w", "weight", (out, features))]
        if bias:
            weights.append(WeightRef(name + ".b", "bias", (out,)))
        return self._add(Op.FC, [x], (out,),
                         FCAttrs(in_features=features, out_features=out, has_bias=bias), weights)

    def build(self, output: str) -> Network:
        consumers: dict[str, list[str]] = {t: [] for t in self.shapes}
        producers: dict[str, str | None] = {"input": None}
        for layer in self.layers:
            producers[layer.output] = layer.name
            for t in layer.inputs:
                consumers[t].append(layer.name)
        tensors = {t: Tensor(t, s, producers[t], tuple(consumers[t]))
                   for t, s in self.shapes.items()}
        return Network(self.name, "input", self.input_shape, output, tuple(self.layers), tensors)


def chain(channels: list[int], *, size: int = 8, fc: list[int] = (), residual: bool = False,
          k: int = 3, in_channels: int = 3) -> Network:
    """conv-relu layers (a residual Add over every pair of equal widths when asked), then FCs."""
    b = NetBuilder((in_channels, size, size))
    x = "input"
    skip: str | None = None
    for i, co in enumerate(channels):
        y = b.relu(b.conv(x, co, k=k))
        if residual and skip is not None and b.shapes[skip] == b.shapes[y] and i % 2 == 0:
            y = b.add(y, skip)
            skip = None
        elif residual and skip is None:
            skip = y
        x = y
    if fc:
        x = b.flatten(x)
        for out in fc:
            x = b.fc(x, out)
    return b.build(x)
