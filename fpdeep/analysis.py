"""Training workload of a network: MACs of the three passes, parameters, activations.

Pure functions of the IR. A MAC is one multiply-accumulate of a Conv or FC layer; bias adds,
batch-norm, pooling and activations are counted separately as element operations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from fpdeep.ir import ConvAttrs, FCAttrs, Layer, Network, Op, PoolAttrs

TRAINABLE_ROLES = frozenset({"weight", "bias", "scale"})


@dataclass(frozen=True)
class LayerWorkload:
    """Per-sample work and storage of one layer."""

    name: str
    op: Op
    fp_macs: int
    bp_macs: int
    wg_macs: int
    params: int
    activations: int
    element_ops: int


@dataclass(frozen=True)
class NetworkWorkload:
    layers: Mapping[str, LayerWorkload]  # in the network's topological order

    def total(self, field: str) -> int:
        return sum(getattr(w, field) for w in self.layers.values())

    @property
    def fp_macs(self) -> int:
        return self.total("fp_macs")

    @property
    def bp_macs(self) -> int:
        return self.total("bp_macs")

    @property
    def wg_macs(self) -> int:
        return self.total("wg_macs")

    @property
    def params(self) -> int:
        return self.total("params")

    @property
    def activations(self) -> int:
        return self.total("activations")

    @property
    def element_ops(self) -> int:
        return self.total("element_ops")


def layer_macs(layer: Layer) -> int:
    """MACs of one pass of a compute layer (FP, BP and WG are the same loop nest)."""
    if isinstance(layer.attrs, ConvAttrs):
        ci = layer.in_shape[0]
        co, ho, wo = layer.out_shape
        kh, kw = layer.attrs.kernel
        return co * ho * wo * (ci // layer.attrs.groups) * kh * kw
    if isinstance(layer.attrs, FCAttrs):
        return layer.attrs.in_features * layer.attrs.out_features
    raise ValueError(f"layer {layer.name!r} ({layer.op}) is not a compute layer")


def element_ops(layer: Layer) -> int:
    """Element operations (adds, compares, scalings) outside the MAC arrays, per sample."""
    out = math.prod(layer.out_shape)
    op = layer.op
    if op in (Op.CONV, Op.FC):
        return out if layer.weight("bias") is not None else 0
    if op in (Op.MAXPOOL, Op.AVGPOOL):
        assert isinstance(layer.attrs, PoolAttrs)
        kh, kw = layer.attrs.kernel
        return out * kh * kw
    if op == Op.GLOBAL_AVGPOOL:
        return math.prod(layer.in_shape)
    if op == Op.ADD:
        return out * (len(layer.inputs) - 1)
    if op == Op.BATCHNORM:
        return 2 * out  # scale and shift once folded
    if op == Op.LRN:
        size = getattr(layer.attrs, "size", 1)
        return out * (size + 2)  # window sum of squares, power, divide
    if op == Op.SOFTMAX:
        return 3 * out  # exp, sum, divide
    if op in (Op.RELU, Op.SCALE, Op.BIAS):
        return out
    return 0  # pure data movement: Concat, Flatten, Dropout, Identity, ChannelShuffle


def needs_input_error(network: Network) -> set[str]:
    """Names of layers whose input error must be computed: those with a trainable layer upstream."""
    trainable_upstream: dict[str, bool] = {network.input_name: False}
    needs: set[str] = set()
    for layer in network.layers:
        upstream = any(trainable_upstream.get(t, False) for t in layer.inputs)
        if upstream:
            needs.add(layer.name)
        trainable = any(ref.role in TRAINABLE_ROLES for ref in layer.weights)
        trainable_upstream[layer.output] = upstream or trainable
    return needs


def analyze(network: Network) -> NetworkWorkload:
    """Per-layer FP/BP/WG MACs, trainable parameters, activation elements and element ops.

    BP MACs are zero for a compute layer with no trainable layer upstream (typically the first
    convolution), since nothing consumes the error of the input image.
    """
    needs_bp = needs_input_error(network)
    result: dict[str, LayerWorkload] = {}
    for layer in network.layers:
        macs = layer_macs(layer) if layer.is_compute else 0
        params = sum(math.prod(ref.shape) for ref in layer.weights if ref.role in TRAINABLE_ROLES)
        result[layer.name] = LayerWorkload(
            name=layer.name,
            op=layer.op,
            fp_macs=macs,
            bp_macs=macs if layer.name in needs_bp else 0,
            wg_macs=macs,
            params=params,
            activations=math.prod(layer.out_shape),
            element_ops=element_ops(layer),
        )
    return NetworkWorkload(layers=result)
