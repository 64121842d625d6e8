"""Which RTL runs each op kind on the generated boards: the one table `fpdeep build` follows.

The design stage chooses, per layer, an engine, an RTL unit (by its kind, which codegen turns
into a module), nothing (a view of the stream: the tensor's words already are the reshaped
vector), or the loss unit. An op missing here is refused by `fpdeep build` (its RTL comes in a
later generation); ``refuse`` names a variant of a mapped op that its RTL does not compute.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from fpdeep.ir import Layer, LRNAttrs, Op

ENGINE, VIEW, LOSS = "engine", "view", "loss"


def _two_inputs(layer: Layer) -> str | None:
    if len(layer.inputs) != 2:
        return f"a sum of {len(layer.inputs)} tensors; the add unit sums two"
    return None


def _distinct_inputs(layer: Layer) -> str | None:
    if len(set(layer.inputs)) != len(layer.inputs):
        return "a Concat of one tensor with itself; the converter passes take distinct inputs"
    return None


def _lrn_in_range(layer: Layer) -> str | None:
    """The LRN unit takes 2^u and log2 d's scaling shifts in 1..63 bits (0 < beta < 2^14) and
    counts channels and planes in 16 bits."""
    a = layer.attrs
    assert isinstance(a, LRNAttrs)
    c, plane = layer.in_shape[0], math.prod(layer.in_shape[1:])
    if not (2.0 ** -47 <= a.beta < 2.0 ** 14 and a.size <= 255 and max(c, plane) < 1 << 16):
        return (f"LRN with size {a.size}, beta {a.beta} over {c} channels of {plane} "
                "elements; the LRN unit takes beta in [2^-47, 2^14), size up to 255 and "
                "fewer than 65,536 channels and elements per channel")
    return None


@dataclass(frozen=True)
class Rtl:
    """What runs one op kind: ``kind`` is ``engine``, ``view``, ``loss`` or a unit kind; ``mode``
    tells apart the ops one unit serves (the pooling unit's ``max`` and ``avg``)."""

    kind: str
    mode: str = ""
    refuse: Callable[[Layer], str | None] | None = None


RTL_MAPPING: Mapping[Op, Rtl] = MappingProxyType({
    Op.CONV: Rtl(ENGINE),
    Op.FC: Rtl(ENGINE),
    Op.RELU: Rtl("relu"),
    Op.DROPOUT: Rtl("dropout"),
    Op.CONCAT: Rtl("concat", refuse=_distinct_inputs),
    Op.CHANNEL_SHUFFLE: Rtl("shuffle"),
    Op.MAXPOOL: Rtl("pool", "max"),
    Op.AVGPOOL: Rtl("pool", "avg"),
    Op.GLOBAL_AVGPOOL: Rtl("pool", "avg"),
    Op.ADD: Rtl("add", refuse=_two_inputs),
    Op.BATCHNORM: Rtl("bn"),  # frozen, or trained on batch statistics (bn_train)
    Op.LRN: Rtl("lrn", refuse=_lrn_in_range),
    Op.SCALE: Rtl("affine"),
    Op.BIAS: Rtl("affine"),
    Op.FLATTEN: Rtl(VIEW),
    Op.IDENTITY: Rtl(VIEW),
    Op.SOFTMAX: Rtl(LOSS),
})
#: Ops that leave a stream as it is (no task, no unit, no data moved).
VIEW_OPS = frozenset(op for op, rtl in RTL_MAPPING.items() if rtl.kind == VIEW)
