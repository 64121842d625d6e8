"""Training workload of a network: MACs of the three passes, parameters, activations.

Pure functions of the IR. A MAC is one multiply-accumulate of a Conv or FC layer; bias adds,
batch-norm, pooling and activations are counted separately as element operations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from fpdeep.ir import Layer, Network, Op
from fpdeep.ops import element_ops, loop_nest, needs_input_error, trainable_refs


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
    return loop_nest(layer).macs


def analyze(network: Network) -> NetworkWorkload:
    """Per-layer FP/BP/WG MACs, trainable parameters, activation elements and element ops.

    BP MACs are zero for a compute layer with no trainable layer upstream (typically the first
    convolution), since nothing consumes the error of the input image.
    """
    needs_bp = needs_input_error(network)
    result: dict[str, LayerWorkload] = {}
    for layer in network.layers:
        macs = layer_macs(layer) if layer.is_compute else 0
        params = sum(math.prod(ref.shape) for ref in trainable_refs(layer))
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
