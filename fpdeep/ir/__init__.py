"""Typed intermediate representation of a CNN: layers, tensors, weights.

The IR imports nothing else of fpdeep and nothing of ONNX. Shapes are per sample (the batch
dimension is never part of them): ``(C, H, W)`` for feature maps and ``(F,)`` for flat vectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from types import MappingProxyType

import numpy as np

Shape = tuple[int, ...]


class Op(str, Enum):
    """Layer kinds the IR knows. Compute layers (Conv, FC) carry MAC work."""

    CONV = "Conv"
    FC = "FC"
    RELU = "Relu"
    MAXPOOL = "MaxPool"
    AVGPOOL = "AveragePool"
    GLOBAL_AVGPOOL = "GlobalAveragePool"
    ADD = "Add"  # element-wise sum of two or more feature maps (residual)
    CONCAT = "Concat"  # along channels
    BATCHNORM = "BatchNormalization"
    LRN = "LRN"
    DROPOUT = "Dropout"
    FLATTEN = "Flatten"  # also Reshape to (N, -1)
    SOFTMAX = "Softmax"
    IDENTITY = "Identity"
    SCALE = "Scale"  # per-channel (or scalar) multiply by a constant
    BIAS = "Bias"  # per-channel (or scalar) add of a constant
    CHANNEL_SHUFFLE = "ChannelShuffle"  # Reshape -> Transpose -> Reshape of ShuffleNet

    def __str__(self) -> str:
        return self.value


COMPUTE_OPS = frozenset({Op.CONV, Op.FC})


@dataclass(frozen=True)
class ConvAttrs:
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, left, bottom, right
    groups: int = 1
    has_bias: bool = False


@dataclass(frozen=True)
class FCAttrs:
    in_features: int
    out_features: int
    has_bias: bool = False
    # Gemm's alpha/beta: y = alpha * x W^T + beta * b. Exporters emit 1.0.
    alpha: float = 1.0
    beta: float = 1.0
    # True when the weight is stored (out, in) as Gemm transB=1 / PyTorch Linear; False: (in, out).
    weight_out_in: bool = True


@dataclass(frozen=True)
class PoolAttrs:
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, left, bottom, right
    ceil_mode: bool = False
    count_include_pad: bool = False  # AveragePool only


@dataclass(frozen=True)
class LRNAttrs:
    size: int
    alpha: float = 1e-4
    beta: float = 0.75
    bias: float = 1.0


@dataclass(frozen=True)
class BatchNormAttrs:
    epsilon: float = 1e-5
    momentum: float = 0.9  # ONNX's: running <- momentum * running + (1 - momentum) * batch
    training_mode: bool = False  # as the model says; fpdeep trains with batch statistics
    frozen: bool = False  # a fixed affine of the running statistics (--bn frozen)


@dataclass(frozen=True)
class DropoutAttrs:
    ratio: float = 0.5


@dataclass(frozen=True)
class SoftmaxAttrs:
    axis: int = -1


@dataclass(frozen=True)
class ShuffleAttrs:
    groups: int


@dataclass(frozen=True)
class NoAttrs:
    pass


Attrs = (
    ConvAttrs | FCAttrs | PoolAttrs | LRNAttrs | BatchNormAttrs | DropoutAttrs | SoftmaxAttrs
    | ShuffleAttrs | NoAttrs
)


@dataclass(frozen=True)
class WeightRef:
    """A trainable or constant parameter tensor of a layer, by its ONNX initializer name."""

    name: str
    role: str  # "weight", "bias", "scale", "mean", "var"
    shape: Shape


@dataclass(frozen=True)
class Layer:
    """One node of the network. ``inputs``/``output`` name tensors in ``Network.tensors``."""

    name: str
    op: Op
    inputs: tuple[str, ...]
    output: str
    in_shapes: tuple[Shape, ...]
    out_shape: Shape
    attrs: Attrs = field(default_factory=NoAttrs)
    weights: tuple[WeightRef, ...] = ()
    source_op: str = ""  # the ONNX op type(s) this layer came from, for messages

    @property
    def is_compute(self) -> bool:
        return self.op in COMPUTE_OPS

    @property
    def in_shape(self) -> Shape:
        return self.in_shapes[0]

    def weight(self, role: str) -> WeightRef | None:
        for ref in self.weights:
            if ref.role == role:
                return ref
        return None


@dataclass(frozen=True)
class Tensor:
    """A feature map flowing between layers, with who makes it and who reads it."""

    name: str
    shape: Shape
    producer: str | None  # layer name; None for the network input
    consumers: tuple[str, ...]


@dataclass(frozen=True)
class Network:
    """A CNN as a DAG of layers in deterministic topological order."""

    name: str
    input_name: str
    input_shape: Shape
    output_name: str
    layers: tuple[Layer, ...]
    tensors: Mapping[str, Tensor]
    # Parameter values keyed by ONNX initializer name. Values may be read-only broadcast views.
    params: Mapping[str, np.ndarray] = field(default_factory=lambda: MappingProxyType({}))

    @cached_property
    def _by_name(self) -> Mapping[str, Layer]:
        return {layer.name: layer for layer in self.layers}

    def layer(self, name: str) -> Layer:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no layer named {name!r} in network {self.name!r}") from None

    @property
    def compute_layers(self) -> tuple[Layer, ...]:
        return tuple(layer for layer in self.layers if layer.is_compute)

    def producer_of(self, tensor: str) -> Layer | None:
        producer = self.tensors[tensor].producer
        return None if producer is None else self.layer(producer)

    def consumers_of(self, tensor: str) -> tuple[Layer, ...]:
        return tuple(self.layer(name) for name in self.tensors[tensor].consumers)
